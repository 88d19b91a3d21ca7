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
priority; "list scheduling" here places each job of the list at its earliest start that
delays the jobs before it (for sequential jobs this is Graham's list scheduling). The
cost of an agent is the makespan of its jobs wherever they run.

:func:`construct_equilibrium` is the algorithm of Sec. 7.1 (priority to organizations):
every organization first schedules its jobs locally; then, by decreasing priority, each
organization takes all its jobs back and list-schedules them on the whole platform,
keeping a job at home whenever home is as early as anywhere else (a maximal set of jobs at
home on ties). Theorem 2: with a rho-approximate list algorithm the result is a pure
rho-approximate equilibrium. Lee's MLPT (for clusters that become free at different
times) is not implemented: its published definition was not available here. LPT, HF, SPT
and plain list order are.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..workloads.instance import Instance
from .listsched import list_order
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
    job_priority: Sequence[float] | None = None

    def __post_init__(self) -> None:
        if self.kind not in ("organizations", "jobs"):
            raise ValueError("a mechanism gives priority to 'organizations' or to 'jobs'")
        list_order([1], [1], self.order)  # validates the name

    def org_rank(self, k: int) -> list[int]:
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


def schedule(inst: Instance, config: Sequence[int], mech: Mechanism) -> MospSchedule:
    """The schedule a configuration induces under the mechanism."""
    p, q, owner, m = mosp_arrays(inst)
    config = np.asarray(config, dtype=np.int64)
    if len(config) != inst.n or (inst.n and (config.min() < 0 or config.max() >= inst.k)):
        raise ValueError("a configuration gives every job a cluster 0..k-1")
    wide = np.flatnonzero(q > m[config]) if inst.n else []
    if len(wide):
        j = int(wide[0])
        raise ValueError(f"job {j} ({q[j]} processors) cannot run on cluster {config[j]} ({m[config[j]]} processors)")
    pr = mech.priorities(inst)
    pos = np.empty(inst.n, dtype=np.int64)
    pos[list_order(p.tolist(), q.tolist(), mech.order)] = np.arange(inst.n)
    start = np.zeros(inst.n, dtype=np.int64)
    for c in range(inst.k):
        prof = ClusterProfile(int(m[c]))
        jobs = np.flatnonzero(config == c)
        own = sorted((j for j in jobs if owner[j] == c), key=lambda j: pos[j])
        foreign = sorted((j for j in jobs if owner[j] != c), key=lambda j: (-pr[j], pos[j]))
        for j in own + foreign:
            start[j] = prof.insert(int(j), int(p[j]), int(q[j]))
    return MospSchedule(inst, config.copy(), start, f"game[{mech.kind},{mech.order}]",
                        local_makespans=local_makespans(inst, mech))


def local_makespans(inst: Instance, mech: Mechanism) -> np.ndarray:
    """Each organization alone on its cluster (the MOSP local constraint)."""
    p, q, owner, m = mosp_arrays(inst)
    out = np.zeros(inst.k, dtype=np.int64)
    for c in range(inst.k):
        jobs = np.flatnonzero(owner == c)
        if not len(jobs):
            continue
        prof = ClusterProfile(int(m[c]))
        for i in list_order(p[jobs].tolist(), q[jobs].tolist(), mech.order):
            j = int(jobs[i])
            prof.insert(j, int(p[j]), int(q[j]))
        out[c] = prof.makespan
    return out


def costs(inst: Instance, config: Sequence[int], mech: Mechanism) -> np.ndarray:
    """``cost_k``: the makespan of agent ``k``'s jobs (0 for an agent with no job)."""
    return schedule(inst, config, mech).org_makespans()


@dataclass
class Equilibrium:
    config: np.ndarray
    schedule: MospSchedule
    local: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def gains(self) -> np.ndarray:
        """Relative improvement of each organization over its local makespan."""
        orgm = self.schedule.org_makespans()
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.local > 0, (self.local - orgm) / np.maximum(self.local, 1), 0.0)


def construct_equilibrium(inst: Instance, mech: Mechanism | None = None) -> Equilibrium:
    """Sec. 7.1: rebalance organizations one by one in priority order (Theorem 2)."""
    mech = mech or Mechanism()
    if mech.kind != "organizations":
        raise ValueError("the construction of Sec. 7.1 needs priority to organizations")
    p, q, owner, m = mosp_arrays(inst)
    rank = mech.org_rank(inst.k)
    order = sorted(range(inst.k), key=lambda u: rank[u])
    config = owner.copy()
    pos = np.empty(inst.n, dtype=np.int64)
    pos[list_order(p.tolist(), q.tolist(), mech.order)] = np.arange(inst.n)
    moved = 0
    for k in order:
        mine = sorted(np.flatnonzero(owner == k).tolist(), key=lambda j: pos[j])
        if not mine:
            continue
        # every other cluster as the mechanism schedules it without k's jobs (all of
        # them are still at home: only organizations of higher priority moved jobs)
        others = [c for c in range(inst.k) if c != k]
        profs: dict[int, ClusterProfile] = {}
        base = schedule(inst, config, mech)
        for c in others:
            prof = ClusterProfile(int(m[c]))
            for j in np.flatnonzero(config == c):
                prof.place(int(j), int(base.start[j]), int(p[j]), int(q[j]))
            profs[c] = prof
        home = ClusterProfile(int(m[k]))  # k's own jobs come first at home
        for j in mine:
            best_c, best_s = k, home.earliest_start(int(p[j]), int(q[j]))
            for c in others:
                if q[j] > m[c]:
                    continue
                s = profs[c].earliest_start(int(p[j]), int(q[j]))
                if s < best_s:
                    best_c, best_s = c, s
            if best_c == k:
                home.place(int(j), best_s, int(p[j]), int(q[j]))
            else:
                profs[best_c].place(int(j), best_s, int(p[j]), int(q[j]))
                moved += 1
            config[j] = best_c
    sched = schedule(inst, config, mech)
    return Equilibrium(config, sched, local_makespans(inst, mech), {"migrated": moved})


# ------------------------------------------------------------------ verification


def strategies(inst: Instance, k: int, mech: Mechanism | None = None, limit: int = 200_000):
    """Every strategy of agent ``k``: each of its jobs on any cluster wide enough.

    Jobs of one agent that the mechanism cannot tell apart (same ``p``, ``q`` and
    priority) are interchangeable, so strategies that only permute them are generated
    once (for instances with many equal jobs, e.g. Theorem 5's). Under priority to jobs,
    equal jobs with different priorities are told apart.
    """
    p, q, owner, m = mosp_arrays(inst)
    pr = (mech or Mechanism()).priorities(inst)
    mine = np.flatnonzero(owner == k).tolist()
    groups: dict[tuple, list[int]] = {}
    for j in mine:
        groups.setdefault((int(p[j]), int(q[j]), float(pr[j])), []).append(j)
    per_group = []
    for (_, qq, _pr), jobs in groups.items():
        ok = [c for c in range(inst.k) if m[c] >= qq]
        per_group.append([(jobs, combo) for combo in itertools.combinations_with_replacement(ok, len(jobs))])
    count = 1
    for g in per_group:
        count *= len(g)
    if count > limit:
        raise ValueError(f"agent {k} has {count} strategies; exhaustive search is for small instances")
    for choice in itertools.product(*per_group):
        assign = {}
        for jobs, combo in choice:
            for j, c in zip(jobs, combo, strict=True):
                assign[j] = c
        yield assign


def best_response(inst: Instance, config: Sequence[int], mech: Mechanism, k: int) -> tuple[int, np.ndarray]:
    """Agent ``k``'s lowest cost over all its strategies (others fixed), and that strategy."""
    base = np.asarray(config, dtype=np.int64)
    best_cost, best_cfg = None, base
    for assign in strategies(inst, k, mech):
        cfg = base.copy()
        for j, c in assign.items():
            cfg[j] = c
        cost = int(costs(inst, cfg, mech)[k])
        if best_cost is None or cost < best_cost:
            best_cost, best_cfg = cost, cfg
    return (0 if best_cost is None else best_cost), best_cfg


def epsilon(inst: Instance, config: Sequence[int], mech: Mechanism) -> tuple[float, list[float]]:
    """Smallest epsilon making the configuration an epsilon-approximate pure equilibrium,
    and each agent's ratio ``cost / best response`` (exhaustive; small instances)."""
    cur = costs(inst, config, mech)
    ratios = []
    for k in range(inst.k):
        br, _ = best_response(inst, config, mech, k)
        ratios.append(float(cur[k]) / br if br else 1.0)
    return max(ratios, default=1.0), ratios


@dataclass
class Dynamics:
    converged: bool
    cycle: list[tuple[int, ...]] | None
    steps: int
    config: np.ndarray
    history: list[tuple[int, ...]]


def best_response_dynamics(
    inst: Instance, mech: Mechanism, config: Sequence[int] | None = None, max_rounds: int = 50,
) -> Dynamics:
    """Agents in turn switch to a strictly better best response; stop at an equilibrium or
    when a configuration repeats (a cycle, reported)."""
    p, q, owner, m = mosp_arrays(inst)
    cfg = np.array(owner if config is None else config, dtype=np.int64)
    seen: dict[tuple[int, ...], int] = {tuple(cfg): 0}
    history = [tuple(cfg)]
    steps = 0
    for _ in range(max_rounds):
        improved = False
        for k in range(inst.k):
            cur = int(costs(inst, cfg, mech)[k])
            br, new = best_response(inst, cfg, mech, k)
            if br < cur:
                cfg = new
                steps += 1
                key = tuple(cfg)
                history.append(key)
                if key in seen:
                    return Dynamics(False, history[seen[key]:], steps, cfg, history)
                seen[key] = len(history) - 1
                improved = True
        if not improved:
            return Dynamics(True, None, steps, cfg, history)
    return Dynamics(False, None, steps, cfg, history)


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
                    out.append(f"cluster {k}: foreign job {f} (q={q[f]}) starts at {sched.start[f]} before "
                               f"job {i} of organization {k} (q={q[i]}) at {sched.start[i]}")
        else:
            prof = ClusterProfile(int(m[k]))
            for j in on_k:
                prof.place(int(j), int(sched.start[j]), int(p[j]), int(q[j]))
            for i in mine:
                if sched.cluster[i] == k:
                    continue
                t = prof.earliest_start(int(p[i]), int(q[i]))
                if t < sched.start[i]:
                    out.append(f"cluster {k} is idle enough at {t} for job {i} of organization {k}, "
                               f"which starts at {sched.start[i]} on cluster {sched.cluster[i]}")
    return out


def rotation(instances: Sequence[Instance], order: str = "lpt") -> list[Equilibrium]:
    """Sec. 7.2 end: batches of bags of tasks, the organizations' priorities rotated each
    batch (batch b gives the highest priority to organization ``b mod k``)."""
    out = []
    for b, inst in enumerate(instances):
        k = inst.k
        mech = Mechanism("organizations", order, org_order=[(b + i) % k for i in range(k)])
        out.append(construct_equilibrium(inst, mech))
    return out
