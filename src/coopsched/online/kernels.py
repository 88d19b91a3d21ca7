"""Compiled kernels for hot loops (numba).

:func:`fifo_starts` -- greedy scheduling in global submission order on ``m`` identical
machines: each job, in (release, input) order, starts at ``max(release, earliest time a
machine is free)``. This is exactly the start-time vector of the FIFO policy (the engine
is the reference; a test checks they agree), computed in O(n log m) without the engine's
generality. RAND uses it for the values of its sampled coalitions.
"""

from __future__ import annotations

from typing import Any, TypedDict

import numba
import numpy as np

from . import jit as _jit


class JitOptions(TypedDict):
    """Keyword options for ``numba.njit`` (a TypedDict, so that ``**JIT_OPTIONS`` type-checks)."""

    cache: bool
    nogil: bool


#: The options of every compiled kernel of the package: cached on disk, GIL released.
JIT_OPTIONS: JitOptions = {"cache": True, "nogil": True}

#: :data:`JIT_OPTIONS` without numba's reference counting (its ``_nrt`` flag, which the type
#: stubs do not list), for an event loop that allocates no array: numba counts references
#: to every array alias the inlined helpers create, each an atomic increment and decrement,
#: and in the engine's loop they took about a sixth of FIFO's run on the whole LPC-EGEE log
#: (a profile with ``perf``). A kernel that allocates under these options fails to compile.
NO_REFCOUNT_OPTIONS: Any = {**JIT_OPTIONS, "_nrt": False}

# every kernel module imports this one: from here on, a compilation that numba's cache
# cannot serve is announced (when the command line has asked for it)
_jit.install()


@numba.njit(**JIT_OPTIONS)
def _fifo_kernel(release, size, m):
    # Machines free by the current release are interchangeable, so only their number is
    # kept (``idle``); the busy ones are a min-heap of completion times. A job starts at
    # its release if a machine is idle, else at the earliest completion: the same
    # ``max(release, earliest free time)`` as a heap of all m machines, with one push
    # (usually O(1): new ends are late) and at most one pop per job.
    n = release.shape[0]
    out = np.empty(n, np.int64)
    heap = np.empty((1, m), np.int64)
    busy = np.int64(0)  # not the literal 0: one specialization of _heap_pop
    idle = m
    for j in range(n):
        r = release[j]
        while busy > 0 and heap[0, 0] <= r:
            busy = _heap_pop(heap, 0, busy)
            idle += 1
        if idle > 0:
            s = r
            idle -= 1
        else:
            s = heap[0, 0]
            busy = _heap_pop(heap, 0, busy)
        out[j] = s
        busy = _heap_push(heap, 0, busy, s + size[j])
    return out


# The package's two heaps, each on rows of a 2D array (so that a record of named rows can
# hold it and a call passes one array): a heap of keys on row ``r`` (the free machines of
# the engine and of REF's grand coalition, FIFO's busy machines), and a heap of pairs on
# rows ``r`` (time) and ``r + 1`` (payload), ordered by time, then payload, without packed
# keys (REF's completion buckets and machines, the engine's completions). Plain (not
# inlined) functions: numba reference-counts array aliases that inlining creates, once per
# sift step, which cost more than the heap itself.


@numba.njit(**JIT_OPTIONS)
def group_order(keys, k):
    """``(order, ptr)``: the positions ``0 .. n - 1`` grouped by their key (``0 .. k - 1``),
    each group in increasing position, group ``u`` at ``order[ptr[u]:ptr[u + 1]]`` (a stable
    counting sort, one pass to count and one to place: the engine's queues, each
    organization's jobs in submission order)."""
    ptr = np.zeros(k + 1, np.int64)
    for j in range(keys.shape[0]):
        ptr[keys[j] + 1] += 1
    for u in range(k):
        ptr[u + 1] += ptr[u]
    fill = ptr[:k].copy()
    order = np.empty(keys.shape[0], np.int64)
    for j in range(keys.shape[0]):
        u = keys[j]
        order[fill[u]] = j
        fill[u] += 1
    return order, ptr


@numba.njit(**JIT_OPTIONS)
def sort_row(h, r, lo, hi, scratch):
    """Sort the non-negative keys ``h[r, lo:hi]`` in place, allocating nothing: an insertion
    sort for a few keys, beyond an LSD radix sort through rows ``scratch`` (the keys in
    transit) and ``scratch + 1`` (the digits' counts) of ``h``, each at least as long as the
    segment, digits of up to 11 bits, as few passes as the largest key needs (the machines
    a platform frees at one time: RICC's up to 2,048, CEA-Curie's rigid jobs thousands of
    processors each, where comparison sorts cost more than the rest of DIRECTCONTR's run)."""
    n = hi - lo
    if n <= 32:
        for x in range(lo + 1, hi):
            v = h[r, x]
            y = x
            while y > lo and h[r, y - 1] > v:
                h[r, y] = h[r, y - 1]
                y -= 1
            h[r, y] = v
        return
    top = h[r, lo]
    for x in range(lo + 1, hi):
        top = max(top, h[r, x])
    bits = 1  # the counts' row holds 2^bits entries
    while bits < 11 and (1 << (bits + 1)) <= h.shape[1]:
        bits += 1
    mask = (1 << bits) - 1
    c = scratch + 1
    shift = 0
    src_in_r = True  # the keys are in row r (else in row scratch, from 0)
    while shift == 0 or (top >> shift) > 0:
        for d in range(mask + 1):
            h[c, d] = 0
        for x in range(n):
            v = h[r, lo + x] if src_in_r else h[scratch, x]
            h[c, (v >> shift) & mask] += 1
        acc = 0
        for d in range(mask + 1):
            cnt = h[c, d]
            h[c, d] = acc
            acc += cnt
        for x in range(n):
            v = h[r, lo + x] if src_in_r else h[scratch, x]
            d = (v >> shift) & mask
            if src_in_r:
                h[scratch, h[c, d]] = v
            else:
                h[r, lo + h[c, d]] = v
            h[c, d] += 1
        src_in_r = not src_in_r
        shift += bits
    if not src_in_r:  # the last pass wrote the scratch row: back to row r
        for x in range(n):
            h[r, lo + x] = h[scratch, x]


@numba.njit(**JIT_OPTIONS)
def _heap_push(h, r, n, key):
    """Push ``key`` on the heap of row ``r`` of ``h`` (``n`` keys); returns the new size."""
    i = n
    h[r, i] = key
    while i > 0:
        p = (i - 1) >> 1
        if h[r, p] <= h[r, i]:
            break
        h[r, p], h[r, i] = h[r, i], h[r, p]
        i = p
    return n + 1


@numba.njit(**JIT_OPTIONS)
def _heap_pop(h, r, n):
    """Remove the least key of the heap of row ``r``; returns the new size."""
    n -= 1
    h[r, 0] = h[r, n]
    i = 0
    while True:
        c = 2 * i + 1
        if c >= n:
            break
        if c + 1 < n and h[r, c + 1] < h[r, c]:
            c += 1
        if h[r, i] <= h[r, c]:
            break
        h[r, i], h[r, c] = h[r, c], h[r, i]
        i = c
    return n


@numba.njit(**JIT_OPTIONS)
def _push2(h, r, n, t, p):
    """Push ``(t, p)`` on the heap of pairs on rows ``r`` (time) and ``r + 1`` (payload) of
    ``h`` (``n`` pairs); returns the new size."""
    q = r + 1
    i = n
    h[r, i] = t
    h[q, i] = p
    while i > 0:
        a = (i - 1) >> 1
        if h[r, a] < h[r, i] or (h[r, a] == h[r, i] and h[q, a] <= h[q, i]):
            break
        h[r, a], h[r, i] = h[r, i], h[r, a]
        h[q, a], h[q, i] = h[q, i], h[q, a]
        i = a
    return n + 1


@numba.njit(**JIT_OPTIONS)
def _pop2(h, r, n):
    """Remove the least pair of the heap of :func:`_push2`; returns the new size."""
    q = r + 1
    n -= 1
    h[r, 0] = h[r, n]
    h[q, 0] = h[q, n]
    i = 0
    while True:
        left = 2 * i + 1
        if left >= n:
            break
        c = left
        b = left + 1
        if b < n and (h[r, b] < h[r, left] or (h[r, b] == h[r, left] and h[q, b] < h[q, left])):
            c = b
        if h[r, i] < h[r, c] or (h[r, i] == h[r, c] and h[q, i] <= h[q, c]):
            break
        h[r, c], h[r, i] = h[r, i], h[r, c]
        h[q, c], h[q, i] = h[q, i], h[q, c]
        i = c
    return n


def fifo_starts(
    release: np.ndarray, size: np.ndarray, machines: int, horizon: int | None = None
) -> np.ndarray:
    """Start times under global FIFO on ``machines`` machines (``-1``: not before horizon).

    ``release`` and ``size`` must already be in submission order.
    """
    n = len(release)
    if machines <= 0 or n == 0:
        return np.full(n, -1, dtype=np.int64)
    # greedy bound on every end time: last release + total work / machines + longest job
    p_max = int(size.max())
    work = int(size.sum()) if p_max * n < 2**62 else sum(size.tolist())
    if int(release.max()) + -(-work // int(machines)) + p_max >= 2**62:
        return _fifo_python(release, size, int(machines), horizon)
    s = _fifo_kernel(
        np.ascontiguousarray(release, np.int64), np.ascontiguousarray(size, np.int64), int(machines)
    )
    if horizon is not None:
        s[s >= horizon] = -1
    return s


@numba.njit(inline="always", **JIT_OPTIONS)
def _event_at(t, cur, acc, cnt, out_time, out_delta):
    """Move the event being summed to time ``t``: the one at ``cur`` is written out unless
    its changes cancel. Returns the new ``(cur, acc, cnt)``."""
    if t != cur:
        if acc != 0:
            out_time[cnt] = cur
            out_delta[cnt] = acc
            cnt += 1
        return t, acc * 0, cnt
    return cur, acc, cnt


@numba.njit(**JIT_OPTIONS)
def _fifo_events_kernel(release, size, m, horizon, out_time, out_delta):
    # _fifo_kernel's loop, emitting the running count's changes instead of the starts.
    # Starts are nondecreasing, and so are the ends popped from the heap (every end still
    # in the heap is at least the last start, every push is later): both streams come out
    # in time order, and equal times are summed into one event (dropped when they cancel).
    n = release.shape[0]
    heap = np.empty((1, m), np.int64)
    busy = np.int64(0)
    idle = m
    cnt = 0
    cur = np.int64(-1)  # time of the event being summed (none yet)
    acc = np.int64(0)
    started = 0
    for j in range(n):
        r = release[j]
        s = r
        while busy > 0 and heap[0, 0] <= r:
            e = heap[0, 0]
            busy = _heap_pop(heap, 0, busy)
            idle += 1
            cur, acc, cnt = _event_at(e, cur, acc, cnt, out_time, out_delta)
            acc -= 1
        if idle > 0:
            idle -= 1
        else:
            s = heap[0, 0]
            if s >= horizon:
                break
            busy = _heap_pop(heap, 0, busy)
            cur, acc, cnt = _event_at(s, cur, acc, cnt, out_time, out_delta)
            acc -= 1
        if s >= horizon:
            break
        cur, acc, cnt = _event_at(s, cur, acc, cnt, out_time, out_delta)
        acc += 1
        started += 1
        busy = _heap_push(heap, 0, busy, s + size[j])
    while busy > 0:  # the started jobs still running complete in heap order
        e = heap[0, 0]
        busy = _heap_pop(heap, 0, busy)
        cur, acc, cnt = _event_at(e, cur, acc, cnt, out_time, out_delta)
        acc -= 1
    if acc != 0:
        out_time[cnt] = cur
        out_delta[cnt] = acc
        cnt += 1
    return cnt, started


def fifo_events(
    release: np.ndarray,
    size: np.ndarray,
    machines: int,
    horizon: int | None,
    out_time: np.ndarray,
    out_delta: np.ndarray,
) -> tuple[int, int] | None:
    """The running count of :func:`fifo_starts`' schedule as merged events, written to
    ``out_time[:count]`` / ``out_delta[:count]`` (room for ``2 n`` needed): exactly
    :func:`coopsched.online.utilities.step_events` of the started jobs, without the
    start array or a sort. Returns ``(count, started)`` (the started jobs are the first
    ``started`` in submission order), or ``None`` when int64 cannot be proven exact
    (then use :func:`fifo_starts`, which falls back to Python integers).
    """
    n = len(release)
    if machines <= 0 or n == 0:
        return 0, 0
    p_max = int(size.max())
    work = int(size.sum()) if p_max * n < 2**62 else sum(size.tolist())
    if int(release.max()) + -(-work // int(machines)) + p_max >= 2**62:
        return None
    h = 2**62 if horizon is None else min(int(horizon), 2**62)
    cnt, started = _fifo_events_kernel(
        np.ascontiguousarray(release, np.int64),
        np.ascontiguousarray(size, np.int64),
        int(machines),
        np.int64(h),
        out_time,
        out_delta,
    )
    return int(cnt), int(started)


def _fifo_python(release, size, machines: int, horizon: int | None) -> np.ndarray:
    """:func:`fifo_starts` in Python integers, for times int64 cannot hold."""
    import heapq

    free = [0] * machines
    out = []
    for r, p in zip(release.tolist(), size.tolist(), strict=True):
        s = max(r, free[0])
        out.append(-1 if horizon is not None and s >= horizon else s)
        heapq.heapreplace(free, s + p)
    return np.array(out, dtype=np.int64 if max(out) < 2**63 else object)
