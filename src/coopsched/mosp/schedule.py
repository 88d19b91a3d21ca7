"""MOSP instances and schedules, their validity and the paper's guarantees, checked.

A MOSP instance (Pascual et al., Sec. 2) is an :class:`~coopsched.workloads.instance.Instance`
whose jobs have ``processors`` (``q``) and ``size`` (``p``); organization ``k`` owns
cluster ``k`` of ``machines[k]`` processors; all jobs are released at 0 (off-line).
A :class:`MospSchedule` gives each job a cluster and a start time.

:func:`check` reports validity (never more than ``m`` processors busy on a cluster,
every job placed exactly once, ``q <= m``), each organization's makespan against its
local one (the MOSP constraint, Eq. 1), the score ``Cmax / max(Wbar, pmax)`` and the
theorem bounds (MOLBA(3) <= 4; MOLBA(2) <= 3 when the last job is low, Props. 2-3).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..workloads.instance import Instance, InstanceError


def mosp_arrays(inst: Instance) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """``(p, q, owner, m)`` of a MOSP instance; raise on a job wider than every cluster."""
    p = inst.size
    q = inst.processors if inst.processors is not None else np.ones(inst.n, dtype=np.int64)
    m = inst.machines
    if inst.n and (m[inst.org] < q).any():
        j = int(np.flatnonzero(m[inst.org] < q)[0])
        raise InstanceError(
            f"job {j} of organization {inst.organizations[inst.org[j]].name!r} needs {q[j]} processors "
            f"but its cluster has {m[inst.org[j]]}"
        )
    if inst.n and (q > m.max()).any():
        j = int(np.flatnonzero(q > m.max())[0])
        raise InstanceError(f"job {j} needs {q[j]} processors, more than any cluster has")
    if inst.n and sum(p.tolist()) >= 2**62:  # every start and completion stays below it
        raise InstanceError(
            "the jobs' sizes add up to 2^62 or more: start times could overflow 64-bit integers"
        )
    return p, q, inst.org, m


def lower_bounds(inst: Instance) -> tuple[float, int]:
    """``(Wbar, pmax)``: average work per processor and the longest job (Sec. 4.1)."""
    p, q, _, m = mosp_arrays(inst)
    W = sum(a * b for a, b in zip(p.tolist(), q.tolist(), strict=True))  # exact (no int64 wrap)
    return W / int(m.sum()), int(p.max()) if len(p) else 0


@dataclass
class MospSchedule:
    """Cluster and start of every job; ``algorithm`` and extra ``info`` for reports."""

    instance: Instance
    cluster: np.ndarray
    start: np.ndarray
    algorithm: str
    local_makespans: np.ndarray | None = None
    info: dict = field(default_factory=dict)

    @property
    def end(self) -> np.ndarray:
        """Each job's completion time."""
        return self.start + self.instance.size

    @property
    def makespan(self) -> int:
        """The global makespan ``Cmax`` (0 without jobs)."""
        return int(self.end.max()) if self.instance.n else 0

    def org_makespans(self) -> np.ndarray:
        """``Cmax(O_k)``: last completion of each organization's jobs, wherever they ran."""
        out = np.zeros(self.instance.k, dtype=np.int64)
        np.maximum.at(out, self.instance.org, self.end)
        return out

    def cluster_makespans(self) -> np.ndarray:
        """The makespan of each cluster."""
        out = np.zeros(self.instance.k, dtype=np.int64)
        np.maximum.at(out, self.cluster, self.end)
        return out

    def score(self) -> float:
        """``Cmax / max(Wbar, pmax)`` (Sec. 6.1): an upper bound of the approximation ratio."""
        wbar, pmax = lower_bounds(self.instance)
        lb = max(wbar, pmax)
        return self.makespan / lb if lb else 1.0

    def migrated(self) -> np.ndarray:
        """Jobs that run away from their owner's cluster."""
        return np.flatnonzero(self.cluster != self.instance.org)

    def to_dict(self) -> dict:
        """The schedule as a JSON-ready dict: algorithm, makespans (global, per cluster, per
        organization, local) and each job's cluster and start."""
        inst = self.instance
        names = inst.names
        local = self.local_makespans
        orgm = self.org_makespans()
        return {
            "algorithm": self.algorithm,
            "makespan": self.makespan,
            "score": self.score(),
            "organizations": [
                {
                    "name": names[k],
                    "processors": int(inst.machines[k]),
                    "local_makespan": None if local is None else int(local[k]),
                    "makespan": int(orgm[k]),
                }
                for k in range(inst.k)
            ],
            "jobs": [
                {
                    "org": names[inst.org[j]],
                    "size": int(inst.size[j]),
                    "processors": int(mosp_arrays(inst)[1][j]),
                    "cluster": names[self.cluster[j]],
                    "start": int(self.start[j]),
                }
                for j in range(inst.n)
            ],
            "info": {k: v for k, v in self.info.items() if isinstance(v, int | float | str | bool)},
        }


@dataclass
class CheckReport:
    """What :func:`check` found."""

    violations: list[str]
    score: float
    makespan: int
    org_makespans: list[int]
    local_makespans: list[int] | None
    grew: list[int]
    last_job_low: bool
    bound: float | None

    @property
    def valid(self) -> bool:
        """No violation was found."""
        return not self.violations

    @property
    def within_bound(self) -> bool:
        """The score is within the algorithm's proven bound (or it has none)."""
        return self.bound is None or self.score <= self.bound + 1e-12


def check(schedule: MospSchedule, *, bound_for: str | None = None) -> CheckReport:
    """Validity, the MOSP constraint and the theorem bound of ``bound_for``
    (``"molba3"``: 4; ``"molba2"``: 3 when the last completed job is low)."""
    inst = schedule.instance
    p, q, owner, m = mosp_arrays(inst)
    v: list[str] = []
    n = inst.n
    c, s = schedule.cluster, schedule.start
    if len(c) != n or len(s) != n:
        v.append("cluster/start arrays do not match the jobs")
    bad = np.flatnonzero((c < 0) | (c >= inst.k))
    for j in bad[:10]:
        v.append(f"job {j} is on no valid cluster ({c[j]})")
    for j in np.flatnonzero(s < 0)[:10]:
        v.append(f"job {j} has no start time")
    ok = np.setdiff1d(np.arange(n), bad)
    wide = ok[q[ok] > m[c[ok]]]
    for j in wide[:10]:
        v.append(f"job {j} needs {q[j]} processors on a cluster of {m[c[j]]}")
    for k in range(inst.k):
        jobs = ok[c[ok] == k]
        if not len(jobs):
            continue
        times = np.concatenate([s[jobs], s[jobs] + p[jobs]])
        delta = np.concatenate([q[jobs], -q[jobs]])
        order = np.lexsort((delta, times))  # at one time, ends before starts
        busy = np.cumsum(delta[order])
        over = np.flatnonzero(busy > m[k])
        if len(over):
            v.append(
                f"cluster {k}: {busy[over[0]]} processors busy at t={times[order][over[0]]}, it has {m[k]}"
            )
    orgm = schedule.org_makespans()
    local = schedule.local_makespans
    grew: list[int] = []
    if local is not None:
        grew = [int(k) for k in np.flatnonzero(orgm > local)]
        for k in grew:
            v.append(f"organization {k}: makespan {orgm[k]} exceeds its local makespan {local[k]}")
    end = s + p
    last = end == end.max() if n else np.zeros(0, dtype=bool)
    last_low = bool(n) and bool((2 * q[last] <= m[c[last]]).all())
    bound = None
    if bound_for == "molba3":
        bound = 4.0
    elif bound_for == "molba2" and last_low:
        bound = 3.0
    return CheckReport(
        violations=v,
        score=schedule.score(),
        makespan=schedule.makespan,
        org_makespans=[int(x) for x in orgm],
        local_makespans=None if local is None else [int(x) for x in local],
        grew=grew,
        last_job_low=last_low,
        bound=bound,
    )
