"""Audit windows: dates to log times, and the instance of a window with its backlog.

The exact rule (docs/conventions.md §5), applied by :func:`window_instance`, for a window
``[t0, t1)`` on the log's clock; the audited instance's clock is shifted so that ``t0``
becomes 0, and its horizon is ``T = t1 - t0``:

* a job is part of the window if it was submitted before ``t1`` and had not ended by
  ``t0`` (it ended after ``t0``, or it started at or after ``t0``);
* a job submitted in ``[t0, t1)`` is released at ``submit - t0``;
* a job submitted before ``t0`` and still **waiting** at ``t0`` (it started at or after
  ``t0``) is released at 0 with its whole run time;
* a job **running** at ``t0`` (started before ``t0``, ending after it) is released at 0
  with its remaining run time ``end - t0``, is *pinned* and starts at 0 in the recorded
  schedule; every simulated schedule (each coalition under REF, each counterfactual
  policy) starts pinned jobs ahead of every other job, oldest first, as far as the
  coalition's machines allow;
* the recorded start of a job is ``start - t0`` if it started before ``t1``; a job that
  started at or after ``t1`` (or never) has no start in the window and adds nothing to
  ``psi``, but waits in every simulated schedule;
* a job on ``q`` processors becomes ``q`` sequential copies that start together.

Jobs are ordered pinned first (by recorded start), then by release, then as the log lists
them; this is each organization's FIFO order in the simulations.

The rule is :func:`coopsched.workloads.backlog.window_jobs`, which trace windows with
``backlog=True`` (:func:`coopsched.workloads.prepare.trace_to_instance`) share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from zoneinfo import ZoneInfo

import numpy as np

from ..workloads.backlog import window_jobs
from ..workloads.instance import Instance, Organization
from ..workloads.limits import MAX_JOBS, MAX_MACHINES, check_count
from ..workloads.recorded import RecordedLog
from .organizations import Organizations, contribution

#: Exclusion reason: a cancelled record the platform had no room for at its recorded start.
CANCELLED_OVERLAP = "cancelled, no room at its recorded start: never started (logs as they are)"


class WindowError(ValueError):
    """A window or a recorded log cannot be audited; the message says why and where."""


def check_time(value: str | int, what: str) -> datetime | None:
    """``value`` read without a log: ``None`` for plain seconds, else its ISO date/time (an
    error naming ``what`` when it is neither, before any log is read)."""
    s = str(value).strip()
    if re.fullmatch(r"-?\d+", s):
        return None
    try:
        return datetime.fromisoformat(s)
    except ValueError:
        raise WindowError(
            f"{what}: {s!r} is neither seconds nor an ISO date (YYYY-MM-DD[THH:MM])"
        ) from None


def parse_time(value: str | int, log: RecordedLog, what: str) -> int:
    """A time on the log's clock: plain seconds, or an ISO date/time in the log's zone.

    ``2004-12-01`` and ``2004-12-01T08:00`` are read in the log's time zone (SWF
    ``TimeZoneString``, or ``--timezone``) unless they carry an offset; they need the log's
    epoch (SWF ``UnixStartTime``).
    """
    s = str(value).strip()
    dt = check_time(value, what)
    if dt is None:
        return int(s)
    if log.epoch is None:
        raise WindowError(
            f"{what}: {log.path} does not say when its clock starts (no UnixStartTime); "
            "give the time in seconds on the log's clock"
        )
    if dt.tzinfo is None:
        if log.timezone is None:
            raise WindowError(
                f"{what}: {log.path} has no time zone (no TimeZoneString); give timezone= "
                "or a date with an offset"
            )
        zone = ZoneInfo(log.timezone)
        first, second = dt.replace(tzinfo=zone), dt.replace(tzinfo=zone, fold=1)
        if first.utcoffset() != second.utcoffset():
            # a repeated hour (both readings exist) or a skipped one (neither does)
            there = first.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == dt
            kind = "happens twice" if there else "does not exist"
            raise WindowError(
                f"{what}: {s} {kind} in {log.timezone} (a daylight-saving change); give it "
                f"with an offset, e.g. {first.isoformat()} or {second.isoformat()}"
            )
        dt = first
    return int(dt.timestamp()) - int(log.epoch)


def format_time(t: int, log: RecordedLog) -> str | None:
    """ISO date/time of log time ``t`` in the log's zone (``None`` without an epoch)."""
    if log.epoch is None:
        return None
    tz = ZoneInfo(log.timezone) if log.timezone else ZoneInfo("UTC")
    return datetime.fromtimestamp(int(log.epoch) + int(t), tz).isoformat()


@dataclass
class WindowInstance:
    """The instance of an audit window: jobs (sequential copies) with recorded starts.

    ``instance.start`` is the recorded schedule on the window's clock, ``instance.pinned``
    the jobs running at ``t0``. ``backlog`` counts log jobs (not copies) waiting and running
    at ``t0``; ``excluded`` the log jobs left out, by reason (with the reader's own).
    """

    instance: Instance
    t0: int
    t1: int
    machines: int
    contribution_rule: str
    backlog: dict[str, int]
    excluded: dict[str, int] = field(default_factory=dict)
    jobs: list[int] = field(default_factory=list)
    work: list[int] = field(default_factory=list)
    #: summary lines every output repeats (records fitted to the platform: .overlap)
    notes: list[str] = field(default_factory=list)

    @property
    def horizon(self) -> int:
        """The window's length ``t1 - t0`` (s): the horizon of every schedule of the audit."""
        return self.t1 - self.t0


def _peak(start: np.ndarray, end: np.ndarray, width: np.ndarray) -> tuple[int, int]:
    """Most processors busy at once in a recorded schedule, and one time it happens."""
    if not len(start):
        return 0, 0
    times = np.concatenate([start, end])
    delta = np.concatenate([width, -width])
    o = np.lexsort((delta, times))  # at equal times, ends (negative) before starts
    busy = np.cumsum(delta[o])
    i = int(np.argmax(busy))
    return int(busy[i]), int(times[o][i])


def window_instance(
    log: RecordedLog,
    orgs: Organizations,
    t0: int | None = None,
    t1: int | None = None,
    machines: int | None = None,
    rule: str = "work",
    jobs: str = "sequential",
) -> WindowInstance:
    """The instance of the window ``[t0, t1)`` (default: the whole log), see the module doc.

    ``jobs``: ``"rigid"`` keeps each log job on its processors at once, with its requested
    time (a job running at ``t0`` keeps what remains of it: its expected end is
    unchanged; at least 1 s); ``"sequential"`` splits a job on ``q`` processors into ``q``
    one-processor copies that start together (docs/conventions.md §5).

    ``machines`` overrides the log's platform size. Raises :class:`WindowError` naming
    file and line for a start before the submit or an end before the start, and when the
    recorded schedule runs more processors at once than the platform has.
    """
    j = log.jobs
    submit = j["submit"].to_numpy(np.int64)
    start = j["start"].to_numpy(np.int64)
    end = j["end"].to_numpy(np.int64)
    width = j["processors"].to_numpy(np.int64)
    line = j["line"].to_numpy(np.int64)
    excluded = {k: int(v) for k, v in log.excluded.items() if v}

    def bad(mask: np.ndarray, msg: str) -> None:
        idx = np.flatnonzero(mask)
        if idx.size:
            i = idx[0]
            raise WindowError(
                f"{log.path}:{line[i]}: job {j['job'].iloc[i]}: {msg.format(s=start[i], e=end[i], r=submit[i])}"
                + (f" ({idx.size} such jobs)" if idx.size > 1 else "")
            )

    started = start >= 0
    bad(started & (start < submit), "start {s} is before its submit {r}")
    bad(started & (end >= 0) & (end < start), "end {e} is before its start {s}")
    lw = log.window  # read for one window: rows outside it are counted there
    if lw is not None and (t0, t1) != (lw.t0, lw.t1):
        raise WindowError(
            f"{log.path} was read for the window [{lw.t0}, {lw.t1}) only; read it again "
            f"(without window=) to audit [{t0}, {t1})"
        )
    keep = np.ones(len(j), dtype=bool) if lw is None else ~lw.outside

    def exclude(mask: np.ndarray, reason: str, outside: int = 0) -> None:
        m = mask & keep
        count = int(m.sum()) + outside
        if count:
            excluded[reason] = excluded.get(reason, 0) + count
            keep[m] = False

    M = int(machines) if machines is not None else log.machines
    if M is not None and M > MAX_MACHINES:
        raise WindowError(
            f"{log.path}: a platform of {M:,} processors is beyond the limit of "
            f"{MAX_MACHINES:,} (give machines= if the log's size is wrong)"
        )
    counted = {} if lw is None else lw.excluded
    for mask, reason in (
        (started & (end < 0), "started, end unknown"),
        (~started, "never started (run time unknown)"),
        (started & (end == start), "run time 0"),
    ):
        exclude(mask, reason, counted.get(reason, 0))
    # records outside the window read for it: ended by t0, or submitted at or after t1
    ended_out = after_out = 0
    if lw is not None:
        ended_out = sum(c for w, c in lw.ended.items() if M is None or w <= M)
        after_out = sum(c for w, c in lw.after.items() if M is None or w <= M)
    if M is not None:
        wide_out = 0
        if lw is not None:
            wide_out = sum(c for w, c in (*lw.ended.items(), *lw.after.items()) if w > M)
        exclude(width > M, f"wider than the platform ({M} processors)", wide_out)
    if t0 is None:
        t0 = int(submit[keep].min()) if keep.any() else 0
    if t1 is None:
        t1 = int(max(end[keep].max(), submit[keep].max() + 1)) if keep.any() else t0 + 1
    if t1 <= t0:
        raise WindowError(f"the window is empty: to ({t1}) must be after from ({t0})")
    wj = window_jobs(submit, start, end - start, line, t0, t1, keep)
    idx, rel, pin, rec, size = wj.idx, wj.release, wj.pinned, wj.start, wj.size
    if not len(idx):  # nothing to audit: never a game of no organization
        if lw is not None:  # read for this window: the span of every record, not of the rows kept
            first_last = lw.submitted
        else:
            first_last = (int(submit.min()), int(submit.max())) if len(submit) else None
        span = (
            f"its jobs were submitted at {first_last[0]}..{first_last[1]}"
            if first_last is not None
            else "it has no job"
        )
        raise WindowError(
            f"{log.path}: no job runs or waits in the window [{t0}, {t1}) (log time in "
            f"seconds; {span}): nothing to audit"
        )
    n_before = wj.ended + ended_out
    # the recorded schedule must fit the platform
    peak, at = _peak(
        np.maximum(start[idx], t0)[rec >= 0],
        np.minimum(end[idx], t1)[rec >= 0],
        width[idx][rec >= 0],
    )
    size_note = ""
    if M is None and orgs.machines is None:
        if peak > MAX_MACHINES:  # one record's width must not decide the platform's size
            raise WindowError(
                f"{log.path}: the recorded schedule runs {peak:,} processors at once (log "
                f"time {at}), beyond the limit of {MAX_MACHINES:,} machines; a record's "
                "processor count is wrong, or give machines="
            )
        M = peak
        size_note = f"platform size unknown: taken as the recorded peak, {peak} processors"
    fitted_text = ""
    if M is not None and peak > M and machines is None:
        # the log's own size: records overlapping it are fitted, counted (.overlap)
        from .overlap import fit_recorded, fitted_note

        cancelled = j["cancelled"].to_numpy(bool)[idx]
        fitted = fit_recorded(rec, size, width[idx], M, int(t1 - t0), cancelled)
        rec = fitted.start
        pin = pin & ~fitted.moved  # a running job moved later no longer holds its machines at t0
        ran = ~fitted.dropped  # cancelled records that did not fit never ran: left out
        idx, rel, pin, rec, size = idx[ran], rel[ran], pin[ran], rec[ran], size[ran]
        if fitted.dropped.any():
            excluded[CANCELLED_OVERLAP] = int(fitted.dropped.sum())
        fitted_text = fitted_note(fitted, M, peak, f"the recorded schedule of {log.path}")
        on = rec >= 0
        peak, at = _peak(rec[on], rec[on] + size[on], width[idx][on])
    if M is not None and peak > M:
        said = "given by machines=" if machines is not None else f"that {log.path} states"
        raise WindowError(
            f"{log.path}: the recorded schedule runs {peak} processors at once (log time {at}), "
            f"more than the {M} {said}; the platform cannot be smaller than what it ran"
            + (
                ""
                if machines is not None
                else f" (give machines={peak} if the stated size is wrong)"
            )
        )
    miss = idx[orgs.index[idx] < 0]
    if miss.size:  # jobs outside the window need no organization
        from .organizations import unmatched_error

        raise unmatched_error(j, np.sort(miss), log.weight)
    # organizations with neither jobs in the window nor machines are not part of the game
    # (with a contribution rule, no work means no machines)
    present = np.zeros(len(orgs.names), dtype=bool)
    present[orgs.index[idx]] = True
    shares_m: list[int] | None = None
    if orgs.shares is not None:
        # Slurm's shares split the whole platform over every account of the tree (the
        # window only breaks remainder ties: first job in the window first)
        assert M is not None  # given, stated, or the peak (no mapping machines)
        fifo_all = np.lexsort((np.arange(len(idx)), rel))
        first_all = np.full(len(orgs.names), len(idx), dtype=np.int64)
        np.minimum.at(first_all, orgs.index[idx][fifo_all], np.arange(len(idx)))
        shares_m = contribution(orgs.shares, M, "work", first_all.tolist())
        present |= np.array(shares_m) > 0
    if orgs.machines is not None:
        present |= np.array(orgs.machines) > 0
        if orgs.described_by.endswith("+other"):
            present[-1] = True
    keep_org = np.flatnonzero(present)
    absent = len(orgs.names) - len(keep_org)
    remap = np.full(len(orgs.names), -1, dtype=np.int64)
    remap[keep_org] = np.arange(len(keep_org))
    names = [orgs.names[u] for u in keep_org]
    given_m = None if orgs.machines is None else [orgs.machines[u] for u in keep_org]
    k = len(names)
    owner = remap[orgs.index[idx]]
    work = np.zeros(k, dtype=np.int64)
    np.add.at(work, owner, width[idx] * size)
    if shares_m is not None:
        assert M is not None
        mach = [shares_m[u] for u in keep_org]
        rule_text = orgs.shares_rule
    elif given_m is not None:
        mach = list(given_m)
        with_other = orgs.described_by.endswith("+other")
        given = sum(mach[:-1]) if with_other else sum(mach)
        three = (
            f"the mapping's machines sum to {given}, the recorded schedule ran {peak} "
            f"processors at once, and the platform has "
            + (
                f"{M} (machines=)"
                if machines is not None
                else f"{M} ({log.path})"
                if M is not None
                else "no stated size"
            )
        )
        if with_other:
            if M is None:
                M = max(peak, given)
                size_note = f"platform size unknown: taken as {M} processors"
            if given > M:
                raise WindowError(f"{three}: the mapping gives away more than the platform")
            mach[-1] = M - given
        else:
            if given == 0:
                raise WindowError(f"{three}: a platform of 0 machines ran nothing")
            if given < peak:
                raise WindowError(
                    f"{three}: the mapping's platform is smaller than what ran; fix the mapping"
                )
            if M is not None and given != M:
                fix = (
                    "fix the mapping or machines="
                    if machines is not None
                    else f"fix the mapping or give machines={given}"
                )
                raise WindowError(f"{three}: they must agree; {fix}")
        M = sum(mach)
        rule_text = f"machines from {orgs.described_by.removesuffix('+other')}"
    else:
        # remainder ties: the organization whose first job in the window was submitted first
        fifo = np.lexsort((np.arange(len(owner)), rel))
        first = np.full(k, len(owner), dtype=np.int64)
        np.minimum.at(first, owner[fifo], np.arange(len(owner)))
        assert M is not None  # without mapping machines it is given, stated, or the peak
        mach = contribution(work.tolist(), M, rule, first.tolist())
        from .organizations import CONTRIBUTION_RULES

        rule_text = f"{rule}: {CONTRIBUTION_RULES[rule]}"
    if size_note:
        rule_text += f" ({size_note})"
    if jobs not in ("rigid", "sequential"):
        raise WindowError(f"jobs: {jobs!r}; choose rigid or sequential")
    if jobs == "sequential":
        copies = int(width[idx].sum())
        check_count(copies, MAX_JOBS, "sequential copies of the window's jobs (processors x jobs)")
    meta = {"source": log.path, "t0": int(t0), "t1": int(t1), "horizon": int(t1 - t0)}
    organizations = [Organization(n, int(m)) for n, m in zip(names, mach, strict=True)]
    if jobs == "rigid":
        req = j["requested"].to_numpy(np.int64)[idx]
        # a job running at t0 keeps its expected end (start + requested)
        left = np.where(pin, req - (t0 - start[idx]), req)
        requested = np.where(req >= 1, np.maximum(left, 1), -1)
        meta["jobs"] = "rigid"
        inst = Instance(
            organizations,
            owner,
            rel,
            size,
            width[idx],
            ids=None,
            meta=meta,
            start=rec,
            pinned=pin,
            requested=requested,
        )
    else:
        rep = np.repeat(np.arange(len(idx)), width[idx])
        inst = Instance(
            organizations,
            owner[rep],
            rel[rep],
            size[rep],
            ids=None,
            meta=meta,
            start=rec[rep],
            pinned=pin[rep],
        )
    if n_before:
        excluded.setdefault("ended before the window", n_before)
    if absent:
        excluded["organizations without jobs or machines in the window"] = absent
    excluded["submitted after the window"] = int((keep & (submit >= t1)).sum()) + after_out
    excluded = {k2: v for k2, v in excluded.items() if v}
    notes = [fitted_text] if fitted_text else []
    jobs_per = np.bincount(owner, minlength=k).tolist()
    assert M is not None  # set in both branches above
    return WindowInstance(
        inst,
        int(t0),
        int(t1),
        int(M),
        rule_text,
        {"waiting": wj.waiting, "running": wj.running},
        excluded,
        jobs_per,
        work.tolist(),
        notes,
    )


def expand_parallel(inst: Instance) -> Instance:
    """A JSON schedule with ``processors`` as sequential copies that start together."""
    if inst.processors is None:
        return inst
    rep = np.repeat(np.arange(inst.n), inst.processors)
    return Instance(
        inst.organizations,
        inst.org[rep],
        inst.release[rep],
        inst.size[rep],
        meta=dict(inst.meta),
        start=None if inst.start is None else inst.start[rep],
        pinned=None if inst.pinned is None else inst.pinned[rep],
    )


def recorded_peak(log: RecordedLog, t0: int, t1: int) -> int:
    """Most processors the log runs at once during ``[t0, t1)`` (to choose ``--machines``
    when a log overruns its stated size)."""
    j = log.jobs
    s, e = j["start"].to_numpy(np.int64), j["end"].to_numpy(np.int64)
    ok = (s >= 0) & (e > s) & (s < t1) & (e > t0)
    peak, _ = _peak(
        np.maximum(s[ok], t0), np.minimum(e[ok], t1), j["processors"].to_numpy(np.int64)[ok]
    )
    return peak
