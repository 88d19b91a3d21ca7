"""The front page and the documentation site's structure (issue 39 items 3 and 4), checked
without building the site (``mkdocs build --strict`` in .ci/run builds it; the browser checks
are in tests/test_site_browser.py).

* README.md is a front page: about 250 lines, the two commands first, a tour with real output,
  and a headline table whose every figure is the committed results file's.
* Every page of docs/ is in the site's nav (mkdocs.yml), and every nav entry is a page.
* Every public name of coopsched has a docstring (``scripts/api_names.py``), and the check
  finds one that has none.
"""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


def _script(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "scripts" / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


api_names = _script("api_names")


# ---------------------------------------------------------------- the front page
def test_readme_is_a_front_page():
    lines = README.read_text().split("\n")
    assert len(lines) <= 260, f"README.md has {len(lines)} lines (a front page: about 250)"
    assert lines[2:6] == [
        "```bash",
        "python3 -m venv .venv && .venv/bin/pip install -e . && .venv/bin/coopsched demo",
        'python3 -m venv .venv && .venv/bin/pip install -e ".[test]" && .venv/bin/python -m pytest -q',
        "```",
    ]
    headings = [x for x in lines if x.startswith("## ")]
    for wanted in ("## A tour", "## Python", "## Performance against the peers", "## Citing"):
        assert wanted in headings


def test_the_tour_shows_real_output_of_each_step():
    """The tour's commands are ``doc-output`` blocks, which tests/test_doc_outputs.py reruns."""
    docout = _script("update_doc_outputs")
    commands = [c.text for b in docout.parse_page(README) for c in b.commands]
    for step in ("coopsched demo", "coopsched audit", "coopsched compare --trace LPC-EGEE"):
        assert any(c.startswith(step) for c in commands), step
    assert any("--jobs rigid" in c for c in commands)
    assert any(b.opts.keys() >= {"python"} for b in docout.parse_page(README))


def _peer_table() -> list[list[str]]:
    text = README.read_text()
    section = text[text.index("## Performance against the peers") :]
    section = section[: section.index("\n## ")]
    rows = [line for line in section.split("\n") if line.startswith("| ")]
    return [[c.strip() for c in row.strip("|").split("|")] for row in rows[1:]]


def test_readme_peer_table_quotes_the_results_file():
    """Each figure of the headline table links to benchmarks/results-peer.txt and is its
    value: per case (in the file's order: sequential at load 0.8, rigid 5k, 20k, 100k,
    sequential at load 1.5) the CPU seconds in process and the ratios."""
    peer = (ROOT / "benchmarks" / "results-peer.txt").read_text()
    cases = re.split(r"\n(?=synthetic|HPC2N)", peer)[1:]
    found = {}
    for case in cases:
        head = case.split("\n", 1)[0]
        load = re.search(r"load ([\d.]+)", head)
        first = re.search(r"first ([\d,]+) jobs", head)
        key = f"load {load.group(1)}" if load else f"first {first.group(1)}"
        found[key] = {
            "coopsched": re.search(r"in-process  coopsched simulate\s+([\d.]+)", case).group(1),
            "accasim": re.search(r"in-process  AccaSim\s+([\d.]+)", case).group(1),
            "ratio": re.search(r"in-process ratio AccaSim / coopsched: CPU ([\d,.]+)x", case).group(
                1
            ),
            "whole": re.search(
                r"whole-process ratio AccaSim / coopsched: CPU ([\d.]+)x", case
            ).group(1),
            "same": (re.search(r"identical start times ([\d,]+ / [\d,]+)", head) or [None, "all"])[
                1
            ],
        }
    rows = _peer_table()
    assert len(rows) == len(found) == 5
    link = "](benchmarks/results-peer.txt)"
    for label, same, ours, theirs, ratio, whole in rows:
        key = re.search(r"load [\d.]+|first [\d,]+", label).group(0)
        want = found[key]
        assert ours == f"[{want['coopsched']} s{link}" and theirs == f"[{want['accasim']} s{link}"
        assert ratio == f"[{float(want['ratio'].replace(',', '')):,.0f}{link}"
        assert whole == f"[{want['whole']}{link}"
        if want["same"] == "all":
            assert same == "all" and "identical start times in both simulators: yes" in peer
        else:
            assert same == f"[{want['same'].replace(' / ', ' of ')}{link}"


# ---------------------------------------------------------------- the site's structure
def _nav_pages(nav) -> list[str]:
    pages = []
    for entry in nav:
        value = next(iter(entry.values())) if isinstance(entry, dict) else entry
        pages += _nav_pages(value) if isinstance(value, list) else [value]
    return pages


def _mkdocs_config() -> dict:
    class Loader(yaml.SafeLoader):
        pass

    # mkdocs.yml names Python objects (the GitHub-style slugs); their value does not matter here
    Loader.add_multi_constructor("tag:yaml.org,2002:python/", lambda *_: None)
    return yaml.load((ROOT / "mkdocs.yml").read_text(), Loader=Loader)


def test_every_page_is_in_the_nav_and_every_nav_entry_is_a_page():
    config = _mkdocs_config()
    nav = _nav_pages(config["nav"])
    pages = {
        p.relative_to(ROOT / "docs").as_posix()
        for p in (ROOT / "docs").rglob("*.md")
        if not p.relative_to(ROOT / "docs").as_posix().startswith("results/")
    }
    assert "index.md" in nav  # the README, made the home page by scripts/docs_site.py
    missing = sorted(pages - set(nav))
    assert not missing, f"pages of docs/ missing from mkdocs.yml's nav: {missing}"
    dead = sorted(set(nav) - pages - {"index.md"})
    assert not dead, f"nav entries without a page: {dead}"
    assert config["validation"]["nav"]["omitted_files"] == "warn"  # and --strict fails on it


def test_every_public_name_has_a_docstring():
    missing = api_names.undocumented()
    assert not missing, f"public names without a docstring: {missing}"


def test_the_docstring_check_finds_an_undocumented_name(tmp_path, monkeypatch):
    pkg = tmp_path / "toypkg"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text('"""A toy package."""\n')
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "sub" / "mod.py").write_text(
        '"""A module."""\n'
        "from dataclasses import dataclass\n\n"
        "def bare(x):\n    return x\n\n"
        "def _private(x):\n    return x\n\n"
        "@dataclass\nclass Plain:\n    x: int = 0\n\n"
        '    def method(self):\n        """Documented."""\n\n'
        "    @property\n    def prop(self):\n        return 1\n\n"
        "class Child(Plain):\n"
        '    """A child."""\n\n'
        "    def method(self):\n        return 2\n"
    )
    (pkg / "_hidden.py").write_text("def f():\n    return 0\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert api_names.public_modules("toypkg") == ["toypkg", "toypkg.sub", "toypkg.sub.mod"]
    assert api_names.undocumented("toypkg") == [
        "toypkg.sub",
        "toypkg.sub.mod.bare",
        "toypkg.sub.mod.Plain",  # a dataclass's generated signature is no docstring
        "toypkg.sub.mod.Plain.prop",
    ]  # Child.method inherits Plain.method's docstring; _private and _hidden are not public


def test_the_top_level_names_are_documented_where_they_live():
    import coopsched

    top = api_names.top_level()
    assert [name for name, _, _ in top] == coopsched.__all__
    for name, where, summary in top:
        if name != "__version__":
            assert where.startswith("coopsched.") and summary, name
    # a name that lives in a private module is documented at its public path
    assert not any(part.startswith("_") for _, where, _ in top for part in where.split("."))


@pytest.mark.parametrize(
    "text, expected",
    [
        (
            "See :func:`coopsched.simulate` and :class:`~.Instance`.",
            "See `coopsched.simulate` and `.Instance`.",
        ),
        ("Usage::\n\n    coopsched demo", "Usage:\n\n    coopsched demo"),
        (">>> 1 + 1\n2\n\nafter", "```pycon\n>>> 1 + 1\n2\n```\n\nafter"),
    ],
)
def test_docstrings_become_markdown(text, expected):
    assert _script("griffe_rst").to_markdown(text) == expected
