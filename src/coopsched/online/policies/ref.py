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
* completions are kept in buckets, one per (job, start time): a job that starts at ``t``
  in many coalitions ends at the same time in all of them, so one heap entry serves
  all of them and every start or completion in a coalition costs O(1); members'
  utilities are brought to ``t`` lazily (when their running count changes or their
  ``psi`` is needed) and waiting counts are kept per coalition, so a visit is O(1);
  state is held in records (one cache line per coalition and per member), and no array
  is ever reassigned inside the kernel (numba would reference-count it in every loop);
* no Shapley value is computed when it cannot change a decision: when only one member
  has waiting jobs, or when the free machines suffice for every waiting job;
* Shapley values, scaled by ``L = lcm(1..k)`` so that they are integers, come at each
  event time from the cheaper of (a) Eq. (1) with the integer weights of
  :func:`coopsched.online.shapley.shapley_weights`, ``2^(|C|-1)`` terms per deciding
  member, and (b) the potential of Hart and Mas-Colell
  (:func:`coopsched.online.shapley.shapley_potential`): ``L P(D)`` for every coalition
  ``D`` in ``k 2^(k-1)`` additions, after which ``L phi_u(C) = L P(C) - L P(C - u)``
  for every deciding ``(C, u)`` costs O(1). An event time thus costs at most
  ``O(k 2^k)``, never ``3^k``;
* pinned jobs (:attr:`Instance.pinned`, CONVENTIONS 5: running when an audited window
  opened) start in every coalition that has a free machine and contains their owner,
  ahead of every other job, oldest FIFO position first (a pinned job is always at the
  head of its organization's queue); only then does ``phi - psi`` pick among the rest;
* checkpoints (``ref_schedule(..., checkpoints=...)``): every coalition's value at each
  given time, from the same run, in closed form from the coalition's last update, taken
  before the first event at or after that time is processed (jobs starting at a
  checkpoint add nothing at it).

Exact arithmetic (issue 11; bounds are checked in Python before the kernel runs):

* coalition values are at most ``vmax = min(M t(t+1)/2, P t)`` for ``psi_sp`` (``M``
  machines, ``P`` total size, ``t`` the time from the first release, when every
  coalition's clock starts, to the last event) and ``min(M t, P)`` for
  ``work``; every intermediate of the closed-form update stays below
  ``max(min(M t, P) t, min(M, n) t(t+1)/2, t(t+1))``. When that is below ``2^62`` the
  state is int64;
* Shapley sums are held in two int64 words, ``x = h 2^32 + l``: every value ``v`` is split
  as ``(v >> 32, v & (2^32-1))``, sums are taken word by word and carried afterwards.
  Eq. (1)'s weights add up to ``L`` (``sum_s binom(c-1, s) L / (c binom(c-1, s)) = L``),
  so a low word stays below ``L 2^32 < 2^60``; the potential obeys
  ``L P(D) <= L H_k vmax`` (``H_k`` the harmonic number) and its recursion's partial sums
  ``L v(D) + sum_w L P(D - w) <= (k H_k + 1) L vmax``, so a high word stays below
  ``2^61`` when ``(k H_k + 3) L vmax < 2^93``; the potential's division by ``|D|`` is
  exact (``L P(D)`` is an integer) and done as a long division on the two words;
* otherwise the same kernel runs as plain Python on Python integers (exact at any size,
  slow); this is reported in ``Schedule.info["python_integers"]`` and by a warning;
* values at the horizon (which may be far beyond the last event) are computed in Python
  integers whenever they could pass ``2^62``;
* pinned starts leave every bound above valid: they only change *which* waiting job a
  coalition starts, never whether it starts one (each coalition stays greedy, so the
  drain bound holds), a coalition still runs at most ``min(m_C, n)`` jobs (the bucket and
  entry pools), and a value stays below ``vmax`` whatever the order of the jobs;
* checkpoints are evaluated in the kernel when the values at the horizon fit int64 (or
  on Python integers); otherwise those up to the last possible event time (where the
  state bound holds) are evaluated in the kernel and the later ones, which lie after the
  last event, in Python integers from the final records; a checkpoint never adds a
  state, so it changes no bound;
* times: a job released at ``r`` and started by a coalition ends by ``r_max + P``; without
  a horizon (or with one beyond ``r_max + P``) that must fit int64, else
  :class:`~coopsched.workloads.instance.InstanceError` says so; with a horizon ``T``, a
  job's end is clamped to ``T`` (it cannot complete before), so no time overflows.

``utility="work"`` (resource utilization) is also available. For it the pick follows
Fig. 1's generic ``Distance`` rule (``rule="distance"``), with ``Delta psi`` the utility
of the tentatively started job's first unit part: the value at ``t`` itself is 0 for every
non-clairvoyant utility, which would make ``Distance`` equal for all candidates.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from fractions import Fraction

import numba
import numpy as np

from ...workloads.instance import Instance, InstanceError
from ..engine import Policy
from ..schedule import Schedule, expand_coalition
from ..shapley import popcounts, shapley_weights
from ._registry import register

_NB = dict(cache=True, nogil=True)
_MASK = (1 << 32) - 1
_I64_MAX = 2**63 - 1
_STATE_LIMIT = 2**62
_WORDS_LIMIT = 2**93
_MAX_K = 20
_BUCKETS = (16, 4096)  # first bucket capacity (48 bytes each): 16 per job + 4096


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
def _push2(ht, hp, n, t, p):
    """Push ``(t, p)`` on a heap held in two arrays (time, payload); no packed keys.

    A plain (not inlined) function: numba reference-counts array aliases that inlining
    creates, once per sift step, which cost more than the heap itself.
    """
    i = n
    ht[i] = t
    hp[i] = p
    while i > 0:
        q = (i - 1) >> 1
        if ht[q] < ht[i] or (ht[q] == ht[i] and hp[q] <= hp[i]):
            break
        ht[q], ht[i] = ht[i], ht[q]
        hp[q], hp[i] = hp[i], hp[q]
        i = q
    return n + 1


@numba.njit(**_NB)
def _pop2(ht, hp, n):
    n -= 1
    ht[0] = ht[n]
    hp[0] = hp[n]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        c = left
        r = left + 1
        if r < n and (ht[r] < ht[left] or (ht[r] == ht[left] and hp[r] < hp[left])):
            c = r
        if ht[i] < ht[c] or (ht[i] == ht[c] and hp[i] <= hp[c]):
            break
        ht[c], ht[i] = ht[i], ht[c]
        hp[c], hp[i] = hp[i], hp[c]
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
    has_T,
    T,
    utility,
    rule,
    mode,
    L,
    omega,
    pc,
    ecap,
    bcap,
    divide,
    dtz,
    dodd,
    dinv32,
    dinv64,
    mem,
    co,
    vh,
    vl,
    qh,
    ql,
    final_v,
    do_final,
    out_start,
    out_machine,
    stats,
    pinned,
    anypin,
    cps,
    cp_vals,
):
    NC = 1 << k
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
    for C in range(NC):
        co[C, 4] = mC[C]  # free machines
        co[C, 7] = -1  # last visit
    # completion buckets: one per (job, start time), holding a list of coalitions
    b_time = np.zeros(bcap, np.int64)
    b_u = np.zeros(bcap, np.int64)
    b_head = np.full(bcap, -1, np.int64)
    b_next = np.arange(1, bcap + 1).astype(np.int64)
    b_next[bcap - 1] = -1
    bfree = 0
    bh_t = np.zeros(bcap, np.int64)
    bh_b = np.zeros(bcap, np.int64)
    bn = 0
    bstamp = np.full(max(n, 1), -1, np.int64)
    bid = np.zeros(max(n, 1), np.int64)
    ent = np.zeros((ecap, 2), np.int32)  # (coalition, next entry of the bucket or free list)
    for e in range(ecap - 1):
        ent[e, 1] = e + 1
    ent[ecap - 1, 1] = -1
    efree = 0
    # the grand coalition's machines: free ones (min-heap of ids), busy ones (end, id)
    MM = max(M, 1)
    fheap = np.arange(MM).astype(np.int64)
    fsize = M
    mh_t = np.zeros(MM, np.int64)
    mh_m = np.zeros(MM, np.int64)
    mn = 0
    nrel = np.zeros(k, np.int64)
    relcnt = np.zeros(k, np.int64)
    vis = np.zeros(NC, np.int64)
    ready = np.zeros(NC, np.int64)
    decide = np.zeros(NC, np.int64)
    kh = qh[:k].copy()  # same dtype as the values (int64 or Python ints)
    kl = qh[:k].copy()
    zero = qh[0] * 0
    done = np.zeros(k, np.int64)
    wl = np.zeros(k, np.int64)
    i = 0
    ev = 0
    t_last = 0
    ncp = cps.shape[0]
    cp = 0
    while True:
        has = False
        t = 0
        if i < n:
            t = rel[i]
            has = True
        if bn > 0 and (not has or bh_t[0] < t):
            t = bh_t[0]
            has = True
        # checkpoints up to this event: every coalition's value in closed form from its
        # last update (all earlier events are processed; jobs starting at t add 0 at t)
        while has and cp < ncp and cps[cp] <= t:
            for S in range(NC):
                d = max(int(cps[cp]) - int(co[S, 3]), 0)
                r = int(co[S, 2])
                if utility == 0:
                    cp_vals[cp, S] = co[S, 0] + co[S, 1] * d + r * (d * (d + 1) // 2)
                else:
                    cp_vals[cp, S] = co[S, 1] + r * d
            cp += 1
        if not has or (has_T and t >= T):
            break
        stats[0] += 1
        ev += 1
        t_last = t
        nvis = 0
        # completions at t, in one walk over each bucket: a coalition's value is brought
        # to t at its first completion, each member's before its running count drops
        while bn > 0 and bh_t[0] == t:
            b = bh_b[0]
            bn = _pop2(bh_t, bh_b, bn)
            u = b_u[b]
            e = b_head[b]
            while e >= 0:
                C = ent[e, 0]
                if co[C, 7] != t:
                    co[C, 7] = t
                    vis[nvis] = C
                    nvis += 1
                    d = int(t) - int(co[C, 3])
                    if d > 0:
                        r = int(co[C, 2])
                        if co[C, 1] != 0 or r != 0:
                            co[C, 0] += co[C, 1] * d + r * (d * (d + 1) // 2)
                            co[C, 1] += r * d
                        co[C, 3] = t
                d = int(t) - int(mem[C, u, 2])
                if d > 0:
                    r = int(mem[C, u, 3])
                    if r != 0 or mem[C, u, 1] != 0:
                        mem[C, u, 0] += mem[C, u, 1] * d + r * (d * (d + 1) // 2)
                        mem[C, u, 1] += r * d
                    mem[C, u, 2] = t
                mem[C, u, 3] -= 1
                co[C, 2] -= 1
                co[C, 4] += 1
                nx = ent[e, 1]
                ent[e, 1] = efree
                efree = e
                e = nx
            b_next[b] = bfree
            bfree = b
        relmask = 0
        while i < n and rel[i] == t:
            u = org[i]
            if (relmask >> u) & 1 == 0:
                relcnt[u] = 0
            relcnt[u] += 1
            relmask |= 1 << u
            i += 1
        if relmask != 0:
            for u in range(k):
                if (relmask >> u) & 1 == 0:
                    continue
                ub = 1 << u
                cnt = relcnt[u]
                old = nrel[u]
                nrel[u] += cnt
                rest = G ^ ub
                s = rest
                while True:  # every coalition containing u (and some machine)
                    C = s | ub
                    if mC[C] > 0:
                        if old - mem[C, u, 4] == 0:
                            co[C, 6] += 1
                        co[C, 5] += cnt
                        if co[C, 7] != t:
                            co[C, 7] = t
                            vis[nvis] = C
                            nvis += 1
                    if s == 0:
                        break
                    s = (s - 1) & rest
        stats[5] += nvis
        # bring the visited coalitions' values to t (members are brought lazily, when
        # their running count changes or their utility is needed)
        for a in range(nvis):
            C = vis[a]
            d = int(t) - int(co[C, 3])
            if d > 0:
                r = int(co[C, 2])
                if co[C, 1] != 0 or r != 0:
                    co[C, 0] += co[C, 1] * d + r * (d * (d + 1) // 2)
                    co[C, 1] += r * d
                co[C, 3] = t
        while mn > 0 and mh_t[0] == t:
            m = mh_m[0]
            mn = _pop2(mh_t, mh_m, mn)
            fsize = _hpush(fheap, 0, fsize, m)
        # pass 1: who has free machines and waiting jobs, and who must choose
        nready = 0
        for a in range(nvis):
            C = vis[a]
            if co[C, 4] == 0 or co[C, 5] == 0:
                continue
            ready[nready] = C
            decide[nready] = 1 if (co[C, 6] > 1 and co[C, 4] < co[C, 5]) else 0
            nready += 1
        if nready == 0:
            continue
        stats[6] += nready
        # pass 2: the values (two words each) and, if cheaper, the potential
        ndec = 0
        costA = 0
        for a in range(nready):
            if decide[a] == 1:
                ndec += 1
                C = ready[a]
                for u in range(k):
                    if (C >> u) & 1 and nrel[u] - mem[C, u, 4] > 0:
                        costA += 1 << (pc[C] - 1)
        pot = False
        if ndec > 0:
            stats[1] += ndec
            for S in range(NC):
                d = int(t) - int(co[S, 3])
                r = int(co[S, 2])
                v = (
                    co[S, 0] + co[S, 1] * d + r * (d * (d + 1) // 2)
                    if utility == 0
                    else co[S, 1] + r * d
                )
                vh[S] = v >> 32
                vl[S] = v & _MASK
            costP = k * (NC >> 1)
            pot = mode == 2 or (mode == 0 and costP < costA)
            if pot:
                stats[3] += 1
                qh[0] = zero
                ql[0] = zero
                for D in range(1, NC):
                    h = L * vh[D]
                    lo = L * vl[D]
                    rest = D
                    while rest != 0:
                        w = rest & -rest
                        h += qh[D ^ w]
                        lo += ql[D ^ w]
                        rest ^= w
                    h += lo >> 32
                    lo &= _MASK
                    c = int(pc[D])
                    if divide:  # Python integers
                        hq = h // c
                        lo = ((h - hq * c) << 32) + lo
                        qh[D] = hq
                        ql[D] = lo // c
                    else:  # exact division without idiv (see _exact_division)
                        a = dtz[c]
                        if a > 0:
                            lo = (lo >> a) | ((h & ((1 << a) - 1)) << (32 - a))
                            h = h >> a
                        qlo = np.int64((np.uint64(lo) * np.uint64(dinv32[c])) & np.uint64(_MASK))
                        h += (lo - dodd[c] * qlo) >> 32
                        qh[D] = np.int64(np.uint64(h) * dinv64[c])
                        ql[D] = qlo
            else:
                stats[2] += 1
        # pass 3: rank the waiting members and start jobs
        for a in range(nready):
            C = ready[a]
            nw = 0
            for u in range(k):
                if (C >> u) & 1 and nrel[u] - mem[C, u, 4] > 0:
                    wl[nw] = u
                    nw += 1
            c = int(pc[C])
            for x in range(nw):
                done[x] = 0
                kh[x] = zero
                kl[x] = zero
                if decide[a] == 0:
                    continue
                u = wl[x]
                ub = 1 << u
                if pot:
                    xh = qh[C] - qh[C ^ ub]
                    xl = ql[C] - ql[C ^ ub]
                else:
                    xh = zero
                    xl = zero
                    rest = C ^ ub
                    s = rest
                    while True:
                        wgt = int(omega[c, pc[s]])
                        xh += wgt * (vh[s | ub] - vh[s])
                        xl += wgt * (vl[s | ub] - vl[s])
                        if s == 0:
                            break
                        s = (s - 1) & rest
                d = int(t) - int(mem[C, u, 2])
                if d > 0:
                    r = int(mem[C, u, 3])
                    if r != 0 or mem[C, u, 1] != 0:
                        mem[C, u, 0] += mem[C, u, 1] * d + r * (d * (d + 1) // 2)
                        mem[C, u, 1] += r * d
                    mem[C, u, 2] = t
                psi = mem[C, u, 0] if utility == 0 else mem[C, u, 1]
                xh -= L * (psi >> 32)
                xl -= L * (psi & _MASK)
                xh += xl >> 32
                xl &= _MASK
                if rule == 0:
                    kh[x] = xh
                    kl[x] = xl
                else:
                    # |y| - |y - L| with y = X + L/c: -L below 0, L above L, else 2y - L
                    yl = xl + L // c
                    yh = xh + (yl >> 32)
                    yl &= _MASK
                    if yh < 0:
                        kl[x] = -L
                    elif yh > 0:
                        kl[x] = L
                    else:
                        kl[x] = abs(yl) - abs(yl - L)
            # pinned queue heads first (CONVENTIONS 5), oldest FIFO position first, then
            # the largest key first; wl is in index order, so ties go to the lowest index
            pin = anypin
            u = -1
            while co[C, 4] > 0:
                if pin:
                    u = -1
                    bpos = n
                    for x in range(nw):
                        w = wl[x]
                        if nrel[w] - mem[C, w, 4] > 0:
                            q = org_jobs[org_ptr[w] + mem[C, w, 4]]
                            if pinned[q] and q < bpos:
                                bpos = q
                                u = w
                    if u < 0:
                        pin = False
                        continue
                elif u < 0 or nrel[u] - mem[C, u, 4] == 0:
                    best = -1
                    for x in range(nw):
                        if done[x] == 0 and (
                            best < 0 or kh[x] > kh[best] or (kh[x] == kh[best] and kl[x] > kl[best])
                        ):
                            best = x
                    if best < 0:
                        break
                    done[best] = 1
                    u = wl[best]
                    continue
                pos = org_jobs[org_ptr[u] + mem[C, u, 4]]
                mem[C, u, 4] += 1
                co[C, 5] -= 1
                if nrel[u] == mem[C, u, 4]:
                    co[C, 6] -= 1
                p = size[pos]
                # a job that cannot complete before the horizon ends "at T": never popped
                end = T if has_T and p >= T - t else t + p
                if bstamp[pos] != ev:
                    if bfree < 0:  # bucket pool full: the caller reruns with more
                        stats[4] = -1
                        return
                    b = bfree
                    bfree = b_next[b]
                    b_time[b] = end
                    b_u[b] = u
                    b_head[b] = -1
                    bstamp[pos] = ev
                    bid[pos] = b
                    bn = _push2(bh_t, bh_b, bn, end, b)
                else:
                    b = bid[pos]
                e = efree
                efree = ent[e, 1]
                ent[e, 0] = C
                ent[e, 1] = b_head[b]
                b_head[b] = e
                d = int(t) - int(mem[C, u, 2])
                if d > 0:
                    r = int(mem[C, u, 3])
                    if r != 0 or mem[C, u, 1] != 0:
                        mem[C, u, 0] += mem[C, u, 1] * d + r * (d * (d + 1) // 2)
                        mem[C, u, 1] += r * d
                    mem[C, u, 2] = t
                mem[C, u, 3] += 1
                co[C, 2] += 1
                co[C, 4] -= 1
                stats[7] += 1
                if C == G:
                    m = fheap[0]
                    fsize = _hpop(fheap, 0, fsize)
                    out_start[pos] = t
                    out_machine[pos] = m
                    mn = _push2(mh_t, mh_m, mn, end, m)
    # checkpoints after the last event
    while cp < ncp:
        for S in range(NC):
            d = max(int(cps[cp]) - int(co[S, 3]), 0)
            r = int(co[S, 2])
            if utility == 0:
                cp_vals[cp, S] = co[S, 0] + co[S, 1] * d + r * (d * (d + 1) // 2)
            else:
                cp_vals[cp, S] = co[S, 1] + r * d
        cp += 1
    # values of every coalition at the horizon (or at the last event)
    t_end = T if has_T else t_last
    stats[4] = t_end
    if do_final:
        for S in range(NC):
            d = int(t_end) - int(co[S, 3])
            r = int(co[S, 2])
            if utility == 0:
                final_v[S] = co[S, 0] + co[S, 1] * d + r * (d * (d + 1) // 2)
            else:
                final_v[S] = co[S, 1] + r * d


_UTILITIES = {"psi_sp": 0, "work": 1}
_RULES = {"fig3": 0, "distance": 1}
_MODES = {"auto": 0, "direct": 1, "potential": 2}


def _exact_division(k: int) -> tuple[np.ndarray, ...]:
    """Tables to divide ``X = h 2^32 + l`` (``0 <= l < 2^32``) exactly by ``c <= k``.

    With ``c = 2^a b``, ``b`` odd: shift ``X`` right by ``a`` (exact), then the quotient's
    low word is ``l b^-1 mod 2^32`` and its high word ``(h + (l - b q_l) / 2^32) b^-1 mod
    2^64`` (both divisions are exact, so the modular inverses give them; unsigned
    multiplications wrap by definition). Returns ``(a, b, b^-1 mod 2^32, b^-1 mod 2^64)``.
    """
    tz = np.zeros(k + 1, dtype=np.int64)
    odd = np.ones(k + 1, dtype=np.int64)
    inv32 = np.zeros(k + 1, dtype=np.int64)
    inv64 = np.zeros(k + 1, dtype=np.uint64)
    for c in range(1, k + 1):
        a = (c & -c).bit_length() - 1
        b = c >> a
        tz[c], odd[c] = a, b
        inv32[c] = pow(b, -1, 2**32)
        inv64[c] = pow(b, -1, 2**64)
    return tz, odd, inv32, inv64


def _value_bound(utility: str, M: int, P: int, t: int) -> int:
    """Upper bound of every coalition's value at any time ``<= t`` (module docstring)."""
    if utility == "psi_sp":
        return min(M * t * (t + 1) // 2, P * t)
    return min(M * t, P)


def _state_bound(utility: str, M: int, P: int, n: int, t: int) -> int:
    """Upper bound of every intermediate of the closed-form value update up to ``t``."""
    return max(
        min(M * t, P) * t,
        min(M, n) * t * (t + 1) // 2,
        t * (t + 1),
        _value_bound(utility, M, P, t),
    )


def _words_factor(k: int) -> int:
    """``ceil(k H_k) + 3``: the potential's partial sums are below this times ``L vmax``."""
    h = sum((Fraction(1, j) for j in range(1, k + 1)), Fraction(0))
    return -(-(k * h).numerator // (k * h).denominator) + 3


def _drain_bound(instance: Instance, P: int) -> int:
    """Time after the last release by which every coalition has completed every job.

    In a greedy schedule of coalition ``S`` (``m_S >= 1`` machines, total size ``P_S``),
    a job ``j`` that starts after the last release ``r_max`` waited with all machines busy
    on other jobs since ``r_max``, so it starts by ``r_max + (P_S - p_j) / m_S`` and ends by
    ``r_max + P_S / m_S + p_max``. Coalitions without machines start nothing. The maximum
    over all coalitions is computed exactly (int64 when ``P < 2^62``; else ``P`` bounds it).
    """
    k = instance.k
    if instance.n == 0:
        return 0
    p_max = int(instance.size.max())
    if P >= 2**62 or k > _MAX_K:
        return P
    m = instance.machines
    work = np.zeros(k, dtype=np.int64)
    np.add.at(work, instance.org, instance.size)
    mS = np.zeros(1 << k, dtype=np.int64)
    PS = np.zeros(1 << k, dtype=np.int64)
    for b in range(k):
        mS[1 << b : 2 << b] = mS[: 1 << b] + m[b]
        PS[1 << b : 2 << b] = PS[: 1 << b] + work[b]
    ok = mS > 0
    drain = int((-(-PS[ok] // mS[ok])).max()) if ok.any() else 0
    return min(drain + p_max, P)


def plan_arithmetic(instance: Instance, horizon: int | None, utility: str = "psi_sp") -> dict:
    """Check REF's bounds on ``instance`` before any compiled code runs (issue 11).

    Returns ``{"kernel_horizon", "t_events", "python", "final_in_kernel"}``:
    ``kernel_horizon`` is the horizon the kernel uses (``None`` when every job of every
    coalition completes before ``horizon``: then the run is the same without one),
    ``t_events`` bounds every event time, ``python`` says whether Python integers are
    needed (the int64 / two-word bounds of the module docstring fail) and
    ``final_in_kernel`` whether the values at the end fit int64. Raises
    :class:`InstanceError` when a time could pass ``2^63 - 1``.
    """
    n = instance.n
    M = instance.total_machines
    P = int(instance.size.sum(dtype=object)) if n else 0
    r_max = int(instance.release.max()) if n else 0
    r_min = int(instance.release.min()) if n else 0
    t_free = r_max + _drain_bound(instance, P)  # every coalition is done by then
    if horizon is not None and int(horizon) < 0:
        raise ValueError(f"horizon {horizon} is negative")
    if horizon is None or int(horizon) > t_free:
        if t_free > _I64_MAX - 1:
            raise InstanceError(
                f"REF: jobs may run until the last release plus the total size, {t_free} s, "
                f"beyond 2^63 - 1; give a horizon below 2^63"
            )
        kernel_T = None
        t_events = t_free
        t_final = t_free if horizon is None else int(horizon)
    else:
        kernel_T = int(horizon)
        if kernel_T > _I64_MAX:
            raise InstanceError(
                f"REF: events may happen up to the horizon {kernel_T} s, beyond 2^63 - 1; "
                "give a horizon below 2^63"
            )
        t_events = max(kernel_T - 1, 0)
        t_final = kernel_T
    # the kernel's clock starts at the first release: every elapsed time is below the span
    span = max(t_events - r_min, 0)
    L, _ = shapley_weights(max(instance.k, 1))
    vmax = _value_bound(utility, M, P, span)
    python = (
        _state_bound(utility, M, P, n, span) >= _STATE_LIMIT
        or _words_factor(instance.k) * L * vmax >= _WORDS_LIMIT
    )
    final_ok = _state_bound(utility, M, P, n, max(t_final - r_min, 0)) < _STATE_LIMIT
    return {
        "kernel_horizon": kernel_T,
        "t_start": r_min,
        "t_events": t_events,
        "python": python,
        "final_in_kernel": final_ok,
    }


def ref_schedule(
    instance: Instance,
    horizon: int | None = None,
    *,
    utility: str = "psi_sp",
    rule: str | None = None,
    exact_python: bool | None = None,
    shapley: str = "auto",
    checkpoints: Iterable[int] | None = None,
) -> tuple[Schedule, list[int]]:
    """REF's schedule of the grand coalition and the value of every coalition at the end.

    Returns ``(schedule, values)`` where ``values[C]`` is ``v(C)`` at the horizon (or at
    the last event without a horizon) for every bitmask ``C``, as exact Python integers.
    ``exact_python`` forces (True) or forbids (False: :class:`ValueError` instead) the
    Python-integer path; by default it is used only when the proven bounds of the module
    docstring fail. ``shapley`` picks how Shapley values are computed at an event time:
    ``"direct"`` (Eq. 1), ``"potential"`` (Hart and Mas-Colell) or ``"auto"`` (the cheaper);
    all give the same integers.
    With ``checkpoints`` (times ``0 <= t <= horizon``; a horizon is required),
    ``schedule.info["checkpoints"]`` lists them in increasing order (duplicates dropped)
    and ``schedule.info["checkpoint_values"]`` holds, for each, the list of every
    coalition's value at that time, from the same run (the audit's curves over time use
    it); exact Python integers, like ``values``.
    """
    inst = instance
    k = inst.k
    if k < 1:
        raise ValueError("REF needs at least one organization")
    if k > _MAX_K:
        raise ValueError(f"REF simulates 2^k coalitions; k={k} is beyond reach (at most {_MAX_K})")
    if utility not in _UTILITIES:
        raise ValueError(f"unknown utility {utility!r}; choose from {sorted(_UTILITIES)}")
    rule = rule or ("fig3" if utility == "psi_sp" else "distance")
    if rule not in _RULES:
        raise ValueError(f"unknown rule {rule!r}; choose from {sorted(_RULES)}")
    if shapley not in _MODES:
        raise ValueError(f"unknown Shapley method {shapley!r}; choose from {sorted(_MODES)}")
    cps_all = sorted({int(c) for c in checkpoints}) if checkpoints is not None else []
    if cps_all and horizon is None:
        raise ValueError("checkpoints need a horizon")
    if cps_all and horizon is not None and (cps_all[0] < 0 or cps_all[-1] > int(horizon)):
        raise ValueError(f"checkpoints must lie in [0, horizon={horizon}]")
    plan = plan_arithmetic(inst, horizon, utility)
    python = plan["python"] if exact_python is None else bool(exact_python)
    if exact_python is False and plan["python"]:
        raise ValueError(
            "REF: coalition values may exceed the compiled kernel's exact range "
            f"(event times up to {plan['t_events']} s); allow Python integers"
        )
    if python and exact_python is None:
        warnings.warn(
            "REF: values may exceed the compiled kernel's exact range; running on Python "
            "integers (exact, much slower)",
            RuntimeWarning,
            stacklevel=2,
        )
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
    kT = plan["kernel_horizon"]
    M = inst.total_machines
    # checkpoints the kernel evaluates: all of them on Python integers or when the values
    # at the horizon fit int64, else those up to the last possible event time (the state
    # bound holds there); the later ones are computed below from the final records
    cp_lim = None if (python or plan["final_in_kernel"]) else plan["t_events"]
    cps_k = [c for c in cps_all if cp_lim is None or c <= cp_lim]
    cps = np.array(cps_k, dtype=object if python else np.int64)
    pinned = (
        np.zeros(inst.n, dtype=np.bool_)
        if inst.pinned is None
        else np.ascontiguousarray(inst.pinned[order], dtype=np.bool_)
    )
    # live (coalition, running job) pairs: each coalition runs at most min(m_C, n) jobs
    ecap = (NC >> 1) * min(M, inst.n) + 1
    dtype = object if python else np.int64

    def z(*shape):
        a = np.zeros(shape, dtype=dtype)
        if python:
            a[...] = 0
        return a

    # completion buckets live at once: a few per running job; a run that needs
    # more stops early and is redone with four times as many (no array ever grows inside
    # the kernel, which keeps numba from reference-counting arrays in its hot loops)
    # a live bucket holds a live entry, so ecap buckets always suffice
    bcap = min(_BUCKETS[0] * inst.n + _BUCKETS[1], ecap)
    reruns = 0
    while True:
        # records, one cache line per (coalition, member) and per coalition:
        # mem[C, u] = (psi_u, work_u, last update, running, started) in C's schedule;
        # co[C] = (value, work, running, last update, free machines, waiting jobs,
        #          members with waiting jobs, last visit)
        mem, co = z(NC, k, 5), z(NC, 8)
        mem[:, :, 2] = plan["t_start"]  # every clock starts at the first release
        co[:, 3] = plan["t_start"]
        vh, vl, qh, ql, final_v = (z(NC) for _ in range(5))
        # at a horizon beyond every event the values are computed below, in Python integers
        do_final = (python or plan["final_in_kernel"]) and (horizon is None or kT is not None)
        out_start = np.full(inst.n, -1, dtype=np.int64)
        out_machine = np.full(inst.n, -1, dtype=np.int64)
        stats = np.zeros(8, dtype=np.int64)
        cp_vals = z(len(cps_k), NC)
        fn = _ref_kernel.py_func if python else _ref_kernel
        fn(
            k,
            inst.machines,
            rel,
            size,
            org,
            org_ptr,
            org_jobs,
            kT is not None,
            np.int64(0 if kT is None else kT),
            _UTILITIES[utility],
            _RULES[rule],
            _MODES[shapley],
            L if python else np.int64(L),
            omega,
            pc,
            ecap,
            bcap,
            python,
            *_exact_division(k),
            mem,
            co,
            vh,
            vl,
            qh,
            ql,
            final_v,
            do_final,
            out_start,
            out_machine,
            stats,
            pinned,
            bool(pinned.any()),
            cps,
            cp_vals,
        )
        if stats[4] != -1:
            break
        bcap = min(4 * bcap, ecap)
        reruns += 1
    t_end = int(horizon) if horizon is not None else int(stats[4])
    if do_final:
        values = [int(x) for x in final_v]
    else:  # exact Python integers at a horizon far beyond the last event
        values = []
        for S in range(NC):
            V, WV, RV, tl = (int(x) for x in co[S, :4])
            d = t_end - tl
            if utility == "psi_sp":
                values.append(V + WV * d + RV * (d * (d + 1) // 2))
            else:
                values.append(WV + RV * d)
    cp_rows = [[int(x) for x in row] for row in cp_vals]
    for c in cps_all[len(cps_k) :]:  # after every event: exact Python integers
        row = []
        for S in range(NC):
            V, WV, RV, tl = (int(x) for x in co[S, :4])
            d = max(c - tl, 0)
            row.append(V + WV * d + RV * (d * (d + 1) // 2) if utility == "psi_sp" else WV + RV * d)
        cp_rows.append(row)
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
            "direct_events": int(stats[2]),
            "potential_events": int(stats[3]),
            "coalition_visits": int(stats[5]),
            "coalition_starts": int(stats[7]),
            "coalition_ready": int(stats[6]),
            "python_integers": python,
            "bucket_reruns": reruns,
        },
    )
    if cps_all:
        sched.info["checkpoints"] = cps_all
        sched.info["checkpoint_values"] = cp_rows
    return sched, values


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
