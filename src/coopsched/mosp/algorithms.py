"""LOCAL, MOLBA, ILBA and the meta-algorithm (Pascual, Rzadca, Trystram, Secs. 4-6).

* :func:`local` -- every organization list-schedules its own jobs on its own cluster in
  HF order (Sec. 6.1); its makespans are the MOSP constraints.
* :func:`molba` -- MOLBA(alpha), Sec. 4.1: from the local schedule, the organizations
  whose local makespan is at least ``alpha*Wbar + pmax`` give up their jobs starting
  after ``2*Wbar``; these are re-placed in HF order, each at its earliest start on any
  cluster that delays no job already there (conservative-backfilling insertion,
  docs/conventions.md §2). Ties between clusters: the job's own cluster, then the lowest index.
* :func:`ilba` -- ILBA, Sec. 5.1, applied to any schedule: clusters sorted by
  non-decreasing makespan; for ``k = 2..N`` all jobs of the k-th cluster are taken off
  and re-placed, in their order of start, at the earliest strip on clusters 1..k. Ties:
  the job's current cluster, then the sorted order. No job is ever delayed (Prop. 4).
* :func:`meta` -- Sec. 6.1: MOLBA(2); if an organization's makespan grew or
  ``Cmax > 3 max(pmax, Wbar)``, MOLBA(3) instead.

"Starting after 2*Wbar" is read as ``start > 2*Wbar``.
"""

from __future__ import annotations

import numpy as np

from ..workloads.instance import Instance
from .listsched import list_order, list_schedule
from .profile import ClusterProfile
from .schedule import MospSchedule, lower_bounds, mosp_arrays

ALGORITHMS = ("local", "molba", "ilba", "meta")


def local(inst: Instance, order: str = "hf") -> MospSchedule:
    """Each organization alone on its cluster, list scheduling in ``order`` (HF)."""
    p, q, owner, m = mosp_arrays(inst)
    start = np.zeros(inst.n, dtype=np.int64)
    for k in range(inst.k):
        jobs = np.flatnonzero(owner == k)
        if len(jobs):
            start[jobs] = list_schedule(p[jobs].tolist(), q[jobs].tolist(), int(m[k]), order)
    sched = MospSchedule(inst, owner.copy(), start, "local")
    sched.local_makespans = sched.org_makespans()
    return sched


def profiles_of(sched: MospSchedule) -> list[ClusterProfile]:
    """One :class:`ClusterProfile` per cluster with the schedule's jobs placed."""
    p, q, _, m = mosp_arrays(sched.instance)
    profs = [ClusterProfile(int(mk)) for mk in m]
    for j in range(sched.instance.n):
        profs[sched.cluster[j]].place(j, int(sched.start[j]), int(p[j]), int(q[j]))
    return profs


def molba(inst: Instance, alpha: float = 2.0, *, base: MospSchedule | None = None) -> MospSchedule:
    """MOLBA(alpha), Sec. 4.1 (guarantees: alpha=3 gives 4; alpha=2, last job low, 3)."""
    if not 1 <= alpha < float("inf"):  # also refuses nan
        raise ValueError(f"MOLBA needs a finite alpha >= 1, got {alpha}")
    p, q, owner, m = mosp_arrays(inst)
    loc = base if base is not None else local(inst)
    wbar, pmax = lower_bounds(inst)
    local_ms = loc.local_makespans
    if local_ms is None:
        raise ValueError("MOLBA's base schedule must record the local makespans (see local())")
    overloaded = [k for k in range(inst.k) if local_ms[k] >= alpha * wbar + pmax]
    profs = profiles_of(loc)
    cluster = loc.cluster.copy()
    start = loc.start.copy()
    moved = [int(j) for j in np.flatnonzero(np.isin(owner, overloaded) & (loc.start > 2 * wbar))]
    for j in moved:
        profs[cluster[j]].remove(j)
    hf = list_order([int(p[j]) for j in moved], [int(q[j]) for j in moved], "hf")
    for i in hf:
        j = moved[i]
        best_c, best_s = -1, None
        candidates = [int(owner[j])] + [c for c in range(inst.k) if c != owner[j]]
        for c in candidates:
            if q[j] > profs[c].m:
                continue
            s = profs[c].earliest_start(int(p[j]), int(q[j]))
            if best_s is None or s < best_s:
                best_c, best_s = c, s
        if best_s is None:
            raise ValueError(f"job {j} ({q[j]} processors) fits on no cluster")
        profs[best_c].place(j, best_s, int(p[j]), int(q[j]))
        cluster[j], start[j] = best_c, best_s
    return MospSchedule(
        inst,
        cluster,
        start,
        f"molba({alpha:g})",
        local_ms.copy(),
        info={"alpha": alpha, "overloaded": len(overloaded), "rescheduled": len(moved)},
    )


def ilba(sched: MospSchedule) -> MospSchedule:
    """ILBA, Sec. 5.1, on any schedule: iterative load balancing that delays no job."""
    inst = sched.instance
    p, q, _, m = mosp_arrays(inst)
    profs = profiles_of(sched)
    cms = sched.cluster_makespans()
    order = sorted(range(inst.k), key=lambda c: (cms[c], c))
    cluster = sched.cluster.copy()
    start = sched.start.copy()
    for idx in range(1, inst.k):
        c = order[idx]
        jobs = sorted(profs[c].jobs, key=lambda j: (profs[c].jobs[j][0], j))
        for j in jobs:
            profs[c].remove(j)
        for j in jobs:
            best_c, best_s = c, profs[c].earliest_start(int(p[j]), int(q[j]))
            for c2 in order[:idx]:
                if q[j] > profs[c2].m:
                    continue
                s = profs[c2].earliest_start(int(p[j]), int(q[j]))
                if s < best_s:
                    best_c, best_s = c2, s
            profs[best_c].place(j, best_s, int(p[j]), int(q[j]))
            cluster[j], start[j] = best_c, best_s
    return MospSchedule(
        inst,
        cluster,
        start,
        f"ilba[{sched.algorithm}]",
        sched.local_makespans,
        info=dict(sched.info),
    )


def meta(inst: Instance) -> MospSchedule:
    """Sec. 6.1's meta-algorithm: MOLBA(2), falling back to MOLBA(3)."""
    base = local(inst)
    s2 = molba(inst, 2.0, base=base)
    wbar, pmax = lower_bounds(inst)
    grew = bool((s2.org_makespans() > s2.local_makespans).any())
    if grew or s2.makespan > 3 * max(pmax, wbar):
        s3 = molba(inst, 3.0, base=base)
        s3.info["fallback"] = True
        s3.algorithm = "meta=molba(3)"
        return s3
    s2.info["fallback"] = False
    s2.algorithm = "meta=molba(2)"
    return s2


def run(inst: Instance, algorithm: str = "meta", alpha: float = 2.0) -> MospSchedule:
    """One entry point for the CLI: ``local``, ``molba`` (with ``alpha``), ``ilba``
    (ILBA on the meta-algorithm's schedule, as in Sec. 6.1) or ``meta``."""
    if not 1 <= alpha < float("inf"):  # checked for every algorithm: never silently ignored
        raise ValueError(f"MOLBA's alpha must be a finite number >= 1, got {alpha}")
    if algorithm == "local":
        return local(inst)
    if algorithm == "molba":
        return molba(inst, alpha)
    if algorithm == "meta":
        return meta(inst)
    if algorithm == "ilba":
        return ilba(meta(inst))
    raise ValueError(f"unknown algorithm {algorithm!r}; choose from {', '.join(ALGORITHMS)}")
