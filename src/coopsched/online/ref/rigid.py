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
only on their schedules before ``t``. Two paths compute them, with identical schedules and
values (tested):

* **in lockstep** (the default): every coalition at once, event time by event time, in one
  compiled kernel (:mod:`.rigid_kernel`) that simulates each coalition exactly as the
  compiled engine does (:mod:`coopsched.online.compiled`, rule ``REFC``) and
  ranks members from the Hart and Mas-Colell potential of every coalition, computed once
  per event time in float64 and trusted only where its proven error bounds decide the
  order, else from Eq. (1) on the exact values (as the sequential kernel does,
  :mod:`coopsched.online.ref.driver`). An event time costs at most ``O(k 2^k)``, so the
  whole run grows like ``2^k`` times the events, not ``3^k``; up to :data:`MAX_K_RIGID`
  organizations, when every value provably stays below 2^62 (:func:`_lockstep`);
* **coalition by coalition** (``engine="compiled"`` or ``"python"``, and the fallback when
  the lockstep bound fails, up to :data:`MAX_K_COALITIONS`): smaller coalitions first,
  each under the engine with a policy that reads its subcoalitions' finished schedules
  (exact value curves, :class:`~coopsched.online.utilities.ValueCurve`) and its own
  utilities from the engine: the definition, coalition by coalition, exact in integers
  (keys scaled by ``lcm(1..k)`` in the Python engine, by ``lcm(1..|C|)`` in the compiled
  one: the same ranking, :meth:`CoalitionRef.compiled_inputs`). Each coalition's running-processor
  events are built once, for its curve and for every superset's keys. Its cost is ``2^k``
  engine runs with ``2^(|C|-1)`` terms per key, about ``3^k``.

With sequential jobs (all ``q = 1``) both give the schedules of the fast kernel
(:mod:`coopsched.online.ref`), which the tests check.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...workloads.instance import Instance
from ..backends import CompiledFallback
from ..engine import Backend, Policy, SimView
from ..schedule import Schedule
from ..shapley import popcounts, shapley_weights
from ..utilities import ValueCurve, step_events
from .driver import _exact_values, canonical_coalitions, coalition_lattice, twin_classes

#: Organizations beyond which rigid REF is refused (the lockstep kernel's reach).
MAX_K_RIGID = 16
#: Organizations beyond which rigid REF is not run coalition by coalition (2^k engine runs,
#: about 3^k): beyond, only the lockstep kernel runs it.
MAX_K_COALITIONS = 12
#: How the lockstep kernel ranks: 0 the cheaper of Eq. (1) and the potential at each event
#: time, 1 Eq. (1) only, 2 the potential (for tests and measurements)
_LOCKSTEP_MODE = 0
#: The lockstep kernel's first pool size (``None``: its default; tests set it small so
#: that the pools grow)
_LOCKSTEP_POOL: int | None = None


class CoalitionRef(Policy):
    """REF's pick inside one coalition, its subcoalitions' value curves given (``curves``,
    and for the compiled engine their running-processor events, ``events``); its compiled
    rule is the engine's ``REFC`` (:meth:`compiled_inputs`)."""

    name = "ref-coalition"

    def __init__(self, coalition: int = 0, curves=None, events=None, seed: int = 0) -> None:
        super().__init__(seed)
        self.coalition = coalition
        self.curves = curves
        self.events = events

    def compiled_inputs(self) -> dict | None:
        """The coalition's key for the compiled engine, linear in the values of its subsets.

        REF's key in ``C`` is (Eq. (1), scaled by ``L_c = lcm(1..c)``, ``c = |C|``):
        ``L_c phi_u = sum_{S <= C-u} omega(|S|) (v(S+u) - v(S))`` with ``omega(s) = L_c /
        (c binom(c-1, s))``, integers. Every proper subset's value comes from its finished
        schedule, as running-processor events (``events[T]``,
        :func:`~coopsched.online.utilities.step_events`, built once per subset), with
        coefficient ``+omega(|T|-1)`` for a subset ``T`` holding ``u`` and ``-omega(|T|)``
        for one without; ``v(C)`` itself, the members' utilities in the schedule being
        built, has coefficient ``omega(c-1)`` (``own``). The engine ranks the members once
        per event time by ``L_c (phi - psi)``, ties to the older queue head; :meth:`select`
        ranks by ``L_k (phi - psi)``, the same exact integers times ``L_k / L_c``: a positive
        integer scale, so the order and the ties, hence the schedule, are the same (a
        singleton needs ``L_1 = 1``). The keys may pass int64: the engine sums them modulo
        2^64 beside float64 copies, exact as
        :func:`~coopsched.online.compiled._ref_keys_wrap_safely` proves before the run.
        ``None`` when a subset's times pass int64 (then the Python engine runs it)."""
        C, events = self.coalition, self.events
        if events is None:
            return None
        k = len(events).bit_length() - 1
        members = [u for u in range(k) if C >> u & 1]
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
        coeff = np.zeros((k, len(subsets)), dtype=np.int64)
        for j, T in enumerate(subsets):
            size_t = T.bit_count()
            for u in members:
                coeff[u, j] = int(omega[c, size_t - 1]) if T >> u & 1 else -int(omega[c, size_t])
        own = np.zeros(k, dtype=np.int64)
        own[members] = int(omega[c, c - 1])
        return {
            "c_ptr": np.array(ptr, dtype=np.int64),
            "c_time": np.concatenate(times) if times else np.zeros(0, np.int64),
            "c_delta": (np.concatenate(deltas) if deltas else np.zeros(0)).astype(np.int32),
            "coeff": coeff,
            "n_samples": int(L),
            "own": own,
        }

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
    ``coalition_runs`` (for tests: both must agree).

    ``engine`` says how the coalitions are simulated: ``"lockstep"``, all at once
    (:func:`_lockstep`; a :class:`ValueError` where its bound fails); ``"compiled"``,
    coalition by coalition, each in the compiled engine (:meth:`CoalitionRef.compiled_inputs`:
    keys modulo 2^64 beside float64 copies, exact while the coalition's values ``Mc t (t +
    1) / 2`` stay below 2^62), or in the Python engine where that bound fails;
    ``"python"``, coalition by coalition in the Python engine; ``"auto"`` (default), in
    lockstep where its bound holds, else as ``"compiled"``. ``info["engine"]`` says which
    ran (``"lockstep"`` or ``"coalitions"``) and ``info["coalition_engines"]`` counts the
    coalitions each engine simulated. Interchangeable organizations (no jobs, equal
    machines: :func:`~coopsched.online.ref.driver.twin_classes`) are simulated once, as in
    the sequential kernel: a coalition that differs from its canonical one
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
    if engine not in ("auto", "lockstep", "compiled", "python"):
        raise ValueError(f"engine: {engine!r}; choose from auto, lockstep, compiled, python")
    limit = MAX_K_RIGID if engine in ("auto", "lockstep") else MAX_K_COALITIONS
    if k > limit:
        raise ValueError(
            f"REF for rigid jobs simulates 2^k coalitions; k={k} is beyond its limit of {limit}"
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
            s.machine,  # one processor per job: the machines are kept (online/core.py)
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
    if rule == "first-fit-queue" and k > MAX_K_COALITIONS:
        raise ValueError(
            f"REF for rigid jobs under first-fit-queue (first-fit over the whole queue): "
            f"k={k} is beyond its limit of {MAX_K_COALITIONS}, as its lockstep kernel has no "
            "such rule yet and it runs coalition by coalition (choose backfill 'first-fit', "
            f"or at most {MAX_K_COALITIONS} organizations)"
        )
    if rule == "easy-queue" and k > MAX_K_COALITIONS:
        raise ValueError(
            f"REF for rigid jobs under easy-queue (EASY over the whole queue): k={k} is "
            f"beyond its limit of {MAX_K_COALITIONS}, as its lockstep kernel has no such "
            "rule yet and it runs coalition by coalition (choose backfill 'easy', or at "
            f"most {MAX_K_COALITIONS} organizations)"
        )
    if engine in ("auto", "lockstep"):
        done = _lockstep(inst, horizon, rule, checkpoints, symmetry)
        if isinstance(done, tuple):
            return done
        if engine == "lockstep" or k > MAX_K_COALITIONS:
            raise ValueError(f"REF for rigid jobs in lockstep: {done}")
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
    # every coalition through the engines' door, in the compiled engine where its keys are
    # proven exact (else, with a CompiledFallback warning kept quiet here, in Python)
    backend = Backend(inst, horizon, rule, "python" if engine == "python" else "compiled")
    for C in sorted(range(1, NC), key=lambda c: (int(pc[c]), c)):
        if canon is not None and canon[C] != C:
            # same size, members of lower index: already simulated (canon[C] < C)
            D = int(canon[C])
            curves[C], events[C], scheds[C] = curves[D], events[D], scheds[D]
            continue
        members = [u for u in range(k) if C >> u & 1]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompiledFallback)
            s = backend.run(CoalitionRef(C, curves, events), members)
        engines[s.info["engine"]] += 1
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
            "engine": "coalitions",
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


def _lockstep(
    inst: Instance,
    horizon: int | None,
    rule: str,
    checkpoints: list[int] | None,
    symmetry: bool,
) -> tuple[Schedule, list[int]] | str:
    """REF for rigid jobs with every coalition simulated in lockstep
    (:mod:`.rigid_kernel`), or why that kernel cannot prove its integers exact (a str).

    *Bounds.* As for one coalition in the compiled rigid engine
    (:func:`~coopsched.online.compiled._ref_keys_wrap_safely`, with the platform's
    machines ``M``): event times up to ``t_end`` (the horizon, or the last release plus the
    run times plus the longest job) with ``t_end (t_end + 1) < 2^63``, every value below
    ``M t_end (t_end + 1) / 2 < 2^62`` and processed work below ``M t_end < 2^62``. Then
    Eq. (1)'s keys are exact in two words (:func:`~.rigid_kernel._eq1_key`) and the float
    potential's error bound (:func:`~coopsched.online.ref.driver.float_potential_error`)
    holds. Checkpoints must lie in ``[0, horizon]`` (with a horizon): the values of jobs
    still running at the horizon are not followed beyond it.

    *Values.* At the horizon, from every coalition's record in closed form (no event at or
    after the horizon is processed), in Python integers; without a horizon, at the grand
    coalition's last completion (the kernel takes them then, every record being at most that
    old). Checkpoints up to ``t_end`` are taken in the kernel before the first event at or
    after them; later ones (after every event) from the final records in Python integers.

    *Pools.* Entries (a coalition running a job) and completion buckets (a job started at
    one time, by one or more coalitions) come from pools that start at ``16 * 2^k``
    entries (or the most the coalitions can run at once, one job per machine or fitting
    job, summed, if fewer) and ``4 n`` buckets, and grow (entries by half, buckets twice)
    whenever the kernel finds them short (it resumes where it stopped:
    :mod:`.rigid_kernel`)."""
    from ..compiled import _BACKFILL, _ref_keys_wrap_safely
    from ..rigid import too_wide_info
    from . import rigid_kernel as rk
    from .driver import float_potential_error
    from .kernel import CO_LAST, CO_RUNNING, CO_VALUE, CO_WORK, reciprocals

    if rule == "first-fit-queue":
        return (
            "its kernel has no whole-queue first-fit (first-fit-queue) yet; REF runs that "
            f"rule coalition by coalition, up to k = {MAX_K_COALITIONS} organizations"
        )
    if rule == "easy-queue":
        return (
            "its kernel has no whole-queue EASY (easy-queue) yet; REF runs that rule "
            f"coalition by coalition, up to k = {MAX_K_COALITIONS} organizations"
        )
    k = inst.k
    NC = 1 << k
    M = inst.total_machines
    order = inst.fifo_order()
    rel, size = inst.release[order], inst.size[order]
    width = inst.width[order]
    if object in (rel.dtype, size.dtype, width.dtype):
        return "times or sizes beyond int64"
    why = _ref_keys_wrap_safely(rel, size, M, horizon, None, None)
    if why is not None:
        return why
    n = len(order)
    t_end = int(rel.max()) + int(size.sum(dtype=object)) + int(size.max()) if n else 0
    if horizon is not None:
        t_end = min(t_end, int(horizon))
    cps_all = sorted({int(c) for c in checkpoints}) if checkpoints is not None else []
    if cps_all and (cps_all[0] < 0 or (horizon is not None and cps_all[-1] > int(horizon))):
        return "checkpoints outside [0, horizon]"
    owner = inst.org[order].astype(np.int64)
    req = (
        np.full(n, -1, dtype=np.int64)
        if inst.requested is None
        else np.ascontiguousarray(inst.requested[order], dtype=np.int64)
    )
    fits = width <= M
    if rule == "easy":
        bad = np.flatnonzero(fits & (req < 1))
        if bad.size:
            raise ValueError(
                f"backfill='easy' reads requested times, and job {int(order[bad[0]])} has none "
                "(give every job a requested time, or choose first-fit)"
            )
    pinned = (
        np.zeros(n, dtype=np.bool_)
        if inst.pinned is None
        else np.ascontiguousarray(inst.pinned[order], dtype=np.bool_)
    )
    # each organization's jobs (FIFO positions, all widths)
    org_jobs = np.argsort(owner, kind="stable").astype(np.int64)
    org_ptr = np.zeros(k + 1, dtype=np.int64)
    org_ptr[1:] = np.cumsum(np.bincount(owner, minlength=k))
    # coalitions: machines, stand-ins, and for each organization with jobs those that hold
    # it and some machine (its releases reach them), as the sequential kernel has them
    pc = popcounts(k)
    ids = np.arange(NC, dtype=np.int64)
    lat = coalition_lattice(inst, np.diff(org_ptr), symmetry)
    groups, canon, canon_list, mC = lat.twins, lat.canon, lat.canon_list, lat.mC
    rel_ptr, rel_idx = lat.rel_ptr, lat.rel_idx
    # the first job of each organization that fits each coalition (its queue's first head),
    # and how many fit: at most min(machines, jobs that fit) of them run at once
    first_fit = np.zeros((NC, k), dtype=np.int64)
    nfit = np.zeros(NC, dtype=np.int64)
    for u in range(k):
        w_u = width[org_jobs[org_ptr[u] : org_ptr[u + 1]]]
        if not len(w_u):
            first_fit[:, u] = org_ptr[u]
            continue
        low = np.minimum.accumulate(w_u)  # non-increasing: the first index at or below m
        first_fit[:, u] = org_ptr[u] + np.searchsorted(-low, -mC, side="left")
        hold = ((ids >> u) & 1).astype(bool)
        nfit[hold] += np.searchsorted(np.sort(w_u), mC[hold], side="right")
    bound = int(np.minimum(mC[canon_list], nfit[canon_list]).sum()) + 1
    L, omega = shapley_weights(k)
    # the float potential's cost in additions, as the sequential driver counts it: half an
    # addition per member, a value and a mispredicted loop exit per simulated coalition, or
    # (k >= 4) 4 per coalition of the lattice walked in blocks of 16, if cheaper
    cost_fpot = int((pc[canon_list] // 2 + 8).sum())
    fblocks = k >= 4 and cost_fpot > 4 * NC
    cost_fpot = min(cost_fpot, 4 * NC) if k >= 4 else cost_fpot
    run = rk.Run(
        k=k,
        bf=_BACKFILL[rule],
        T=np.int64(2**62 if horizon is None else min(int(horizon), 2**62)),
        has_T=horizon is not None,
        L=np.int64(L),
        eta=float_potential_error(k),
        cost_fpot=cost_fpot,
        fblocks=fblocks,
        last_fit=int(np.flatnonzero(fits)[-1]) + 1 if fits.any() else 0,
        mode=_LOCKSTEP_MODE,
        t0=np.int64(int(rel.min()) if n else 0),
    )
    jobs = rk.Jobs(
        rel=np.ascontiguousarray(rel, dtype=np.int64),
        owner=owner,
        size=np.ascontiguousarray(size, dtype=np.int64),
        width=np.ascontiguousarray(width, dtype=np.int64),
        req=req,
        pinned=pinned,
        org_ptr=org_ptr,
        org_jobs=org_jobs,
    )
    coal = rk.Coalitions(
        pc=pc,
        mC=mC,
        canon=canon,
        canon_list=canon_list,
        rel_ptr=rel_ptr,
        rel_idx=rel_idx,
        omega=omega,
        rinv=reciprocals(k),
    )
    t_start = int(rel.min()) if n else 0
    cps_k = np.array([c for c in cps_all if c <= t_end], dtype=np.int64)
    co = np.zeros((NC, rk.CO_FIELDS), dtype=np.int64)
    co[:, CO_LAST] = t_start  # every clock starts at the first release
    co[:, rk.CO_FREE] = mC
    co[:, rk.CO_VISIT] = -1
    co[:, rk.CO_EFIRST] = -1
    co[:, rk.CO_ELAST] = -1
    mem = np.zeros((NC, k, rk.MEM_FIELDS), dtype=np.int64)
    mem[:, :, rk.MEM_LAST] = t_start
    mem[:, :, rk.MEM_HEAD] = first_fit
    sc = np.zeros(rk.SC_FIELDS, dtype=np.int64)
    sc[rk.SC_BFREE] = -1
    state = _grow_pools(
        rk.State(
            co=co,
            mem=mem,
            ent=np.zeros((0, rk.E_FIELDS_EASY if rule == "easy" else rk.E_FIELDS), dtype=np.int64),
            bkt=np.zeros((0, 3), dtype=np.int64),
            bh=np.zeros((2, 0), dtype=np.int64),
            bstamp=np.full(max(n, 1), -1, dtype=np.int64),
            bid=np.zeros(max(n, 1), dtype=np.int64),
            vis=np.zeros(NC, dtype=np.int64),
            pf=np.zeros(NC),
            fco=np.ascontiguousarray(
                np.stack(
                    [co[:, CO_VALUE], co[:, CO_WORK], co[:, CO_RUNNING], co[:, CO_LAST] - t_start]
                ),
                np.float64,
            ),
            vv=np.zeros(NC, dtype=np.int64),
            vstamp=np.full(NC, -1, dtype=np.int64),
            sc=sc,
        ),
        _LOCKSTEP_POOL or min(bound, max(1024, 16 * NC)),
        _LOCKSTEP_POOL or max(1024, 4 * n),
    )
    out = rk.Outputs(
        out_start=np.full(n, -1, dtype=np.int64),
        stats=np.zeros(rk.ST_SLOTS, dtype=np.int64),
        cps=cps_k,
        cp_vals=np.zeros((len(cps_k), NC), dtype=np.int64),
        final_v=np.zeros(NC, dtype=np.int64),
    )
    while True:
        rk._rigid_kernel(run, jobs, coal, state, out)
        if not state.sc[rk.SC_RESUME]:
            break
        # enlarge the pool that is short: entries by half (then at most 2/3 full),
        # buckets twice
        ecap, bcap = state.ent.shape[0], state.bkt.shape[0]
        need, bneed = int(state.sc[rk.SC_NEED]), int(state.sc[rk.SC_BNEED])
        state = _grow_pools(
            state,
            max(3 * ecap // 2, 3 * need // 2 + 1) if 4 * need > 3 * ecap else ecap,
            max(2 * bcap, bneed) if bneed > bcap else bcap,
        )
        out.stats[rk.ST_GROWN] += 1
    stats = out.stats

    if horizon is not None:
        values = _exact_values(co, canon, "psi_sp", int(horizon))
    elif stats[rk.ST_FINAL]:
        values = [int(x) for x in out.final_v]
    else:  # nothing ever started
        values = [0] * NC
    values[0] = 0
    start = np.full(inst.n, -1, dtype=np.int64)
    start[order] = out.out_start
    sched = Schedule(
        instance=inst,
        start=start,
        machine=np.full(inst.n, -1, dtype=np.int64),
        policy="ref",
        horizon=None if horizon is None else int(horizon),
        info={
            "engine": "lockstep",
            "backfill": rule,
            "too_wide": too_wide_info(inst, order[~fits], M),
            "coalitions": NC - 1,
            "coalition_engines": {"lockstep": len(canon_list)},
            "twin_groups": groups,
            "simulated_coalitions": len(canon_list),
            "rigid": True,
            "event_times": int(stats[rk.ST_EVENTS]),
            "coalition_visits": int(stats[rk.ST_VISITS]),
            "coalition_ready": int(stats[rk.ST_READY]),
            "coalition_starts": int(stats[rk.ST_STARTS]),
            "rankings": int(stats[rk.ST_RANKINGS]),
            "potential_events": int(stats[rk.ST_POTENTIAL]),
            "float_unproven": int(stats[rk.ST_UNPROVEN]),
            "pool_entries": int(state.ent.shape[0]),
            "pool_buckets": int(state.bkt.shape[0]),
            "eq1_terms": int(stats[rk.ST_EQ1_TERMS]),
            "reservations": int(stats[rk.ST_RESERVATIONS]),
            "entries_peak": int(stats[rk.ST_PEAK]),
            "pool_growths": int(stats[rk.ST_GROWN]),
        },
    )
    if checkpoints is not None:
        rows = [[int(x) for x in row] for row in out.cp_vals[: int(stats[rk.ST_CPS])]]
        rows += [_exact_values(co, canon, "psi_sp", c) for c in cps_all[len(rows) :]]
        sched.info["checkpoints"] = cps_all
        sched.info["checkpoint_values"] = rows
    return sched, values


def _grow_pools(state, ecap: int, bcap: int):
    """``state`` with (at least) ``ecap`` entries and ``bcap`` buckets: the new entries
    free (coalition -1), the new buckets put on the free list."""
    from . import rigid_kernel as rk

    sc = state.sc

    def extend(a: np.ndarray, cap: int) -> np.ndarray:
        b = np.zeros((max(cap, a.shape[0], 1),) + a.shape[1:], dtype=a.dtype)
        b[: a.shape[0]] = a
        return b

    old = state.ent.shape[0]
    ent = extend(state.ent, ecap)
    ent[old:, rk.E_COAL] = -1
    old = state.bkt.shape[0]
    bkt = extend(state.bkt, bcap)
    if len(bkt) > old:
        bkt[old:, rk.B_LINK] = np.arange(old + 1, len(bkt) + 1)
        bkt[-1, rk.B_LINK] = sc[rk.SC_BFREE]  # the new buckets, then the old free ones
        sc[rk.SC_BFREE] = old
    return state._replace(ent=ent, bkt=bkt, bh=extend(state.bh.T, len(bkt)).T.copy())
