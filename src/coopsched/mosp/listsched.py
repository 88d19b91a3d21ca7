"""List scheduling of rigid parallel jobs on one cluster (Pascual et al., Sec. 3.1).

At each time with ``m'`` free processors the first job of the list with ``q <= m'``
starts; when none fits, time advances to the next completion (docs/conventions.md §2). Orders:
HF (highest first: non-increasing ``q``, Sec. 3.2), LPT (non-increasing ``p``), or the
list as given; ties keep the input order.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence

import numpy as np

ORDERS = ("hf", "lpt", "spt", "list")


def list_order(p: Sequence[int], q: Sequence[int], order: str = "hf") -> list[int]:
    """Indices ``0..n-1`` in the list order (stable)."""
    n = len(p)
    idx = range(n)
    if order == "hf":
        return sorted(idx, key=lambda i: -q[i])
    if order == "lpt":
        return sorted(idx, key=lambda i: -p[i])
    if order == "spt":
        return sorted(idx, key=lambda i: p[i])
    if order == "list":
        return list(idx)
    raise ValueError(f"unknown list order {order!r}; choose from {', '.join(ORDERS)}")


def list_schedule(
    p: Sequence[int],
    q: Sequence[int],
    m: int,
    order: str | Sequence[int] = "hf",
    *,
    available: int = 0,
    busy: Sequence[tuple[int, int]] = (),
) -> np.ndarray:
    """Start times of list scheduling on an ``m``-processor cluster.

    ``order`` is a name (:data:`ORDERS`) or an explicit list of indices. ``available``
    is the time the cluster becomes free for these jobs; ``busy`` lists ``(end, q)`` of
    jobs already running on it (used by "my jobs first" in the coordination game).
    """
    n = len(p)
    for i in range(n):
        if q[i] > m:
            raise ValueError(f"job {i} needs {q[i]} processors, the cluster has {m}")
    pending = list_order(p, q, order) if isinstance(order, str) else list(order)
    start = np.full(n, -1, dtype=np.int64)
    running: list[tuple[int, int]] = []
    free = m
    t = available
    for end, qq in busy:
        if end > t:
            heapq.heappush(running, (end, qq))
            free -= qq
    while pending:
        rest = []
        for i in pending:
            if q[i] <= free:
                start[i] = t
                free -= q[i]
                heapq.heappush(running, (t + p[i], q[i]))
            else:
                rest.append(i)
        pending = rest
        if not pending:
            break
        t = running[0][0]
        while running and running[0][0] == t:
            free += heapq.heappop(running)[1]
    return start
