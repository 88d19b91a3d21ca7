"""Cluster schedules of rigid parallel jobs as free-processor profiles (docs/conventions.md §2).

A :class:`ClusterProfile` is the step function "free processors over time" of one
cluster of ``m`` interchangeable processors (no contiguity). It answers the question
MOLBA, ILBA and the coordination game keep asking: the earliest start of a ``(p, q)``
job that delays nothing already placed -- the earliest ``t >= after`` at which ``q``
processors are free during all of ``[t, t+p)`` (Pascual et al., Sec. 4.1; docs/conventions.md §2).
"""

from __future__ import annotations

from bisect import bisect_right


class ProfileError(ValueError):
    """A job does not fit (too many processors, or the slot is not free)."""


class ClusterProfile:
    """Free processors of one cluster over time, with the jobs placed on it.

    A cluster may have no processor (an organization that only submits, or neither
    submits nor contributes, docs/conventions.md §4): then no job fits on it."""

    __slots__ = ("m", "_t", "_f", "jobs")

    def __init__(self, m: int):
        if m < 0:
            raise ProfileError("a cluster cannot have a negative number of processors")
        self.m = m
        self._t: list[int] = [0]  # breakpoints; segment i is [_t[i], _t[i+1])
        self._f: list[int] = [m]  # free processors on segment i; the last one is unbounded
        self.jobs: dict[int, tuple[int, int, int]] = {}  # job id -> (start, p, q)

    def __repr__(self) -> str:
        return f"ClusterProfile(m={self.m}, jobs={len(self.jobs)}, makespan={self.makespan})"

    def copy(self) -> ClusterProfile:
        """An independent copy (same free profile and jobs)."""
        new = ClusterProfile(self.m)
        new._t, new._f, new.jobs = self._t[:], self._f[:], dict(self.jobs)
        return new

    @property
    def makespan(self) -> int:
        """Completion time of the last job (0 when empty)."""
        return max((s + p for s, p, _ in self.jobs.values()), default=0)

    def free_at(self, t: int) -> int:
        """The number of free processors at time ``t``."""
        return self._f[bisect_right(self._t, t) - 1]

    def next_breakpoint(self, t: int) -> int | None:
        """The first time after ``t`` at which the free count changes (``None``: never)."""
        i = bisect_right(self._t, t)
        return self._t[i] if i < len(self._t) else None

    def segments(self) -> list[tuple[int, int | None, int]]:
        """``(start, end, free)`` of every segment (end ``None``: unbounded)."""
        ends = self._t[1:] + [None]
        return list(zip(self._t, ends, self._f, strict=True))

    def earliest_start(self, p: int, q: int, after: int = 0) -> int:
        """Earliest ``t >= after`` with ``q`` processors free during ``[t, t+p)``."""
        if q > self.m:
            raise ProfileError(f"a job on {q} processors cannot run on a cluster of {self.m}")
        if p < 1 or q < 1:
            raise ProfileError("p and q must be at least 1")
        t, f = self._t, self._f
        i = bisect_right(t, after) - 1
        run = None
        n = len(t)
        while True:
            seg_start = t[i] if t[i] > after else after
            seg_end = t[i + 1] if i + 1 < n else None
            if f[i] >= q:
                if run is None:
                    run = seg_start
                if seg_end is None or seg_end - run >= p:
                    return run
            else:
                run = None
            i += 1

    def _split(self, x: int) -> int:
        """Make ``x`` a breakpoint; return its segment index."""
        i = bisect_right(self._t, x) - 1
        if self._t[i] != x:
            self._t.insert(i + 1, x)
            self._f.insert(i + 1, self._f[i])
            i += 1
        return i

    def place(self, job: int, start: int, p: int, q: int) -> None:
        """Put job ``job`` on ``[start, start+p)`` (the slot must be free)."""
        if job in self.jobs:
            raise ProfileError(f"job {job} is already on this cluster")
        if q > self.m:
            raise ProfileError(f"job {job} needs {q} processors, the cluster has {self.m}")
        a = self._split(start)
        b = self._split(start + p)
        for i in range(a, b):
            if self._f[i] < q:
                raise ProfileError(
                    f"job {job} does not fit at {start}: only {self._f[i]} free at {self._t[i]}"
                )
        for i in range(a, b):
            self._f[i] -= q
        self.jobs[job] = (start, p, q)

    def remove(self, job: int) -> tuple[int, int, int]:
        """Take job ``job`` off the cluster; return its ``(start, p, q)``."""
        start, p, q = self.jobs.pop(job)
        a = self._split(start)
        b = self._split(start + p)
        for i in range(a, b):
            self._f[i] += q
        self._merge()
        return start, p, q

    def _merge(self) -> None:
        t, f = [self._t[0]], [self._f[0]]
        for x, y in zip(self._t[1:], self._f[1:], strict=True):
            if y != f[-1]:
                t.append(x)
                f.append(y)
        self._t, self._f = t, f

    def insert(self, job: int, p: int, q: int, after: int = 0) -> int:
        """Place a job at its earliest start that delays nothing; return the start."""
        s = self.earliest_start(p, q, after)
        self.place(job, s, p, q)
        return s
