"""REF, the exact fair algorithm (Skowron & Rzadca, Fig. 1 with Fig. 3; CONVENTIONS 1).

Every coalition ``C`` keeps its own greedy schedule of its members' jobs on its
members' machines. When ``C`` has a free machine and waiting jobs at ``t``, it starts
the oldest job of the member ``u`` with the largest ``phi_u - psi_u``, where ``phi_u`` is
``u``'s Shapley value in the game restricted to ``C`` (values of all subcoalitions at
``t``) and ``psi_u`` its utility in ``C``'s schedule; ties go to the lowest index.
``phi`` and ``psi`` do not change between the picks at one ``t``, so the winner keeps
receiving machines until its queue is empty (the "literal reading" of CONVENTIONS 1).

Implementation (one numba kernel, all ``2^k - 1`` coalitions in lockstep):

* events only: a coalition is visited at ``t`` only when one of its jobs completes or
  one of its members releases a job; values at ``t`` are closed-form in the time since
  the coalition's last event, so the cost grows with the events, not the horizon;
* no Shapley value is computed when it cannot change a decision: when only one member
  has waiting jobs, or when the free machines suffice for every waiting job;
* Shapley values use Eq. (1) with the integer weights of
  :func:`coopsched.online.shapley.shapley_weights`; at each event time the kernel
  picks the cheaper of (a) per deciding coalition, ``|C| 2^(|C|-1)`` terms, and (b) one
  ranked zeta transform per organization over all coalitions, ``O(k^2 2^k)``, so an
  event time costs at most ``O(k^3 2^k)`` and never ``3^k``;
* pinned jobs (:attr:`Instance.pinned`, CONVENTIONS 5) start in every coalition that
  has a free machine and contains their owner, ahead of every other job, oldest first;
* exact integers: every partial sum is bounded by ``L * v_max``; when that could
  exceed int64 the same kernel runs as plain Python on Python integers (slow, exact).

``utility="work"`` (resource utilization) is also available. For it the pick follows
Fig. 1's generic ``Distance`` rule (``rule="distance"``), with ``Delta psi`` the utility
of the tentatively started job's first unit part: the value at ``t`` itself is 0 for every
non-clairvoyant utility, which would make ``Distance`` equal for all candidates.
"""

from __future__ import annotations

from collections.abc import Iterable

import numba
import numpy as np

from ...workloads.instance import Instance
from ..engine import Policy
from ..schedule import Schedule, expand_coalition
from ..shapley import popcounts, shapley_weights
from ._registry import register

_NB = dict(cache=True, nogil=True)
_BIG = np.int64(2**62)


@numba.njit(**_NB)
def _hpush(h, off, n, key):
    i = n
    h[off + i] = key
    while i > 0:
        p = (i - 1) >> 1
        if h[off + p] <= h[off + i]:
            break
        tmp = h[off + p]
        h[off + p] = h[off + i]
        h[off + i] = tmp
        i = p
    return n + 1


@numba.njit(**_NB)
def _hpop(h, off, n):
    n -= 1
    h[off] = h[off + n]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        c = left
        if left + 1 < n and h[off + left + 1] < h[off + left]:
            c = left + 1
        if h[off + i] <= h[off + c]:
            break
        tmp = h[off + c]
        h[off + c] = h[off + i]
        h[off + i] = tmp
        i = c
    return n


@numba.njit(**_NB)
def _ref_kernel(
    k,
    machines,
    rel,
    size,
    org,
    org_ptr,
    org_jobs,
    T,
    utility,
    rule,
    L,
    omega,
    pc,
    accP,
    accW,
    V,
    WV,
    vals,
    Z,
    phi_dec,
    out_start,
    out_machine,
    final_v,
    stats,
    pinned,
    cps,
    cp_vals,
):
    NC = 1 << k
    ncp = cps.shape[0]
    cp = 0
    anypin = False
    for x in range(rel.shape[0]):
        if pinned[x]:
            anypin = True
            break
    G = NC - 1
    n = rel.shape[0]
    M = 0
    for u in range(k):
        M += machines[u]
    mC = np.zeros(NC, np.int64)
    for C in range(NC):
        s = 0
        for u in range(k):
            if (C >> u) & 1:
                s += machines[u]
        mC[C] = s
    freeM = mC.copy()
    hoff = np.zeros(NC + 1, np.int64)
    for C in range(NC):
        hoff[C + 1] = hoff[C] + mC[C]
    heap = np.zeros(max(hoff[NC], 1), np.int64)
    hsize = np.zeros(NC, np.int64)
    gheap = np.zeros(max(hoff[NC], 1), np.int64)
    gsize = 0
    fheap = np.arange(max(M, 1)).astype(np.int64)
    fsize = M
    mheap = np.zeros(max(M, 1), np.int64)
    msize = 0
    head = np.zeros((NC, k), np.int64)
    accR = np.zeros((NC, k), np.int64)
    RV = np.zeros(NC, np.int64)
    tl = np.zeros(NC, np.int64)
    nrel = np.zeros(k, np.int64)
    visit = np.full(NC, -1, np.int64)
    vis = np.zeros(NC, np.int64)
    ready = np.zeros(NC, np.int64)
    decide = np.zeros(NC, np.int64)
    keys = phi_dec[0, :].copy()  # same dtype as the values (int64 or Python ints)
    done = np.zeros(k, np.int64)
    wl = np.zeros(k, np.int64)
    MM = max(M, 1)
    i = 0
    while True:
        t_rel = rel[i] if i < n else _BIG
        t_comp = gheap[0] // NC if gsize > 0 else _BIG
        t = min(t_rel, t_comp)
        # checkpoints before this event: every coalition's value, closed-form since its
        # last event (jobs starting at t do not count at t)
        while cp < ncp and cps[cp] <= t and cps[cp] <= T:
            for S in range(NC):
                d = int(cps[cp]) - int(tl[S])
                r = int(RV[S])
                if utility == 0:
                    cp_vals[cp, S] = V[S] + WV[S] * d + r * (d * (d + 1) // 2)
                else:
                    cp_vals[cp, S] = WV[S] + r * d
            cp += 1
        if t >= T or t >= _BIG:
            break
        stats[0] += 1
        nvis = 0
        while gsize > 0 and gheap[0] // NC == t:
            C = gheap[0] % NC
            gsize = _hpop(gheap, 0, gsize)
            if visit[C] != t:
                visit[C] = t
                vis[nvis] = C
                nvis += 1
        relmask = 0
        while i < n and rel[i] == t:
            nrel[org[i]] += 1
            relmask |= 1 << org[i]
            i += 1
        if relmask != 0:
            for C in range(1, NC):
                if (C & relmask) != 0 and visit[C] != t and mC[C] > 0:
                    visit[C] = t
                    vis[nvis] = C
                    nvis += 1
        # pass 1: bring visited coalitions to t, free machines, find who must choose
        nready = 0
        for a in range(nvis):
            C = vis[a]
            d = int(t) - int(tl[C])
            if d > 0:
                tri = d * (d + 1) // 2
                for u in range(k):
                    if (C >> u) & 1:
                        r = int(accR[C, u])
                        accP[C, u] += accW[C, u] * d + r * tri
                        accW[C, u] += r * d
                r = int(RV[C])
                V[C] += WV[C] * d + r * tri
                WV[C] += r * d
                tl[C] = t
            off = hoff[C]
            while hsize[C] > 0 and heap[off] // k == t:
                u = heap[off] % k
                hsize[C] = _hpop(heap, off, hsize[C])
                accR[C, u] -= 1
                RV[C] -= 1
                freeM[C] += 1
            if C == G:
                while msize > 0 and mheap[0] // MM == t:
                    m = mheap[0] % MM
                    msize = _hpop(mheap, 0, msize)
                    fsize = _hpush(fheap, 0, fsize, m)
            if freeM[C] == 0:
                continue
            totw = 0
            nw = 0
            for u in range(k):
                if (C >> u) & 1:
                    w = nrel[u] - head[C, u]
                    if w > 0:
                        totw += w
                        nw += 1
            if totw == 0:
                continue
            ready[nready] = C
            decide[nready] = 1 if (nw > 1 and freeM[C] < totw) else 0
            nready += 1
        if nready == 0:
            continue
        # pass 2: Shapley values where a decision depends on them
        ndec = 0
        costA = 0
        need_u = 0
        for a in range(nready):
            if decide[a] == 1:
                ndec += 1
                C = ready[a]
                for u in range(k):
                    if (C >> u) & 1 and nrel[u] - head[C, u] > 0:
                        costA += 1 << (pc[C] - 1)
                        need_u |= 1 << u
        if ndec > 0:
            stats[1] += ndec
            for S in range(NC):
                d = int(t) - int(tl[S])
                r = int(RV[S])
                if utility == 0:
                    vals[S] = V[S] + WV[S] * d + r * (d * (d + 1) // 2)
                else:
                    vals[S] = WV[S] + r * d
            nu = 0
            for u in range(k):
                if (need_u >> u) & 1:
                    nu += 1
            costC = nu * k * k * (NC >> 1)
            if costA <= costC:
                stats[2] += 1
                for a in range(nready):
                    if decide[a] == 0:
                        continue
                    C = ready[a]
                    c = pc[C]
                    for u in range(k):
                        if (C >> u) & 1 and nrel[u] - head[C, u] > 0:
                            ub = 1 << u
                            rest = C ^ ub
                            acc = vals[0] * 0
                            s = rest
                            while True:
                                acc += int(omega[c, pc[s]]) * (vals[s | ub] - vals[s])
                                if s == 0:
                                    break
                                s = (s - 1) & rest
                            phi_dec[a, u] = acc
            else:
                stats[3] += 1
                for u in range(k):
                    if not (need_u >> u) & 1:
                        continue
                    ub = 1 << u
                    for S in range(NC):
                        for s in range(k):
                            Z[S, s] = 0
                        if (S & ub) == 0:
                            Z[S, pc[S]] = vals[S | ub] - vals[S]
                    for b in range(k):
                        if b == u:
                            continue
                        bb = 1 << b
                        for S in range(NC):
                            if (S & bb) != 0 and (S & ub) == 0:
                                for s in range(pc[S] + 1):
                                    Z[S, s] += Z[S ^ bb, s]
                    for a in range(nready):
                        if decide[a] == 0:
                            continue
                        C = ready[a]
                        if (C & ub) == 0 or nrel[u] - head[C, u] <= 0:
                            continue
                        c = pc[C]
                        acc = vals[0] * 0
                        for s in range(c):
                            acc += int(omega[c, s]) * Z[C ^ ub, s]
                        phi_dec[a, u] = acc
        # pass 3: start jobs
        for a in range(nready):
            C = ready[a]
            # pinned jobs (running when an audited window opened, CONVENTIONS 5) start
            # first, oldest first, whatever phi - psi says
            while anypin and freeM[C] > 0:
                bu = -1
                bpos = n
                for u in range(k):
                    if (C >> u) & 1 and nrel[u] - head[C, u] > 0:
                        pos = org_jobs[org_ptr[u] + head[C, u]]
                        if pinned[pos] and pos < bpos:
                            bpos = pos
                            bu = u
                if bu < 0:
                    break
                head[C, bu] += 1
                end = t + size[bpos]
                hsize[C] = _hpush(heap, hoff[C], hsize[C], end * k + bu)
                gsize = _hpush(gheap, 0, gsize, end * NC + C)
                accR[C, bu] += 1
                RV[C] += 1
                freeM[C] -= 1
                if C == G:
                    m = fheap[0]
                    fsize = _hpop(fheap, 0, fsize)
                    out_start[bpos] = t
                    out_machine[bpos] = m
                    msize = _hpush(mheap, 0, msize, end * MM + m)
            nw = 0
            for u in range(k):
                if (C >> u) & 1 and nrel[u] - head[C, u] > 0:
                    wl[nw] = u
                    nw += 1
            c = pc[C]
            for x in range(nw):
                done[x] = 0
                keys[x] = 0
                if decide[a] == 1:
                    u = wl[x]
                    if utility == 0:
                        X = phi_dec[a, u] - accP[C, u] * L
                    else:
                        X = phi_dec[a, u] - accW[C, u] * L
                    if rule == 0:
                        keys[x] = X
                    else:
                        y = X + L // c
                        keys[x] = abs(y) - abs(y - L)
            # largest key first; wl is in index order, so ties go to the lowest index
            for _step in range(nw):
                best = -1
                for x in range(nw):
                    if done[x] == 0 and (best < 0 or keys[x] > keys[best]):
                        best = x
                done[best] = 1
                u = wl[best]
                while freeM[C] > 0 and nrel[u] - head[C, u] > 0:
                    pos = org_jobs[org_ptr[u] + head[C, u]]
                    head[C, u] += 1
                    end = t + size[pos]
                    hsize[C] = _hpush(heap, hoff[C], hsize[C], end * k + u)
                    gsize = _hpush(gheap, 0, gsize, end * NC + C)
                    accR[C, u] += 1
                    RV[C] += 1
                    freeM[C] -= 1
                    if C == G:
                        m = fheap[0]
                        fsize = _hpop(fheap, 0, fsize)
                        out_start[pos] = t
                        out_machine[pos] = m
                        msize = _hpush(mheap, 0, msize, end * MM + m)
                if freeM[C] == 0:
                    break
    # values of every coalition at the horizon (or at the last event)
    t_end = T if T < _BIG else 0
    if T >= _BIG:
        for C in range(NC):
            if tl[C] > t_end:
                t_end = tl[C]
        for C in range(NC):
            off = hoff[C]
            for h in range(hsize[C]):
                e = heap[off + h] // k
                if e > t_end:
                    t_end = e
    while cp < ncp:  # checkpoints after the last event
        for S in range(NC):
            d = int(cps[cp]) - int(tl[S])
            r = int(RV[S])
            if utility == 0:
                cp_vals[cp, S] = V[S] + WV[S] * d + r * (d * (d + 1) // 2)
            else:
                cp_vals[cp, S] = WV[S] + r * d
        cp += 1
    for S in range(NC):
        d = int(t_end) - int(tl[S])
        r = int(RV[S])
        if utility == 0:
            final_v[S] = V[S] + WV[S] * d + r * (d * (d + 1) // 2)
        else:
            final_v[S] = WV[S] + r * d
    stats[4] = t_end


_UTILITIES = {"psi_sp": 0, "work": 1}
_RULES = {"fig3": 0, "distance": 1}


def ref_schedule(
    instance: Instance,
    horizon: int | None = None,
    *,
    utility: str = "psi_sp",
    rule: str | None = None,
    exact_python: bool | None = None,
    checkpoints: Iterable[int] | None = None,
) -> tuple[Schedule, list[int]]:
    """REF's schedule of the grand coalition and the value of every coalition at the end.

    Returns ``(schedule, values)`` where ``values[C]`` is ``v(C)`` at the horizon (or at
    the last event without a horizon) for every bitmask ``C``.
    With ``checkpoints`` (times ``0 <= t <= horizon``), ``schedule.info["checkpoint_values"]``
    holds, for each checkpoint in increasing order, the list of every coalition's value at
    that time, from the same run (the audit's curves over time use it).
    ``exact_python`` forces (True) or forbids (False) the Python-integer path; by
    default it is used only when int64 could overflow.
    """
    inst = instance
    k = inst.k
    if k < 1:
        raise ValueError("REF needs at least one organization")
    if k > 20:
        raise ValueError(f"REF simulates 2^k coalitions; k={k} is beyond reach")
    if utility not in _UTILITIES:
        raise ValueError(f"unknown utility {utility!r}; choose from {sorted(_UTILITIES)}")
    rule = rule or ("fig3" if utility == "psi_sp" else "distance")
    if rule not in _RULES:
        raise ValueError(f"unknown rule {rule!r}; choose from {sorted(_RULES)}")
    order = inst.fifo_order()
    rel = inst.release[order]
    size = inst.size[order]
    org = inst.org[order]
    counts = np.bincount(org, minlength=k)
    org_ptr = np.zeros(k + 1, dtype=np.int64)
    org_ptr[1:] = np.cumsum(counts)
    org_jobs = np.argsort(org, kind="stable").astype(np.int64)
    NC = 1 << k
    L, omega = shapley_weights(k)
    pc = popcounts(k)
    T = np.int64(_BIG if horizon is None else int(horizon))
    t_end = int(horizon) if horizon is not None else int(rel.max() + size.sum()) if len(rel) else 0
    M = inst.total_machines
    vmax = M * t_end * (t_end + 1) // 2 if utility == "psi_sp" else M * t_end
    safe = 8 * (k + 1) * L * max(vmax, 1) < 2**63
    python = (not safe) if exact_python is None else exact_python
    dtype = object if python else np.int64

    def z(*shape):
        a = np.zeros(shape, dtype=dtype)
        if python:
            a[...] = 0
        return a

    accP, accW = z(NC, k), z(NC, k)
    V, WV, vals, final_v = z(NC), z(NC), z(NC), z(NC)
    Z = z(NC, k + 1)
    phi_dec = z(NC, k)
    out_start = np.full(inst.n, -1, dtype=np.int64)
    out_machine = np.full(inst.n, -1, dtype=np.int64)
    stats = np.zeros(5, dtype=np.int64)
    cps = np.unique(np.asarray(list(checkpoints or []), dtype=np.int64))
    if len(cps) and (cps[0] < 0 or (horizon is not None and cps[-1] > horizon)):
        raise ValueError("checkpoints must lie in [0, horizon]")
    if len(cps) and horizon is None:
        raise ValueError("checkpoints need a horizon")
    cp_vals = z(len(cps), NC)
    pinned = (
        np.zeros(inst.n, dtype=np.bool_)
        if inst.pinned is None
        else np.ascontiguousarray(inst.pinned[order])
    )
    fn = _ref_kernel.py_func if python else _ref_kernel
    fn(
        k,
        inst.machines,
        rel,
        size,
        org,
        org_ptr,
        org_jobs,
        T,
        _UTILITIES[utility],
        _RULES[rule],
        L if python else np.int64(L),
        omega,
        pc,
        accP,
        accW,
        V,
        WV,
        vals,
        Z,
        phi_dec,
        out_start,
        out_machine,
        final_v,
        stats,
        pinned,
        cps,
        cp_vals,
    )
    start = np.full(inst.n, -1, dtype=np.int64)
    machine = np.full(inst.n, -1, dtype=np.int64)
    start[order] = out_start
    machine[order] = out_machine
    sched = Schedule(
        instance=inst,
        start=start,
        machine=machine,
        policy="ref",
        horizon=None if horizon is None else int(horizon),
        info={
            "utility": utility,
            "rule": rule,
            "event_times": int(stats[0]),
            "decisions": int(stats[1]),
            "python_integers": python,
        },
    )
    if len(cps):
        sched.info["checkpoints"] = [int(x) for x in cps]
        sched.info["checkpoint_values"] = [[int(x) for x in row] for row in cp_vals]
    return sched, [int(x) for x in final_v]


@register
class Ref(Policy):
    """REF (Fig. 1 + Fig. 3): the exact Shapley-fair schedule; exponential in k."""

    name = "ref"
    rank = 0

    def __init__(self, utility: str = "psi_sp", rule: str | None = None, seed: int = 0) -> None:
        super().__init__(seed)
        self.utility = utility
        self.rule = rule

    def params(self) -> dict:
        return {"utility": self.utility, "rule": self.rule}

    def run(
        self, instance: Instance, horizon: int | None = None, members: Iterable[int] | None = None
    ) -> Schedule:
        if members is not None:
            sub = instance.restrict(members)
            s, _ = ref_schedule(sub, horizon, utility=self.utility, rule=self.rule)
            return expand_coalition(instance, members, s, "ref")
        s, _ = ref_schedule(instance, horizon, utility=self.utility, rule=self.rule)
        return s
