"""Slow reference implementations written straight from the papers' definitions.

They are deliberately naive (every coalition, every time step, Fractions) and serve
only to check the fast code on small cases.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

from coopsched.workloads.instance import Instance


def psi_job(s: int, p: int, t: int) -> int:
    """psi_sp contribution of one job started at s, at time t (Eq. 3 / CONVENTIONS 1)."""
    if s < 0 or s >= t:
        return 0
    q = min(p, t - s)
    return q * (t - s) - q * (q - 1) // 2


def work_job(s: int, p: int, t: int) -> int:
    if s < 0 or s >= t:
        return 0
    return min(p, t - s)


def shapley_eq1(v: dict[int, int], C: int, u: int) -> Fraction:
    """Eq. (1): phi_u in the game restricted to C."""
    members = [x for x in range(C.bit_length()) if C >> x & 1]
    c = len(members)
    others = [x for x in members if x != u]
    total = Fraction(0)
    for r in range(len(others) + 1):
        for sub in itertools.combinations(others, r):
            S = sum(1 << x for x in sub)
            w = Fraction(math.factorial(r) * math.factorial(c - r - 1), math.factorial(c))
            total += w * (v[S | (1 << u)] - v[S])
    return total


def shapley_eq2(v: dict[int, int], k: int) -> list[Fraction]:
    """Eq. (2): average marginal contribution over all k! orderings."""
    phi = [Fraction(0)] * k
    perms = list(itertools.permutations(range(k)))
    for perm in perms:
        S = 0
        for u in perm:
            phi[u] += v[S | (1 << u)] - v[S]
            S |= 1 << u
    return [x / len(perms) for x in phi]


def marginal_sd(v, k: int) -> list[float]:
    """Each player's standard deviation of its marginal contribution over all ``k!``
    orderings (Eq. (2)'s terms): what one ordering drawn uniformly at random, as RAND draws
    them, spreads around the Shapley value."""
    perms = list(itertools.permutations(range(k)))
    terms: list[list[int]] = [[] for _ in range(k)]
    for perm in perms:
        S = 0
        for u in perm:
            terms[u].append(v[S | (1 << u)] - v[S])
            S |= 1 << u
    out = []
    for x in terms:
        mean = Fraction(sum(x), len(x))
        out.append(float(sum((Fraction(y) - mean) ** 2 for y in x) / len(x)) ** 0.5)
    return out


def brute_ref(inst: Instance, T: int, utility: str = "psi_sp"):
    """REF by the definition: every coalition, every time step 0..T-1, Eq. (1).

    Returns (grand starts, grand machines, values at T per coalition mask).
    """
    val = psi_job if utility == "psi_sp" else work_job
    k = inst.k
    NC = 1 << k
    n = inst.n
    order = sorted(range(n), key=lambda j: (int(inst.release[j]), j))
    rank = {j: i for i, j in enumerate(order)}  # ties: the older queue head
    starts = {C: {} for C in range(1, NC)}
    owner = inst.machine_owner().tolist()
    gmach: dict[int, int] = {}
    mC = {C: sum(int(inst.machines[u]) for u in range(k) if C >> u & 1) for C in range(NC)}

    def psi_u(C, u, t):
        return sum(val(s, int(inst.size[j]), t) for j, s in starts[C].items() if inst.org[j] == u)

    def _start(C, j, t):
        starts[C][j] = t
        if C == NC - 1:
            busy = {
                gmach[x]
                for x in starts[C]
                if x in gmach and starts[C][x] <= t < starts[C][x] + inst.size[x]
            }
            gmach[j] = min(mm for mm in range(len(owner)) if mm not in busy)

    for t in range(T):
        v = {0: 0}
        for C in range(1, NC):
            v[C] = sum(psi_u(C, u, t) for u in range(k) if C >> u & 1)
        for C in range(1, NC):
            running = [j for j, s in starts[C].items() if s <= t < s + inst.size[j]]
            free = mC[C] - len(running)
            if free <= 0:
                continue
            waiting = {
                u: [
                    j
                    for j in order
                    if inst.org[j] == u and inst.release[j] <= t and j not in starts[C]
                ]
                for u in range(k)
                if C >> u & 1
            }
            if inst.pinned is not None:  # pinned jobs first, oldest first (CONVENTIONS 5)
                pins = sorted(
                    (j for u in waiting for j in waiting[u] if inst.pinned[j]), key=rank.get
                )
                for j in pins[:free]:
                    _start(C, j, t)
                    waiting[int(inst.org[j])].remove(j)
                free -= min(free, len(pins))
                if free == 0:
                    continue
            # oldest queue head first: every tie goes to the older head (docs/conventions.md)
            cand = sorted((u for u in waiting if waiting[u]), key=lambda u: rank[waiting[u][0]])
            if not cand:
                continue
            key = {u: shapley_eq1(v, C, u) - psi_u(C, u, t) for u in cand}
            if utility != "psi_sp":
                c = bin(C).count("1")
                key = {
                    u: abs(key[u] + Fraction(1, c)) - abs(key[u] + Fraction(1, c) - 1) for u in cand
                }
            ranked = sorted(cand, key=lambda u: -key[u])  # stable: ties keep the older head
            if free >= sum(len(waiting[u]) for u in cand):
                # every waiting job starts; the order only numbers machines: oldest head first
                ranked = cand
            for u in ranked:
                for j in waiting[u]:
                    if free == 0:
                        break
                    _start(C, j, t)
                    free -= 1
    values = {C: sum(psi_u(C, u, T) for u in range(k) if C >> u & 1) for C in range(1, NC)}
    values[0] = 0
    G = NC - 1
    return ([starts[G].get(j, -1) for j in range(n)], [gmach.get(j, -1) for j in range(n)], values)


def best_utilization(inst: Instance, T: int) -> int:
    """Most unit parts any schedule (greedy or not, any order) can process before T.

    Exhaustive search over start decisions at every integer time, for tiny instances.
    """
    M = inst.total_machines
    n = inst.n
    best = 0

    def rec(t, free_at, started, done_units):
        nonlocal best
        # upper bound prune: everything unstarted fully processed
        if t >= T:
            best = max(best, done_units)
            return
        avail = [m for m in range(M) if free_at[m] <= t]
        ready = [j for j in range(n) if j not in started and inst.release[j] <= t]
        for r in range(min(len(avail), len(ready)) + 1):
            for subset in itertools.combinations(ready, r):
                fa = list(free_at)
                units = done_units
                for m, j in zip(avail, subset, strict=False):
                    fa[m] = t + int(inst.size[j])
                    units += min(int(inst.size[j]), T - t)
                rec(t + 1, fa, started | set(subset), units)

    rec(0, [0] * M, frozenset(), 0)
    return best


def brute_ref_distance(inst: Instance, T: int, job_value):
    """REF by Fig. 1 for any per-job utility ``job_value(r, s, p, t)``: every time step,
    every coalition, Eq. (1) with Fractions, ``Distance`` written out as in the figure
    (``Delta psi`` = the job's first unit part, ``job_value(r, t, 1, t + 1)``).

    Returns (grand starts, values at T per coalition mask)."""
    k = inst.k
    NC = 1 << k
    n = inst.n
    order = sorted(range(n), key=lambda j: (int(inst.release[j]), j))
    rank = {j: i for i, j in enumerate(order)}  # ties: the older queue head
    starts = {C: {} for C in range(1, NC)}
    mC = {C: sum(int(inst.machines[u]) for u in range(k) if C >> u & 1) for C in range(NC)}
    r = [int(x) for x in inst.release]
    p = [int(x) for x in inst.size]

    def psi_u(C, u, t):
        return sum(job_value(r[j], s, p[j], t) for j, s in starts[C].items() if inst.org[j] == u)

    for t in range(T):
        v = {0: 0}
        for C in range(1, NC):
            v[C] = sum(psi_u(C, u, t) for u in range(k) if C >> u & 1)
        for C in range(1, NC):
            members = [u for u in range(k) if C >> u & 1]
            running = [j for j, s in starts[C].items() if s <= t < s + p[j]]
            free = mC[C] - len(running)
            waiting = {
                u: [j for j in order if inst.org[j] == u and r[j] <= t and j not in starts[C]]
                for u in members
            }
            cand = sorted((u for u in members if waiting[u]), key=lambda u: rank[waiting[u][0]])
            if free <= 0 or not cand:
                continue
            if free >= sum(len(waiting[u]) for u in cand):
                ranked = cand
            else:
                phi = {u: shapley_eq1(v, C, u) for u in members}
                psi = {u: psi_u(C, u, t) for u in members}
                c = len(members)

                dist = {}
                for u in cand:
                    d = job_value(r[waiting[u][0]], t, 1, t + 1)
                    own = abs(phi[u] + Fraction(d, c) - psi[u] - d)
                    dist[u] = own + sum(
                        abs(phi[w] + Fraction(d, c) - psi[w]) for w in members if w != u
                    )
                ranked = sorted(cand, key=lambda u: dist[u])  # stable: ties keep the older head
            for u in ranked:
                for j in waiting[u]:
                    if free == 0:
                        break
                    starts[C][j] = t
                    free -= 1
    values = {C: sum(psi_u(C, u, T) for u in range(k) if C >> u & 1) for C in range(1, NC)}
    values[0] = 0
    return [starts[NC - 1].get(j, -1) for j in range(n)], values


def brute_ref_rigid(inst: Instance, T: int, rule: str, every_moment: bool = False):
    """REF for rigid jobs by the definitions, every coalition in lockstep, one time unit
    at a time (acting at its own event times: releases of its members' jobs and completions
    in its schedule). Eq. (1) with Fractions on values from the starts so far; the ranking
    is made once per coalition and time (largest phi - psi first, ties to the older queue
    head); the backfilling rule written out from docs/conventions.md. Returns (grand starts,
    values at T per coalition mask).

    ``every_moment``: every coalition acts at every time moment ``0..T-1``, events or not,
    as the paper's Fig. 1 reads (its loop visits every ``t``): the exact reading, which the
    package departs from for rigid jobs (docs/conventions.md, "REF between events")."""
    k = inst.k
    NC = 1 << k
    n = inst.n
    q = [int(x) for x in inst.width]
    p = [int(x) for x in inst.size]
    r = [int(x) for x in inst.release]
    req = [-1] * n if inst.requested is None else [int(x) for x in inst.requested]
    pinned = [False] * n if inst.pinned is None else [bool(x) for x in inst.pinned]
    order = sorted(range(n), key=lambda j: (r[j], j))
    rank = {j: i for i, j in enumerate(order)}
    mC = {C: sum(int(inst.machines[u]) for u in range(k) if C >> u & 1) for C in range(NC)}
    starts = {C: {} for C in range(1, NC)}

    def psi_u(C, u, t):
        return sum(q[j] * psi_job(s, p[j], t) for j, s in starts[C].items() if inst.org[j] == u)

    for t in range(T):
        v = {0: 0}
        for C in range(1, NC):
            v[C] = sum(psi_u(C, u, t) for u in range(k) if C >> u & 1)
        for C in range(1, NC):
            members = [u for u in range(k) if C >> u & 1]
            mine = [j for j in order if C >> int(inst.org[j]) & 1]
            event = any(r[j] == t for j in mine) or any(s + p[j] == t for j, s in starts[C].items())
            if not event and not every_moment:
                continue
            running = [j for j, s in starts[C].items() if s <= t < s + p[j]]
            free = mC[C] - sum(q[j] for j in running)
            queue = {
                u: [
                    j
                    for j in mine
                    if inst.org[j] == u and r[j] <= t and j not in starts[C] and q[j] <= mC[C]
                ]
                for u in members
            }

            def start(j, C=C, queue=queue, t=t):
                starts[C][j] = t
                queue[int(inst.org[j])].remove(j)

            while True:  # pinned jobs first, the oldest while it fits
                heads = [queue[u][0] for u in members if queue[u] and pinned[queue[u][0]]]
                if not heads:
                    break
                j = min(heads, key=rank.get)
                if q[j] > free:
                    break
                start(j)
                free -= q[j]
            cand = [u for u in members if queue[u]]
            if not cand:
                continue
            keys = {u: shapley_eq1(v, C, u) - psi_u(C, u, t) for u in cand}
            ranked = sorted(cand, key=lambda u: (-keys[u], rank[queue[u][0]]))
            if rule == "first-fit":
                while True:
                    u = next((x for x in ranked if queue[x] and q[queue[x][0]] <= free), None)
                    if u is None:
                        break
                    free -= q[queue[u][0]]
                    start(queue[u][0])
                continue
            if rule == "first-fit-queue":  # the best ranked with a job that fits, its oldest
                while True:
                    fit = {x: [y for y in queue[x] if q[y] <= free] for x in ranked}
                    u = next((x for x in ranked if fit[x]), None)
                    if u is None:
                        break
                    free -= q[fit[u][0]]
                    start(fit[u][0])
                continue
            while True:  # none and easy: the best ranked with a waiting job
                u = next((x for x in ranked if queue[x]), None)
                if u is None:
                    break
                j = queue[u][0]
                if q[j] <= free:
                    free -= q[j]
                    start(j)
                    continue
                if rule in ("easy", "easy-queue"):
                    running = [x for x, s in starts[C].items() if s <= t < s + p[x]]
                    ends = sorted(max(starts[C][x] + req[x], t + 1) for x in running)
                    shadow, extra = None, 0
                    for e in sorted(set(ends)):
                        avail_e = free + sum(
                            q[x] for x in running if max(starts[C][x] + req[x], t + 1) <= e
                        )
                        if avail_e >= q[j]:
                            shadow, extra = e, avail_e - q[j]
                            break
                    assert shadow is not None
                    while True:
                        # easy: other organizations' queue heads; easy-queue: every queued
                        # job but j, each organization showing its oldest candidate
                        cands = {
                            x: [
                                y
                                for y in (queue[x] if rule == "easy-queue" else queue[x][:1])
                                if y != j
                                and (rule == "easy-queue" or x != u)
                                and q[y] <= free
                                and (t + req[y] <= shadow or q[y] <= extra)
                            ]
                            for x in ranked
                        }
                        b = next((x for x in ranked if cands[x]), None)
                        if b is None:
                            break
                        h = cands[b][0]
                        if t + req[h] > shadow:
                            extra -= q[h]
                        free -= q[h]
                        start(h)
                break
    values = {0: 0}
    for C in range(1, NC):
        values[C] = sum(psi_u(C, u, T) for u in range(k) if C >> u & 1)
    G = NC - 1
    return [starts[G].get(j, -1) for j in range(n)], values
