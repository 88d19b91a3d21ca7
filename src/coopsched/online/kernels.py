"""Compiled kernels for hot loops (numba).

:func:`fifo_starts` -- greedy scheduling in global submission order on ``m`` identical
machines: each job, in (release, input) order, starts at ``max(release, earliest time a
machine is free)``. This is exactly the start-time vector of the FIFO policy (the engine
is the reference; a test checks they agree), computed in O(n log m) without the engine's
generality. RAND uses it for the values of its sampled coalitions.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _fifo_kernel(release, size, m):
    n = release.shape[0]
    out = np.empty(n, np.int64)
    heap = np.zeros(m, np.int64)  # machine free times, a min-heap
    for j in range(n):
        s = heap[0] if heap[0] > release[j] else release[j]
        out[j] = s
        # replace the root with s + size[j] and sift down
        heap[0] = s + size[j]
        i = 0
        while True:
            left = 2 * i + 1
            if left >= m:
                break
            c = left
            if left + 1 < m and heap[left + 1] < heap[left]:
                c = left + 1
            if heap[i] <= heap[c]:
                break
            tmp = heap[c]
            heap[c] = heap[i]
            heap[i] = tmp
            i = c
    return out


def fifo_starts(
    release: np.ndarray, size: np.ndarray, machines: int, horizon: int | None = None
) -> np.ndarray:
    """Start times under global FIFO on ``machines`` machines (``-1``: not before horizon).

    ``release`` and ``size`` must already be in submission order.
    """
    n = len(release)
    if machines <= 0 or n == 0:
        return np.full(n, -1, dtype=np.int64)
    s = _fifo_kernel(
        np.ascontiguousarray(release, np.int64), np.ascontiguousarray(size, np.int64), int(machines)
    )
    if horizon is not None:
        s[s >= horizon] = -1
    return s
