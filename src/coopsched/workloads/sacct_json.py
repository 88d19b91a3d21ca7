"""Reader for Slurm's ``sacct --json`` output: the same :class:`RecordedLog` as ``sacct -P``.

``sacct -a -X --json`` (Slurm 21.08 and later; the sacct man page, ``--json``) prints one
document ``{"meta": {...}, "errors": [...], "jobs": [...]}`` whose jobs follow the
``data_parser`` of the installed Slurm; the reader was written against v0.0.38 (Slurm 22.05,
the committed capture ``tests/fixtures/slurm-tree/sacct_json.json``) and also accepts the
numbers later parsers wrap as ``{"set": ..., "infinite": ..., "number": ...}``. It is told
apart from a JSON schedule by its content (:func:`is_sacct_json`: ``jobs`` and ``meta`` at
the top, no ``organizations``). Per job (``docs/formats.md``, "sacct --json"):

* the job id as sacct's text prints it: ``job_id``, or ``<array.job_id>_<array.task_id>``
  for an array task (``_[<array.task>]`` for a pending range), ``<het.job_id>+<offset>``
  for a heterogeneous component;
* ``user``, ``account``, ``group``, ``partition`` (strings);
* ``time.submission``, ``time.start``, ``time.end`` in Unix seconds (``0``: none);
* processors: the ``cpu`` count of ``tres.allocated``, else of ``tres.requested`` (a job that
  never started has no allocation), else ``required.CPUs``;
* ``time.limit`` in minutes (none: null, unset or infinite);
* ``state.current`` (a job state, or a list whose first entry is one).

Then the text reader's rules apply unchanged (:func:`~coopsched.workloads.sacct.assemble`):
never-started jobs, contradictory times excluded and counted, ``machines`` checked. A malformed
job is an error naming the file, the job's index in ``jobs`` and the field (``x.json: jobs[3]
(job 4): field time.start: ...``), or with ``skip_malformed`` is left out, counted and listed.
The log's ``line`` column holds each job's index in ``jobs``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import numpy as np

from .recorded import RecordedLog, decode_utf8
from .sacct import STATES, Problems, SacctError, _open, assemble

#: ``time.limit`` values that mean "no limit" (Slurm's INFINITE and NO_VAL, 32 bits).
_NO_LIMIT = (0xFFFFFFFE, 0xFFFFFFFF)


class _Bad(Exception):
    """One malformed field of one job (the message names the field)."""


def is_sacct_json(data: Any) -> bool:
    """Whether a parsed JSON document is sacct's (``jobs`` and ``meta``, no
    ``organizations``, which a JSON schedule has)."""
    return (
        isinstance(data, dict)
        and "jobs" in data
        and "meta" in data
        and ("organizations" not in data)
    )


def _get(job: dict, dotted: str) -> Any:
    """``job["a"]["b"]`` for ``"a.b"``; ``None`` when a level is missing."""
    v: Any = job
    for key in dotted.split("."):
        if not isinstance(v, dict):
            return None
        v = v.get(key)
    return v


def _number(job: dict, dotted: str, required: bool = False) -> int | None:
    """A whole number >= 0 below 2^53 (``None``: absent, unset or infinite)."""
    v = _get(job, dotted)
    if isinstance(v, dict):  # data_parser v0.0.39 and later
        unset = not v.get("set", True) or v.get("infinite", False)
        v = None if unset else v.get("number")
    if v is None:
        if required:
            raise _Bad(f"field {dotted}: missing")
        return None
    if isinstance(v, bool) or not isinstance(v, int):
        raise _Bad(f"field {dotted}: {v!r} is not a whole number")
    if not 0 <= v < 2**53:
        raise _Bad(f"field {dotted}: {v} is not a whole number in 0..2^53")
    return v


def _text(job: dict, dotted: str, required: bool = False) -> str:
    v = _get(job, dotted)
    if v is None and not required:
        return ""
    if not isinstance(v, str):
        raise _Bad(
            f"field {dotted}: {v!r} is not a name" if v is not None else f"field {dotted}: missing"
        )
    return v


def _job_id(job: dict) -> str:
    job_id = _number(job, "job_id", required=True)
    array = _number(job, "array.job_id") or 0
    if array:
        task = _number(job, "array.task_id")
        if task is not None:
            return f"{array}_{task}"
        pending = _get(job, "array.task")
        if isinstance(pending, str) and pending:
            return f"{array}_[{pending}]"
    het = _number(job, "het.job_id") or 0
    offset = _number(job, "het.job_offset")
    if het and offset is not None:
        return f"{het}+{offset}"
    return str(job_id)


def _cpus(job: dict) -> int:
    for kind in ("allocated", "requested"):
        tres = _get(job, f"tres.{kind}")
        if tres is None:
            continue
        if not isinstance(tres, list):
            raise _Bad(f"field tres.{kind}: expected a list")
        for t in tres:
            if isinstance(t, dict) and t.get("type") == "cpu":
                count = t.get("count")
                if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                    raise _Bad(f"field tres.{kind}[cpu].count: {count!r} is not a whole number")
                return count
    cpus = _number(job, "required.CPUs")
    if cpus is None:
        raise _Bad("field tres.allocated: no cpu count (nor tres.requested, required.CPUs)")
    return cpus


def _state(job: dict) -> str:
    v = _get(job, "state.current")
    if isinstance(v, list):  # later parsers: a list of flags, the base state first
        v = v[0] if v else None
    if not isinstance(v, str) or v not in STATES:
        raise _Bad(f"field state.current: {v!r} is not a job state")
    return v


def read_sacct_json(
    path: str | os.PathLike,
    timezone: str | None = None,
    machines: int | None = None,
    skip_malformed: bool = False,
) -> RecordedLog:
    """Read ``sacct --json`` output into a :class:`RecordedLog` (see the module doc).

    ``timezone`` only names the zone dates are shown and parsed in (the times are Unix
    seconds); ``machines`` and ``skip_malformed`` as :func:`~coopsched.workloads.sacct.read_sacct`.
    """
    path_s, zone_name, _zone, text = _open(path, timezone, machines)
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise SacctError(f"{path_s}:{exc.lineno}: invalid JSON: {exc.msg}") from None
    if not is_sacct_json(data):
        raise SacctError(f"{path_s}: not sacct --json output (expected 'meta' and 'jobs')")
    jobs = data["jobs"]
    if not isinstance(jobs, list):
        raise SacctError(f"{path_s}: field jobs: expected a list of jobs")
    errors = data.get("errors") or []
    if errors:
        raise SacctError(f"{path_s}: sacct reported error(s): {json.dumps(errors)[:300]}")
    n = len(jobs)
    ids = [""] * n

    def where(i: int) -> str:
        return f"{path_s}: jobs[{i}]" + (f" (job {ids[i]})" if ids[i] else "")

    prob = Problems(path_s, np.arange(n, dtype=np.int64), skip_malformed, where)
    cols: dict[str, list] = {k: [] for k in ("user", "group", "account", "partition", "state")}
    nums = np.zeros((n, 5), dtype=np.int64)  # submit, start, end, cpus, limit (s)
    bad = np.zeros(n, dtype=bool)
    reasons: dict[int, str] = {}
    for i, job in enumerate(jobs):
        try:
            if not isinstance(job, dict):
                raise _Bad(f"expected a job object, got {type(job).__name__}")
            ids[i] = _job_id(job)
            row = {
                "user": _text(job, "user", required=True),
                "group": _text(job, "group"),
                "account": _text(job, "account"),
                "partition": _text(job, "partition"),
                "state": _state(job),
            }
            submit = _number(job, "time.submission", required=True) or 0
            start = _number(job, "time.start") or -1
            end = _number(job, "time.end") or -1
            cpus = _cpus(job)
            limit = _number(job, "time.limit")
            seconds = -1 if limit is None or limit in _NO_LIMIT or limit == 0 else limit * 60
        except _Bad as exc:
            bad[i] = True
            reasons[i] = str(exc)
            row = {"user": "", "group": "", "account": "", "partition": "", "state": ""}
            submit, start, end, cpus, seconds = 0, -1, -1, 0, -1
        for k, v in row.items():
            cols[k].append(v)
        nums[i] = (submit, start, end, cpus, seconds)
    prob.flag(bad, reasons.__getitem__)
    state = np.array(cols.pop("state"), dtype=object)
    names = {k: np.array(v, dtype=object) for k, v in cols.items()}
    names["job"] = np.array(ids, dtype=object)
    return assemble(
        path_s,
        prob,
        names,
        nums[:, 0],
        nums[:, 1],
        nums[:, 2],
        nums[:, 3],
        state,
        None,
        nums[:, 4],
        machines,
        {},
        [],
        zone_name,
        "sacct-json",
        "--skip-malformed",
    )


def read_json_document(path: str | Path) -> Any:
    """A JSON file's document, or ``None`` when it is not valid UTF-8 JSON (the caller's
    reader then gives its own error)."""
    try:
        return json.loads(decode_utf8(Path(path).read_bytes(), str(path), SacctError))
    except (OSError, ValueError):
        return None
