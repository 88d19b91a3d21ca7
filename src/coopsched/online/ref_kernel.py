"""The compiled kernel of REF (numba), kept apart so that importing the policies does not
import numba: :func:`coopsched.online.policies.ref.ref_schedule` imports this module on first
use. The algorithm, its exact arithmetic and its bounds are documented in
:mod:`coopsched.online.policies.ref`.
"""

from __future__ import annotations

import numba
import numpy as np

from .kernels import JIT_OPTIONS

_MASK = (1 << 32) - 1


@numba.njit(**JIT_OPTIONS)
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


@numba.njit(**JIT_OPTIONS)
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


@numba.njit(**JIT_OPTIONS)
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


@numba.njit(**JIT_OPTIONS)
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


@numba.njit(**JIT_OPTIONS)
def _ref_kernel(
    k,
    machines,
    rel,
    size,
    org,
    org_ptr,
    org_jobs,
    run_end,
    run_head,
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
    one_word,
    dtz,
    dodd,
    dinv32,
    dinv64,
    mem,
    co,
    vv,
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
    canon,
    canon_list,
    rel_ptr,
    rel_idx,
    cost_pot,
    mC,
):
    NC = 1 << k
    sym = canon_list.shape[0] < NC - 1  # some coalitions stand for others
    G = NC - 1
    n = rel.shape[0]
    M = 0
    for u in range(k):
        M += machines[u]
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
    # (coalition, next entry of the bucket or free list, jobs started together)
    ent = np.zeros((ecap, 3), np.int32)
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
    vstamp = np.full(NC, -1, np.int64)  # the event at which vv[S] was last computed
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
                X = canon[S]
                d = max(int(cps[cp]) - int(co[X, 3]), 0)
                r = int(co[X, 2])
                if utility == 0:
                    cp_vals[cp, S] = co[X, 0] + co[X, 1] * d + r * (d * (d + 1) // 2)
                else:
                    cp_vals[cp, S] = co[X, 1] + r * d
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
                c = ent[e, 2]
                mem[C, u, 3] -= c
                co[C, 2] -= c
                co[C, 4] += c
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
                nrel[u] += cnt
                # every simulated coalition containing u (and some machine)
                for y in range(rel_ptr[u], rel_ptr[u + 1]):
                    C = rel_idx[y]
                    co[C, 6] |= ub  # u has waiting jobs in C now
                    co[C, 5] += cnt
                    # a release changes no value: only a coalition with a free
                    # machine has something to decide
                    if co[C, 7] != t and co[C, 4] > 0:
                        co[C, 7] = t
                        vis[nvis] = C
                        nvis += 1
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
            wm = co[C, 6]
            decide[nready] = 1 if (wm & (wm - 1) != 0 and co[C, 4] < co[C, 5]) else 0
            nready += 1
        if nready == 0:
            continue
        stats[6] += nready
        # pass 2: the values (two words each) and, if cheaper, the potential
        # Eq. (1) costs 2^(|C|-1) terms per deciding member plus the values of C's
        # subsets; the potential, k 2^(k-1) additions plus every coalition's value; in
        # units of one potential addition, a term of Eq. (1) costs about 2 and a value 3
        # (measured: 1.6, 0.9 and 2.7 ns at k = 16)
        ndec = 0
        costA = 0
        for a in range(nready):
            if decide[a] == 1:
                ndec += 1
                C = ready[a]
                costA += 3 * (1 << pc[C]) + 2 * pc[co[C, 6]] * (1 << (pc[C] - 1))
        pot = False
        if ndec > 0:
            stats[1] += ndec
            costP = cost_pot
            pot = mode == 2 or (mode == 0 and costP < costA)
            ncl = canon_list.shape[0]
            if pot:  # every simulated coalition's value
                for y in range(ncl):
                    S = canon_list[y]
                    d = int(t) - int(co[S, 3])
                    r = int(co[S, 2])
                    v = (
                        co[S, 0] + co[S, 1] * d + r * (d * (d + 1) // 2)
                        if utility == 0
                        else co[S, 1] + r * d
                    )
                    vv[S] = v
            for a in range(0 if pot else nready):
                # those of the subsets of the deciding coalitions, each once (a subset
                # that is not simulated takes its simulated twin's)
                if decide[a] == 0:
                    continue
                top = ready[a]
                S = top
                while True:
                    if vstamp[S] != ev:
                        vstamp[S] = ev
                        X = canon[S] if sym else S
                        if X != S and vstamp[X] == ev:
                            vv[S] = vv[X]
                        else:
                            vstamp[X] = ev
                            d = int(t) - int(co[X, 3])
                            r = int(co[X, 2])
                            v = (
                                co[X, 0] + co[X, 1] * d + r * (d * (d + 1) // 2)
                                if utility == 0
                                else co[X, 1] + r * d
                            )
                            vv[X] = v
                            vv[S] = v
                    if S == 0:
                        break
                    S = (S - 1) & top
            if pot:
                stats[3] += 1
                qh[0] = zero
                ql[0] = zero
                for y in range(ncl if one_word and sym else 0):
                    # one word suffices (plan_arithmetic): L P(D) = (L v(D) + sum_w
                    # L P(D - w)) / |D|, divided exactly by the odd part's inverse; only
                    # simulated coalitions (D - w's twin is simulated and smaller)
                    D = canon_list[y]
                    h = L * vv[D]
                    rest = D
                    while rest != 0:
                        w = rest & -rest
                        h += qh[canon[D ^ w]]
                        rest ^= w
                    c = int(pc[D])
                    qh[D] = np.int64(np.uint64(h >> dtz[c]) * dinv64[c])
                for D in range(1, NC if one_word and not sym else 0):
                    # the same when every coalition is simulated (no lookups)
                    h = L * vv[D]
                    rest = D
                    while rest != 0:
                        w = rest & -rest
                        h += qh[D ^ w]
                        rest ^= w
                    c = int(pc[D])
                    qh[D] = np.int64(np.uint64(h >> dtz[c]) * dinv64[c])
                for y in range(ncl if one_word else 0, ncl):  # two words
                    D = canon_list[y]
                    h = L * (vv[D] >> 32)
                    lo = L * (vv[D] & _MASK)
                    rest = D
                    if sym:
                        while rest != 0:
                            w = rest & -rest
                            X = canon[D ^ w]
                            h += qh[X]
                            lo += ql[X]
                            rest ^= w
                    else:  # every coalition is simulated: no lookups
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
            wm = co[C, 6]
            for u in range(k):
                if (wm >> u) & 1:
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
                xh = zero
                xl = zero
                if pot:
                    # C - u is simulated too: u has jobs, so it is nobody's twin
                    xh = qh[C] - qh[C ^ ub]
                    xl = ql[C] - ql[C ^ ub]
                elif one_word:
                    rest = C ^ ub
                    s = rest
                    while True:
                        xh += int(omega[c, pc[s]]) * (vv[s | ub] - vv[s])
                        if s == 0:
                            break
                        s = (s - 1) & rest
                else:
                    rest = C ^ ub
                    s = rest
                    while True:
                        wgt = int(omega[c, pc[s]])
                        # a marginal contribution fits a word (values are below
                        # 2^62); it is split into words only to be summed
                        dv = vv[s | ub] - vv[s]
                        xh += wgt * (dv >> 32)
                        xl += wgt * (dv & _MASK)
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
                if one_word:  # the whole key in xh: split it into the two words
                    xh -= L * psi
                    xl = xh & _MASK
                    xh >>= 32
                else:
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
            # pinned queue heads first (docs/conventions.md §5), oldest FIFO position first, then
            # the largest key first; wl is in index order, so ties go to the lowest index
            pin = anypin
            u = -1
            while co[C, 4] > 0:
                if pin:
                    u = -1
                    bpos = n
                    for x in range(nw):
                        w = wl[x]
                        if (co[C, 6] >> w) & 1:
                            q = org_jobs[org_ptr[w] + mem[C, w, 4]]
                            if pinned[q] and q < bpos:
                                bpos = q
                                u = w
                    if u < 0:
                        pin = False
                        continue
                elif u < 0 or (co[C, 6] >> u) & 1 == 0:
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
                # the rest of a run of identical jobs (consecutive in FIFO order, same
                # owner, release, size and pin) starts at once, as far as machines go
                x0 = org_ptr[u] + mem[C, u, 4]
                cnt = min(co[C, 4], run_end[x0] - x0)
                pos = run_head[x0]
                mem[C, u, 4] += cnt
                co[C, 5] -= cnt
                if nrel[u] == mem[C, u, 4]:
                    co[C, 6] ^= 1 << u
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
                ent[e, 2] = cnt
                b_head[b] = e
                d = int(t) - int(mem[C, u, 2])
                if d > 0:
                    r = int(mem[C, u, 3])
                    if r != 0 or mem[C, u, 1] != 0:
                        mem[C, u, 0] += mem[C, u, 1] * d + r * (d * (d + 1) // 2)
                        mem[C, u, 1] += r * d
                    mem[C, u, 2] = t
                mem[C, u, 3] += cnt
                co[C, 2] += cnt
                co[C, 4] -= cnt
                stats[7] += cnt
                if C == G:
                    for y in range(x0, x0 + cnt):
                        q = org_jobs[y]
                        m = fheap[0]
                        fsize = _hpop(fheap, 0, fsize)
                        out_start[q] = t
                        out_machine[q] = m
                        mn = _push2(mh_t, mh_m, mn, end, m)
    # checkpoints after the last event
    while cp < ncp:
        for S in range(NC):
            X = canon[S]
            d = max(int(cps[cp]) - int(co[X, 3]), 0)
            r = int(co[X, 2])
            if utility == 0:
                cp_vals[cp, S] = co[X, 0] + co[X, 1] * d + r * (d * (d + 1) // 2)
            else:
                cp_vals[cp, S] = co[X, 1] + r * d
        cp += 1
    # values of every coalition at the horizon (or at the last event)
    t_end = T if has_T else t_last
    stats[4] = t_end
    if do_final:
        for S in range(NC):
            X = canon[S]
            d = int(t_end) - int(co[X, 3])
            r = int(co[X, 2])
            if utility == 0:
                final_v[S] = co[X, 0] + co[X, 1] * d + r * (d * (d + 1) // 2)
            else:
                final_v[S] = co[X, 1] + r * d
