"""The compiled engine as a declared backend: which policies have a compiled pick rule.

:func:`~coopsched.online.engine.simulate` runs every policy in its Python event loop
(:mod:`coopsched.online.core`); a policy listed in :data:`COMPILED` also runs in the numba
loop of :mod:`coopsched.online.compiled`, with identical schedules (tests run every listed
policy through both loops from this table). This module is the one place that says so: for
each exact class (a subclass may change ``select``, so it never inherits the compiled rule),
the rule it compiles to (a constant the engine's pick, :func:`~coopsched.online.compiled._pick`,
branches on) and whether the engine keeps ``psi_sp`` per organization for it. A policy hands
its state to the engine and takes the final state back through two methods of its own,
:meth:`~coopsched.online.engine.Policy.compiled_inputs` and
:meth:`~coopsched.online.engine.Policy.compiled_result`. This module imports nothing, so
``simulate`` on a small instance never pays for numba or the policies.

A policy gains a compiled rule by getting a pick function in the engine and an entry here.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# The engine's pick rules (module-level integers: numba folds them as constants).
FIFO = 0
ROUNDROBIN = 1
FAIRSHARE = 2
UTFAIRSHARE = 3
CURRFAIRSHARE = 4
DIRECTCONTR = 5
RAND = 6
#: REF inside one coalition (:mod:`coopsched.online.ref.rigid`, coalition by coalition):
#: RAND's key with the coalition's subsets as the kept coalitions and its own value as one
#: more term, ranked once per time (keys modulo 2^64 beside float64 copies)
REFC = 7


class CompiledFallback(UserWarning):
    """The compiled engine could not guarantee exact int64 arithmetic; Python ran instead."""


@dataclass(frozen=True)
class CompiledRule:
    """One policy's compiled pick rule: ``cls``, ``"module:Class"`` of the exact class the
    rule reproduces; ``rule``, the engine's constant; ``name``, the rule's name (bounds and
    messages); ``tracks_psi``, whether the engine keeps ``psi_sp`` per organization for it."""

    cls: str
    rule: int
    name: str
    tracks_psi: bool = False


#: The declared table: every policy with a compiled rule.
COMPILED: tuple[CompiledRule, ...] = (
    CompiledRule("coopsched.online.policies.baselines:Fifo", FIFO, "fifo"),
    CompiledRule("coopsched.online.policies.baselines:RoundRobin", ROUNDROBIN, "roundrobin"),
    CompiledRule(
        "coopsched.online.policies.fairshare:FairShare", FAIRSHARE, "fairshare", tracks_psi=True
    ),
    CompiledRule(
        "coopsched.online.policies.fairshare:UtFairShare",
        UTFAIRSHARE,
        "utfairshare",
        tracks_psi=True,
    ),
    CompiledRule(
        "coopsched.online.policies.fairshare:CurrFairShare", CURRFAIRSHARE, "currfairshare"
    ),
    CompiledRule(
        "coopsched.online.policies.directcontr:DirectContr",
        DIRECTCONTR,
        "directcontr",
        tracks_psi=True,
    ),
    CompiledRule("coopsched.online.policies.rand:Rand", RAND, "rand", tracks_psi=True),
    CompiledRule("coopsched.online.ref.rigid:CoalitionRef", REFC, "ref-coalition", tracks_psi=True),
)

_by_path = {entry.cls: entry for entry in COMPILED}


def compiled_rule(policy: Any) -> CompiledRule | None:
    """The compiled rule of this exact policy class (never of a subclass), or ``None``. The
    class is known by its module and name, so nothing is imported here."""
    cls = type(policy)
    return _by_path.get(f"{cls.__module__}:{cls.__qualname__}")


def compiled_names() -> list[str]:
    """Registry names of the registered policies with a compiled rule (for tests and
    listings; REF inside a coalition is internal)."""
    return [entry.name for entry in COMPILED if entry.rule != REFC]


def rule_named(name: str) -> CompiledRule:
    """The table's entry of a rule name (``"fifo"``, ...)."""
    for entry in COMPILED:
        if entry.name == name:
            return entry
    raise KeyError(f"no compiled rule {name!r}; the table has {', '.join(compiled_names())}")
