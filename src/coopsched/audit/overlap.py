"""Records that overlap the platform's size: the rule that fits them (docs/audit.md, "Logs as
they are").

A real log may run more processors at once than the size it states: clocks of the nodes
that wrote it disagree by a few seconds, a job's end is written when it is noticed rather
than when it happened, a record counts processors another partition held. The audit does not
refuse such a log: :func:`fit_recorded` moves the starts of the records that do not fit,
and every output counts them.

Two kinds of record, two rules, on a window's recorded schedule:

* **Cancelled records** (SWF status 5) may have been cancelled before they ever started
  (the log then writes the time until the cancel as their run time). They are placed after
  every other record: one that fits at its recorded start beside them keeps it (it ran until
  cancelled); one that does not counts as cancelled before it started: it never ran, and is
  left out of the audit (counted), like any job that never started.
* **Every other record** (a job that ran) keeps its run time and moves later if it must: each job ``j`` with recorded start ``s_j``, run
  time ``p_j`` in the window and width ``q_j``; the jobs are taken in order of recorded start
(then as the window lists them: pinned first, then by release, then log order); each starts
at the earliest time ``t >= s_j`` at which ``q_j`` processors are free during all of
``[t, t + p_j)`` beside the jobs already placed (whose starts are final). A job that fits at
its recorded start keeps it. A job whose new start is at or after the window's end has no
start in the window and holds no processor there (the jobs after it are placed without
it). Run times are never changed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Fitted:
    """The recorded starts after :func:`fit_recorded`: ``start`` (``-1``: no start in the
    window), which jobs moved (``moved``) and by how much in total and at most (s)."""

    start: np.ndarray
    moved: np.ndarray
    total_shift: int
    largest_shift: int
    #: cancelled records that did not fit: they never ran (left out of the audit)
    dropped: np.ndarray

    @property
    def count(self) -> int:
        """How many jobs' starts moved."""
        return int(self.moved.sum())


def _earliest(ts: np.ndarray, used: np.ndarray, s: int, p: int, room: int) -> int:
    """The earliest ``t >= s`` with ``used <= room`` on every segment meeting ``[t, t + p)``.

    ``used[i]`` holds on ``[ts[i], ts[i + 1])``; the last segment reaches infinity (and is
    0: every placed job ends)."""
    t = s
    while True:
        i = int(np.searchsorted(ts, t, side="right")) - 1
        j = int(np.searchsorted(ts, t + p, side="left"))  # segments i .. j-1 meet [t, t+p)
        over = np.flatnonzero(used[i:j] > room)
        if not over.size:
            return t
        t = int(ts[i + int(over[-1]) + 1])


def fit_recorded(
    start: np.ndarray,
    run: np.ndarray,
    width: np.ndarray,
    machines: int,
    horizon: int,
    cancelled: np.ndarray | None = None,
) -> Fitted:
    """The module's rules on one window: ``start`` the recorded starts on the window's
    clock (``-1``: none), ``run`` the run times in the window, ``width`` the processors;
    every job is at most ``machines`` wide. ``horizon`` is the window's length;
    ``cancelled`` marks the cancelled records (none if not given)."""
    new = start.copy()
    moved = np.zeros(len(start), dtype=bool)
    dropped = np.zeros(len(start), dtype=bool)
    late = np.zeros(len(start), dtype=bool) if cancelled is None else cancelled.astype(bool)
    ts = np.zeros(1, dtype=np.int64)  # breakpoints; the profile before the first is unused
    used = np.zeros(1, dtype=np.int64)
    prune = not late.any()  # the cancelled records, placed second, need the whole profile
    for second, group in ((False, ~late), (True, late)):
        placed = np.flatnonzero((start >= 0) & group)
        order = placed[np.argsort(start[placed], kind="stable")]
        ts, used = _place(
            order,
            start,
            run,
            width,
            machines,
            horizon,
            second,
            prune,
            new,
            moved,
            dropped,
            ts,
            used,
        )
    shift = np.where(moved & ~dropped & (new >= 0), new - start, 0)
    total, largest = int(shift.sum()), int(shift.max(initial=0))
    over = moved & ~dropped & (new < 0)  # moved past the window: shift counted to its end
    total += int((horizon - start[over]).sum())
    largest = max(largest, int((horizon - start[over]).max(initial=0)))
    return Fitted(new, moved & ~dropped, total, largest, dropped)


def _place(
    order: np.ndarray,
    start: np.ndarray,
    run: np.ndarray,
    width: np.ndarray,
    machines: int,
    horizon: int,
    keep_or_drop: bool,
    prune: bool,
    new: np.ndarray,
    moved: np.ndarray,
    dropped: np.ndarray,
    ts: np.ndarray,
    used: np.ndarray,
) -> tuple[np.ndarray, np.ndarray]:
    """Place the jobs ``order`` on the profile ``(ts, used)``: each at the earliest time it
    fits (``keep_or_drop``: at its recorded start or not at all), writing ``new``,
    ``moved`` and ``dropped``; returns the profile. ``prune``: drop the profile before each
    start (no later job of any group starts earlier)."""
    for j in order.tolist():
        s, p, q = int(start[j]), int(run[j]), int(width[j])
        cut = int(np.searchsorted(ts, s, side="right")) - 1  # the segment holding s stays
        if cut > 0 and prune:
            ts, used = ts[cut:], used[cut:]
        t = _earliest(ts, used, s, p, machines - q)
        if keep_or_drop and t != s:
            dropped[j] = True
            new[j] = -1
            continue
        if t != s:
            moved[j] = True
        if t >= horizon:
            new[j] = -1
            continue
        new[j] = t
        for point in (t, t + p):  # breakpoints at both ends, then add q in between
            k = int(np.searchsorted(ts, point, side="left"))
            if k == len(ts) or ts[k] != point:
                ts = np.insert(ts, k, point)
                used = np.insert(used, k, used[k - 1])
        a = int(np.searchsorted(ts, t, side="left"))
        b = int(np.searchsorted(ts, t + p, side="left"))
        used[a:b] += q
    return ts, used


def fitted_note(fitted: Fitted, machines: int, peak: int, where: str) -> str:
    """The summary line every output of the audit repeats when records were fitted."""
    gone = int((fitted.moved & (fitted.start < 0)).sum())
    dropped = int(fitted.dropped.sum())
    return (
        f"{where} runs up to {peak:,} processors at once, more than its {machines:,}: "
        + (
            f"{dropped:,} cancelled record(s) with no room at their recorded start counted as "
            "never started; "
            if dropped
            else ""
        )
        + f"{fitted.count:,} job(s) started later to fit (records overlapping the platform's "
        f"size: clock skew, late end records), {fitted.total_shift / 3600:,.2f} h in total, "
        f"at most {fitted.largest_shift / 3600:,.2f} h"
        + (f"; {gone:,} of them moved past the window's end" if gone else "")
        + " (docs/audit.md, logs as they are)"
    )
