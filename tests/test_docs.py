"""The documentation ships whole: every relative link resolves, nothing points outside."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def _links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)  # code blocks are not links
    return [m.group(1) for m in LINK.finditer(text)]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_relative_links_resolve(page: Path) -> None:
    dead = []
    for target in _links(page):
        if "://" in target or target.startswith(("mailto:", "#")):
            continue
        path = target.split("#", 1)[0]
        if not (page.parent / path).exists():
            dead.append(target)
    assert not dead, f"{page.relative_to(ROOT)}: dead links {dead}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_docs_do_not_send_users_outside_the_package(page: Path) -> None:
    assert "../shared" not in page.read_text(), f"{page.relative_to(ROOT)} mentions ../shared"


def test_link_checker_finds_a_dead_link(tmp_path: Path) -> None:
    page = tmp_path / "p.md"
    page.write_text("see [a](missing.md) and [b](p.md) and ```[c](inside-code.md)```")
    assert _links(page) == ["missing.md", "p.md"]
