"""The sacct text reader as it was before it streamed (whole file in memory): kept to
check that :func:`coopsched.workloads.sacct.read_sacct` gives the same jobs, exclusions,
notes and errors, chunk by chunk and window by window."""

from __future__ import annotations

import os
import warnings

import numpy as np
import pandas as pd

from coopsched.workloads.recorded import RecordedLog
from coopsched.workloads.sacct import (
    _JOBID_RE,
    _STATE_RE,
    DUPLICATE_LINE,
    REQUIRED,
    STATES,
    STEP_LINE,
    USED,
    Problems,
    SacctError,
    _counts,
    _header,
    _never,
    _open,
    _resolve_folds,
    _seconds_both,
    _timelimits,
    assemble,
)


def whole_read_sacct(
    path: str | os.PathLike,
    timezone: str | None = None,
    machines: int | None = None,
    skip_malformed: bool = False,
) -> RecordedLog:
    """Read ``sacct -P`` output into a :class:`RecordedLog` (``docs/formats.md``, sacct).

    ``timezone`` is the IANA zone sacct printed its local times in (default: this machine's,
    :func:`local_timezone`); the result states it. ``machines``, when given, is the
    platform's processor count: a job allocated more is an error (the count is wrong).
    ``skip_malformed``: a malformed record (a line with the wrong number of fields, a field
    that is not what its column holds) is left out, counted in ``excluded`` and listed
    (the first :data:`~coopsched.workloads.recorded.MALFORMED_LISTED`, line and reason) in
    ``notes``, instead of being an
    error. The header is never skipped.
    """
    path_s, zone_name, zone, text = _open(path, timezone, machines)

    # 1. lines: layout and job ids, one pass in Python
    columns: list[str] | None = None
    trailing = False
    header_line = ""
    steps = 0
    kept: list[list[str]] = []
    numbers: list[int] = []
    seen: dict[tuple[str, str, str], int] = {}
    duplicates = 0
    first_duplicate = 0
    i_job = i_submit = i_start = 0
    early: list[tuple[int, str]] = []  # malformed lines (skip_malformed)

    def malformed(lineno: int, message: str) -> None:
        if not skip_malformed:
            raise SacctError(f"{path_s}:{lineno}: {message}")
        early.append((lineno, f"{path_s}:{lineno}: {message}"))

    for lineno, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        if columns is None:
            columns, trailing = _header(path_s, lineno, line)
            header_line = line
            i_job = columns.index("JobID")
            i_submit = columns.index("Submit")
            i_start = columns.index("Start")
            continue
        if line == header_line:  # concatenated sacct outputs repeat the header
            continue
        fields = line.split("|")
        if trailing:
            if fields[-1] != "":
                malformed(lineno, "line does not end with '|' like the header (sacct -p)")
                continue
            fields.pop()
        if len(fields) != len(columns):
            malformed(
                lineno,
                f"{len(fields)} fields, the header has {len(columns)} "
                "(a '|' inside a field? leave free-text columns such as JobName out)",
            )
            continue
        job = fields[i_job].strip()
        m = _JOBID_RE.match(job)
        if m is None:
            malformed(lineno, f"field JobID: {job!r} is not a Slurm job id")
            continue
        if m.group(2) is not None:
            steps += 1
            continue
        # one run of one job is one record: the same job id, submit and start twice is a
        # repeated line (merged when identical) or two captures that disagree (an error);
        # another start is another run of a requeued job (sacct -D), kept
        key = (job, fields[i_submit].strip(), fields[i_start].strip())
        earlier = seen.get(key)
        if earlier is not None:
            if [f.strip() for f in kept[earlier]] != [f.strip() for f in fields]:
                raise SacctError(
                    f"{path_s}:{lineno}: job {job} (submitted {key[1]}, started {key[2]}) is "
                    f"also on line {numbers[earlier]} with other fields: two captures "
                    "disagree; keep one of them"
                )
            duplicates += 1
            if first_duplicate == 0:
                first_duplicate = lineno
            continue
        seen[key] = len(kept)
        kept.append(fields)
        numbers.append(lineno)
    if columns is None:
        raise SacctError(f"{path_s}: empty file: expected a sacct -P header line")
    excluded: dict[str, int] = {STEP_LINE: steps} if steps else {}
    if duplicates:
        excluded[DUPLICATE_LINE] = duplicates
        warnings.warn(
            f"{path_s}: {duplicates} record(s) repeat an earlier one exactly (first: line "
            f"{first_duplicate}); each job run is counted once",
            stacklevel=2,
        )

    # 2. fields, column by column
    raw = pd.DataFrame(kept, columns=columns, dtype=object)
    for c in raw.columns:
        if c in REQUIRED or c in USED:
            raw[c] = raw[c].astype(object).str.strip()
    lines = np.asarray(numbers, dtype=np.int64)
    n = len(raw)
    prob = Problems(path_s, lines, skip_malformed)
    prob.early = early

    def column(name: str) -> pd.Series:
        return raw[name] if name in raw.columns else pd.Series([""] * n, dtype=object)

    raw_state = column("State")
    parsed = raw_state.str.extract(_STATE_RE.pattern, expand=True)[0]
    known = parsed.isin(STATES).to_numpy() | (raw_state == "").to_numpy()
    prob.flag(~known, lambda i: f"field State: {raw_state.iloc[i]!r} is not a job state")
    state = parsed.fillna("").to_numpy(dtype=object)
    (submit, start, end), unresolved, unresolved_line = _resolve_folds(
        [
            _seconds_both(raw["Submit"], zone, prob, "Submit", allow_none=False),
            _seconds_both(raw["Start"], zone, prob, "Start", allow_none=True),
            _seconds_both(raw["End"], zone, prob, "End", allow_none=True),
        ],
        lines,
    )
    notes = []
    if unresolved:
        notes.append(
            f"{unresolved} job(s) with a local time in a repeated daylight-saving hour that "
            f"their own order does not decide (first: {path_s}:{unresolved_line}); read as the "
            "first occurrence. Export with SLURM_TIME_FORMAT=%s to avoid the question"
        )
    alloc = _counts(raw["AllocCPUS"], prob, "AllocCPUS")
    never = _never(start, end, alloc, state)
    requested_cpus = None
    if "ReqCPUS" in raw.columns and never.any():  # only where it is used: never started
        requested_cpus = _counts(
            raw["ReqCPUS"].where(pd.Series(never, index=raw.index), "0"), prob, "ReqCPUS"
        )
    limits = (
        _timelimits(raw["Timelimit"], prob)
        if "Timelimit" in raw.columns
        else np.full(n, -1, dtype=np.int64)
    )
    return assemble(
        path_s,
        prob,
        {
            "job": raw["JobID"].to_numpy(dtype=object),
            "user": column("User").to_numpy(dtype=object),
            "group": column("Group").to_numpy(dtype=object),
            "account": column("Account").to_numpy(dtype=object),
            "partition": column("Partition").to_numpy(dtype=object),
        },
        submit,
        start,
        end,
        alloc,
        state,
        requested_cpus,
        limits,
        machines,
        excluded,
        notes,
        zone_name,
        "sacct",
        "--skip-malformed",
    )
