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


def psi_sp(org: np.ndarray, start: np.ndarray, size: np.ndarray, t: int, k: int) -> list[int]:
    """``psi_sp`` of each of the ``k`` organizations at time ``t`` (Eq. 3, exact)."""
    terms = psi_sp_terms(start, size, t)
    t = max(int(t), 0)
    p_max = int(size.max()) if len(size) else 0
    return group_sum(terms, org, k, bound=min(p_max, t) * t)


def work_done(org: np.ndarray, start: np.ndarray, size: np.ndarray, t: int, k: int) -> list[int]:
    """Unit parts of each organization's jobs processed before ``t``."""
    wide = _wide(start, size, t=t)
    _, elapsed = _elapsed(start, t, wide)
    p = size.astype(object) if wide else size
    return group_sum(np.minimum(p, elapsed), org, k, bound=max(int(t), 0))


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


class ValueCurve:
    """``psi_sp`` (or processed work) of a fixed set of started jobs, at any ``t``.

    Built once from start times and sizes (O(n log n)); each evaluation is two binary
    searches over prefix sums, exact: with ``A`` the jobs started before ``t`` and
    ``B`` those completed by ``t``, ``2 psi(t) = (|A|-|B|)(t^2+t) - 2t(sum_A s - sum_B s)
    + sum_A (s^2-s) - sum_B (s^2-s) + 2t sum_B p - sum_B (2ps + p^2 - p)``.
    """

    def __init__(self, start: np.ndarray, size: np.ndarray):
        ok = start >= 0
        s = start[ok]  # starts may pass 2^63 too (a coalition's FIFO run, in Python ints)
        p = size[ok]
        big = len(s) and (int(s.max()) + int(p.max())) ** 2 * len(s) * 4 >= _I64_SAFE
        dt = object if big else np.int64
        s, p = s.astype(dt), p.astype(dt)
        by_s = np.argsort(s, kind="stable")
        e = s + p
        by_e = np.argsort(e, kind="stable")  # ends may pass 2^63: Python ints then
        self._s_sorted = s[by_s] if big else s[by_s].astype(np.int64)
        self._e_sorted = e[by_e] if big else e[by_e].astype(np.int64)

        def cum(x):
            out = np.zeros(len(x) + 1, dtype=dt)
            out[1:] = np.cumsum(x)
            return out

        sa, pa = s[by_s], None
        self._A1, self._A2 = cum(sa), cum(sa * sa - sa)
        sb, pb = s[by_e], p[by_e]
        self._B1, self._B2 = cum(sb), cum(sb * sb - sb)
        self._BP, self._BQ = cum(pb), cum(2 * pb * sb + pb * pb - pb)
        del pa

    def _counts(self, t: int) -> tuple[int, int]:
        n = len(self._s_sorted)
        if self._s_sorted.dtype != object and not -(2**63) <= t < 2**63:
            a = n if t > 0 else 0  # beyond int64: compare without converting t
        else:
            a = int(np.searchsorted(self._s_sorted, t, side="left"))
        if self._e_sorted.dtype != object and not -(2**63) <= t < 2**63:
            b = n if t > 0 else 0
        else:
            b = int(np.searchsorted(self._e_sorted, t, side="right"))
        return a, b

    def psi(self, t: int) -> int:
        """Sum of ``psi_sp`` of the jobs at ``t``."""
        t = int(t)
        a, b = self._counts(t)
        two = (
            (a - b) * (t * t + t)
            - 2 * t * (int(self._A1[a]) - int(self._B1[b]))
            + int(self._A2[a])
            - int(self._B2[b])
            + 2 * t * int(self._BP[b])
            - int(self._BQ[b])
        )
        return two // 2

    def work(self, t: int) -> int:
        """Unit parts processed before ``t``."""
        t = int(t)
        a, b = self._counts(t)
        return (a - b) * t - (int(self._A1[a]) - int(self._B1[b])) + int(self._BP[b])
