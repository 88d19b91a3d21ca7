"""The worked examples of Pascual, Rzadca, Trystram (Figs. 1-3, 5) and the utilization
zones of Sec. 4.3, plus the all-high algorithm of Sec. 4.4.

The paper draws its examples without listing the jobs; the instances below are the
smallest we found (by exhaustive search over tiny instances, time-indexed) that show what
each caption states, with every number checked by the tests:

* :func:`figure1` -- all jobs of one organization: LOCAL is ``N`` times the optimum;
* :func:`figure2` -- matching job types: a cooperative schedule shortens both
  organizations' makespans (narrow long jobs swap with wide short ones);
* :func:`figure3` -- the global optimum (2) extends an organization's makespan; the best
  schedule meeting the local constraints is 3, i.e. 3/2 of the optimum. Cohen, Cordeiro,
  Trystram's Fig. 2 is this example (optimum 2, constrained optimum 3);
* :func:`figure5` -- an ``N = 5`` instance on which MOLBA(2) migrates jobs of the only
  organization above ``2 Wbar + pmax`` and ILBA then shortens the system makespan.
"""

from __future__ import annotations

from collections import deque

import numpy as np

from ..workloads.instance import Instance, Organization
from .schedule import MospSchedule, mosp_arrays


def _mosp(machines: list[int], jobs: list[tuple[int, int, int]]) -> Instance:
    orgs = [Organization(f"O{i + 1}", m) for i, m in enumerate(machines)]
    return Instance(
        orgs,
        np.array([j[0] for j in jobs]),
        np.zeros(len(jobs), dtype=np.int64),
        np.array([j[1] for j in jobs]),
        processors=np.array([j[2] for j in jobs]),
    )


def figure1(N: int = 4, m: int = 2) -> Instance:
    """Fig. 1: ``N`` clusters of ``m`` processors; ``O1`` owns ``N`` jobs ``(p=1, q=m)``.
    LOCAL runs them one after another (makespan ``N``); the optimum spreads them (1)."""
    return _mosp([m] * N, [(0, 1, m)] * N)


def figure2() -> Instance:
    """Fig. 2: ``O1`` (1 processor) has two unit jobs, local makespan 2; ``O2``
    (2 processors) has jobs ``(p=2, q=1)`` and ``(p=2, q=2)``, local makespan 4. Running
    ``O1``'s unit jobs side by side on ``M2`` and ``O2``'s narrow job on ``M1`` gives
    makespans 1 and 3: both gain."""
    return _mosp([1, 2], [(1, 2, 1), (0, 1, 1), (0, 1, 1), (1, 2, 2)])


def figure3() -> Instance:
    """Fig. 3 (and Cohen et al.'s Fig. 2): ``O1`` (2 processors) has two unit jobs,
    local makespan 1; ``O2`` (1 processor) has two jobs of length 2, local makespan 4.
    The global optimum, 2, runs ``O2``'s jobs on ``M1`` and delays ``O1`` to 2; keeping
    ``O1`` at 1 costs makespan 3."""
    return _mosp([2, 1], [(1, 2, 1), (1, 2, 1), (0, 1, 1), (0, 1, 1)])


def figure5() -> Instance:
    """Fig. 5: ``N = 5`` clusters of 4 processors (found by seeded random search for the
    caption's properties): ``O1`` is the only organization with local makespan
    ``>= 2 Wbar + pmax``; MOLBA(2) moves some of its jobs to ``M3`` and ``M5`` and
    increases no makespan; ILBA then shortens the system makespan and the makespans of
    ``O1``, ``O2`` and ``O4``."""
    jobs = [(0, 3, 1), (0, 3, 3), (0, 3, 4), (0, 3, 1), (0, 1, 2), (0, 2, 4), (0, 1, 2)]
    jobs += [(0, 1, 4), (0, 2, 2), (0, 4, 4), (0, 1, 2)]
    jobs += [(1, 4, 4), (1, 1, 3), (1, 2, 1), (1, 1, 4), (2, 3, 2), (2, 4, 1)]
    jobs += [(3, 2, 4), (3, 3, 3), (3, 3, 1), (3, 1, 1), (4, 1, 3), (4, 1, 2), (4, 4, 2)]
    return _mosp([4] * 5, jobs)


def utilization_zones(sched: MospSchedule) -> list[tuple[int, int]]:
    """Per cluster ``(t_L_start, t_L_end)`` (Sec. 4.3): the first time at which the
    utilization is ``<= 1/2`` and the last time at which it is in ``(0, 1/2]``. Time is
    integer, ``U(t)`` the share of busy processors during ``[t, t+1)``; a cluster never
    low gets ``(Cmax, Cmax)`` (``t_L_end = t_L_start`` when no time is in ``(0, 1/2]``)."""
    p, q, _, m = mosp_arrays(sched.instance)
    out = []
    for c in range(sched.instance.k):
        jobs = np.flatnonzero(sched.cluster == c)
        end = int(sched.end[jobs].max()) if len(jobs) else 0
        use = np.zeros(end + 1, dtype=np.int64)
        for j in jobs:
            use[sched.start[j] : sched.start[j] + p[j]] += q[j]
        low = 2 * use <= m[c]
        t_start = int(np.argmax(low))  # use[end] == 0, so some time is low
        lowpos = np.flatnonzero(low & (use > 0))
        t_end = int(lowpos.max()) + 1 if len(lowpos) else t_start
        out.append((t_start, max(t_end, t_start)))
    return out


def all_high(inst: Instance) -> MospSchedule:
    """Sec. 4.4, all jobs *high* (``q > m/2``: one job at a time per cluster): every
    cluster runs its own jobs in HF order; a cluster that has run all its own jobs takes,
    whenever it is free, the job that would start last among the queued ones (from the
    cluster whose queue ends last; ties to the lowest index), which then starts earlier
    than it would at home. A list schedule on ``N`` machines: ``Cmax <= sum(p)/N +
    (1 - 1/N) pmax``, and no organization's makespan grows."""
    p, q, owner, m = mosp_arrays(inst)
    if inst.n and (2 * q <= m[owner]).any():
        j = int(np.flatnonzero(2 * q <= m[owner])[0])
        raise ValueError(f"job {j} is low (q={q[j]} <= m/2): Sec. 4.4 is for high jobs only")
    N = inst.k
    queues = [
        deque(sorted(np.flatnonzero(owner == k).tolist(), key=lambda j: (-q[j], j)))
        for k in range(N)
    ]
    free = [0] * N
    start = np.zeros(inst.n, dtype=np.int64)
    cluster = np.zeros(inst.n, dtype=np.int64)
    remaining = inst.n
    while remaining:
        c = min(range(N), key=lambda i: (free[i], i))
        t = free[c]
        if queues[c]:
            j = queues[c].popleft()
        else:
            # the queue whose jobs end last if run at home
            def home_end(k: int) -> int:
                return free[k] + sum(int(p[x]) for x in queues[k])

            donors = [k for k in range(N) if queues[k]]
            if not donors:
                free[c] = min(f for f in free if f > t) if any(f > t for f in free) else t
                continue
            k = max(donors, key=lambda k: (home_end(k), -k))
            j = queues[k].pop()  # the one that would start last at home
        start[j], cluster[j] = t, c
        free[c] = t + int(p[j])
        remaining -= 1
    return MospSchedule(inst, cluster, start, "all-high")
