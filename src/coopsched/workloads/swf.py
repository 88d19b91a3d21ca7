"""Reader for the Standard Workload Format (SWF) of the Parallel Workloads Archive.

An SWF file has one job per line, 18 whitespace-separated numeric fields, and header
comments starting with ``;`` (``; MaxProcs: 8192``). Plain and gzip-compressed files
(``.swf.gz``) are read. Malformed input raises :class:`SWFError` naming the file, the
line and the field: a line with more or fewer than 18 fields (even the first one), a
token that is not a number, a value that is not finite or beyond 2^53 (never wrapped or
rounded), a line longer than :data:`~coopsched.workloads.limits.MAX_SWF_LINE` characters,
a corrupt gzip stream, or a path that is not an ordinary file. Jobs that cannot run (run time <= 0, or processors <= 0, where
processors is field 5, or field 8 when field 5 is -1; docs/conventions.md §1) are dropped and
counted in :attr:`SWFTrace.dropped`, never silently.
"""

from __future__ import annotations

import contextlib
import gzip
import io
import re
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .limits import (
    MAX_DECOMPRESSED,
    MAX_EXACT,
    MAX_SWF_LINE,
    LimitError,
    exact_number,
    regular_file,
)
from .textblocks import line_blocks

if TYPE_CHECKING:  # pandas is imported only when a DataFrame is asked for (start-up)
    import pandas as pd

#: The 18 SWF fields, in order (PWA swf.html, version 2.2).
FIELDS: tuple[str, ...] = (
    "job",
    "submit",
    "wait",
    "run_time",
    "alloc_procs",
    "avg_cpu",
    "used_mem",
    "req_procs",
    "req_time",
    "req_mem",
    "status",
    "user",
    "group",
    "executable",
    "queue",
    "partition",
    "preceding_job",
    "think_time",
)

_HEADER_RE = re.compile(r"^;\s*([A-Za-z][A-Za-z0-9_ ]*?)\s*:\s*(.*?)\s*$")


class SWFError(ValueError):
    """Malformed SWF input: the message names file, line and field."""


#: Columns of :attr:`SWFTrace.columns` (and :attr:`SWFTrace.jobs`), in order.
COLUMNS: tuple[str, ...] = (*FIELDS, "line", "processors")
#: SWF fields kept as floats (the others are whole numbers, int64).
FLOAT_FIELDS: tuple[str, ...] = ("avg_cpu", "used_mem", "req_mem", "think_time")


@dataclass
class SWFTrace:
    """A parsed SWF trace.

    ``columns`` holds the jobs that can run as numpy arrays, one entry per job: the 18
    fields (names in :data:`FIELDS`; int64, except :data:`FLOAT_FIELDS`) plus
    ``processors`` (field 5, or field 8 when field 5 is -1) and ``line`` (the line number
    in the file). :attr:`jobs` is the same table as a pandas DataFrame, built (and pandas
    imported) on first use. ``dropped`` counts the jobs left out, by reason.
    """

    path: str
    header: dict[str, str]
    columns: dict[str, np.ndarray]
    dropped: dict[str, int] = field(default_factory=dict)
    lines: int = 0
    #: Lines left out by ``skip_malformed``: (line number, message naming file, line, field).
    malformed: list[tuple[int, str]] = field(default_factory=list)
    _frame: pd.DataFrame | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def n(self) -> int:
        """Number of jobs kept."""
        return len(self.columns["submit"])

    @property
    def jobs(self) -> pd.DataFrame:
        """The jobs as a DataFrame (columns :data:`COLUMNS`), built once on first use."""
        if self._frame is None:
            import pandas as pd

            self._frame = pd.DataFrame({c: self.columns[c] for c in COLUMNS}, columns=list(COLUMNS))
        return self._frame

    def column(self, name: str) -> np.ndarray:
        """One column (:data:`COLUMNS`) as a numpy array, without pandas."""
        return self.columns[name]

    def _int_header(self, key: str) -> int | None:
        value = self.header.get(key)
        if value is None:
            return None
        m = re.match(r"^-?\d+", value)
        return int(m.group(0)) if m else None

    @property
    def max_nodes(self) -> int | None:
        """The header's ``MaxNodes``, if given."""
        return self._int_header("MaxNodes")

    @property
    def max_procs(self) -> int | None:
        """The header's ``MaxProcs``, if given."""
        return self._int_header("MaxProcs")

    @property
    def unix_start_time(self) -> int | None:
        """The header's ``UnixStartTime`` (the log's time 0 in Unix seconds), if given."""
        return self._int_header("UnixStartTime")

    @property
    def acknowledge(self) -> str | None:
        """The ``Acknowledge:`` header line: who to thank when using the trace."""
        return self.header.get("Acknowledge")

    @property
    def n_dropped(self) -> int:
        """The number of records the reader left out, all reasons together."""
        return int(sum(self.dropped.values()))

    def stats(self) -> dict:
        """Statistics of the trace, as printed by ``coopsched trace-info``."""
        j = self.jobs
        out: dict = {
            "file": self.path,
            "jobs": len(j),
            "dropped": dict(self.dropped),
            "header": {
                "MaxNodes": self.max_nodes,
                "MaxProcs": self.max_procs,
                "UnixStartTime": self.unix_start_time,
            },
        }
        if len(j):
            span = int(j["submit"].max() - j["submit"].min())
            out.update(
                {
                    "users": int(j["user"].nunique()),
                    "groups": int(j.loc[j["group"] != -1, "group"].nunique()),
                    "submit_first": int(j["submit"].min()),
                    "submit_last": int(j["submit"].max()),
                    "span_days": round(span / 86400, 2),
                    "serial_fraction": round(float((j["processors"] == 1).mean()), 4),
                    "max_processors": int(j["processors"].max()),
                    "run_time_mean": round(float(j["run_time"].mean()), 1),
                    "run_time_median": float(j["run_time"].median()),
                    "run_time_max": int(j["run_time"].max()),
                    "sequential_jobs": int(j["processors"].sum()),
                    "work_cpu_seconds": int((j["processors"] * j["run_time"]).sum()),
                }
            )
        return out

    def report(self):
        """:meth:`stats` as a :class:`coopsched.report.Report` of (field, value) rows."""
        from ..report import Column, Report

        rows = []
        for key, value in self.stats().items():
            if key == "file":
                continue
            if isinstance(value, dict):
                value = ", ".join(f"{k}={v}" for k, v in value.items())
            rows.append({"field": key, "value": value})
        notes = []
        if self.acknowledge:
            notes.append(f"Acknowledge: {self.acknowledge} (and the Parallel Workloads Archive)")
        return Report(
            title=self.path,
            columns=[Column("field", left=True), Column("value")],
            rows=rows,
            notes=notes,
            document=self.stats(),
        )


@contextlib.contextmanager
def _reader(path: Path) -> Iterator[Callable[[int], bytes]]:
    """``read(n)`` over the file's bytes, gzip data decompressed (told by its first two
    bytes, not by the name), a chunk at a time: at most :data:`MAX_DECOMPRESSED` bytes in
    all (a decompression bomb is refused, never held), read errors as :class:`SWFError`."""
    try:
        with path.open("rb") as head:
            magic = head.read(2)
        fh: io.BufferedIOBase = (
            gzip.GzipFile(path, "rb") if magic == b"\x1f\x8b" else path.open("rb")  # noqa: SIM115
        )
    except OSError as exc:
        raise SWFError(f"{path}: cannot read: {exc.strerror or exc}") from None
    total = 0

    def read(n: int) -> bytes:
        nonlocal total
        try:
            data = fh.read(n)
        except (OSError, EOFError, zlib.error) as exc:
            what = "corrupt or truncated gzip data" if magic == b"\x1f\x8b" else "cannot read"
            detail = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise SWFError(f"{path}: {what}: {detail}") from None
        total += len(data)
        if total > MAX_DECOMPRESSED:
            raise SWFError(
                f"{path}: more than {MAX_DECOMPRESSED:,} bytes once decompressed; refused "
                "(a damaged or hostile .gz: no workload log is that large)"
            )
        return data

    with fh:
        yield read


def _decode(data: bytes, line: int, first: bool) -> str:
    """Data lines are numbers only; a comment's non-UTF-8 byte cannot touch a job."""
    text = data.decode("utf-8", errors="replace")
    return text[1:] if first and text.startswith("\ufeff") else text  # a byte-order mark


def _blocks(path: Path) -> Iterator[tuple[int, list[str]]]:
    """The file's lines a block at a time (:func:`~coopsched.workloads.textblocks.line_blocks`)."""
    with _reader(path) as read:
        yield from line_blocks(read, _decode, str(path), SWFError, long_ok=_comment)


def _comment(start: bytes) -> bool:
    """Whether a line (its first bytes) is a comment: free text, of any length."""
    return start.lstrip().startswith(b";")


#: Fields that hold whole numbers (a fraction there is malformed).
_WHOLE = ("job", "submit", "wait", "run_time", "alloc_procs", "req_procs", "user")


def _line_problem(path: str, no: int, line: str) -> str | None:
    """What is wrong with one data line (file, line, field), or ``None``: the checks
    :func:`read_swf` makes on the whole file, one line at a time."""
    s = line.strip()
    if not s or s.startswith(";"):
        return None
    if len(line) > MAX_SWF_LINE:
        return f"{path}:{no}: line of {len(line):,} characters (limit {MAX_SWF_LINE})"
    parts = s.split()
    if len(parts) != len(FIELDS):
        return f"{path}:{no}: expected {len(FIELDS)} fields, found {len(parts)}"
    for i, tok in enumerate(parts):
        where = f"{path}:{no}: field {i + 1} ({FIELDS[i]})"
        try:
            value = float(tok)
        except ValueError:
            return f"{where}: {tok!r} is not a number"
        try:
            exact_number(value, where)
        except LimitError as exc:
            return str(exc)
        if FIELDS[i] in _WHOLE and value != int(value):
            return f"{where}: {value!r} is not a whole number"
        if FIELDS[i] == "submit" and value < 0:
            return f"{where}: negative submit time {value:g}"
    return None


def _check_job_numbers(p: Path, job: np.ndarray, data_lines: np.ndarray) -> None:
    """Field 1 numbers the jobs: a number used twice is an error naming both lines (a
    concatenated log, a repeated line); nothing is ever counted twice."""
    order = np.argsort(job, kind="stable")
    order = order[job[order] >= 0]  # -1: unknown (SWF), never compared
    same = np.flatnonzero(job[order][1:] == job[order][:-1])
    if same.size:
        a, b = sorted((int(order[same[0]]), int(order[same[0] + 1])))
        la, lb = int(data_lines[a]), int(data_lines[b])
        text = _lines_of(p, {la, lb})
        kind = (
            "repeats line" if text[la].split() == text[lb].split() else "has the job number of line"
        )
        raise SWFError(
            f"{p}:{lb}: field 1 (job): job {_fmt(job[a])} {kind} {la} "
            f"({same.size} job number(s) used twice); remove the repeated records"
        )


def _lines_of(p: Path, wanted: set[int]) -> dict[int, str]:
    """The lines numbered ``wanted``, read again from the file."""
    out: dict[int, str] = {}
    for first, lines in _blocks(p):
        for n in wanted:
            if first <= n < first + len(lines):
                out[n] = lines[n - first]
        if len(out) == len(wanted):
            break
    return out


def parse_header(lines: list[str]) -> dict[str, str]:
    """``; Key: value`` comment lines to a dict (a repeated key keeps its first value)."""
    header: dict[str, str] = {}
    for line in lines:
        s = line.strip()
        if not s.startswith(";"):
            continue
        m = _HEADER_RE.match(s)
        if m:
            header.setdefault(m.group(1).strip(), m.group(2))
    return header


def read_swf(path: str | Path, skip_malformed: bool = False) -> SWFTrace:
    """Read an SWF (or gzip-compressed SWF) file.

    Raises :class:`SWFError` for a missing or empty file, a line with a wrong number of
    fields, a field that is not a number, a negative submit time, or a fractional value
    in an integer field (submit time, wait time, run time, processors, user).
    ``skip_malformed``: such lines are left out instead and listed in
    :attr:`SWFTrace.malformed` (file, line, field, reason); other errors (no job lines, a
    job number used twice) remain errors.

    The file is read a block of lines at a time
    (:data:`~coopsched.workloads.textblocks.BLOCK_BYTES`), each block parsed into the
    columns it adds, so memory follows the jobs kept (20 columns of 8 bytes), not the text;
    of several malformed lines, the error names the first one of the first block that has
    one.
    """
    p = regular_file(path, SWFError)
    header: dict[str, str] = {}
    parts: dict[str, list[np.ndarray]] = {c: [] for c in (*COLUMNS, "all_job", "all_line")}
    dropped = {"run_time<=0": 0, "processors<=0": 0}
    malformed: list[tuple[int, str]] = []
    lines_read = 0
    for first, lines in _blocks(p):
        lines_read = first - 1 + len(lines)
        block = _block(p, first, lines, header, malformed if skip_malformed else None)
        del lines
        if block is None:
            continue
        arr, data_lines = block
        parts["all_job"].append(arr[:, 0].astype(np.int64))
        parts["all_line"].append(data_lines)
        procs = np.where(arr[:, 4] == -1, arr[:, 7], arr[:, 4])
        bad_rt = arr[:, 3] <= 0
        bad_pr = ~bad_rt & (procs <= 0)
        dropped["run_time<=0"] += int(bad_rt.sum())
        dropped["processors<=0"] += int(bad_pr.sum())
        ok = ~(bad_rt | bad_pr)
        for i, c in enumerate(FIELDS):
            values = arr[ok, i]
            parts[c].append(values if c in FLOAT_FIELDS else np.floor(values).astype(np.int64))
        parts["line"].append(data_lines[ok])
        parts["processors"].append(np.floor(procs[ok]).astype(np.int64))
    if not parts["all_line"]:
        raise SWFError(f"{p}: no job lines (the file is empty or has only comments)")
    columns: dict[str, np.ndarray] = {}
    for c in list(parts):  # a column at a time: one column's pieces are freed before the next
        pieces = parts.pop(c)
        columns[c] = np.concatenate(pieces) if len(pieces) > 1 else pieces[0]
        del pieces
    _check_job_numbers(p, columns.pop("all_job"), columns.pop("all_line"))
    return SWFTrace(
        path=str(p),
        header=header,
        columns=columns,
        dropped=dropped,
        lines=lines_read,
        malformed=malformed,
    )


def _block(
    p: Path,
    first: int,
    lines: list[str],
    header: dict[str, str],
    malformed: list[tuple[int, str]] | None,
) -> tuple[np.ndarray, np.ndarray] | None:
    """One block's data lines as an ``(n, 18)`` float array and their line numbers (``None``:
    no data line); its header comments go into ``header`` (a key keeps its first value).
    ``malformed`` (``skip_malformed``): a malformed line is listed there and left out
    instead of raising; the other lines keep their numbers."""
    comment = [ln.lstrip().startswith(";") for ln in lines]
    for key, value in parse_header([ln for ln, c in zip(lines, comment, strict=True) if c]).items():
        header.setdefault(key, value)
    data = [i for i, ln in enumerate(lines) if not comment[i] and ln.strip()]
    if malformed is not None:
        try:
            return _numbers(p, first, lines, data)
        except SWFError:
            pass
        kept = []
        for i in data:
            problem = _line_problem(str(p), first + i, lines[i])
            if problem is None:
                kept.append(i)
            else:
                malformed.append((first + i, problem))
        data = kept
    return _numbers(p, first, lines, data)


def _numbers(
    p: Path, first: int, lines: list[str], data: list[int]
) -> tuple[np.ndarray, np.ndarray] | None:
    """The checked numbers of the data lines ``data`` (indices into ``lines``, numbered from
    ``first``): an error names the first malformed line (file, line, field)."""
    if not data:
        return None
    data_lines = np.array(data, dtype=np.int64) + first
    longest = max(data, key=lambda i: len(lines[i]))
    if len(lines[longest]) > MAX_SWF_LINE:
        raise SWFError(
            f"{p}:{first + longest}: line of {len(lines[longest]):,} characters "
            f"(an SWF line has 18 numbers; limit {MAX_SWF_LINE})"
        )

    def locate() -> SWFError:
        for i in data:
            problem = _line_problem(str(p), first + i, lines[i])
            if problem is not None:
                return SWFError(problem)
        return SWFError(f"{p}: malformed SWF data")

    try:  # numpy's C reader: a wrong field count or a non-number is a ValueError
        arr = np.loadtxt(
            io.StringIO("\n".join(lines[i] for i in data)),
            dtype=np.float64,
            ndmin=2,
            comments=None,
        )
    except ValueError:
        raise locate() from None
    if arr.shape != (len(data), len(FIELDS)):
        raise locate()
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(arr) | (np.abs(arr) >= MAX_EXACT)
    if bad.any():
        i, f = np.argwhere(bad)[0]
        token = lines[data[i]].split()[f]
        raise SWFError(
            f"{p}:{data_lines[i]}: field {f + 1} ({FIELDS[f]}): {token!r} is "
            + ("not a finite number" if not np.isfinite(arr[i, f]) else "not below 2^53")
        )
    for col in _WHOLE:
        values = arr[:, FIELDS.index(col)]
        frac = np.flatnonzero(values != np.floor(values))
        if frac.size:
            i = frac[0]
            raise SWFError(
                f"{p}:{data_lines[i]}: field {FIELDS.index(col) + 1} ({col}): "
                f"{float(values[i])!r} is not a whole number"
            )
    neg = np.flatnonzero(arr[:, 1] < 0)
    if neg.size:
        i = neg[0]
        raise SWFError(f"{p}:{data_lines[i]}: field 2 (submit): negative submit time {arr[i, 1]:g}")
    return arr, data_lines


def write_swf(path: str | Path, jobs: pd.DataFrame, header: dict[str, str] | None = None) -> None:
    """Write jobs (columns named as in :data:`FIELDS`; missing ones become -1, a missing
    ``job`` column numbers the jobs 1, 2, ...) as SWF."""
    p = Path(path)
    cols = []
    for f in FIELDS:
        if f in jobs:
            cols.append(np.asarray(jobs[f]))
        elif f == "job":  # SWF numbers the jobs 1, 2, ...
            cols.append(np.arange(1, len(jobs) + 1))
        else:
            cols.append(np.full(len(jobs), -1))
    out = io.StringIO()
    for key, value in (header or {}).items():
        out.write(f"; {key}: {value}\n")
    mat = np.column_stack(cols) if cols else np.empty((0, len(FIELDS)))
    for row in mat:
        out.write(" ".join(_fmt(v) for v in row) + "\n")
    data = out.getvalue().encode()
    if p.suffix == ".gz":  # mtime 0 and no file name: same jobs, same bytes
        with p.open("wb") as raw, gzip.GzipFile(filename="", fileobj=raw, mode="wb", mtime=0) as fh:
            fh.write(data)
    else:
        p.write_bytes(data)


def _fmt(v: float) -> str:
    v = float(v)
    return str(int(v)) if v == int(v) else repr(v)


#: Exclusion reason of :func:`read_swf_recorded` for cancelled records without processors.
CANCELLED_UNALLOCATED = "cancelled before it started (status 5, field 5 = -1)"


def read_swf_recorded(path: str | Path, timezone: str | None = None, skip_malformed: bool = False):
    """An SWF log as a recorded schedule (:class:`~coopsched.workloads.recorded.RecordedLog`).

    The actual start is submit (field 2) + wait (field 3), the end start + run time
    (field 4); organizations may be formed from user (12), group (13), queue (15) or
    partition (16); SWF has no account. Times stay on the log's clock (seconds after
    ``UnixStartTime``, which becomes :attr:`RecordedLog.epoch`); the time zone is
    ``timezone`` or the header's ``TimeZoneString``. The platform size is ``MaxProcs``
    (or ``MaxNodes``). Exclusions are counted by reason, never silent: the reader's own
    (run time <= 0, processors <= 0), jobs whose wait is unknown (field 3 = -1), whose
    start cannot be known, and cancelled jobs (status 5) allocated no processors (field 5 =
    -1), which never ran (their requested processors, field 8, never held a machine). A
    log whose every wait is -1 is an error (it records no start). A wait below -1 (a start before the submit) is an error naming
    the line and field (with ``skip_malformed``, malformed records are left out, counted in
    ``excluded`` and the first listed in ``notes``).
    """
    import pandas as pd

    from .recorded import RecordedLog, check_timezone, note_malformed

    trace = read_swf(path, skip_malformed=skip_malformed)
    j = trace.jobs
    wait = j["wait"].to_numpy()
    bad = np.flatnonzero(wait < -1)
    found = list(trace.malformed)  # (line, message)
    for i in bad.tolist():
        message = (
            f"{trace.path}:{int(j['line'].iloc[i])}: field 3 (wait): {int(wait[i])} is "
            "negative (the job would start before its submit time)"
        )
        if not skip_malformed:
            raise SWFError(message)
        found.append((int(j["line"].iloc[i]), message))
    if bad.size:
        j = j.drop(index=j.index[bad])
        found.sort()
    wait = j["wait"].to_numpy()
    unknown = wait == -1
    if len(j) and unknown.all():
        raise SWFError(
            f"{trace.path}: field 3 (wait) is -1 for all {len(j):,} jobs: the log records no "
            "start times, and an audit compares when jobs actually started"
        )
    # a cancelled job (status 5) that was allocated no processors (field 5 = -1) never ran,
    # whatever its requested processors and run time say (docs/audit.md, logs as they are)
    never = ~unknown & (j["status"].to_numpy() == 5) & (j["alloc_procs"].to_numpy() == -1)
    excluded = {k: v for k, v in trace.dropped.items() if v}
    notes: list[str] = []
    note_malformed([m for _, m in found], excluded, notes)
    if unknown.any():
        excluded["wait unknown (field 3 = -1)"] = int(unknown.sum())
    if never.any():
        excluded[CANCELLED_UNALLOCATED] = int(never.sum())
    j = j.loc[~(unknown | never)]
    start = (j["submit"] + j["wait"]).to_numpy(dtype=np.int64)
    jobs = pd.DataFrame(
        {
            "job": j["job"].astype(str).to_numpy(),
            "submit": j["submit"].to_numpy(dtype=np.int64),
            "start": start,
            "end": start + j["run_time"].to_numpy(dtype=np.int64),
            "processors": j["processors"].to_numpy(dtype=np.int64),
            "requested": np.where(
                j["req_time"].to_numpy(dtype=np.int64) >= 1,
                j["req_time"].to_numpy(dtype=np.int64),
                -1,
            ),
            "cancelled": j["status"].to_numpy() == 5,
            "user": j["user"].astype(str).to_numpy(),
            "group": j["group"].astype(str).to_numpy(),
            "account": "",
            "partition": j["partition"].astype(str).to_numpy(),
            "queue": j["queue"].astype(str).to_numpy(),
            "line": j["line"].to_numpy(dtype=np.int64),
        }
    )
    tz = timezone or trace.header.get("TimeZoneString")
    if tz is not None:
        tz = check_timezone(tz, f"{trace.path}: time zone")
    return RecordedLog(
        path=trace.path,
        jobs=jobs,
        excluded=excluded,
        machines=trace.max_procs or trace.max_nodes,
        epoch=trace.unix_start_time,
        timezone=tz,
        source="swf",
        notes=notes,
    )
