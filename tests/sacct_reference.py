"""Slow, line-by-line reference reader of sacct output, to check the fast one.

It states the rules of ``docs/formats.md`` (section "Slurm accounting (sacct)") one job at a
time with ``datetime``/``zoneinfo``; :func:`coopsched.workloads.sacct.read_sacct` must give
the same jobs and exclusions on valid input.
"""

from __future__ import annotations

import os
from datetime import datetime

import pandas as pd

from coopsched.workloads.recorded import COLUMNS, RecordedLog
from coopsched.workloads.sacct import (
    _JOBID_RE,
    _NO_TIME,
    _STATE_RE,
    _TIME_RE,
    END_BEFORE_START,
    START_BEFORE_SUBMIT,
    STATES,
    STEP_LINE,
    SacctError,
    _header,
    _open,
)


def reference_read_sacct(
    path: str | os.PathLike, timezone: str | None = None, machines: int | None = None
) -> RecordedLog:
    """Read ``sacct -P`` output into a :class:`RecordedLog` (``docs/formats.md``, sacct).

    ``timezone`` is the IANA zone sacct printed its local times in (default: this machine's,
    :func:`local_timezone`); the result states it. ``machines``, when given, is the
    platform's processor count: a job allocated more is an error (the count is wrong).
    """
    path_s, zone_name, zone, text = _open(path, timezone, machines)

    cache: dict[str, tuple[int, int]] = {}

    def seconds(value: str, lineno: int, column: str, allow_none: bool) -> tuple[int, int]:
        """Both readings (fold 0 and 1) of a local time; Unix seconds as they are."""
        if value in _NO_TIME:
            if allow_none:
                return -1, -1
            raise SacctError(f"{path_s}:{lineno}: field {column}: {value!r} is not a time")
        if value.isdigit():
            return int(value), int(value)
        got = cache.get(value)
        if got is None:
            if not _TIME_RE.match(value):
                raise SacctError(
                    f"{path_s}:{lineno}: field {column}: {value!r} is not a time "
                    "YYYY-MM-DDTHH:MM:SS (sacct's default format) nor Unix seconds "
                    "(SLURM_TIME_FORMAT=%s)"
                )
            try:
                local = datetime.fromisoformat(value).replace(tzinfo=zone)
            except ValueError as exc:
                raise SacctError(f"{path_s}:{lineno}: field {column}: {value!r}: {exc}") from None
            got = cache[value] = (
                int(local.timestamp()),
                int(local.replace(fold=1).timestamp()),
            )
        return got

    def ordered(sub: int, st: int, en: int) -> bool:
        return not (st >= 0 and sub > st) and not (st >= 0 and en >= 0 and st > en)

    def resolve(sub2, st2, en2) -> tuple[int, int, int]:
        """The readings that keep submit <= start <= end; when several orders are
        consistent and disagree on a time, that time keeps its first reading."""
        ok = [
            (a, b, c)
            for a in sorted(set(sub2))
            for b in sorted(set(st2))
            for c in sorted(set(en2))
            if ordered(a, b, c)
        ]
        out = []
        for f, pair in enumerate((sub2, st2, en2)):
            vals = {x[f] for x in ok}
            out.append(vals.pop() if len(vals) == 1 else pair[0])
        return out[0], out[1], out[2]

    def count(value: str, lineno: int, column: str) -> int:
        if not value.isdigit():
            raise SacctError(
                f"{path_s}:{lineno}: field {column}: {value!r} is not a whole number >= 0"
            )
        return int(value)

    columns: list[str] | None = None
    trailing = False
    header_line = ""
    excluded: dict[str, int] = {}
    rows: list[tuple] = []
    where: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if columns is None:
            columns, trailing = _header(path_s, lineno, line)
            header_line = line
            where.update({c: i for i, c in enumerate(columns)})
            continue
        if line == header_line:  # concatenated sacct outputs repeat the header
            continue
        fields = line.split("|")
        if trailing:
            if fields[-1] != "":
                raise SacctError(
                    f"{path_s}:{lineno}: line does not end with '|' like the header (sacct -p)"
                )
            fields = fields[:-1]
        if len(fields) != len(columns):
            raise SacctError(
                f"{path_s}:{lineno}: {len(fields)} fields, the header has {len(columns)} "
                "(a '|' inside a field? leave free-text columns such as JobName out)"
            )

        def get(column: str, fields: list[str] = fields) -> str:
            i = where.get(column)
            return "" if i is None else fields[i].strip()

        job = get("JobID")
        m = _JOBID_RE.match(job)
        if m is None:
            raise SacctError(f"{path_s}:{lineno}: field JobID: {job!r} is not a Slurm job id")
        if m.group(2) is not None:
            excluded[STEP_LINE] = excluded.get(STEP_LINE, 0) + 1
            continue
        state = get("State")
        if state:
            sm = _STATE_RE.match(state)
            if sm is None or sm.group(1) not in STATES:
                raise SacctError(f"{path_s}:{lineno}: field State: {state!r} is not a job state")
            state = sm.group(1)
        submit, start, end = resolve(
            seconds(get("Submit"), lineno, "Submit", allow_none=False),
            seconds(get("Start"), lineno, "Start", allow_none=True),
            seconds(get("End"), lineno, "End", allow_none=True),
        )
        alloc = count(get("AllocCPUS"), lineno, "AllocCPUS")
        # Slurm records a job cancelled while pending with Start = End = the cancel time
        never = start < 0 or alloc == 0 or state == "PENDING"
        if never or (state == "CANCELLED" and start == end):
            requested = get("ReqCPUS")
            processors = count(requested, lineno, "ReqCPUS") if requested else alloc
            start = end = -1
        else:
            processors = alloc
            if machines is not None and processors > machines:
                raise SacctError(
                    f"{path_s}:{lineno}: field AllocCPUS: job {job} was allocated {processors} "
                    f"processors, more than the platform's {machines} (check --machines)"
                )
            if 0 <= end < start:
                excluded[END_BEFORE_START] = excluded.get(END_BEFORE_START, 0) + 1
                continue
            if start < submit:
                excluded[START_BEFORE_SUBMIT] = excluded.get(START_BEFORE_SUBMIT, 0) + 1
                continue
        limit = get("Timelimit")
        requested = -1
        if limit and limit not in ("UNLIMITED", "Partition_Limit", "INVALID"):
            days, _, clock = limit.rpartition("-")
            parts = [int(x) for x in clock.split(":")]
            while len(parts) < 3:
                parts.insert(0, 0)
            secs = ((int(days or 0) * 24 + parts[0]) * 60 + parts[1]) * 60 + parts[2]
            requested = secs if secs > 0 else -1
        rows.append(
            (
                job,
                submit,
                start,
                end,
                processors,
                requested,
                state == "CANCELLED",
                get("User"),
                get("Group"),
                get("Account"),
                get("Partition"),
                "",
                lineno,
            )
        )
    if columns is None:
        raise SacctError(f"{path_s}: empty file: expected a sacct -P header line")
    jobs = pd.DataFrame(rows, columns=list(COLUMNS))
    for c in ("submit", "start", "end", "processors", "requested", "line"):
        jobs[c] = jobs[c].astype("int64")
    for c in ("job", "user", "group", "account", "partition", "queue"):
        jobs[c] = jobs[c].astype(object)
    jobs["cancelled"] = jobs["cancelled"].astype(bool)
    return RecordedLog(
        path=path_s,
        jobs=jobs,
        excluded=excluded,
        machines=machines,
        epoch=0,
        timezone=zone_name,
        source="sacct",
    )
