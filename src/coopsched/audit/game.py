"""The audit game: Definition 3.2 of Skowron & Rzadca applied to a recorded schedule.

``v(C)`` for every coalition ``C`` other than the grand one is ``C``'s value when it
schedules alone under REF (its members' jobs on its members' machines); ``v(grand)`` is
the recorded schedule's total ``psi_sp``. ``phi`` is the Shapley value of that game (Eq. 1),
so ``sum(phi) == sum(psi)`` exactly, and ``psi - phi`` is each organization's signed
surplus (docs/conventions.md §5).

REF builds all ``2^k - 1`` coalitions' schedules in one run
(:func:`coopsched.online.ref.ref_schedule`), and gives their values at the horizon
and at any checkpoints from that same run.
"""

from __future__ import annotations

from dataclasses import dataclass
from fractions import Fraction
from typing import TYPE_CHECKING

from ..online.ref import ref_schedule
from ..online.schedule import Schedule
from ..online.shapley import shapley
from ..online.utilities import psi_sp
from ..workloads.instance import Instance

if TYPE_CHECKING:
    import numpy as np


def recorded_starts(inst: Instance) -> np.ndarray:
    """The recorded start of every job of an audit instance (``inst.start``, docs/conventions.md §5);
    raise when the instance has none."""
    if inst.start is None:
        raise ValueError("the instance has no recorded starts ('start' per job)")
    return inst.start


def recorded_schedule(inst: Instance, horizon: int) -> Schedule:
    """The recorded schedule of an audit instance (starts from ``inst.start``)."""
    import numpy as np

    recorded = recorded_starts(inst)
    start = np.where(recorded < horizon, recorded, -1)
    return Schedule(inst, start, np.full(inst.n, -1, dtype=np.int64), "recorded", int(horizon))


def audit_phi(values: list[int], grand: int) -> list[Fraction]:
    """Shapley values of the game ``values`` with ``v(grand)`` replaced (Definition 3.2)."""
    v = list(values)
    v[-1] = grand
    v[0] = 0
    return shapley(v)


@dataclass
class ExactGame:
    """The exact audit at the horizon and at the curve's checkpoints."""

    psi: list[int]
    phi: list[Fraction]
    ref: Schedule
    times: list[int]
    psi_at: list[list[int]]
    phi_at: list[list[Fraction]]
    #: REF's own value of the grand coalition at the horizon (what the platform could have
    #: done under REF): the recorded total falls short of it by the platform's loss
    ref_total: int = 0
    #: the game's table at the horizon: ``values[C]`` for every coalition bitmask ``C``, with
    #: ``values[grand]`` the recorded total (Definition 3.2); the Owen value reads it
    values: list[int] | None = None


def exact_game(
    inst: Instance, horizon: int, times: list[int], backfill: str | None = None
) -> ExactGame:
    """``psi`` and exact ``phi`` at the horizon and at each of ``times`` (one REF run; for
    rigid jobs REF under the backfilling rule ``backfill``,
    :func:`coopsched.online.ref.rigid.ref_rigid_schedule`)."""
    k = inst.k
    if inst.rigid:
        from ..online.ref.rigid import ref_rigid_schedule

        ref, values = ref_rigid_schedule(inst, horizon, backfill, checkpoints=times)
    else:
        ref, values = ref_schedule(inst, horizon, checkpoints=times)
    cps = ref.info.get("checkpoints", [])
    cvals = ref.info.get("checkpoint_values", [])
    recorded = recorded_starts(inst)
    width = inst.processors
    psi = psi_sp(inst.org, recorded, inst.size, horizon, k, width)
    phi = audit_phi(values, sum(psi))
    psi_at, phi_at = [], []
    for t, vals in zip(cps, cvals, strict=True):
        p = psi_sp(inst.org, recorded, inst.size, t, k, width)
        psi_at.append(p)
        phi_at.append(audit_phi(vals, sum(p)))
    table = list(values)
    table[0], table[-1] = 0, sum(psi)
    return ExactGame(psi, phi, ref, list(cps), psi_at, phi_at, values[-1], table)
