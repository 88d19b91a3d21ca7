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
integers (keys scaled by ``lcm(1..k)`` in the Python engine, by ``lcm(1..|C|)`` in the
compiled one: the same ranking, :func:`_compiled_coalition`). Each coalition's
running-processor events are built once, for its curve and for every superset's keys. Its
cost is ``2^k`` engine runs with ``2^(|C|-1)`` terms per key: for small ``k``; with
sequential jobs (all ``q = 1``) it gives the schedules of the fast kernel
(:mod:`coopsched.online.ref`), which the tests check.
"""

from __future__ import annotations

import numpy as np

from ...workloads.instance import Instance
from ..engine import Policy, SimView, simulate
from ..schedule import Schedule
from ..shapley import popcounts, shapley_weights
from ..utilities import ValueCurve, step_events
from .driver import canonical_coalitions, twin_classes

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
            self._rank = sorted(key, key=lambda u: (-key[u], view.rank_position(u)))
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
    engine: str = "auto",
    symmetry: bool = True,
) -> tuple[Schedule, list[int]]:
    """REF's schedule of the grand coalition for rigid jobs under ``backfill``, and every
    coalition's value at the horizon (or at the end), exact (module docstring). With
    ``checkpoints``, ``info["checkpoint_values"]`` holds every coalition's value at each
    of them (``info["checkpoints"]``, sorted, distinct), as
    :func:`coopsched.online.ref.ref_schedule` gives them. When every job has one
    processor the fast kernel's sequential REF is the same schedule and is used, unless
    ``coalition_runs`` (for tests: both must agree). Each coalition runs in the compiled
    rigid engine (``engine="auto"``; :func:`_compiled_coalition`: keys modulo 2^64 beside
    float64 copies, exact while the coalition's values ``Mc t (t + 1) / 2`` stay below
    2^62), or in the Python engine (``engine="python"``, or where that bound fails);
    ``info["coalition_engines"]`` counts which. Interchangeable organizations (no jobs,
    equal machines: :func:`~coopsched.online.ref.driver.twin_classes`) are simulated once,
    as in the sequential kernel: a coalition that differs from its canonical one
    (:func:`~coopsched.online.ref.driver.canonical_coalitions`) only in which twins it
    holds has the same jobs, as many machines, subcoalitions of the same values (by
    induction on size) and twins that never queue a job, hence the same schedule and
    value; it reuses that coalition's (``symmetry=False`` simulates every coalition, for
    tests). ``info["twin_groups"]`` and ``info["simulated_coalitions"]`` say how many
    were run."""
    from ..rigid import resolve_backfill

    inst = instance
    k = inst.k
    if k < 1:
        raise ValueError("REF needs at least one organization")
    if horizon is not None:
        from ...workloads.limits import check_horizon

        horizon = check_horizon(horizon)
    if k > MAX_K_RIGID:
        raise ValueError(
            f"REF for rigid jobs simulates 2^k coalitions one by one; k={k} is beyond its "
            f"limit of {MAX_K_RIGID}"
        )
    rule = resolve_backfill(inst, backfill)
    seq = None if coalition_runs else inst.one_processor_sequential()
    if seq is not None:
        # one processor per job: every rule is the greedy engine, so REF is the sequential
        # REF of the fast kernel (tested against this module on such instances)
        from .driver import ref_schedule

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
    # each coalition's running-processor events, built once and read by every superset
    events: list[tuple[np.ndarray, np.ndarray] | None] = [None] * NC
    width = inst.width
    engines = {"compiled": 0, "python": 0}
    groups = twin_classes(inst) if symmetry else []
    canon = canonical_coalitions(k, groups) if groups else None
    for C in sorted(range(1, NC), key=lambda c: (int(pc[c]), c)):
        if canon is not None and canon[C] != C:
            # same size, members of lower index: already simulated (canon[C] < C)
            D = int(canon[C])
            curves[C], events[C], scheds[C] = curves[D], events[D], scheds[D]
            continue
        members = [u for u in range(k) if C >> u & 1]
        fast = (
            None
            if engine == "python"
            else _compiled_coalition(inst, C, members, events, horizon, rule)
        )
        if fast is None:
            pol = _CoalitionRef(C, curves)
            s = simulate(inst, pol, horizon, members, backfill=rule, engine="python")
            engines["python"] += 1
        else:
            s = fast
            engines["compiled"] += 1
        keep = s.in_coalition & (s.start >= 0)
        p, q = inst.size[keep], width[keep]
        ev = step_events(s.start[keep], p, q)
        if len(p) and p.dtype != object and int(p.max()) * int(q.max()) * len(p) < 2**62:
            work = int((p * q).sum())  # processor-seconds, provably within int64
        else:
            work = sum(a * b for a, b in zip(p.tolist(), q.tolist(), strict=True))
        curves[C] = ValueCurve.from_events(ev[0], ev[1], work)
        events[C] = ev
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
            "coalition_engines": engines,
            "twin_groups": groups,
            "simulated_coalitions": engines["compiled"] + engines["python"],
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


def _compiled_coalition(inst, C, members, events, horizon, rule) -> Schedule | None:
    """Coalition ``C``'s REF schedule in the compiled rigid engine, or ``None`` when its
    comparisons cannot be proven exact there.

    REF's key in ``C`` is linear in the values of ``C``'s subsets (Eq. (1), scaled by
    ``L_c = lcm(1..c)``, ``c = |C|``): ``L_c phi_u = sum_{S <= C-u} omega(|S|) (v(S+u) -
    v(S))`` with ``omega(s) = L_c / (c binom(c-1, s))``, integers. Every proper subset's
    value comes from its finished schedule, as running-processor events (``events[T]``,
    :func:`~coopsched.online.utilities.step_events`, built once per subset), with
    coefficient ``+omega(|T|-1)`` for a subset ``T`` holding ``u`` and ``-omega(|T|)`` for
    one without; ``v(C)`` itself, the members' utilities in the schedule being built, has
    coefficient ``omega(c-1)``. The kernel ranks the members once per event time by
    ``L_c (phi - psi)``, ties to the older queue head. :class:`_CoalitionRef` ranks by
    ``L_k (phi - psi)``, the same exact integers times ``L_k / L_c``: a positive integer
    scale, so the order and the ties, hence the schedule, are the same (a singleton needs
    ``L_1 = 1``). The keys may pass int64: the kernel sums them modulo 2^64 beside float64
    copies, exact as
    :func:`~coopsched.online.compiled_rigid._ref_keys_wrap_safely` proves before the run."""
    from ..compiled_rigid import run_compiled_rigid

    k = inst.k
    c = len(members)
    L, omega = shapley_weights(c)
    subsets = []
    S = (C - 1) & C
    while S:
        subsets.append(S)
        S = (S - 1) & C
    times, deltas, ptr = [], [], [0]
    for T in subsets:
        t_, d_ = events[T]
        if t_.dtype == object:  # beyond int64: leave this coalition to Python integers
            return None
        times.append(np.minimum(t_, 2**62))
        deltas.append(d_)
        ptr.append(ptr[-1] + len(t_))
    coeff = np.zeros((k, max(len(subsets), 1)), dtype=np.int64)
    for j, T in enumerate(subsets):
        size_t = bin(T).count("1")
        for u in members:
            coeff[u, j] = int(omega[c, size_t - 1]) if T >> u & 1 else -int(omega[c, size_t])
    own = np.zeros(k, dtype=np.int64)
    own[members] = int(omega[c, c - 1])
    rand = {
        "c_ptr": np.array(ptr, dtype=np.int64),
        "c_time": np.concatenate(times) if times else np.zeros(0, np.int64),
        "c_delta": np.concatenate(deltas) if deltas else np.zeros(0, np.int64),
        "coeff": coeff[:, : len(subsets)] if subsets else np.zeros((k, 0), np.int64),
        "n_samples": int(L),
    }
    out = run_compiled_rigid(
        inst, "ref-coalition", rule, horizon=horizon, members=tuple(members), rand=rand, own=own
    )
    if isinstance(out, str):
        return None
    from ..rigid import too_wide_info

    start, _, wide, M = out
    return Schedule(
        instance=inst,
        start=start,
        machine=np.full(inst.n, -1, dtype=np.int64),
        policy="ref",
        horizon=None if horizon is None else int(horizon),
        members=tuple(members),
        info={"engine": "compiled", "backfill": rule, "too_wide": too_wide_info(inst, wide, M)},
    )
