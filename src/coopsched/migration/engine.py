"""Online scheduling on uniformly related machines with preemption and migration
("Migration and fairness in online scheduling", Secs. 2 and 5; docs/conventions.md §3).

A job has a type ``(r, t, v0)``: release, processing time on a speed-1 machine, and the
priority of its department (organization). A machine of speed ``v`` processes ``v``
units of work per time unit. The engine is event driven: at every arrival or
termination it advances all running jobs, collects completions, and asks the policy
for the assignment of jobs to machines. Policies see releases, priorities and
placements -- never a job's remaining work (non-clairvoyant). All times and remaining
work are exact :class:`fractions.Fraction` values, so no float drift decides an order.

A policy declares what it may do: ``preemptive`` (stop a running job) and ``migrating``
(resume or move a started job on another machine). The engine rejects assignments that
break the declaration. An optional ``migration_cost`` delays a job that moves to another
machine by that much (it holds the new machine but makes no progress meanwhile); the
paper's model is cost 0.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from ..workloads.instance import Instance


class MigrationError(RuntimeError):
    """A policy broke its declared capabilities or returned an impossible assignment."""


@dataclass(frozen=True)
class RelatedInstance:
    """Machines with speeds and jobs with types ``(r, t, v0)``; ``org`` for reports."""

    speeds: tuple[Fraction, ...]
    machine_org: tuple[int, ...]
    release: tuple[int, ...]
    work: tuple[int, ...]
    priority: tuple[Fraction, ...]
    org: tuple[int, ...]
    names: tuple[str, ...] = ()
    ids: tuple = ()  # the input's job ids (docs/conventions.md §4); empty: the job indices

    @property
    def n(self) -> int:
        """The number of jobs."""
        return len(self.release)

    def job_id(self, j: int):
        """Job ``j``'s id as the input gave it (its index when the input gave none)."""
        return self.ids[j] if self.ids else j

    @property
    def tie_rank(self) -> tuple[int, ...]:
        """Each job's rank in the order of ids (integers before strings, each in natural
        order): the "id" of the tie rule "priority, release, id" (the job index when the
        input gave no ids)."""
        if not self.ids:
            return tuple(range(self.n))
        order = sorted(range(self.n), key=lambda j: (isinstance(self.ids[j], str), self.ids[j], j))
        rank = [0] * self.n
        for pos, j in enumerate(order):
            rank[j] = pos
        return tuple(rank)

    @property
    def machines(self) -> int:
        """The number of machines."""
        return len(self.speeds)

    @classmethod
    def from_instance(cls, inst: Instance) -> RelatedInstance:
        """Speeds from the organizations' ``speeds`` (default 1), priority from job
        ``priority`` (default 0, all equal)."""
        speeds: list[Fraction] = []
        morg: list[int] = []
        for u, o in enumerate(inst.organizations):
            sp = o.speeds if o.speeds is not None else (1,) * o.machines
            speeds += [Fraction(str(s)) for s in sp]
            morg += [u] * o.machines
        pr = inst.priority if inst.priority is not None else np.zeros(inst.n)
        return cls(
            speeds=tuple(speeds),
            machine_org=tuple(morg),
            release=tuple(int(x) for x in inst.release),
            work=tuple(int(x) for x in inst.size),
            priority=tuple(Fraction(str(float(x))) for x in pr),
            org=tuple(int(x) for x in inst.org),
            names=tuple(inst.names),
            ids=tuple(inst.ids) if inst.ids is not None else (),
        )

    @classmethod
    def make(cls, speeds, jobs) -> RelatedInstance:
        """From Python values: ``jobs`` are ``(r, t, v0)`` triples, one organization."""
        return cls(
            speeds=tuple(Fraction(str(s)) for s in speeds),
            machine_org=(0,) * len(speeds),
            release=tuple(int(j[0]) for j in jobs),
            work=tuple(int(j[1]) for j in jobs),
            priority=tuple(Fraction(str(j[2])) for j in jobs),
            org=(0,) * len(jobs),
            names=("O0",),
        )

    def replace_job(
        self, j: int, r: int | None = None, t: int | None = None, v0=None
    ) -> RelatedInstance:
        """The same instance with job ``j``'s type changed (WPM experiments)."""
        rel, work, pr = list(self.release), list(self.work), list(self.priority)
        if r is not None:
            rel[j] = int(r)
        if t is not None:
            work[j] = int(t)
        if v0 is not None:
            pr[j] = Fraction(str(v0)) if not isinstance(v0, Fraction) else v0
        return RelatedInstance(
            self.speeds,
            self.machine_org,
            tuple(rel),
            tuple(work),
            tuple(pr),
            self.org,
            self.names,
            self.ids,
        )

    def subset(self, jobs: list[int]) -> RelatedInstance:
        """The instance made of the jobs ``jobs`` only (renumbered in that order), on the same
        machines."""
        return RelatedInstance(
            self.speeds,
            self.machine_org,
            tuple(self.release[j] for j in jobs),
            tuple(self.work[j] for j in jobs),
            tuple(self.priority[j] for j in jobs),
            tuple(self.org[j] for j in jobs),
            self.names,
            tuple(self.ids[j] for j in jobs) if self.ids else (),
        )


@dataclass
class JobView:
    """What a policy knows of a present job (no remaining work)."""

    id: int
    release: int
    priority: Fraction
    machine: int | None  # where it runs now (None: waiting)
    started: bool
    home: int | None  # the machine it first ran on (None: never started)
    tie: int = 0  # rank of the job's id (RelatedInstance.tie_rank): the tie rule's "id"


@dataclass
class MigrationResult:
    """Completion times, run segments and counts of one simulation."""

    instance: RelatedInstance
    policy: str
    completion: list[Fraction]
    segments: list[tuple[int, int, Fraction, Fraction]]  # (job, machine, from, to)
    migrations: list[int]
    preemptions: list[int]
    events: int
    cost: Fraction = Fraction(0)
    info: dict = field(default_factory=dict)

    def response_times(self) -> list[Fraction]:
        """Each job's response time, completion minus release (exact)."""
        return [d - r for d, r in zip(self.completion, self.instance.release, strict=True)]


class MigrationPolicy:
    """Base class: :meth:`assign` returns ``{machine: job}`` for the machines that run."""

    name = "policy"
    preemptive = False
    migrating = False

    def __init__(self, seed: int = 0):
        self.seed = seed

    def reset(self, inst: RelatedInstance) -> None:
        """Start a new run on ``inst``."""
        self.inst = inst

    def assign(self, t: Fraction, jobs: list[JobView], idle: list[int]) -> dict[int, int]:
        """At event time ``t``: which job each machine runs, ``{machine: job}``, among the released
        unfinished ``jobs`` (``idle``: the machines free of a job)."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}(seed={self.seed})"


def simulate(inst: RelatedInstance, policy: MigrationPolicy, migration_cost=0) -> MigrationResult:
    """Run ``policy`` until every job completes; exact rational times."""
    cost = Fraction(migration_cost)
    n, M = inst.n, inst.machines
    if M == 0 and n:
        raise MigrationError("no machine to run the jobs on")
    speeds = inst.speeds
    order = sorted(range(n), key=lambda j: (inst.release[j], j))
    tie = inst.tie_rank
    rem = [Fraction(w) for w in inst.work]
    on: list[int | None] = [None] * n  # machine of each job
    home: list[int | None] = [None] * n
    blocked = [Fraction(0)] * n  # no progress before this time (migration delay)
    seg_start: list[Fraction | None] = [None] * n
    completion: list[Fraction | None] = [None] * n
    machine_job: list[int | None] = [None] * M
    present: set[int] = set()
    segments: list[tuple[int, int, Fraction, Fraction]] = []
    migrations = [0] * n
    preemptions = [0] * n
    policy.reset(inst)
    i = 0
    t = Fraction(0)
    events = 0
    while i < n or present:
        # next event: an arrival or the earliest completion of a running job
        nxt = Fraction(inst.release[order[i]]) if i < n else None
        for j in present:
            m = on[j]
            if m is not None:
                e = max(t, blocked[j]) + rem[j] / speeds[m]
                if nxt is None or e < nxt:
                    nxt = e
        if nxt is None:
            raise MigrationError(
                f"jobs {sorted(present)} wait but no machine runs them (policy {policy.name})"
            )
        # advance running jobs to nxt
        for j in present:
            m = on[j]
            if m is not None:
                start = max(t, blocked[j])
                if nxt > start:
                    rem[j] -= speeds[m] * (nxt - start)
        t = nxt
        events += 1
        for j in [j for j in present if on[j] is not None and rem[j] <= 0]:
            if rem[j] < 0:
                raise MigrationError(f"job {j} overran its work (engine bug)")
            completion[j] = t
            m, since = on[j], seg_start[j]
            if m is None or since is None:
                raise MigrationError(f"job {j} completed outside a run segment (engine bug)")
            segments.append((j, m, since, t))
            machine_job[m] = None
            on[j] = None
            present.discard(j)
        while i < n and inst.release[order[i]] == t:
            present.add(order[i])
            i += 1
        if not present:
            continue
        views = [
            JobView(
                j, inst.release[j], inst.priority[j], on[j], home[j] is not None, home[j], tie[j]
            )
            for j in sorted(present)
        ]
        idle = [m for m in range(M) if machine_job[m] is None]
        want = policy.assign(t, views, idle)
        _apply(
            inst,
            policy,
            t,
            want,
            present,
            on,
            home,
            blocked,
            seg_start,
            machine_job,
            segments,
            migrations,
            preemptions,
            cost,
        )
    finished = [c for c in completion if c is not None]
    if len(finished) != n:
        raise MigrationError(f"{n - len(finished)} jobs never completed (engine bug)")
    return MigrationResult(
        inst,
        policy.name,
        finished,
        segments,
        migrations,
        preemptions,
        events,
        cost,
    )


def _apply(
    inst,
    policy,
    t,
    want,
    present,
    on,
    home,
    blocked,
    seg_start,
    machine_job,
    segments,
    migrations,
    preemptions,
    cost,
) -> None:
    jobs_assigned = list(want.values())
    if len(set(jobs_assigned)) != len(jobs_assigned):
        raise MigrationError(f"{policy.name}: a job on two machines at t={t}")
    for m, j in want.items():
        if not 0 <= m < inst.machines or j not in present:
            raise MigrationError(
                f"{policy.name}: impossible assignment machine {m} -> job {j} at t={t}"
            )
    new_on = {j: m for m, j in want.items()}
    for j in present:
        old, new = on[j], new_on.get(j)
        if old is not None and new != old:
            if not policy.preemptive and not policy.migrating:
                raise MigrationError(
                    f"{policy.name} is non-preemptive but moves/stops job {j} at t={t}"
                )
            if new is None and not policy.preemptive:
                raise MigrationError(f"{policy.name} is non-preemptive but stops job {j} at t={t}")
        if new is not None and home[j] is not None and new != home[j] and not policy.migrating:
            raise MigrationError(
                f"{policy.name} does not migrate but moves job {j} off machine {home[j]} at t={t}"
            )
    for j in present:
        old, new = on[j], new_on.get(j)
        if old == new:
            continue
        if old is not None:
            segments.append((j, old, seg_start[j], t))
            machine_job[old] = None
            if new is None:
                preemptions[j] += 1
        if new is not None:
            if home[j] is None:
                home[j] = new
            elif (old is not None and old != new) or (
                old is None and _last_machine(segments, j) not in (None, new)
            ):
                migrations[j] += 1
                blocked[j] = t + cost
            seg_start[j] = t
        on[j] = new
    for j in present:
        if on[j] is not None:
            machine_job[on[j]] = j


def _last_machine(segments, j):
    for job, m, _a, _b in reversed(segments):
        if job == j:
            return m
    return None
