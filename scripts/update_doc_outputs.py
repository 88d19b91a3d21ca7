"""Check or refresh the literal command outputs quoted in README.md and docs/*.md.

A fenced block preceded by the marker line ``<!-- doc-output -->`` holds commands and what
they print::

    <!-- doc-output mask=seconds -->
    ```
    $ coopsched demo
    Synthetic bursty workload (seed 0): ...
    ```

* A line ``$ coopsched ...`` is a command (``\\`` continues it on the next line); the lines
  up to the next ``$`` line are its output (standard output and standard error together).
  A ``$`` line that does not start with ``coopsched`` (``$ sacct ...``) is shown, never
  run, and must have no output.
* A line ``...`` in an output stands for lines left out. At most one per output: the block
  keeps the first lines (before it) and the last lines (after it) of the real output.
* The marker's options: ``mask=COL,COL`` the table columns whose values may differ
  between runs (timings); ``cwd=DIR`` run in a copy of ``DIR`` (a folder of the repository
  with the files the commands name; a file ``NAME.in`` there is copied as ``NAME``, so that
  the repository tracks no file named like a trace) instead of a folder linking to ``docs/`` and
  ``tests/``; ``trace`` the commands read the Parallel Workloads Archive logs (the check
  is skipped where they are absent; they are never downloaded); ``slow`` skipped by the
  test unless ``COOPSCHED_DOC_SLOW=1``; ``python`` the block is the output of the
  ``python`` block just above it, run as a script.

Commands run with ``COLUMNS=100`` and their output not on a terminal, so the layout is the
same on every machine. Outputs are compared line by line after normalization: whitespace
runs are one space, table rows are compared cell by cell, the values of masked columns are
ignored, and border lines only by their characters.

Usage::

    python scripts/update_doc_outputs.py            # rewrite the stale blocks in place
    python scripts/update_doc_outputs.py --check    # list the stale blocks, exit 1 if any
    python scripts/update_doc_outputs.py --list     # the blocks under test
    python scripts/update_doc_outputs.py --all      # rewrite every block (timings too)

``tests/test_doc_outputs.py`` runs the same check on every block (issue 28 item 6).
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
MARK = re.compile(r"^<!-- doc-output(?P<opts>(?:\s+[a-z]+(?:=[^\s>]+)?)*)\s*-->\s*$")
FENCE = re.compile(r"^```")
ELLIPSIS = "..."
TABLE_ROW = ("│", "┃")
TABLE_EDGE = tuple("┏┡┗└┌├╭╰┣┠╞╘")
WIDTH = "100"
# numba's one-time notice (coopsched.online.jit.notice_line): it depends on the state of
# numba's cache, not on the command, so it is left out of what a command printed
COMPILE_NOTICE = "compiling numba kernels (once,"


class DocOutputError(ValueError):
    """A marked block that cannot be checked (names the page and line)."""


@dataclass
class Command:
    """One ``$`` line of a block and the output the page shows for it."""

    shown: list[str]  # the command's lines as shown (continuations included)
    expected: list[str] = field(default_factory=list)

    @property
    def text(self) -> str:
        return " ".join(line.rstrip("\\").strip() for line in self.shown)[2:].strip()

    @property
    def runs(self) -> bool:
        return self.text.startswith("coopsched ")


@dataclass
class Block:
    """A marked fenced block: where it is, its options and its commands."""

    page: Path
    line: int  # 1-based line of the opening fence
    first: int  # 0-based index of the first line inside the fence
    last: int  # 0-based index of the closing fence
    opts: dict[str, str]
    commands: list[Command]
    code: str = ""  # the python block above (option python)

    @property
    def name(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"

    @property
    def mask(self) -> list[str]:
        return [c for c in self.opts.get("mask", "").split(",") if c]


def _options(text: str) -> dict[str, str]:
    out = {}
    for item in text.split():
        key, _, value = item.partition("=")
        if key not in ("mask", "cwd", "trace", "slow", "python"):
            raise DocOutputError(f"unknown doc-output option {key!r}")
        out[key] = value
    return out


def parse_page(page: Path) -> list[Block]:
    """The marked blocks of one page."""
    lines = page.read_text().split("\n")
    blocks = []
    for i, line in enumerate(lines):
        m = MARK.match(line)
        if not m:
            continue
        where = f"{page.relative_to(ROOT) if page.is_relative_to(ROOT) else page}:{i + 1}"
        try:
            opts = _options(m.group("opts"))
        except DocOutputError as exc:
            raise DocOutputError(f"{where}: {exc}") from None
        if i + 1 >= len(lines) or not FENCE.match(lines[i + 1]):
            raise DocOutputError(f"{where}: the doc-output marker must precede a ``` fence")
        end = next((j for j in range(i + 2, len(lines)) if FENCE.match(lines[j])), None)
        if end is None:
            raise DocOutputError(f"{where}: the fenced block is not closed")
        body = lines[i + 2 : end]
        block = Block(page, i + 2, i + 2, end, opts, [])
        if "python" in opts:
            code_end = max((j for j in range(i) if lines[j].startswith("```")), default=None)
            code_start = (
                max((j for j in range(code_end or 0) if lines[j] == "```python"), default=None)
                if code_end is not None
                else None
            )
            if code_start is None or code_end is None:
                raise DocOutputError(f"{where}: option python needs a ```python block above")
            block.code = "\n".join(lines[code_start + 1 : code_end])
            block.commands = [Command(["$ python"], body)]
        else:
            cmd: Command | None = None
            continued = False
            for text in body:
                if continued and cmd is not None:
                    cmd.shown.append(text)
                elif text.startswith("$ "):
                    cmd = Command([text])
                    block.commands.append(cmd)
                elif cmd is None:
                    raise DocOutputError(f"{where}: output before the first $ command")
                else:
                    cmd.expected.append(text)
                continued = cmd is not None and text.endswith("\\") and not cmd.expected
            for c in block.commands:
                if not c.runs and c.expected:
                    raise DocOutputError(f"{where}: '{c.text}' is not run, so it has no output")
                if c.expected.count(ELLIPSIS) > 1:
                    raise DocOutputError(f"{where}: at most one '...' per output")
        blocks.append(block)
    return blocks


def blocks(pages: list[Path] | None = None) -> list[Block]:
    """Every marked block of the documentation (or of ``pages``)."""
    return [b for p in pages or PAGES for b in parse_page(p)]


# ------------------------------------------------------------------ normalization
def _cells(line: str) -> list[str]:
    sep = "┃" if "┃" in line else "│"
    return [c.strip() for c in line.strip().strip(sep).split(sep)]


def normalize(lines: list[str], mask: list[str]) -> list[str]:
    """Lines as compared: whitespace runs collapsed, table rows cell by cell with the
    masked columns' values replaced by ``*``, border lines reduced to their corners."""
    out: list[str] = []
    masked: set[int] = set()
    for line in lines:
        s = line.strip()
        if s.startswith(TABLE_EDGE):
            out.append(re.sub(r"[━─═]+", "-", s))
            continue
        if s.startswith(TABLE_ROW):
            cells = _cells(s)
            if s.startswith("┃"):  # a header row: find the masked columns
                masked = {i for i, c in enumerate(cells) if c in mask}
            else:
                cells = ["*" if i in masked else c for i, c in enumerate(cells)]
            out.append(" | ".join(cells))
            continue
        out.append(re.sub(r"\s+", " ", s))
    return out


def matches(expected: list[str], actual: list[str], mask: list[str]) -> bool:
    """``actual`` shows what ``expected`` shows, ``...`` standing for omitted lines."""
    if ELLIPSIS in expected:
        i = expected.index(ELLIPSIS)
        head, tail = expected[:i], expected[i + 1 :]
        if len(actual) < len(head) + len(tail):
            return False
        return normalize(head, mask) == normalize(actual[: len(head)], mask) and normalize(
            tail, mask
        ) == normalize(actual[len(actual) - len(tail) :], mask)
    return normalize(expected, mask) == normalize(actual, mask)


def diff(expected: list[str], actual: list[str], mask: list[str]) -> str:
    """A unified diff of what the page shows and what the command prints now."""
    import difflib

    return "\n".join(
        difflib.unified_diff(
            expected, shown_output(expected, actual), "shown", "printed now", lineterm="", n=1
        )
    )


def shown_output(expected: list[str], actual: list[str]) -> list[str]:
    """What the page should show for ``actual``: all of it, or the same number of first
    and last lines around ``...``."""
    if ELLIPSIS not in expected:
        return actual
    i = expected.index(ELLIPSIS)
    tail = len(expected) - i - 1
    return actual[:i] + [ELLIPSIS] + (actual[len(actual) - tail :] if tail else [])


# ------------------------------------------------------------------ running
def traces_folder() -> Path | None:
    """The folder of Parallel Workloads Archive logs: ``$COOPSCHED_TRACES`` or the nearest
    ``shared/traces`` above the checkout (the project's ``../shared/traces``; as
    tests/conftest.py finds it)."""
    env = os.environ.get("COOPSCHED_TRACES")
    if env:
        return Path(env.split(os.pathsep)[0])
    for parent in ROOT.parents:
        if (parent / "shared" / "traces").is_dir():
            return parent / "shared" / "traces"
    return None


def _workdir(block: Block, tmp: Path) -> Path:
    work = tmp / "work"
    if "cwd" in block.opts:
        src = ROOT / block.opts["cwd"]
        if not src.is_dir():
            raise DocOutputError(f"{block.name}: cwd={block.opts['cwd']} is not a folder")
        shutil.copytree(src, work)
        # NAME.in is the input NAME: the repository tracks no file named like a trace
        # (*.swf, *.swf.gz), even a tiny malformed one, so such inputs carry the suffix
        for p in work.rglob("*.in"):
            p.rename(p.with_suffix(""))
    else:
        work.mkdir()
        for name in ("docs", "tests"):
            (work / name).symlink_to(ROOT / name)
    return work


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env.update(
        COLUMNS=WIDTH,
        NO_COLOR="1",
        COOPSCHED_CACHE=str(tmp / "cache"),
        COOPSCHED_PWA_URL="http://127.0.0.1:9/",  # never download from here
        PYTHONHASHSEED="0",
    )
    env.pop("FORCE_COLOR", None)
    traces = traces_folder()
    if traces is not None:
        env["COOPSCHED_TRACES"] = str(traces)
    return env


def run_block(block: Block, timeout: float = 600) -> list[list[str]]:
    """Run every command of ``block``; the output lines of each (``[]`` for one not run)."""
    coopsched = Path(sys.executable).parent / "coopsched"
    exe = (
        [str(coopsched)]
        if coopsched.exists()
        else [sys.executable, "-c", "import sys; from coopsched.cli import main; sys.exit(main())"]
    )
    outs = []
    with tempfile.TemporaryDirectory() as t:
        tmp = Path(t)
        work = _workdir(block, tmp)
        env = _env(tmp)
        for cmd in block.commands:
            if "python" in block.opts:
                argv = [sys.executable, "-c", block.code]
            elif cmd.runs:
                argv = exe + shlex.split(cmd.text)[1:]
            else:
                outs.append([])
                continue
            res = subprocess.run(
                argv,
                cwd=work,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=timeout,
            )
            lines = res.stdout.rstrip("\n").split("\n") if res.stdout.strip() else []
            outs.append([line.rstrip() for line in lines if not line.startswith(COMPILE_NOTICE)])
    return outs


def stale(block: Block) -> list[tuple[Command, list[str]]]:
    """The commands of ``block`` whose shown output is not what they print now."""
    return [
        (c, out)
        for c, out in zip(block.commands, run_block(block), strict=True)
        if not matches(c.expected, out, block.mask)
    ]


def rewrite(block: Block, outputs: list[list[str]]) -> None:
    """Replace the block's outputs by ``outputs`` (keeping its ``...`` layout) in place."""
    lines = block.page.read_text().split("\n")
    body: list[str] = []
    for c, out in zip(block.commands, outputs, strict=True):
        if "python" not in block.opts:
            body += c.shown
        body += shown_output(c.expected, out)
    lines[block.first : block.last] = body
    block.page.write_text("\n".join(lines))


def skip_reason(block: Block) -> str | None:
    """Why the block cannot be checked here (``None``: it can)."""
    if "trace" in block.opts and traces_folder() is None:
        return "the Parallel Workloads Archive logs are not available here"
    return None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--check", action="store_true", help="list stale blocks; exit 1 if any")
    mode.add_argument("--list", action="store_true", help="list the blocks under test")
    mode.add_argument("--all", action="store_true", help="rewrite every block")
    ap.add_argument("--diff", action="store_true", help="with --check: show the differences")
    ap.add_argument("pages", nargs="*", type=Path, help="pages (default: README and docs/)")
    args = ap.parse_args(argv)
    found = blocks([p.resolve() for p in args.pages] or None)
    if args.list:
        for b in found:
            flags = " ".join(f"{k}={v}" if v else k for k, v in b.opts.items())
            for c in b.commands:
                print(f"{b.name}  {c.text if 'python' not in b.opts else 'python block'}  {flags}")
        return 0
    n_stale = 0
    # rewrite from the bottom of each page up, so that earlier blocks keep their lines
    for b in sorted(found, key=lambda b: (str(b.page), -b.first)):
        why = skip_reason(b)
        if why:
            print(f"{b.name}: skipped ({why})")
            continue
        outs = run_block(b)
        bad = [
            c for c, o in zip(b.commands, outs, strict=True) if not matches(c.expected, o, b.mask)
        ]
        if bad:
            n_stale += 1
        if args.check:
            for c, o in zip(b.commands, outs, strict=True):
                if c in bad:
                    print(f"{b.name}: stale: {c.text}")
                    if args.diff:
                        print(diff(c.expected, o, b.mask))
            continue
        if bad or args.all:
            rewrite(b, outs)
            print(f"{b.name}: rewritten")
    if args.check:
        print(f"{n_stale} stale block(s) of {len(found)}")
        return 1 if n_stale else 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
