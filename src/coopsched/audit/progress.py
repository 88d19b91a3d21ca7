"""Progress messages of an audit: text with a kind, for whoever shows them.

:func:`coopsched.audit.audit` tells its ``progress`` callable what it is doing, one
:class:`Progress` (a ``str``) at a time. Its ``kind`` says how much it matters to someone
not watching a terminal: ``"step"`` (a phase begins: reading the log, REF over the
coalitions, a counterfactual), ``"look"`` (the sampling looked at its estimates: orders
used, signs decided, time spent and left; ``coopsched audit`` prints one line per look off
a terminal) and ``"tick"`` (within a look, at most every few seconds: for a live line).
"""

from __future__ import annotations

from collections.abc import Callable

__all__ = ["Progress", "Say", "step", "look", "tick"]

#: What the audit calls with each message.
Say = Callable[[str], None]


class Progress(str):
    """A progress message: the text, and :attr:`kind` (``step``, ``look`` or ``tick``)."""

    kind: str

    def __new__(cls, text: str, kind: str = "step") -> Progress:
        out = super().__new__(cls, text)
        out.kind = kind
        return out


def step(text: str) -> Progress:
    """A phase of the audit begins."""
    return Progress(text, "step")


def look(text: str) -> Progress:
    """The sampling looked at its estimates (one line each off a terminal)."""
    return Progress(text, "look")


def tick(text: str) -> Progress:
    """Within a look: how far the sampling has got (a live line's update)."""
    return Progress(text, "tick")
