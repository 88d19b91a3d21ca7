"""The MOSP game and its coordination mechanisms (Cohen, Cordeiro, Trystram, Secs. 4-7).

One agent per organization chooses the cluster of each of its jobs; a *configuration*
is the vector ``config[j]`` (cluster of job ``j``). Each cluster runs the coordination
mechanism "my jobs first" (Sec. 5.1):

1. its owner's jobs placed there are list-scheduled first, by the mechanism's list
   algorithm (LPT by default), as if no foreign job existed;
2. then the foreign jobs, by decreasing priority -- *priority to jobs* (a per-job
   priority, e.g. longer first for LPT) or *priority to organizations* (a total order of
   organizations; jobs of one organization in list order) -- each at its earliest start
   that delays no job placed before it.

So a foreign job never delays an owner's job, and a job never delays a job of higher
priority. The owner's jobs are list-scheduled in the sense of docs/conventions.md §2 (Graham's list
scheduling, :func:`~coopsched.mosp.listsched.list_schedule`): at each time the first job of
the list that fits starts, so a later job may start in a hole and delay an earlier wide one
-- exactly what ``coopsched mosp --algorithm local`` does, so an organization's local
makespan is the same in both commands. The foreign jobs are inserted, which is what "never
delays a job of higher priority" requires. The cost of an agent is the makespan of its jobs
wherever they run.

:func:`coopsched.mosp.construction.construct_equilibrium` is the algorithm of Sec. 7.1 (priority to organizations):
every organization first schedules its jobs locally; then, by decreasing priority, each
organization takes all its jobs back and list-schedules them on the whole platform (at each
time, the first job of its list that can start there starts, at home if home can take it),
keeping a job at home whenever home is as early as anywhere else (a maximal set of jobs at
home on ties) -- or, with ``rebalance="exact"``, takes an exact best response. Theorem 2:
with a rho-approximate list algorithm the result is a pure rho-approximate equilibrium
(proved for one processor per organization). Lee's MLPT (for clusters that become free at
different times) is not implemented: its published definition was not available here.
LPT, HF, SPT and plain list order are, and exact rebalancing is the rho = 1 case.
Best responses, epsilon, dynamics and the search for equilibria are in
:mod:`coopsched.mosp.equilibrium`; the paper's instances in
:mod:`coopsched.mosp.paper_instances`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..workloads.instance import Instance
from .listsched import list_order, list_schedule
from .profile import ClusterProfile
from .schedule import MospSchedule, mosp_arrays


@dataclass
class Mechanism:
    """A coordination mechanism: "my jobs first", then foreign jobs by priority.

    ``kind="organizations"``: ``org_order`` lists organizations from the highest priority
    (default: index order). ``kind="jobs"``: ``job_priority[j]`` (higher first; default:
    from ``order`` -- LPT: longer first, SPT: shorter first, HF: wider first).
    """

    kind: str = "organizations"
    order: str = "lpt"
    org_order: Sequence[int] | None = None
    job_priority: Sequence[float] | np.ndarray | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("organizations", "jobs"):
            raise ValueError("a mechanism gives priority to 'organizations' or to 'jobs'")
        list_order([1], [1], self.order)  # validates the name

    def org_rank(self, k: int) -> list[int]:
        """The rank of each of ``k`` organizations in the priority order (``org_order``, else index
        order)."""
        order = list(self.org_order) if self.org_order is not None else list(range(k))
        if sorted(order) != list(range(k)):
            raise ValueError(f"org_order must be a permutation of 0..{k - 1}")
        rank = [0] * k
        for pos, u in enumerate(order):
            rank[u] = pos
        return rank

    def priorities(self, inst: Instance) -> np.ndarray:
        """Priority of every job for foreign placement (higher = earlier)."""
        p, q, owner, _ = mosp_arrays(inst)
        if self.kind == "organizations":
            rank = self.org_rank(inst.k)
            return -np.array([rank[u] for u in owner], dtype=float)
        if self.job_priority is not None:
            pr = np.asarray(self.job_priority, dtype=float)
            if len(pr) != inst.n:
                raise ValueError("job_priority needs one value per job")
            return pr
        return {"lpt": p, "spt": -p, "hf": q, "list": -np.arange(inst.n)}[self.order].astype(float)


def list_positions(inst: Instance, mech: Mechanism) -> np.ndarray:
    """``pos[j]``: the rank of job ``j`` in the mechanism's list order (stable)."""
    p, q, _, _ = mosp_arrays(inst)
    pos = np.empty(inst.n, dtype=np.int64)
    pos[list_order(p.tolist(), q.tolist(), mech.order)] = np.arange(inst.n)
    return pos


def cluster_sequence(jobs, c: int, owner: np.ndarray, pos: np.ndarray, pr: np.ndarray) -> list[int]:
    """The order in which cluster ``c`` places ``jobs``: its owner's in list order, then
    the foreign ones by decreasing priority (list order among equal priorities)."""
    own = sorted((int(j) for j in jobs if owner[j] == c), key=lambda j: pos[j])
    foreign = sorted((int(j) for j in jobs if owner[j] != c), key=lambda j: (-pr[j], pos[j]))
    return own + foreign


def owner_profile(m: int, own: Sequence[int], p: np.ndarray, q: np.ndarray) -> ClusterProfile:
    """ "My jobs first": a cluster of ``m`` processors with its owner's jobs ``own`` (given in
    list order) list-scheduled on it (docs/conventions.md §2), as if no foreign job existed."""
    prof = ClusterProfile(int(m))
    own = [int(j) for j in own]
    if own:
        pj, qj = [int(p[j]) for j in own], [int(q[j]) for j in own]
        starts = list_schedule(pj, qj, int(m), order=list(range(len(own))))
        for j, s, pp, qq in zip(own, starts.tolist(), pj, qj, strict=True):
            prof.place(j, s, pp, qq)
    return prof


def schedule(inst: Instance, config: Sequence[int] | np.ndarray, mech: Mechanism) -> MospSchedule:
    """The schedule a configuration induces under the mechanism."""
    p, q, owner, m = mosp_arrays(inst)
    config = np.asarray(config, dtype=np.int64)
    if len(config) != inst.n or (inst.n and (config.min() < 0 or config.max() >= inst.k)):
        raise ValueError("a configuration gives every job a cluster 0..k-1")
    wide: np.ndarray | list[int] = np.flatnonzero(q > m[config]) if inst.n else []
    if len(wide):
        j = int(wide[0])
        raise ValueError(
            f"job {j} ({q[j]} processors) cannot run on cluster {config[j]} ({m[config[j]]} processors)"
        )
    pr = mech.priorities(inst)
    pos = list_positions(inst, mech)
    start = np.zeros(inst.n, dtype=np.int64)
    for c in range(inst.k):
        seq = cluster_sequence(np.flatnonzero(config == c), c, owner, pos, pr)
        own = [j for j in seq if owner[j] == c]
        prof = owner_profile(int(m[c]), own, p, q)
        for j in own:
            start[j] = prof.jobs[j][0]
        for j in seq[len(own) :]:
            start[j] = prof.insert(int(j), int(p[j]), int(q[j]))
    return MospSchedule(
        inst,
        config.copy(),
        start,
        f"game[{mech.kind},{mech.order}]",
        local_makespans=local_makespans(inst, mech),
    )


def local_makespans(inst: Instance, mech: Mechanism) -> np.ndarray:
    """Each organization alone on its cluster (the MOSP local constraint)."""
    p, q, owner, m = mosp_arrays(inst)
    pos = list_positions(inst, mech)
    out = np.zeros(inst.k, dtype=np.int64)
    for c in range(inst.k):
        jobs = sorted(np.flatnonzero(owner == c).tolist(), key=lambda j: pos[j])
        if jobs:
            out[c] = owner_profile(int(m[c]), jobs, p, q).makespan
    return out


def costs(inst: Instance, config: Sequence[int] | np.ndarray, mech: Mechanism) -> np.ndarray:
    """``cost_k``: the makespan of agent ``k``'s jobs (0 for an agent with no job)."""
    return schedule(inst, config, mech).org_makespans()


def selfishness_violations(sched: MospSchedule) -> list[str]:
    """Sec. 4's selfishness restriction: on cluster k, the first foreign job ``f`` (or the
    first idle time) must not start before a job ``i`` of organization k that needs no more
    processors (``q_f >= q_i``) -- otherwise k could run ``i`` there earlier."""
    inst = sched.instance
    p, q, owner, m = mosp_arrays(inst)
    out = []
    for k in range(inst.k):
        mine = np.flatnonzero(owner == k)
        if not len(mine):
            continue
        on_k = np.flatnonzero(sched.cluster == k)
        foreign = on_k[owner[on_k] != k]
        if len(foreign):
            f = foreign[np.argmin(sched.start[foreign])]
            for i in mine:
                if sched.start[f] < sched.start[i] and q[f] >= q[i]:
                    out.append(
                        f"cluster {k}: foreign job {f} (q={q[f]}) starts at {sched.start[f]} before "
                        f"job {i} of organization {k} (q={q[i]}) at {sched.start[i]}"
                    )
        else:
            prof = ClusterProfile(int(m[k]))
            for j in on_k:
                prof.place(int(j), int(sched.start[j]), int(p[j]), int(q[j]))
            for i in mine:
                if sched.cluster[i] == k:
                    continue
                t = prof.earliest_start(int(p[i]), int(q[i]))
                if t < sched.start[i]:
                    out.append(
                        f"cluster {k} is idle enough at {t} for job {i} of organization {k}, "
                        f"which starts at {sched.start[i]} on cluster {sched.cluster[i]}"
                    )
    return out
