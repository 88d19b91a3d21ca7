"""The worked instances of Cohen, Cordeiro, Trystram's theorems on the MOSP game.

* :func:`theorem1` -- Fig. 4: no pure epsilon-approximate equilibrium below 2 under
  priority to jobs;
* :func:`theorem4` -- Fig. 5: an unbounded price of anarchy for parallel jobs under
  priority to organizations; with the proof's optimal schedule and its worst equilibrium;
* :func:`theorem5` -- Fig. 6: price of anarchy 2K/(K+1) for bags of tasks.

Times are integers: where the paper has an arbitrarily small delta, :func:`theorem1`
scales lengths so that delta is 1.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..workloads.instance import Instance, Organization
from ..workloads.limits import MAX_JOBS, check_count
from .game import Mechanism
from .schedule import MospSchedule, mosp_arrays


def mosp(
    machines: list[int], jobs: list[tuple[int, int, int]], names: list[str] | None = None
) -> Instance:
    """A MOSP instance from cluster sizes and ``(owner, p, q)`` jobs."""
    names = names or [f"O{i}" for i in range(len(machines))]
    orgs = [Organization(nm, m) for nm, m in zip(names, machines, strict=True)]
    return Instance(
        orgs,
        np.array([j[0] for j in jobs], dtype=np.int64),
        np.zeros(len(jobs), dtype=np.int64),
        np.array([j[1] for j in jobs], dtype=np.int64),
        processors=np.array([j[2] for j in jobs], dtype=np.int64),
    )


def theorem1(D: int = 50) -> tuple[Instance, Mechanism]:
    """Theorem 1 (Fig. 4), with delta = 1 and the paper's 1 scaled to ``D``: three
    organizations with one job of length 1, O4 with two jobs of ``D + 2`` and O5 with four,
    one processor each, and the figure's job priorities (J2(5) > J2(4) > J3(5) > J4(5) >
    the rest)."""
    jobs = [(0, 1, 1), (1, 1, 1), (2, 1, 1), (3, D + 2, 1), (3, D + 2, 1)] + [(4, D + 2, 1)] * 4
    pr = np.zeros(9)
    pr[6], pr[4], pr[7], pr[8] = 10, 9, 8, 7
    pr[3], pr[5], pr[0], pr[1], pr[2] = 6, 5, 3, 2, 1
    return mosp([1] * 5, jobs), Mechanism("jobs", "lpt", job_priority=pr)


@dataclass
class Theorem4:
    """The instance of Theorem 4 for one ``x``, with the proof's two schedules."""

    x: int
    instance: Instance
    L: int
    optimum: MospSchedule  # makespan L
    worst_config: np.ndarray  # the proof's equilibrium, makespan (x+1)L - 1
    names: list[str]


def theorem4_size(x: int) -> tuple[int, int]:
    """``(organizations, jobs)`` of :func:`theorem4` for ``x``, in closed form (without
    building it): ``n = 3x(x-1)/2 + 2`` organizations of type A with 2 jobs each, and
    for i = 1..x, B_i with ``i + n + 3(i-1)`` jobs, C_i with ``i + n + 3(i-1) + 2`` and
    D_i with ``i + 1 + n + 3i``."""
    if x < 1:
        raise ValueError("Theorem 4 needs x >= 1")
    n = 3 * x * (x - 1) // 2 + 2
    jobs = 2 * n + sum(3 * i + 3 * n + 9 * i - 3 for i in range(1, x + 1))
    return n + 3 * x, jobs


def theorem5_size(K: int) -> tuple[int, int]:
    """``(organizations, jobs)`` of :func:`theorem5` for ``K``: ``2K`` organizations,
    ``(K-1)(2K+1) + 2 + K`` jobs."""
    if K < 2:
        raise ValueError("Theorem 5 needs K >= 2")
    return 2 * K, (K - 1) * (2 * K + 1) + 2 + K


def theorem4(x: int) -> Theorem4:
    """Theorem 4 (Fig. 5): ``n = 3x(x-1)/2 + 2`` organizations of type A with jobs
    ``(L-1, x+1)`` and ``(1, m-x-1)``; for i = 1..x, B_i with i jobs ``(L, m)`` and
    ``n+3(i-1)`` jobs ``(1, m)``, C_i with i jobs ``(L, m)`` and ``n+3(i-1)+2`` jobs
    ``(1, m-x+i-1)``, D_i with i jobs ``(L, m)``, one ``(1, m-x+i-1)`` and ``n+3i`` jobs
    ``(L-1, x-i+1)``. Priorities A > B_1 > C_1 > D_1 > B_2 > ...; ``m = H`` (the heights of
    the long thin jobs) and ``L`` = the number of unit jobs but one, as in the proof.

    The worst equilibrium follows the proof's scheme: level by level, B_i keeps its big
    jobs and sends one unit job to every organization of higher priority; C_i keeps its
    big jobs and one unit job and sends one to every organization of higher priority
    (B_i included); D_i keeps its big jobs, its unit job and one long thin job and sends
    one long thin job to every organization of higher priority. The optimum puts one big
    job on each of the first N - 2 clusters, the long thin jobs side by side after a
    ``(1, m)`` job on the next, and the remaining unit jobs one after the other on the
    last.
    """
    check_count(theorem4_size(x)[1], MAX_JOBS, f"jobs of Theorem 4's instance for x = {x}")
    n = 3 * x * (x - 1) // 2 + 2
    m = sum((n + 3 * i) * (x - i + 1) for i in range(x + 1))
    units = n + sum((n + 3 * (i - 1)) + (n + 3 * (i - 1) + 2) + 1 for i in range(1, x + 1))
    L = units - 1
    jobs: list[tuple[int, int, int]] = []
    names = [f"A{a + 1}" for a in range(n)]
    for a in range(n):
        jobs += [(a, L - 1, x + 1), (a, 1, m - x - 1)]
    k = n
    for i in range(1, x + 1):
        names += [f"B{i}", f"C{i}", f"D{i}"]
        jobs += [(k, L, m)] * i + [(k, 1, m)] * (n + 3 * (i - 1))
        jobs += [(k + 1, L, m)] * i + [(k + 1, 1, m - x + i - 1)] * (n + 3 * (i - 1) + 2)
        jobs += (
            [(k + 2, L, m)] * i
            + [(k + 2, 1, m - x + i - 1)]
            + [(k + 2, L - 1, x - i + 1)] * (n + 3 * i)
        )
        k += 3
    inst = mosp([m] * k, jobs, names)
    p, q, org, _ = mosp_arrays(inst)

    # the proof's equilibrium
    cfg = org.copy()
    higher = list(range(n))
    for i in range(1, x + 1):
        b = n + 3 * (i - 1)
        for level, own in enumerate((b, b + 1, b + 2)):
            mine = np.flatnonzero(org == own)
            movable = [int(j) for j in mine if (p[j] == 1 if level < 2 else (p[j] == L - 1))]
            keep = 0 if level == 0 else 1
            for j, h in zip(movable[keep:], higher, strict=True):
                cfg[j] = h
            higher.append(own)

    # the proof's optimum
    N = inst.k
    cluster = np.zeros(inst.n, dtype=np.int64)
    start = np.zeros(inst.n, dtype=np.int64)
    big = np.flatnonzero(p == L)
    cluster[big] = np.arange(len(big))
    unit = np.flatnonzero(p == 1)
    full = next(int(j) for j in unit if q[j] == m)
    cluster[full] = N - 2
    longs = np.flatnonzero(p == L - 1)
    cluster[longs], start[longs] = N - 2, 1
    rest = unit[unit != full]
    cluster[rest], start[rest] = N - 1, np.arange(len(rest))
    opt = MospSchedule(inst, cluster, start, "Theorem 4 optimum")
    return Theorem4(x, inst, L, opt, cfg, names)


@dataclass
class Theorem5:
    """The instance of Theorem 5 for one ``K``, with the proof's two configurations."""

    K: int
    instance: Instance
    fig6c_config: np.ndarray  # Fig. 6c as the proof describes it: makespan 2K
    optimum_config: np.ndarray  # Fig. 6b: makespan K + 1


def theorem5(K: int) -> Theorem5:
    """Theorem 5 (Fig. 6): K - 1 organizations with ``2K + 1`` unit jobs, one with jobs
    ``K + 1`` and ``K``, and K organizations with one unit job; one processor each;
    priorities in index order.

    Fig. 6c (the proof's worst equilibrium): each of the first K - 1 organizations keeps
    ``K + 1`` jobs and sends one to each of the last K, where the job of organization i
    runs at time i; the organization with the long jobs sends its job ``K`` to the first of
    the last K, where it runs from K to 2K. This is a pure equilibrium for K = 2 only:
    from K = 3 on, the first organization cuts its makespan from K + 1 to 3 by sending more
    jobs to the last K machines (tested). Fig. 6b (the optimum, makespan K + 1): the job
    ``K`` goes to the last machine and the first K - 1 organizations fill the other K - 1.
    """
    check_count(theorem5_size(K)[1], MAX_JOBS, f"jobs of Theorem 5's instance for K = {K}")
    jobs: list[tuple[int, int, int]] = []
    for i in range(K - 1):
        jobs += [(i, 1, 1)] * (2 * K + 1)
    jobs += [(K - 1, K + 1, 1), (K - 1, K, 1)]
    jobs += [(K + i, 1, 1) for i in range(K)]
    inst = mosp([1] * (2 * K), jobs)
    org = inst.org
    fig6c = org.copy()
    opt = org.copy()
    for i in range(K - 1):
        extra = np.flatnonzero(org == i)[K + 1 :]  # the K jobs that started after K + 1
        fig6c[extra] = K + np.arange(K)
    big_k = int(np.flatnonzero(org == K - 1)[1])
    fig6c[big_k] = K
    opt[big_k] = 2 * K - 1
    spread = [int(j) for i in range(K - 1) for j in np.flatnonzero(org == i)[K + 1 :]]
    for t, j in enumerate(spread):  # K(K-1) unit jobs, K on each of the other K - 1
        opt[j] = K + t % (K - 1)
    return Theorem5(K, inst, fig6c, opt)
