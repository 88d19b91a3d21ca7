"""Multi-organization instances: organizations, their machines, and their jobs.

An :class:`Instance` is the common input of every part of coopsched. Jobs are stored
column-wise in numpy arrays (owner, release, size, and optional processors, priority,
id); organizations are indexed in the order the instance lists them (docs/conventions.md §1).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

import numpy as np


class InstanceError(ValueError):
    """An instance is malformed; the message says where and what."""


@dataclass(frozen=True)
class Organization:
    """An organization: a name, the number of machines it contributes, optional speeds."""

    name: str
    machines: int
    speeds: tuple[float, ...] | None = None


@dataclass
class Instance:
    """Organizations and their jobs.

    ``org[j]`` is the index of job ``j``'s owner, ``release[j]`` its release time and
    ``size[j]`` its processing time (integers, docs/conventions.md §1). ``processors`` (rigid
    parallel jobs), ``priority`` (v0 in the migration model) and ``ids`` are optional.

    With ``processors`` the instance is **rigid** (:attr:`rigid`): a job on ``q`` processors
    holds ``q`` machines at once for its whole run (docs/conventions.md, rigid jobs); its
    optional ``requested`` time (the walltime a user asked for; ``-1`` where unknown) is what
    EASY backfilling reads instead of the run time.

    Two optional per-job arrays serve the audit of recorded schedules (docs/conventions.md §5):
    ``start`` is the start the platform actually gave the job (``-1``: it never started),
    and ``pinned`` marks jobs that were running when an audit window opened: an engine
    starts a waiting pinned job ahead of every other job (see :meth:`validate`).
    """

    organizations: list[Organization]
    org: np.ndarray
    release: np.ndarray
    size: np.ndarray
    processors: np.ndarray | None = None
    priority: np.ndarray | None = None
    ids: list | None = None
    meta: dict = field(default_factory=dict)
    start: np.ndarray | None = None
    pinned: np.ndarray | None = None
    requested: np.ndarray | None = None

    def __post_init__(self) -> None:
        self.org = np.ascontiguousarray(self.org, dtype=np.int64)
        self.release = np.ascontiguousarray(self.release, dtype=np.int64)
        self.size = np.ascontiguousarray(self.size, dtype=np.int64)
        n = len(self.org)
        if len(self.release) != n or len(self.size) != n:
            raise InstanceError("org, release and size must have the same length")
        if self.processors is not None:
            self.processors = np.ascontiguousarray(self.processors, dtype=np.int64)
        if self.priority is not None:
            self.priority = np.ascontiguousarray(self.priority, dtype=np.float64)
        if self.start is not None:
            self.start = np.ascontiguousarray(self.start, dtype=np.int64)
        if self.requested is not None:
            self.requested = np.ascontiguousarray(self.requested, dtype=np.int64)
        if self.pinned is not None:
            self.pinned = np.ascontiguousarray(self.pinned, dtype=bool)
            if not self.pinned.any():
                self.pinned = None
        self.validate()

    # ------------------------------------------------------------------ basics
    @property
    def k(self) -> int:
        """Number of organizations."""
        return len(self.organizations)

    @property
    def n(self) -> int:
        """Number of jobs."""
        return int(len(self.org))

    @property
    def rigid(self) -> bool:
        """Whether jobs are rigid (``processors`` given): the online engine then holds ``q``
        machines per job at once, with a backfilling rule."""
        return self.processors is not None

    @property
    def width(self) -> np.ndarray:
        """Processors of every job (all ones for sequential jobs)."""
        if self.processors is None:
            return np.ones(self.n, dtype=np.int64)
        return self.processors

    @property
    def names(self) -> list[str]:
        """The organizations' names, in order."""
        return [o.name for o in self.organizations]

    @property
    def machines(self) -> np.ndarray:
        """Machines per organization, as an int64 array of length k."""
        return np.array([o.machines for o in self.organizations], dtype=np.int64)

    @property
    def total_machines(self) -> int:
        """The number of machines of all organizations."""
        return int(self.machines.sum())

    def canonical_order(self) -> np.ndarray:
        """The organizations in an order that does not depend on their names or on the
        order the instance lists them (docs/conventions.md, "Ties and anonymity").

        Organizations with jobs come first, by their first job in global submission order
        (:meth:`fifo_order`: release, then the jobs' input order); then those without
        jobs, by machines (fewest first). Organizations left tied (no jobs, equal
        machines) are interchangeable in every schedule, and keep their listed order.
        """
        k, n = self.k, self.n
        first = np.full(k, n, dtype=np.int64)  # input index of each org's first FIFO job
        if n:
            big = np.iinfo(np.int64).max
            rel = np.full(k, big, dtype=np.int64)
            np.minimum.at(rel, self.org, self.release)
            at_first = self.release == rel[self.org]
            np.minimum.at(first, self.org[at_first], np.flatnonzero(at_first))
            # rank the (release, index) pairs of the first jobs
            has = first < n
            key_rel = np.where(has, rel, big)
        else:
            key_rel = np.zeros(k, dtype=np.int64)
        return np.lexsort((np.arange(k), self.machines, first, key_rel)).astype(np.int64)

    def machine_owner(self) -> np.ndarray:
        """Owner of every machine: machines are numbered organization by organization, in
        :meth:`canonical_order` (so machine numbers, like every decision, do not depend on
        organization names or listing order)."""
        order = self.canonical_order()
        return np.repeat(order, self.machines[order])

    def fifo_order(self) -> np.ndarray:
        """Job indices sorted by (release, input position): the global submission order."""
        rel = self.release
        if rel.dtype != object and not (rel[1:] < rel[:-1]).any():
            return np.arange(self.n)  # already in order (a trace, a window): no sort
        return np.lexsort((np.arange(self.n), rel))

    def validate(self) -> None:
        """Raise :class:`InstanceError` naming the first offending job or organization."""
        k = self.k
        for i, o in enumerate(self.organizations):
            if o.machines < 0:
                raise InstanceError(f"organization {i} ({o.name!r}): machines must be >= 0")
            if o.speeds is not None and len(o.speeds) != o.machines:
                raise InstanceError(
                    f"organization {i} ({o.name!r}): {len(o.speeds)} speeds for {o.machines} machines"
                )
        names = self.names
        if len(set(names)) != len(names):
            raise InstanceError("organization names must be distinct")
        if self.n == 0:
            return
        bad = np.flatnonzero((self.org < 0) | (self.org >= k))
        if bad.size:
            raise InstanceError(
                f"job {bad[0]}: owner index {self.org[bad[0]]} out of range 0..{k - 1}"
            )
        bad = np.flatnonzero(self.release < 0)
        if bad.size:
            raise InstanceError(f"job {bad[0]}: release {self.release[bad[0]]} is negative")
        bad = np.flatnonzero(self.size < 1)
        if bad.size:
            raise InstanceError(f"job {bad[0]}: size {self.size[bad[0]]} must be >= 1")
        if self.processors is not None:
            bad = np.flatnonzero(self.processors < 1)
            if bad.size:
                raise InstanceError(f"job {bad[0]}: processors must be >= 1")
        if self.requested is not None:
            if self.processors is None:
                raise InstanceError(
                    "requested times belong to rigid jobs: give 'processors' with 'requested'"
                )
            bad = np.flatnonzero((self.requested < 1) & (self.requested != -1))
            if bad.size:
                raise InstanceError(
                    f"job {bad[0]}: requested time {self.requested[bad[0]]} must be >= 1 "
                    "(or -1: unknown)"
                )
        n = self.n
        for name in ("start", "pinned", "requested"):
            a = getattr(self, name)
            if a is not None and len(a) != n:
                raise InstanceError(f"'{name}' has {len(a)} entries for {n} jobs")
        if self.start is not None:
            bad = np.flatnonzero((self.start >= 0) & (self.start < self.release))
            if bad.size:
                j = bad[0]
                raise InstanceError(
                    f"job {j}: recorded start {self.start[j]} is before its release {self.release[j]}"
                )
            bad = np.flatnonzero(self.start < -1)
            if bad.size:
                raise InstanceError(f"job {bad[0]}: recorded start must be >= 0 (or -1: never)")
        if self.pinned is not None:
            # a pinned job must be at the head of its organization's FIFO queue until it
            # starts: no unpinned job of the same organization may come before it
            order = self.fifo_order()
            seen_free = np.zeros(k, dtype=bool)
            for j in order[: int(np.flatnonzero(self.pinned[order]).max()) + 1]:
                u = self.org[j]
                if self.pinned[j] and seen_free[u]:
                    raise InstanceError(
                        f"job {j}: pinned, but an unpinned job of organization {u} comes "
                        "before it in release order"
                    )
                if not self.pinned[j]:
                    seen_free[u] = True

    # ------------------------------------------------------------ derivations
    def restrict(self, members: Iterable[int]) -> Instance:
        """The sub-instance of a coalition: only its members' jobs and machines.

        Organizations keep their relative order; job order is preserved.
        """
        from .limits import check_members

        members = list(check_members(members, self.k))
        remap = np.full(self.k, -1, dtype=np.int64)
        remap[members] = np.arange(len(members))
        keep = remap[self.org] >= 0
        return Instance(
            organizations=[self.organizations[u] for u in members],
            org=remap[self.org[keep]],
            release=self.release[keep],
            size=self.size[keep],
            processors=None if self.processors is None else self.processors[keep],
            priority=None if self.priority is None else self.priority[keep],
            ids=None
            if self.ids is None
            else [i for i, kp in zip(self.ids, keep, strict=True) if kp],
            meta=dict(self.meta),
            start=None if self.start is None else self.start[keep],
            pinned=None if self.pinned is None else self.pinned[keep],
            requested=None if self.requested is None else self.requested[keep],
        )

    def one_processor_sequential(self) -> Instance | None:
        """This rigid instance as sequential jobs when every job has one processor
        (``None`` otherwise, or when it is not rigid): a job on one processor never waits
        for machines another rule would find, so under every backfilling rule its rigid
        schedule is the sequential one (docs/conventions.md, rigid jobs; tested for every
        policy and rule), and the sequential engines and REF kernel are the faster way to
        it. Jobs, their order, starts, pins and ids are kept; processors, requested times
        and priorities are dropped."""
        if not self.rigid or not self.n or not (self.width == 1).all():
            return None
        return Instance(
            self.organizations,
            self.org,
            self.release,
            self.size,
            meta=dict(self.meta),
            start=self.start,
            pinned=self.pinned,
            ids=self.ids,
        )

    def summary(self) -> dict:
        """A few statistics, per organization and in total."""
        per_org = []
        for u, o in enumerate(self.organizations):
            mask = self.org == u
            per_org.append(
                {
                    "name": o.name,
                    "machines": o.machines,
                    "jobs": int(mask.sum()),
                    "work": int(self.size[mask].sum()),
                }
            )
        return {
            "organizations": self.k,
            "machines": self.total_machines,
            "jobs": self.n,
            "work": int(self.size.sum()),
            "last_release": int(self.release.max()) if self.n else 0,
            "per_org": per_org,
        }


def make_instance(
    machines: Sequence[int],
    jobs: Sequence[tuple[int, int, int]],
    names: Sequence[str] | None = None,
) -> Instance:
    """A small instance from Python values: ``jobs`` are ``(org, release, size)`` triples.

    Handy in tests and notebooks::

        make_instance([1, 1], [(0, 0, 3), (1, 1, 2)])
    """
    from .limits import check_int

    if isinstance(machines, str | bytes) or not isinstance(machines, Sequence):
        raise TypeError(f"machines: expected a list of machine counts, got {machines!r:.60}")
    counts = [check_int(m, f"machines[{u}]") for u, m in enumerate(machines)]
    if counts and not sum(counts):
        raise InstanceError("machines: the platform needs at least one machine in total")
    names = list(names) if names is not None else [f"O{u}" for u in range(len(counts))]
    if len(names) != len(counts):
        raise ValueError(f"names: {len(names)} name(s) for {len(counts)} organization(s)")
    orgs = [Organization(n, m) for n, m in zip(names, counts, strict=True)]
    rows = []
    for j, job in enumerate(jobs):
        if isinstance(job, str | bytes) or not isinstance(job, Sequence) or len(job) != 3:
            raise TypeError(f"jobs[{j}]: expected an (org, release, size) triple, got {job!r:.60}")
        rows.append(
            [check_int(v, f"jobs[{j}][{i}]", 1 if i == 2 else 0) for i, v in enumerate(job)]
        )
    arr = np.array(rows, dtype=np.int64).reshape(-1, 3)
    return Instance(orgs, arr[:, 0], arr[:, 1], arr[:, 2])
