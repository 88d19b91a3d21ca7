"""mkdocs hooks that build the documentation site from the repository as it is (mkdocs.yml).

* **The home page is README.md**, its links rewritten for the site: ``docs/X`` becomes ``X``.
* **Files of the repository that a page links to outside docs/** (the committed
  ``benchmarks/results-*.txt``, say) are copied into the site under ``repo/`` and the links
  rewritten to them, so that each link works both on the site and in the repository's own
  view. A link to a file that does not exist is left alone: the strict build reports it.
* **The API reference** is one page per public module (``scripts/api_names.py``), made
  from the installed package, and added to the nav: a module that moves or appears is
  documented without an edit here. ``reference/index.md`` documents ``coopsched.__all__``.
* **A public name without a docstring** is a warning, so ``mkdocs build --strict`` fails.
"""

from __future__ import annotations

import logging
import posixpath
import re
import sys
from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "scripts"))
import api_names  # noqa: E402  (scripts/ is not a package)
from griffe_rst import to_markdown  # noqa: E402

log = logging.getLogger("mkdocs.hooks.coopsched")

# a Markdown link or image target: ](target) or ](target "title")
LINK = re.compile(r"(\]\()([^)\s]+)((?:\s+\"[^\"]*\")?\))")
FENCE = re.compile(r"^(```|~~~)")
REPO = "repo"  # where the site keeps the repository files that pages link to
REFERENCE = "reference"


def _outside_code(text: str) -> list[tuple[bool, str]]:
    """``text`` cut into (in a fenced block?, part) pieces, so that links are rewritten
    only in prose."""
    parts: list[tuple[bool, str]] = []
    inside, buf = False, []
    for line in text.splitlines(keepends=True):
        if FENCE.match(line.lstrip()):
            if not inside:
                parts.append((False, "".join(buf)))
                buf = [line]
            else:
                buf.append(line)
                parts.append((True, "".join(buf)))
                buf = []
            inside = not inside
            continue
        buf.append(line)
    parts.append((inside, "".join(buf)))
    return parts


def _rewrite(
    text: str,
    source: Path,
    page_uri: str,
    docs: Path,
    linked: set[str],
    folders: set[Path],
) -> str:
    """The links of ``text`` (a page read from ``source``, published as ``page_uri``)
    that resolve to a repository file outside ``docs`` point to its copy under ``repo/``;
    links into ``docs`` are made relative to the page, and a link to a folder points to
    its listing. ``linked`` collects the copies, ``folders`` the folders."""

    def one(m: re.Match[str]) -> str:
        target = m.group(2)
        if "://" in target or target.startswith(("#", "mailto:", "/")):
            return m.group(0)
        path, sep, anchor = target.partition("#")
        if not path:
            return m.group(0)
        where = (source.parent / path).resolve()
        if not where.exists() or not where.is_relative_to(ROOT):
            return m.group(0)  # a dead link stays dead: the strict build reports it
        if where in (ROOT / "README.md", docs):  # the home page (the site lists the pages)
            uri = "index.md"
        elif where.is_dir():  # a folder of docs/: its listing (_folder_index)
            if not where.is_relative_to(docs):
                return m.group(0)  # the strict build reports it
            folders.add(where)
            uri = f"{where.relative_to(docs).as_posix()}/index.md"
        elif where.is_relative_to(docs):
            uri = where.relative_to(docs).as_posix()
        else:  # a file of the repository: its copy
            uri = f"{REPO}/{where.relative_to(ROOT).as_posix()}"
            linked.add(where.relative_to(ROOT).as_posix())
        new = posixpath.relpath(uri, posixpath.dirname(page_uri) or ".")
        return f"{m.group(1)}{new}{sep}{anchor}{m.group(3)}"

    return "".join(part if code else LINK.sub(one, part) for code, part in _outside_code(text))


def _module_page(module: str) -> str:
    return f"# `{module}`\n\n::: {module}\n    options:\n      show_root_heading: false\n"


def _reference_index() -> str:
    """The page of ``coopsched.__all__``: each name, its summary and a link to where it is
    documented (the page of the module that defines it)."""
    lines = [
        "# API reference",
        "",
        "::: coopsched",
        "    options:",
        "      show_root_heading: false",
        "      members: false",
        "",
        "`import coopsched as cs` gives the names below (`coopsched.__all__`, each imported on",
        "first use); the pages that follow document every public module, one page each. The",
        "package is typed (it ships `py.typed`): mypy and IDEs check the code that uses it.",
        "",
        "| name | what it is |",
        "|---|---|",
    ]
    here = []
    for name, where, summary in api_names.top_level():
        what = (
            to_markdown(summary).replace("|", "\\|")
            or "the installed version of coopsched (a string)"
        )
        shown = f"`coopsched.{name}`"
        if where.count(".") == 1:  # defined in the package itself: documented below
            here.append(where)
        lines.append(f"| {f'[{shown}][{where}]' if where else shown} | {what} |")
    lines.append("")
    lines += [f"::: {where}\n" for where in here]
    return "\n".join(lines)


def _folder_index(folder: Path, docs: Path) -> str:
    """A page listing the files of ``folder`` (a folder of docs/ that a page links to)."""
    rel = folder.relative_to(docs).as_posix()
    lines = [f"# `{rel}/`", "", "The files of this folder, as committed:", ""]
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        lines.append(f"- [{name}]({name})")
    return "\n".join(lines) + "\n"


def _reference_nav(modules: list[str]) -> list[Any]:
    """The nav of the reference: the top-level names, then the modules of each
    subpackage under its name."""
    groups: dict[str, list[Any]] = {}
    for module in modules[1:]:
        top = ".".join(module.split(".")[:2])
        groups.setdefault(top, []).append({module: f"{REFERENCE}/{module}.md"})
    nav: list[Any] = [{"coopsched": f"{REFERENCE}/index.md"}]
    for top, pages in groups.items():
        nav.append(pages[0] if len(pages) == 1 else {top: pages})
    return nav


def on_config(config: Any) -> Any:
    modules = api_names.public_modules()
    config["extra"]["coopsched_modules"] = modules
    config["nav"].append({"API reference": _reference_nav(modules)})
    for name in api_names.undocumented():
        log.warning("%s: public, without a docstring (scripts/api_names.py)", name)
    return config


def on_files(files: Files, config: Any) -> Files:
    docs = Path(config["docs_dir"]).resolve()
    linked: set[str] = set()
    folders: set[Path] = set()
    readme = ROOT / "README.md"
    home = _rewrite(readme.read_text(), readme, "index.md", docs, linked, folders)
    files.append(File.generated(config, "index.md", content=home))
    for module in config["extra"]["coopsched_modules"][1:]:
        files.append(
            File.generated(config, f"{REFERENCE}/{module}.md", content=_module_page(module))
        )
    files.append(File.generated(config, f"{REFERENCE}/index.md", content=_reference_index()))
    for page in docs.rglob("*.md"):
        uri = page.relative_to(docs).as_posix()
        _rewrite(page.read_text(), page, uri, docs, linked, folders)
    for folder in sorted(folders):
        if not (folder / "index.md").exists():
            uri = f"{folder.relative_to(docs).as_posix()}/index.md"
            files.append(File.generated(config, uri, content=_folder_index(folder, docs)))
    for rel in sorted(linked):
        files.append(File.generated(config, f"{REPO}/{rel}", abs_src_path=str(ROOT / rel)))
    return files


def on_page_markdown(markdown: str, page: Any, config: Any, files: Files) -> str:
    if page.file.generated_by or page.file.src_uri.startswith((REFERENCE + "/", REPO + "/")):
        return markdown  # made above, links already rewritten
    docs = Path(config["docs_dir"]).resolve()
    source = docs / page.file.src_uri
    return _rewrite(markdown, source, page.file.src_uri, docs, set(), set())
