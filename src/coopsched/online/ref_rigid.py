"""REF for rigid parallel jobs under a backfilling rule (Skowron & Rzadca, Fig. 1 with Fig. 3,
extended to the rigid model of :mod:`coopsched.online.rigid`).

Every coalition ``C`` schedules only its members' jobs on its members' machines, under the
same backfilling rule; a job wider than ``C``'s machines never starts in ``C`` and does not
hold its organization's later jobs there (docs/conventions.md, rigid jobs). When ``C`` asks
whose job is next at ``t``, it answers as REF does for sequential jobs: the member ``u``
with the largest ``phi_u - psi_u``, ``phi_u`` the Shapley value of ``u`` in the game
restricted to ``C`` (the values at ``t`` of ``C``'s subcoalitions, Eq. (1)) and ``psi_u``
its utility in ``C``'s schedule; the ranking is made once at ``t`` and kept for every pick
at ``t`` (the literal reading: the winner keeps receiving machines); ties to the older
queue head at the time of the ranking. The rule decides what happens
when that job does not fit.

A coalition's decisions at ``t`` depend on its subcoalitions' values at ``t``, which depend
only on their schedules before ``t``. So the coalitions are simulated one after the other,
smaller ones first, each under the engine with a policy that reads its subcoalitions'
finished schedules (exact value curves, :class:`~coopsched.online.utilities.ValueCurve`) and
its own utilities from the engine: the definition, coalition by coalition, exact in
integers (keys scaled by ``lcm(1..k)``). Its cost is ``2^k`` engine runs with ``2^(|C|-1)``
terms per key: for small ``k``; with sequential jobs (all ``q = 1``) it gives the schedules
of the fast kernel (:mod:`coopsched.online.policies.ref`), which the tests check.
"""

from __future__ import annotations

import numpy as np

from ..workloads.instance import Instance
from .engine import Policy, SimView, simulate
from .schedule import Schedule
from .shapley import popcounts, shapley_weights
from .utilities import ValueCurve

#: Organizations beyond which rigid REF (2^k engine runs) is refused.
MAX_K_RIGID = 12


class _CoalitionRef(Policy):
    """REF's pick inside one coalition, its subcoalitions' value curves given."""

    name = "ref-coalition"

    def __init__(self, coalition: int = 0, curves=None, seed: int = 0) -> None:
        super().__init__(seed)
        self.coalition = coalition
        self.curves = curves

    def reset(self, view: SimView) -> None:
        self._t = -1
        self._rank: list[int] = []
        k = view.k
        self._L, self._omega = shapley_weights(k)
        self._pc = popcounts(k)

    def _keys(self, view: SimView) -> dict[int, int]:
        """``L (phi_u - psi_u)`` of every member with a queued job, at ``view.t``."""
        t, C = view.t, self.coalition
        values = {0: 0}
        S = (C - 1) & C
        while S:
            values[S] = self.curves[S].psi(t)
            S = (S - 1) & C
        psi = {u: view.psi(u) for u in view.members}
        values[C] = sum(psi.values())
        c = int(self._pc[C])
        keys = {}
        for u in view.members:
            if not view.queued[u]:
                continue
            ub = 1 << u
            rest = C ^ ub
            s = rest
            acc = 0
            while True:
                acc += int(self._omega[c, self._pc[s]]) * (values[s | ub] - values[s])
                if s == 0:
                    break
                s = (s - 1) & rest
            keys[u] = acc - self._L * psi[u]
        return keys

    def select(self, view: SimView) -> int:
        if view.t != self._t:  # one ranking per event time (the literal reading)
            self._t = view.t
            key = self._keys(view)
            self._rank = sorted(key, key=lambda u: (-key[u], view.head_position(u)))
        waiting = view.waiting
        for u in self._rank:  # the best ranked that may start now keeps receiving machines
            if waiting[u]:
                return u
        return -1


def ref_rigid_schedule(
    instance: Instance,
    horizon: int | None,
    backfill: str | None = None,
    checkpoints: list[int] | None = None,
    *,
    coalition_runs: bool = False,
) -> tuple[Schedule, list[int]]:
    """REF's schedule of the grand coalition for rigid jobs under ``backfill``, and every
    coalition's value at the horizon (or at the end), exact (module docstring). With
    ``checkpoints``, ``info["checkpoint_values"]`` holds every coalition's value at each
    of them (``info["checkpoints"]``, sorted, distinct), as
    :func:`coopsched.online.policies.ref.ref_schedule` gives them. When every job has one
    processor the fast kernel's sequential REF is the same schedule and is used, unless
    ``coalition_runs`` (for tests: both must agree)."""
    from .rigid import resolve_backfill

    inst = instance
    k = inst.k
    if k < 1:
        raise ValueError("REF needs at least one organization")
    if horizon is not None:
        from ..workloads.limits import check_horizon

        horizon = check_horizon(horizon)
    if k > MAX_K_RIGID:
        raise ValueError(
            f"REF for rigid jobs simulates 2^k coalitions one by one; k={k} is beyond its "
            f"limit of {MAX_K_RIGID}"
        )
    rule = resolve_backfill(inst, backfill)
    if inst.n and (inst.width == 1).all() and not coalition_runs:
        # one processor per job: every rule is the greedy engine, so REF is the sequential
        # REF of the fast kernel (tested against this module on such instances)
        from .policies.ref import ref_schedule

        seq = Instance(
            inst.organizations,
            inst.org,
            inst.release,
            inst.size,
            meta=dict(inst.meta),
            start=inst.start,
            pinned=inst.pinned,
            ids=inst.ids,
        )
        s, values = ref_schedule(seq, horizon, checkpoints=checkpoints)
        out = Schedule(
            inst,
            s.start,
            np.full(inst.n, -1, dtype=np.int64),
            "ref",
            s.horizon,
            info={
                **s.info,
                "backfill": rule,
                "rigid": True,
                "engine": "kernel",
                "too_wide": {"count": 0, "machines": inst.total_machines, "first": []},
            },
        )
        return out, values
    NC = 1 << k
    pc = popcounts(k)
    curves: list[ValueCurve | None] = [None] * NC
    scheds: list[Schedule | None] = [None] * NC
    width = inst.width
    for C in sorted(range(1, NC), key=lambda c: (int(pc[c]), c)):
        members = [u for u in range(k) if C >> u & 1]
        pol = _CoalitionRef(C, curves)
        s = simulate(inst, pol, horizon, members, backfill=rule, engine="python")
        keep = s.in_coalition
        curves[C] = ValueCurve(s.start[keep], inst.size[keep], width[keep])
        scheds[C] = s
    grand = scheds[NC - 1]
    assert grand is not None
    t_end = grand._at(horizon)
    values = [0] + [c.psi(t_end) for c in curves[1:] if c is not None]
    out = Schedule(
        instance=inst,
        start=grand.start,
        machine=grand.machine,
        policy="ref",
        horizon=None if horizon is None else int(horizon),
        info={
            "engine": "python",
            "backfill": rule,
            "too_wide": grand.info.get("too_wide"),
            "coalitions": NC - 1,
            "rigid": True,
        },
    )
    if checkpoints is not None:
        cps = sorted({int(c) for c in checkpoints})
        out.info["checkpoints"] = cps
        out.info["checkpoint_values"] = [
            [0] + [c.psi(t) for c in curves[1:] if c is not None] for t in cps
        ]
    return out, values
