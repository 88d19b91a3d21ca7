"""The command outputs quoted in README.md and docs/*.md are what the commands print today
(issue 28 item 6). Blocks are marked ``<!-- doc-output -->`` (syntax and options in
``scripts/update_doc_outputs.py``); only the columns a block masks (timings) may differ.
A stale block fails here; ``python scripts/update_doc_outputs.py`` rewrites it."""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location(
    "doc_outputs", ROOT / "scripts" / "update_doc_outputs.py"
)
assert _spec is not None and _spec.loader is not None
docout = importlib.util.module_from_spec(_spec)
sys.modules["doc_outputs"] = docout  # dataclasses look their module up there
_spec.loader.exec_module(docout)

BLOCKS = docout.blocks()


def test_the_documentation_has_blocks_under_test():
    pages = {b.page.name for b in BLOCKS}
    assert {"README.md", "game.md", "mosp.md", "migration.md", "policies.md"} <= pages
    assert sum(len(b.commands) for b in BLOCKS) >= 20


@pytest.mark.parametrize("block", BLOCKS, ids=lambda b: b.name)
def test_doc_output_is_current(block):
    why = docout.skip_reason(block)
    if why:
        pytest.skip(why)
    if "slow" in block.opts and os.environ.get("COOPSCHED_DOC_SLOW") != "1":
        pytest.skip("slow block (set COOPSCHED_DOC_SLOW=1)")
    outs = docout.run_block(block)
    stale = [
        f"$ {c.text}\n{docout.diff(c.expected, out, block.mask)}"
        for c, out in zip(block.commands, outs, strict=True)
        if not docout.matches(c.expected, out, block.mask)
    ]
    assert not stale, (
        f"{block.name} is stale; run `python scripts/update_doc_outputs.py` and review:\n"
        + "\n".join(stale)
    )


# ---------------------------------------------------------------- the checker itself
def _page(tmp_path: Path, body: str) -> Path:
    page = tmp_path / "page.md"
    page.write_text(body)
    return page


TABLE = """┏━━━━━━━━┳━━━━━━━━━┓
┃ policy ┃ seconds ┃
┡━━━━━━━━╇━━━━━━━━━┩
│ fifo   │   {t} │
└────────┴─────────┘"""


def test_masked_timing_columns_may_differ_and_nothing_else():
    shown = TABLE.format(t="0.123").split("\n")
    assert docout.matches(shown, TABLE.format(t="9.876").split("\n"), ["seconds"])
    assert docout.matches(shown, TABLE.format(t="12.5").split("\n"), ["seconds"])
    assert not docout.matches(shown, TABLE.format(t="9.876").split("\n"), [])
    other = TABLE.format(t="0.123").replace("fifo  ", "ref   ").split("\n")
    assert not docout.matches(shown, other, ["seconds"])


def test_ellipsis_keeps_first_and_last_lines():
    actual = ["a", "b", "c", "d", "e"]
    assert docout.matches(["a", "...", "e"], actual, [])
    assert docout.matches(["...", "d", "e"], actual, [])
    assert docout.matches(["a", "b", "..."], actual, [])
    assert not docout.matches(["a", "...", "x"], actual, [])
    assert not docout.matches(["a", "b", "c", "...", "c", "d", "e"], actual, [])
    assert docout.shown_output(["a", "...", "x", "y"], actual) == ["a", "...", "d", "e"]
    assert docout.shown_output(["x"], actual) == actual


def test_a_stale_block_is_found_and_rewritten(tmp_path):
    page = _page(
        tmp_path,
        "Intro.\n\n<!-- doc-output -->\n```\n$ coopsched policies --format csv\nstale line\n"
        "```\n\nAfter.\n",
    )
    (block,) = docout.parse_page(page)
    assert [c.text for c in block.commands] == ["coopsched policies --format csv"]
    stale = docout.stale(block)
    assert len(stale) == 1
    docout.rewrite(block, docout.run_block(block))
    text = page.read_text()
    assert "stale line" not in text and "fifo" in text and text.endswith("```\n\nAfter.\n")
    (again,) = docout.parse_page(page)
    assert docout.stale(again) == []


def test_commands_not_run_and_malformed_markers(tmp_path):
    ok = _page(tmp_path, "<!-- doc-output -->\n```\n$ sacct -a \\\n   -X > x.txt\n```\n")
    (block,) = docout.parse_page(ok)
    assert not block.commands[0].runs and docout.run_block(block) == [[]]
    for body, msg in [
        ("<!-- doc-output -->\ntext\n", "must precede"),
        ("<!-- doc-output -->\n```\n$ coopsched x\n", "not closed"),
        ("<!-- doc-output colour=red -->\n```\n```\n", "unknown doc-output option"),
        ("<!-- doc-output -->\n```\nout\n```\n", "before the first"),
        ("<!-- doc-output -->\n```\n$ coopsched x\n...\na\n...\n```\n", "at most one"),
        ("<!-- doc-output -->\n```\n$ sacct\nout\n```\n", "not run"),
    ]:
        with pytest.raises(docout.DocOutputError, match=msg):
            docout.parse_page(_page(tmp_path, body))


def test_numba_compile_notice_is_left_out_of_outputs():
    """The one-time notice depends on numba's cache, not on the command (issue 26, item 6)."""
    from coopsched.online.jit import notice_line

    assert notice_line(20).startswith(docout.COMPILE_NOTICE)
