"""Utilities of organizations in a schedule, at any horizon, exactly.

* :func:`psi_sp` -- the strategy-proof utility of Skowron & Rzadca, Eq. (3), in the
  integer form of docs/conventions.md §1: over the jobs with ``s < t``,
  ``psi_sp(t) = sum(q*(t-s) - q*(q-1)/2)`` with ``q = min(p, t-s)``. It is an integer.
* :func:`work_done` -- the resource utilization of each organization: unit parts of its
  jobs processed before ``t`` (``sum min(p, t-s)`` over started jobs).
* :func:`flow_time` -- total flow time ``s + p - r`` of the jobs completed by ``t``.

All take arrays of the started jobs (``start < 0`` means not started) and return one
Python ``int`` per organization. Sums use int64 when they provably fit, Python integers
otherwise, so no figure is ever silently wrong.
"""

from __future__ import annotations

import numpy as np

_I64_SAFE = 2**62


def group_sum(values: np.ndarray, groups: np.ndarray, k: int, bound: int) -> list[int]:
    """Exact per-group sums of integer ``values``; ``bound`` bounds each ``|value|``."""
    if values.dtype != object and len(values) * max(bound, 1) < _I64_SAFE:
        out = np.zeros(k, dtype=np.int64)
        np.add.at(out, groups, values.astype(np.int64))
        return [int(x) for x in out]
    sums = [0] * k
    for g, v in zip(groups.tolist(), values.tolist(), strict=True):
        sums[g] += int(v)
    return sums


def exact_total(x: np.ndarray, weight: np.ndarray | None = None) -> int:
    """``sum(x)`` (with ``weight``: ``sum(x * weight)``) of non-negative integers, exactly:
    in int64 when ``len * max(x) * max(weight)`` proves it fits, in Python integers
    otherwise."""
    if len(x) == 0:
        return 0
    if weight is not None and len(weight) != len(x):
        raise ValueError(f"{len(x)} values, {len(weight)} weights")
    if x.dtype != object and (weight is None or weight.dtype != object):
        top = int(x.max()) * (1 if weight is None else max(int(weight.max()), 1))
        if top * len(x) < _I64_SAFE:
            return int(x.sum() if weight is None else np.dot(x, weight))
    if weight is None:
        return sum(x.tolist())
    return sum(a * b for a, b in zip(x.tolist(), weight.tolist(), strict=True))


def _wide(*arrays: np.ndarray, t: int) -> bool:
    """Whether ``t`` or a start plus a size could reach ``2^62`` (then use Python ints)."""
    top = sum(int(a.max()) for a in arrays if len(a))
    return max(top, int(t)) >= _I64_SAFE or int(t) < -_I64_SAFE


def _started(start: np.ndarray, t: int) -> np.ndarray:
    if int(t) >= _I64_SAFE:  # every start is an int64, below t
        return start >= 0
    return (start >= 0) & (start < int(t))


def _elapsed(start: np.ndarray, t: int, wide: bool) -> tuple[np.ndarray, np.ndarray]:
    """``(started mask, t - s or 0)``, in int64 or, when ``wide``, Python integers."""
    started = _started(start, t)
    s = start.astype(object) if wide else start.astype(np.int64)
    elapsed = np.where(started, int(t) - np.where(started, s, 0), 0)
    return started, elapsed.astype(object) if wide else elapsed


def psi_sp_terms(start: np.ndarray, size: np.ndarray, t: int) -> np.ndarray:
    """Per-job contribution to ``psi_sp(t)`` (0 for jobs not started before ``t``).

    int64 when ``t`` and every start plus size are below ``2^62`` and every term
    (``<= min(p, t) t``) is too; Python integers (``dtype=object``) otherwise.
    """
    t = int(t)
    wide = _wide(start, size, t=t)
    if not wide and len(size) and min(int(size.max()), max(t, 0)) * max(t, 0) >= _I64_SAFE:
        wide = True
    _, elapsed = _elapsed(start, t, wide)
    p = size.astype(object) if wide else size
    q = np.minimum(p, elapsed)
    return q * elapsed - q * (q - 1) // 2


def _weighted(terms: np.ndarray, weight: np.ndarray | None, bound: int) -> tuple[np.ndarray, int]:
    """``terms`` times ``weight`` (a rigid job on ``q`` processors is ``q`` unit parts that
    start together: docs/conventions.md), with the bound of each product."""
    if weight is None or not len(terms):
        return terms, bound
    w_max = int(weight.max())
    if terms.dtype == object or bound * w_max >= _I64_SAFE:
        return terms.astype(object) * weight.astype(object), bound * w_max
    return terms * weight, bound * w_max


def psi_sp(
    org: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    t: int,
    k: int,
    weight: np.ndarray | None = None,
) -> list[int]:
    """``psi_sp`` of each of the ``k`` organizations at time ``t`` (Eq. 3, exact); with
    ``weight`` (processors of rigid jobs) each job counts ``weight`` times."""
    terms = psi_sp_terms(start, size, t)
    t = max(int(t), 0)
    p_max = int(size.max()) if len(size) else 0
    terms, bound = _weighted(terms, weight, min(p_max, t) * t)
    return group_sum(terms, org, k, bound=bound)


def work_done(
    org: np.ndarray,
    start: np.ndarray,
    size: np.ndarray,
    t: int,
    k: int,
    weight: np.ndarray | None = None,
) -> list[int]:
    """Unit parts of each organization's jobs processed before ``t`` (processor-seconds
    with ``weight``, the processors of rigid jobs)."""
    wide = _wide(start, size, t=t)
    _, elapsed = _elapsed(start, t, wide)
    p = size.astype(object) if wide else size
    terms, bound = _weighted(np.minimum(p, elapsed), weight, max(int(t), 0))
    return group_sum(terms, org, k, bound=bound)


def _completed(start: np.ndarray, size: np.ndarray, t: int) -> tuple[np.ndarray, np.ndarray]:
    """``(mask of jobs completed by t, their completion times)``, exact."""
    wide = _wide(start, size, t=t)
    s = start.astype(object) if wide else start.astype(np.int64)
    p = size.astype(object) if wide else size
    end = s + p
    done = (start >= 0) & (end <= int(t))
    return done.astype(bool), end


def flow_time(
    org: np.ndarray, release: np.ndarray, start: np.ndarray, size: np.ndarray, t: int, k: int
) -> list[int]:
    """Total flow time (completion minus release) of each organization's jobs done by ``t``."""
    done, end = _completed(start, size, t)
    ft = np.where(done, end - release, 0)
    bound = max(int(t), int(end.max()) if len(end) else 0)
    return group_sum(ft, org, k, bound=bound)


def completed_jobs(
    org: np.ndarray, start: np.ndarray, size: np.ndarray, t: int, k: int
) -> list[int]:
    """Number of each organization's jobs completed by ``t``."""
    done, _ = _completed(start, size, t)
    return group_sum(done.astype(np.int64), org, k, bound=1)


UTILITIES = ("psi_sp", "work", "flow_time")


def step_events(
    start: np.ndarray, size: np.ndarray, weight: np.ndarray | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """The running count of a set of jobs as merged events: sorted distinct ``times`` and
    the change ``delta`` of the number of running jobs at each (starts ``+1``, ends ``-1``;
    events whose changes cancel are dropped).

    ``psi_sp`` and processed work depend on a schedule only through this step function
    (see :class:`ValueCurve`), so a coalition's value needs no per-job data; jobs that
    start and end together (a parallel job's sequential parts) become one event. Times are
    int64 when every end is below ``2^63``, Python integers (``dtype=object``) otherwise.
    With ``weight`` (processors of rigid jobs) a job changes the count by its weight.
    """
    ok = np.asarray(start) >= 0
    s, p = start[ok], size[ok]
    w = np.ones(len(s), np.int64) if weight is None else np.asarray(weight, np.int64)[ok]
    if len(s) == 0:
        return np.zeros(0, dtype=np.int64), np.zeros(0, dtype=np.int64)
    wide = s.dtype == object or p.dtype == object or int(s.max()) + int(p.max()) >= 2**63
    dt = object if wide else np.int64
    s, p = s.astype(dt), p.astype(dt)
    times = np.concatenate([s, s + p])
    sign = np.concatenate([w, -w])
    by = np.argsort(times, kind="stable")
    times, sign = times[by], sign[by]
    first = np.ones(len(times), dtype=bool)  # the first event of each distinct time
    first[1:] = np.not_equal(times[1:], times[:-1])
    at = np.flatnonzero(first)
    times, delta = times[at], np.add.reduceat(sign, at).astype(np.int64)
    keep = delta != 0
    return times[keep], delta[keep]


_WRAP = 2**64


def _u64(x: np.ndarray) -> np.ndarray:
    """int64 values as uint64, two's complement: the same residues modulo ``2^64``."""
    return x.astype(np.int64).view(np.uint64)


class ValueCurve:
    """``psi_sp`` (or processed work) of a fixed set of started jobs, at any ``t``, exactly.

    With the jobs' running count as merged events ``(x_i, delta_i)`` (:func:`step_events`),
    Eq. 3's integer form (docs/conventions.md §1) sums ``t - tau`` over the unit parts
    processed at ``tau < t``; a job on ``[s, e)`` contributes
    ``T(t - s) - T(t - e)`` with ``T(d) = d(d+1)/2`` (``T(d) = 0`` for ``d <= 0``). So, over the
    events before ``t``, with ``T(t - x) = T(t) - t x + x(x-1)/2``::

        psi(t)  = D0 * t(t+1)/2 - t * D1 + D2,     work(t) = D0 * t - D1,
        D0 = sum delta_i,  D1 = sum delta_i x_i,  D2 = sum delta_i x_i (x_i - 1)/2.

    Evaluation is one binary search and three prefix sums. **Exactness without big
    integers.** ``D1`` and ``D2`` are kept modulo ``2^64`` (uint64, wrapping: every step
    is a ring operation; ``x(x-1)/2`` is formed by halving the even factor first), so the
    formula gives ``psi(t) mod 2^64`` exactly. ``psi(t)`` is an integer in
    ``[0, B(t)]`` with ``B(t) = min(W d, C d(d+1)/2)``, ``d = max(t - x_0, 0)``: each of
    the at most ``W`` (total work) processed unit parts adds ``t - tau <= d`` (``x_0``: the
    first start), and at most ``C`` (the largest running count, ``max`` of ``D0``'s
    prefixes) are processed at each ``tau`` in ``[x_0, t)``. When ``B(t) < 2^64`` the
    residue *is* ``psi(t)`` (likewise ``work(t) <= W``); this is checked at every
    evaluation. Only beyond it (or for times past int64) are exact Python-integer prefix
    sums built, once, as the last resort; :attr:`python_ints` then says so.
    """

    def __init__(self, start: np.ndarray, size: np.ndarray, weight: np.ndarray | None = None):
        ok = np.asarray(start) >= 0
        s, p = start[ok], size[ok]
        w = None if weight is None else np.asarray(weight)[ok]
        times, delta = step_events(s, p, w)
        self._init(times, delta, exact_total(p, w))

    @classmethod
    def from_events(cls, times: np.ndarray, delta: np.ndarray, work: int) -> ValueCurve:
        """A curve from :func:`step_events` output and the jobs' total work ``W``."""
        self = cls.__new__(cls)
        self._init(times, delta, int(work))
        return self

    def _init(self, times: np.ndarray, delta: np.ndarray, work: int) -> None:
        self._x = times
        self._W = int(work)
        n = len(times)
        D0 = np.zeros(n + 1, dtype=np.int64)
        D0[1:] = np.cumsum(delta)
        self._D0 = D0
        self._C = int(D0.max()) if n else 0
        self._x0 = int(times[0]) if n else 0
        self.python_ints = times.dtype == object
        self._big: tuple[list[int], list[int]] | None = None
        if self.python_ints:
            self._exact_sums()
            return
        x = times.astype(np.int64)
        xu, du = _u64(x), _u64(delta)
        even = (x & 1) == 0
        one = np.uint64(1)
        # x(x-1)/2 modulo 2^64: halve whichever factor is even (x >= 0, so x // 2 is exact)
        half = np.where(even, (xu >> one) * (xu - one), xu * ((xu - one) >> one))
        with np.errstate(over="ignore"):
            self._D1 = np.concatenate([[np.uint64(0)], np.cumsum(du * xu, dtype=np.uint64)])
            self._D2 = np.concatenate([[np.uint64(0)], np.cumsum(du * half, dtype=np.uint64)])

    def _exact_sums(self) -> None:
        """Exact Python-integer prefix sums (the last resort; sets :attr:`python_ints`)."""
        d1 = d2 = 0
        D1, D2 = [0], [0]
        for x, d in zip(self._x.tolist(), self._D0[1:] - self._D0[:-1], strict=True):
            x, d = int(x), int(d)
            d1 += d * x
            d2 += d * (x * (x - 1) // 2)
            D1.append(d1)
            D2.append(d2)
        self._big = (D1, D2)
        self.python_ints = True

    def _count(self, t: int) -> int:
        """Number of events before ``t``."""
        x = self._x
        if x.dtype != object and not -(2**63) <= t < 2**63:
            return len(x) if t > 0 else 0  # beyond int64: compare without converting t
        return int(np.searchsorted(x, t, side="left"))

    def _sums(self, a: int, exact: bool) -> tuple[int, int]:
        if exact:
            if self._big is None:
                self._exact_sums()
            assert self._big is not None
            return self._big[0][a], self._big[1][a]
        return int(self._D1[a]), int(self._D2[a])

    def psi(self, t: int) -> int:
        """Sum of ``psi_sp`` of the jobs at ``t``."""
        t = int(t)
        a = self._count(t)
        d = max(t - self._x0, 0)
        exact = self._big is not None or min(self._W * d, self._C * (d * (d + 1) // 2)) >= _WRAP
        d1, d2 = self._sums(a, exact)
        val = int(self._D0[a]) * (t * (t + 1) // 2) - t * d1 + d2
        return val if exact else val % _WRAP

    def work(self, t: int) -> int:
        """Unit parts processed before ``t``."""
        t = int(t)
        a = self._count(t)
        exact = self._big is not None or self._W >= _WRAP
        d1, _ = self._sums(a, exact)
        val = int(self._D0[a]) * t - d1
        return val if exact else val % _WRAP
