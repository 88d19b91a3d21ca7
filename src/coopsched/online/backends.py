"""The compiled engine as a declared backend: which policies have a compiled pick rule.

:func:`~coopsched.online.engine.simulate` runs every policy in its Python event loop; a
policy listed in :data:`COMPILED` also runs in the numba loop of
:mod:`coopsched.online.compiled`, with identical schedules (tests run every listed policy
through both engines from this table). This module is the one place that says so: the rule
constants the kernel branches on, the exact class each rule reproduces (a subclass may
change ``select``, so it never inherits the compiled rule), and how the policy's state is
handed to the kernel and back. It imports neither numba nor the policies until asked, so
``simulate`` on a small instance never pays for them.

A policy gains a compiled rule by getting a branch in the kernel and an entry here.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    from .engine import Policy

# The kernel's pick rules (module-level integers: numba folds them as constants).
FIFO = 0
ROUNDROBIN = 1
FAIRSHARE = 2
UTFAIRSHARE = 3
CURRFAIRSHARE = 4
DIRECTCONTR = 5
RAND = 6


def _no_inputs(policy: Policy) -> dict:
    return {}


def _roundrobin_inputs(policy: Policy) -> dict:
    state = np.zeros((5, 2), dtype=np.int64)
    state[4, 0] = -1  # as reset(): nobody served yet (a position in the canonical order)
    return {"state": state}


def _roundrobin_done(policy: Policy, state: np.ndarray) -> None:
    p: Any = policy
    p._last = int(state[4, 0])


def _directcontr_done(policy: Policy, state: np.ndarray) -> None:
    """The final contribution accumulators, as the Python path leaves them."""
    p: Any = policy
    p._phi, p._wc, p._rc, p._tl = (state[r].tolist() for r in range(4))
    p._cache_t, p._cache = -1, {}


def _rand_inputs(policy: Policy) -> dict | None:
    """Every kept coalition's merged running-count events (their values are advanced along
    them exactly as :class:`~coopsched.online.utilities.ValueCurve` evaluates them); times
    at or past ``2^62``, which the kernel never reaches, are clipped there by ``prepare``.
    ``None`` before :meth:`Rand.prepare` has run (then only the Python engine can run it)."""
    p: Any = policy
    if not hasattr(p, "_c_time"):
        return None
    keep = [c for c, mask in enumerate(p._masks) if mask != 0]
    ptr = p._c_ptr
    coeff = p._coeff
    rand = {
        "c_ptr": np.array([ptr[c] for c in keep] + [ptr[-1]], dtype=np.int64),
        "c_time": p._c_time,
        "c_delta": p._c_delta,
        "coeff": np.ascontiguousarray(coeff[:, keep]).reshape(coeff.shape[0], -1),
        "n_samples": p._N,
    }
    return {"rand": rand}


@dataclass(frozen=True)
class CompiledRule:
    """One policy's compiled pick rule.

    ``cls``: ``"module:Class"`` of the exact class the rule reproduces; ``rule``: the
    kernel's constant; ``name``: the rule's name (bounds and messages); ``tracks_psi``:
    whether the kernel keeps ``psi_sp`` per organization for it; ``inputs(policy)``: extra
    keyword inputs of :func:`~coopsched.online.compiled.run_compiled` (``None``: the policy
    is not ready for the kernel); ``done(policy, state)``: hands the kernel's final state
    back to the policy object, as the Python loop would leave it.
    """

    cls: str
    rule: int
    name: str
    tracks_psi: bool = False
    inputs: Callable[[Policy], dict | None] = field(default=_no_inputs)
    done: Callable[[Policy, np.ndarray], None] | None = None


#: The declared table: every policy with a compiled rule.
COMPILED: tuple[CompiledRule, ...] = (
    CompiledRule("coopsched.online.policies.baselines:Fifo", FIFO, "fifo"),
    CompiledRule(
        "coopsched.online.policies.baselines:RoundRobin",
        ROUNDROBIN,
        "roundrobin",
        inputs=_roundrobin_inputs,
        done=_roundrobin_done,
    ),
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
        done=_directcontr_done,
    ),
    CompiledRule(
        "coopsched.online.policies.rand:Rand", RAND, "rand", tracks_psi=True, inputs=_rand_inputs
    ),
)

_by_class: dict[type, CompiledRule] = {}


def _resolve() -> dict[type, CompiledRule]:
    if not _by_class:
        for entry in COMPILED:
            module, _, name = entry.cls.partition(":")
            _by_class[getattr(importlib.import_module(module), name)] = entry
    return _by_class


def compiled_rule(policy: Policy) -> CompiledRule | None:
    """The compiled rule of this exact policy class (never of a subclass), or ``None``."""
    return _resolve().get(type(policy))


def compiled_names() -> list[str]:
    """Registry names of the policies with a compiled rule (for tests and listings)."""
    return [entry.name for entry in COMPILED]


def rule_named(name: str) -> CompiledRule:
    """The table's entry of a rule name (``"fifo"``, ...)."""
    for entry in COMPILED:
        if entry.name == name:
            return entry
    raise KeyError(f"no compiled rule {name!r}; the table has {', '.join(compiled_names())}")
