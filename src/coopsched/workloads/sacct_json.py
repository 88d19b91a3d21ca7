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

from .jsonstream import JSONStream
from .limits import regular_file
from .recorded import RecordedLog
from .sacct import STATES, Collect, Problems, Repeats, SacctError, _arguments

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
                if count >= 2**53:
                    raise _Bad(f"field tres.{kind}[cpu].count: {count} is beyond 2^53")
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


class NotSacctJson(SacctError):
    """The JSON document is not ``sacct --json`` output (:func:`is_sacct_json`): no ``meta``
    or ``jobs`` at the top, or an ``organizations`` (a JSON schedule)."""


#: Jobs parsed at a time.
CHUNK_JOBS = 10_000
#: The fields of a job compared to tell a repeated record from two captures that
#: disagree (what the reader takes from a job; its key is job id, submit and start).
_RECORD = ("user", "group", "account", "partition", "state")


def read_sacct_json(
    path: str | os.PathLike,
    timezone: str | None = None,
    machines: int | None = None,
    skip_malformed: bool = False,
    window: tuple[int, int] | None = None,
) -> RecordedLog:
    """Read ``sacct --json`` output into a :class:`RecordedLog` (see the module doc).

    ``timezone`` only names the zone dates are shown and parsed in (the times are Unix
    seconds); ``machines``, ``skip_malformed`` and ``window`` as
    :func:`~coopsched.workloads.sacct.read_sacct`. The document is read a job at a time
    (:class:`~coopsched.workloads.jsonstream.JSONStream`) and :data:`CHUNK_JOBS` jobs are
    parsed at a time, so memory follows the jobs kept, not the file. Raises
    :class:`NotSacctJson` when the document is valid JSON but not sacct's.
    """
    path_s = _arguments(path, timezone or "UTC", machines)[0]
    regular_file(Path(path), SacctError)
    out = Collect(path_s, machines, window)
    repeats = Repeats(
        lambda key, before: _earlier(path, path_s, key, before),
        lambda i: f"{path_s}: jobs[{i}]",
        "jobs[{}]".format,
    )
    seen: set[str] = set()
    stop: SacctError | None = None  # a malformed job: raised once the document is sacct's
    try:
        fh = open(path, "rb")  # noqa: SIM115 (closed below; errors are the reader's)
    except OSError as exc:
        raise SacctError(f"{path_s}: cannot read: {exc.strerror or exc}") from None
    with fh:
        doc = JSONStream(fh, path_s, SacctError)
        if doc.peek() != "{":
            doc.value("the document")  # invalid JSON (an empty file) is reported as such
            raise NotSacctJson(f"{path_s}: not sacct --json output (not a JSON object)")
        for key in doc.members():
            if key in seen:
                raise doc.fail(f"key {key!r} appears twice at the top of the document")
            seen.add(key)
            if key == "organizations":
                raise NotSacctJson(f"{path_s}: a JSON schedule ('organizations'), not sacct's")
            if key == "errors":
                errors = doc.value("errors")
                if errors:
                    raise SacctError(
                        f"{path_s}: sacct reported error(s): {json.dumps(errors)[:300]}"
                    )
            elif key != "jobs":
                doc.skip(key)
            elif doc.peek() != "[":
                raise SacctError(f"{path_s}: field jobs: expected a list of jobs")
            else:
                batch: list[Any] = []
                first = 0
                for job in doc.elements("a job"):
                    batch.append(job)
                    if len(batch) == CHUNK_JOBS:
                        stop = stop or _chunk(out, repeats, path_s, first, batch, skip_malformed)
                        first += len(batch)
                        batch = []
                stop = stop or _chunk(out, repeats, path_s, first, batch, skip_malformed)
        doc.end()
    if "meta" not in seen or "jobs" not in seen:
        raise NotSacctJson(
            f"{path_s}: not sacct --json output (expected 'meta' and 'jobs' at the top)"
        )
    if stop is not None:
        raise stop
    zone_name = _arguments(path, timezone, machines)[1]  # this machine's: sacct's only
    excluded: dict[str, int] = {}
    repeats.note(path_s, excluded)
    return out.log(excluded, [], zone_name, "sacct-json", "--skip-malformed")


def _chunk(
    out: Collect,
    repeats: Repeats,
    path_s: str,
    first: int,
    jobs: list[Any],
    skip: bool,
) -> SacctError | None:
    """Parse ``jobs`` (indices from ``first``) into ``out``; a malformed job or two records
    of one run that disagree is returned (strict), not raised: the caller raises it once
    it knows the document is sacct's (a JSON schedule may list its jobs before
    ``organizations``)."""
    if not jobs:
        return None
    rows = _parse(jobs, path_s, first)
    index, ids, bad, reasons = rows.pop("index"), rows.pop("ids"), rows.pop("bad"), rows.pop("why")
    try:
        good = np.flatnonzero(~bad)
        keys = [(ids[i], int(rows["submit"][i]), int(rows["start"][i])) for i in good.tolist()]
        records = [
            (*(rows[c][i] for c in _RECORD), *(int(rows[c][i]) for c in _NUMBERS))
            for i in good.tolist()
        ]
        kept = np.ones(len(ids), dtype=bool)
        kept[good] = repeats.keep(keys, records, index[good].tolist())
        lines = index[kept]
        ids_kept = [ids[i] for i in np.flatnonzero(kept).tolist()]

        def where(i: int) -> str:
            return f"{path_s}: jobs[{lines[i]}]" + (f" (job {ids_kept[i]})" if ids_kept[i] else "")

        prob = Problems(path_s, lines, skip, where)
        why = [reasons.get(int(i), "") for i in np.flatnonzero(kept).tolist()]
        prob.flag(bad[kept], why.__getitem__)
        cols = {c: v[kept] for c, v in rows.items()}
        cols["job"] = np.array(ids_kept, dtype=object)
        out.add(prob, cols)
    except SacctError as exc:
        return exc
    return None


#: Whole-number fields of a parsed job, as :func:`~coopsched.workloads.sacct._rules` names them.
_NUMBERS = ("submit", "start", "end", "alloc", "limits")


def _parse(jobs: list[Any], path_s: str, first: int) -> dict[str, Any]:
    """The fields of ``jobs`` as columns (names as object arrays, :data:`_NUMBERS` as
    int64), with ``index`` (each job's index in ``jobs``), ``ids``, ``bad`` (malformed) and
    ``why`` (row -> the field and the reason)."""
    n = len(jobs)
    ids = [""] * n
    names: dict[str, list[str]] = {k: [] for k in _RECORD}
    nums = np.zeros((n, len(_NUMBERS)), dtype=np.int64)
    bad = np.zeros(n, dtype=bool)
    why: dict[int, str] = {}
    for i, job in enumerate(jobs):
        try:
            if not isinstance(job, dict):
                raise _Bad(f"expected a job object, got {type(job).__name__}")
            ids[i] = _job_id(job)
            row = (
                _text(job, "user", required=True),
                _text(job, "group"),
                _text(job, "account", required=True),
                _text(job, "partition"),
                _state(job),
            )
            submit = _number(job, "time.submission", required=True) or 0
            start = _number(job, "time.start") or -1
            end = _number(job, "time.end") or -1
            cpus = _cpus(job)
            limit = _number(job, "time.limit")
            seconds = -1 if limit is None or limit in _NO_LIMIT or limit == 0 else limit * 60
            if seconds >= 2**53:
                raise _Bad(f"field time.limit: {limit} minutes is beyond 2^53 s")
        except _Bad as exc:
            bad[i] = True
            why[i] = str(exc)
            row = ("", "", "", "", "")
            submit, start, end, cpus, seconds = 0, -1, -1, 0, -1
        for k, v in zip(_RECORD, row, strict=True):
            names[k].append(v)
        nums[i] = (submit, start, end, cpus, seconds)
    out: dict[str, Any] = {k: np.array(v, dtype=object) for k, v in names.items()}
    out.update({k: nums[:, j].copy() for j, k in enumerate(_NUMBERS)})
    out.update(index=np.arange(first, first + n, dtype=np.int64), ids=ids, bad=bad, why=why)
    return out


def _earlier(path: str | os.PathLike, path_s: str, key: tuple, before: int):
    """The first job with ``key`` (job id, submit, start) before ``jobs[before]``, read again
    from the file: ``(index, record)`` as :func:`_chunk` compares them, or ``None``."""
    with open(path, "rb") as fh:
        doc = JSONStream(fh, path_s, SacctError)
        for top in doc.members():
            if top != "jobs":
                doc.skip(top)
                continue
            for i, job in enumerate(doc.elements("a job")):
                if i >= before:
                    return None
                rows = _parse([job], path_s, i)
                if rows["bad"][0]:
                    continue
                if (rows["ids"][0], int(rows["submit"][0]), int(rows["start"][0])) == key:
                    record = (
                        *(rows[c][0] for c in _RECORD),
                        *(int(rows[c][0]) for c in _NUMBERS),
                    )
                    return i, record
    return None
