"""Which jobs of a recorded log are in the system during a window, and how they enter it.

The one rule (docs/conventions.md §5) shared by the audit of recorded schedules
(:func:`coopsched.audit.window.window_instance`) and by trace windows that start from the
log's own state (:func:`coopsched.workloads.prepare.trace_to_instance` with
``backlog=True``). For a window ``[t0, t1)`` on the log's clock, shifted so that ``t0``
becomes 0:

* a job submitted in ``[t0, t1)`` is released at ``submit - t0`` with its whole run time;
* a job submitted before ``t0`` and still **waiting** at ``t0`` (its recorded start is at
  or after ``t0``) is released at 0 with its whole run time;
* a job **running** at ``t0`` (recorded start before ``t0``, end after it) is released at
  0 with its remaining run time ``end - t0`` and is *pinned*: every engine starts it ahead
  of every other job, oldest first, as far as the machines allow (:class:`Instance.pinned
  <coopsched.workloads.instance.Instance>`);
* a job that ended by ``t0`` is not part of the window.

Jobs come pinned first (by recorded start), then by release, then by submit time, then as
the log lists them: each organization's FIFO order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class WindowJobs:
    """The jobs of a window, in FIFO order (module docstring).

    ``idx``: rows of the log; ``release``, ``size`` (whole or remaining run time),
    ``pinned`` and ``start`` (recorded start on the window's clock: 0 for a pinned job, -1
    when it is unknown or not before ``t1``) are per job, in the same order. ``waiting`` and
    ``running`` count the log jobs submitted before ``t0`` that were waiting and running at
    ``t0``; ``ended`` those submitted before ``t1`` that ended by ``t0``.
    """

    idx: np.ndarray
    release: np.ndarray
    size: np.ndarray
    pinned: np.ndarray
    start: np.ndarray
    waiting: int
    running: int
    ended: int


def window_jobs(
    submit: np.ndarray,
    start: np.ndarray,
    run: np.ndarray,
    order_key: np.ndarray,
    t0: int,
    t1: int,
    keep: np.ndarray | None = None,
) -> WindowJobs:
    """The jobs of the window ``[t0, t1)`` among the log rows ``keep`` (module docstring).

    ``start`` is the recorded start (``-1``: unknown, allowed only for jobs submitted at or
    after ``t0``, whose place in the window does not depend on it), ``run`` the run time
    (``>= 1``), ``order_key`` the tie-break of the FIFO order (the line in the log).
    """
    submit = np.asarray(submit, dtype=np.int64)
    start = np.asarray(start, dtype=np.int64)
    run = np.asarray(run, dtype=np.int64)
    if keep is None:
        keep = np.ones(len(submit), dtype=bool)
    known = start >= 0
    if (keep & ~known & (submit < t0)).any():
        raise ValueError("a job submitted before the window needs a recorded start")
    end = np.where(known, start + run, -1)
    inwin = keep & (submit < t1) & ((submit >= t0) | (end > t0))
    ended = int((keep & (submit < t0) & known & (end <= t0)).sum())
    running = inwin & known & (start < t0)
    waiting = inwin & (submit < t0) & ~running
    idx = np.flatnonzero(inwin)
    rel = np.where(submit[idx] < t0, 0, submit[idx] - t0)
    pin = running[idx]
    rec = np.where(pin, 0, np.where(known[idx], start[idx] - t0, -1))
    rec = np.where(rec < t1 - t0, rec, -1)
    size = np.where(pin, end[idx] - t0, run[idx])
    key = np.asarray(order_key)[idx]
    order = np.lexsort((key, submit[idx], rel, np.where(pin, start[idx], 0), ~pin))
    return WindowJobs(
        idx[order],
        rel[order],
        size[order],
        pin[order],
        rec[order],
        int(waiting.sum()),
        int(running.sum()),
        ended,
    )
