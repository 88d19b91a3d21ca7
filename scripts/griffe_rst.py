"""A griffe extension for the API reference (mkdocs.yml): coopsched's docstrings are written
in reStructuredText habits, which the site renders as Markdown. It turns Sphinx roles
(``:func:`x```) into code, doctest sessions (``>>>``) into fenced ``pycon`` blocks and a
literal-block ``::`` into ``:`` (the indented block after it is a code block in both)."""

from __future__ import annotations

import re
from typing import Any

try:
    import griffe
except ImportError:  # the site's build has it (docs extra); to_markdown's tests need it not
    griffe = None

ROLE = re.compile(r":(?:py:)?(?:func|class|mod|meth|attr|data|exc|obj|const):`~?([^`]+)`")
LITERAL = re.compile(r"(\S)::$")


def to_markdown(text: str) -> str:
    """``text`` (a docstring) with its reStructuredText habits made Markdown."""
    text = ROLE.sub(r"`\1`", text)
    out: list[str] = []
    session = False
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(">>>") and not session:
            indent = line[: len(line) - len(line.lstrip())]
            out.append(f"{indent}```pycon")
            session = True
        elif session and not stripped:
            out.append(f"{indent}```")
            session = False
        if stripped == "::":
            continue
        out.append(LITERAL.sub(r"\1:", line))
    if session:
        out.append(f"{indent}```")
    return "\n".join(out)


if griffe is not None:

    class RstToMarkdown(griffe.Extension):
        """Rewrites each docstring once it is loaded (:func:`to_markdown`)."""

        def on_instance(self, *, obj: griffe.Object, **kwargs: Any) -> None:
            """Rewrite ``obj``'s docstring, if it has one."""
            if obj.docstring is not None:
                obj.docstring.value = to_markdown(obj.docstring.value)
