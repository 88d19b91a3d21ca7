"""Reader for Slurm accounting output (``sacct -P``): a :class:`RecordedLog` for the audit.

The input is what ``sacct -a -X -P --format=JobID,User,Account,Group,Partition,Submit,Start,
End,AllocCPUS,State`` prints: a header line naming the columns, then one job per line, fields
separated by ``|``. The accepted variations and every rule below are documented in
``docs/formats.md`` (section "Slurm accounting (sacct)"):

* columns in any order, read from the header; other sacct columns are allowed and ignored;
  an unknown column or a missing required one is an error naming it;
* step lines (``123.batch``, ``123.extern``, ``123.0``: what sacct prints without ``-X``) are
  skipped and counted in :attr:`RecordedLog.excluded`;
* array tasks (``123_4``, pending ranges ``123_[5-9]``) and heterogeneous components
  (``123+1``) are jobs; their ids are kept as strings;
* a job that never started (Start ``Unknown``/``None``, state ``PENDING``, no allocated
  CPUs, or ``CANCELLED`` with Start = End, Slurm's record of a job cancelled while pending)
  is kept with start and end ``-1``; its processors are ``ReqCPUS`` when that column is
  present, else ``AllocCPUS`` (``0``);
* timestamps ``YYYY-MM-DDTHH:MM:SS`` are local times of the zone sacct ran in (``--timezone``,
  default the machine's zone), converted to Unix seconds (``epoch = 0``);
* a malformed line is a :class:`SacctError` naming the file, line and field; a job whose
  times contradict each other (end before start, start before submit) is excluded and
  counted, never silently kept.
"""

from __future__ import annotations

import itertools
import os
import re
import warnings
from collections.abc import Callable
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from coopsched.workloads.recorded import COLUMNS, RecordedLog, decode_utf8, note_malformed

#: Columns the reader needs.
REQUIRED: tuple[str, ...] = ("JobID", "User", "Submit", "Start", "End", "AllocCPUS")

#: Optional columns the reader uses when present.
USED: tuple[str, ...] = ("Account", "Group", "Partition", "State", "ReqCPUS", "Timelimit")

#: Every column ``sacct --helpformat`` lists (Slurm 22.05, plus the Planned* columns of later
#: versions); any of them may appear.
KNOWN: tuple[str, ...] = (
    "Account",
    "AdminComment",
    "AllocCPUS",
    "AllocNodes",
    "AllocTRES",
    "AssocID",
    "AveCPU",
    "AveCPUFreq",
    "AveDiskRead",
    "AveDiskWrite",
    "AvePages",
    "AveRSS",
    "AveVMSize",
    "BlockID",
    "Cluster",
    "Comment",
    "Constraints",
    "Container",
    "ConsumedEnergy",
    "ConsumedEnergyRaw",
    "CPUTime",
    "CPUTimeRAW",
    "DBIndex",
    "DerivedExitCode",
    "Elapsed",
    "ElapsedRaw",
    "Eligible",
    "End",
    "ExitCode",
    "Flags",
    "GID",
    "Group",
    "JobID",
    "JobIDRaw",
    "JobName",
    "Layout",
    "MaxDiskRead",
    "MaxDiskReadNode",
    "MaxDiskReadTask",
    "MaxDiskWrite",
    "MaxDiskWriteNode",
    "MaxDiskWriteTask",
    "MaxPages",
    "MaxPagesNode",
    "MaxPagesTask",
    "MaxRSS",
    "MaxRSSNode",
    "MaxRSSTask",
    "MaxVMSize",
    "MaxVMSizeNode",
    "MaxVMSizeTask",
    "McsLabel",
    "MinCPU",
    "MinCPUNode",
    "MinCPUTask",
    "NCPUS",
    "NNodes",
    "NodeList",
    "NTasks",
    "Partition",
    "Planned",
    "PlannedCPU",
    "PlannedCPURAW",
    "Priority",
    "QOS",
    "QOSRAW",
    "Reason",
    "ReqCPUFreq",
    "ReqCPUFreqGov",
    "ReqCPUFreqMax",
    "ReqCPUFreqMin",
    "ReqCPUS",
    "ReqMem",
    "ReqNodes",
    "ReqTRES",
    "Reservation",
    "ReservationId",
    "Reserved",
    "ResvCPU",
    "ResvCPURAW",
    "Start",
    "State",
    "Submit",
    "SubmitLine",
    "Suspended",
    "SystemComment",
    "SystemCPU",
    "Timelimit",
    "TimelimitRaw",
    "TotalCPU",
    "TRESUsageInAve",
    "TRESUsageInMax",
    "TRESUsageInMaxNode",
    "TRESUsageInMaxTask",
    "TRESUsageInMin",
    "TRESUsageInMinNode",
    "TRESUsageInMinTask",
    "TRESUsageInTot",
    "TRESUsageOutAve",
    "TRESUsageOutMax",
    "TRESUsageOutMaxNode",
    "TRESUsageOutMaxTask",
    "TRESUsageOutMin",
    "TRESUsageOutMinNode",
    "TRESUsageOutMinTask",
    "TRESUsageOutTot",
    "UID",
    "User",
    "UserCPU",
    "WCKey",
    "WCKeyID",
    "WorkDir",
)

#: Job states sacct prints (``CANCELLED`` may be followed by ``by <uid>``).
STATES: frozenset[str] = frozenset(
    [
        "BOOT_FAIL",
        "CANCELLED",
        "COMPLETED",
        "COMPLETING",
        "CONFIGURING",
        "DEADLINE",
        "FAILED",
        "NODE_FAIL",
        "OUT_OF_MEMORY",
        "PENDING",
        "PREEMPTED",
        "REQUEUED",
        "REQUEUE_FED",
        "REQUEUE_HOLD",
        "RESIZING",
        "REVOKED",
        "RUNNING",
        "SIGNALING",
        "SPECIAL_EXIT",
        "STAGE_OUT",
        "STOPPED",
        "SUSPENDED",
        "TIMEOUT",
    ]
)

#: Exclusion reason for step lines.
STEP_LINE = "job step line (sacct without -X)"
#: Exclusion reason for a record identical to an earlier one (a repeated line or capture).
DUPLICATE_LINE = "repeated record (identical to an earlier line)"
END_BEFORE_START = "end before start"
START_BEFORE_SUBMIT = "start before submit"

_CANONICAL = {name.lower(): name for name in KNOWN}
_JOBID_RE = re.compile(r"^(\d+)(?:_(?:\d+|\[[0-9,\-%]+\]))?(?:\+\d+)?(\.[A-Za-z0-9_]+)?$")
_TIME_PATTERN = r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}"
_TIME_RE = re.compile(f"^{_TIME_PATTERN}$")
_STATE_RE = re.compile(r"^([A-Z_]+)(?: by (\d+))?\+?$")
_NO_TIME = frozenset({"Unknown", "None", ""})


class SacctError(ValueError):
    """Malformed sacct input: the message names the file, the line and the field."""


class Problems:
    """Malformed records of one file: the first is a :class:`SacctError` (strict, the
    default), or, with ``skip``, every one is recorded (``rows``: row -> message) so that
    the reader leaves them out, counts them and lists the first ones.

    ``where(i)`` locates row ``i`` for a message: ``file:line`` for text, ``file: jobs[i]``
    for JSON. Line-level problems found before rows exist go to ``early`` (line, message).
    """

    def __init__(
        self,
        path: str,
        lines: np.ndarray,
        skip: bool,
        where: Callable[[int], str] | None = None,
        error: type[ValueError] = SacctError,
    ) -> None:
        self.path, self.lines, self.skip, self.error = path, lines, skip, error
        self.where = where or (lambda i: f"{path}:{lines[i]}")
        self.rows: dict[int, str] = {}
        self.early: list[tuple[int, str]] = []

    def flag(self, mask: np.ndarray, message: Callable[[int], str]) -> np.ndarray:
        """Rows of ``mask`` are malformed: raise for the first (strict) or record them all."""
        idx = np.flatnonzero(mask)
        if idx.size and not self.skip:
            i = int(idx[0])
            raise self.error(f"{self.where(i)}: {message(i)}")
        for i in idx.tolist():
            self.rows.setdefault(i, f"{self.where(i)}: {message(i)}")
        return mask

    def mask(self, n: int) -> np.ndarray:
        """The rows found malformed, as a mask of ``n`` rows."""
        out = np.zeros(n, dtype=bool)
        out[list(self.rows)] = True
        return out

    def messages(self) -> list[str]:
        """Every malformed record's message, in the file's order."""
        rows = sorted(self.rows.items(), key=lambda kv: int(self.lines[kv[0]]))
        return [m for _, m in sorted(self.early + [(int(self.lines[i]), m) for i, m in rows])]


def local_timezone() -> str:
    """The IANA name of this machine's time zone (``TZ``, ``/etc/timezone``, ``/etc/localtime``).

    Raises :class:`SacctError` when no name can be found, so that a caller states the zone
    (``--timezone``) instead of reading local times in a guessed one.
    """
    tz = os.environ.get("TZ", "").lstrip(":")
    if tz:
        return tz.split("zoneinfo/", 1)[-1]
    try:
        name = Path("/etc/timezone").read_text().strip()
        if name:
            return name
    except OSError:
        pass
    try:
        target = os.readlink("/etc/localtime")
    except OSError:
        target = ""
    if "zoneinfo/" in target:
        return target.split("zoneinfo/", 1)[1]
    raise SacctError("cannot tell this machine's time zone: give timezone= (an IANA name)")


def _zone(name: str) -> ZoneInfo:
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise SacctError(
            f"unknown time zone {name!r}: give an IANA name such as UTC or Europe/Warsaw"
        ) from None


def _header(path: str, lineno: int, line: str) -> tuple[list[str], bool]:
    """Canonical column names of a header line, and whether lines end with ``|`` (``-p``)."""
    names = line.split("|")
    trailing = len(names) > 1 and names[-1] == ""
    if trailing:
        names = names[:-1]
    columns: list[str] = []
    for i, raw in enumerate(names, start=1):
        name = _CANONICAL.get(raw.strip().lower())
        if name is None:
            raise SacctError(
                f"{path}:{lineno}: column {i}: unknown sacct column {raw!r} "
                f"(expected sacct --format names such as {', '.join(REQUIRED)})"
            )
        if name in columns:
            raise SacctError(f"{path}:{lineno}: column {i}: column {name} appears twice")
        columns.append(name)
    missing = [c for c in REQUIRED if c not in columns]
    if missing:
        raise SacctError(
            f"{path}:{lineno}: header lacks required column(s) {', '.join(missing)} "
            f"(run sacct -P --format={','.join(REQUIRED + USED)})"
        )
    return columns, trailing


def _first(mask: np.ndarray) -> int:
    """Index of the first true entry of a non-empty boolean mask."""
    return int(np.flatnonzero(mask)[0])


def _seconds(
    values: pd.Series,
    zone: ZoneInfo,
    lines: np.ndarray,
    path: str,
    column: str,
    allow_none: bool,
) -> np.ndarray:
    """Times as Unix seconds (-1 for none), local times in a repeated hour read as their
    first occurrence (:func:`_seconds_both` gives both readings)."""
    return _seconds_both(values, zone, Problems(path, lines, False), column, allow_none)[0]


def _seconds_both(
    values: pd.Series,
    zone: ZoneInfo,
    prob: Problems,
    column: str,
    allow_none: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Times as Unix seconds (-1 for none): local times ``YYYY-MM-DDTHH:MM:SS`` in ``zone``,
    or Unix seconds as ``SLURM_TIME_FORMAT=%s`` prints them (digits only).

    Returns two readings: with ``fold=0`` and ``fold=1`` (zoneinfo's two readings of a local
    time); they differ only for a local time in a repeated (or skipped) daylight-saving hour,
    which :func:`_resolve_folds` decides from the record's own order. Offsets are looked up
    once per distinct hour, and per value in the rare hours whose offset changes within the
    hour.
    """
    none = values.isin(_NO_TIME).to_numpy()
    if not allow_none:
        prob.flag(none, lambda i: f"field {column}: {values.iloc[i]!r} is not a time")
    epoch_s = values.str.fullmatch(r"[0-9]{1,16}").to_numpy(dtype=bool)
    shaped = values.str.fullmatch(_TIME_PATTERN).to_numpy(dtype=bool)
    bad = prob.flag(
        ~none & ~shaped & ~epoch_s,
        lambda i: (
            f"field {column}: {values.iloc[i]!r} is not a time "
            "YYYY-MM-DDTHH:MM:SS (sacct's default format) nor Unix seconds "
            "(SLURM_TIME_FORMAT=%s)"
        ),
    )
    local = shaped & ~none
    stamps = pd.to_datetime(
        values.where(local), format="%Y-%m-%dT%H:%M:%S", errors="coerce"
    ).to_numpy(dtype="datetime64[s]")
    nat = prob.flag(
        local & np.isnat(stamps), lambda i: f"field {column}: {values.iloc[i]!r} is not a date"
    )
    local &= ~nat
    naive = np.where(local, stamps.astype("int64"), 0)
    epoch = datetime(1970, 1, 1)

    def offset(second: int, fold: int = 0) -> int:
        when = (epoch + timedelta(seconds=second)).replace(tzinfo=zone, fold=fold)
        delta = when.utcoffset()
        if delta is None:  # a ZoneInfo always gives one; checked for the type checker
            raise SacctError(f"time zone {zone} gives no UTC offset")
        return int(delta.total_seconds())

    hours, where = np.unique(naive // 3600, return_inverse=True)
    where = where.reshape(-1)
    out = []
    for fold in (0, 1):
        first = np.array([offset(int(h) * 3600, fold) for h in hours], dtype=np.int64)
        last = np.array([offset(int(h) * 3600 + 3599, fold) for h in hours], dtype=np.int64)
        offsets = first[where]
        for i in np.flatnonzero((first != last)[where]).tolist():  # a change inside the hour
            offsets[i] = offset(int(naive[i]), fold)
        out.append(naive - offsets)
    digits = np.zeros(len(values), dtype=np.int64)
    big = np.zeros(len(values), dtype=bool)
    if epoch_s.any():
        digits[epoch_s] = values[epoch_s].astype("int64").to_numpy()
        big = prob.flag(
            epoch_s & (digits >= 2**53),
            lambda i: f"field {column}: {values.iloc[i]!r} is beyond 2^53 seconds",
        )
    unknown = none | bad | nat | big  # malformed (skipped) rows too
    return tuple(  # type: ignore[return-value]
        np.where(unknown, -1, np.where(epoch_s, digits, x)) for x in out
    )


def _resolve_folds(
    times: list[tuple[np.ndarray, np.ndarray]], lines: np.ndarray
) -> tuple[list[np.ndarray], int, int]:
    """Decide each local time of a repeated hour from its record's own order.

    ``times`` holds the two readings (:func:`_seconds_both`) of submit, start and end. For a
    record with a time whose readings differ, every combination of readings that keeps
    ``submit <= start <= end`` (none times, ``-1``, impose nothing) is consistent; a time is
    decided when all consistent combinations agree on it, otherwise its first occurrence is
    kept and the record is counted as unresolved. Returns the chosen times, the number of
    unresolved records and the line of the first one (0: none).
    """
    chosen = [a.copy() for a, _ in times]
    differ = np.zeros(len(lines), dtype=bool)
    for a, b in times:
        differ |= a != b
    unresolved = 0
    first_line = 0
    for i in np.flatnonzero(differ).tolist():
        options = [(int(a[i]), int(b[i])) for a, b in times]
        good = []
        for combo in itertools.product(*(sorted(set(o)) for o in options)):
            sub, st, en = combo
            if st >= 0 and sub > st:
                continue
            if st >= 0 and en >= 0 and st > en:
                continue
            good.append(combo)
        decided = True
        for f in range(3):
            values = {c[f] for c in good}
            if len(values) == 1:
                chosen[f][i] = values.pop()
            elif options[f][0] != options[f][1]:
                decided = False  # keep the first occurrence
        if not decided:
            unresolved += 1
            first_line = first_line or int(lines[i])
    return chosen, unresolved, first_line


_LIMIT_RE = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)$")
_NO_LIMIT = frozenset({"UNLIMITED", "Partition_Limit", "INVALID", ""})


def timelimit_seconds(value: str) -> int | None:
    """A sacct ``Timelimit`` (``[D-][HH:]MM:SS``) in seconds; ``-1`` for none
    (``UNLIMITED``, ``Partition_Limit``, empty); ``None`` if it is not a time limit."""
    if value in _NO_LIMIT:
        return -1
    m = _LIMIT_RE.match(value)
    if m is None:
        return None
    days, hours, minutes, seconds = (int(g) if g else 0 for g in m.groups())
    return ((days * 24 + hours) * 60 + minutes) * 60 + seconds


def _timelimits(values: pd.Series, prob: Problems) -> np.ndarray:
    """The ``Timelimit`` column in seconds (``-1``: none), or an error naming the line."""
    out = np.full(len(values), -1, dtype=np.int64)
    bad: dict[int, str] = {}
    for i, (v, secs) in enumerate((v, timelimit_seconds(v)) for v in values.tolist()):
        if secs is None:
            bad[i] = (
                f"field Timelimit: {v!r} is not a time limit "
                "([D-][HH:]MM:SS, UNLIMITED or Partition_Limit)"
            )
        elif secs >= 2**53:
            bad[i] = f"field Timelimit: {v!r} is beyond 2^53 s"
        else:
            out[i] = secs if secs > 0 else -1
    if bad:
        mask = np.zeros(len(values), dtype=bool)
        mask[list(bad)] = True
        prob.flag(mask, bad.__getitem__)
    return out


def _counts(values: pd.Series, prob: Problems, column: str) -> np.ndarray:
    """Whole numbers >= 0, or an error naming the first line that is not one (skipped
    records: 0)."""
    ok = values.str.fullmatch(r"[0-9]+").to_numpy(dtype=bool)
    prob.flag(~ok, lambda i: f"field {column}: {values.iloc[i]!r} is not a whole number >= 0")
    big = ok & (values.str.len() > 15).to_numpy(dtype=bool)  # 10^15 < 2^53: shorter are exact
    if big.any():
        for i in np.flatnonzero(big).tolist():
            if int(values.iloc[i]) < 2**53:
                big[i] = False
        prob.flag(big, lambda i: f"field {column}: {values.iloc[i]!r} is beyond 2^53")
    return values.where(pd.Series(ok & ~big, index=values.index), "0").astype("int64").to_numpy()


def _open(
    path: str | os.PathLike, timezone: str | None, machines: int | None
) -> tuple[str, str, ZoneInfo, str]:
    """The checked arguments of a reader and the file's text: path, zone name, zone, text."""
    path_s = str(path)
    zone_name = timezone or local_timezone()
    zone = _zone(zone_name)
    if machines is not None and machines < 1:
        raise SacctError(f"{path_s}: machines must be >= 1, got {machines}")
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        raise SacctError(f"{path_s}: cannot read: {exc.strerror or exc}") from None
    return path_s, zone_name, zone, decode_utf8(data, path_s, SacctError)


def read_sacct(
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


def _never(start: np.ndarray, end: np.ndarray, alloc: np.ndarray, state: np.ndarray) -> np.ndarray:
    """Jobs that never started. Slurm records a job cancelled while pending with Start = End
    = the cancel time."""
    return (
        (start < 0)
        | (alloc == 0)
        | (state == "PENDING")
        | ((state == "CANCELLED") & (start == end))
    )


def assemble(
    path_s: str,
    prob: Problems,
    names: dict[str, np.ndarray],
    submit: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    alloc: np.ndarray,
    state: np.ndarray,
    requested_cpus: np.ndarray | None,
    limits: np.ndarray,
    machines: int | None,
    excluded: dict[str, int],
    notes: list[str],
    zone_name: str,
    source: str,
    option: str,
) -> RecordedLog:
    """The rules of ``docs/formats.md`` (never started, widths, contradictory times,
    malformed records) applied to parsed sacct columns, whether from text or JSON.

    ``names`` holds the ``job``, ``user``, ``group``, ``account`` and ``partition`` columns;
    times are Unix seconds (-1: none); ``requested_cpus`` replaces ``alloc`` for jobs that
    never started when given; ``limits`` are time limits in seconds (-1: none).
    """
    n = len(submit)
    dropped = prob.mask(n)
    never = _never(start, end, alloc, state)
    processors = alloc.copy()
    if requested_cpus is not None:
        processors[never] = requested_cpus[never]
    start = np.where(never, -1, start)
    end = np.where(never, -1, end)
    if machines is not None and (wide := ~dropped & ~never & (processors > machines)).any():
        i = _first(wide)
        raise SacctError(
            f"{prob.where(i)}: field AllocCPUS: job {names['job'][i]} was allocated "
            f"{processors[i]} processors, more than the platform's {machines} (check machines=)"
        )
    end_first = ~dropped & ~never & (end >= 0) & (end < start)
    early = ~dropped & ~never & ~end_first & (start < submit)
    for reason, mask in ((END_BEFORE_START, end_first), (START_BEFORE_SUBMIT, early)):
        if mask.any():
            excluded[reason] = int(mask.sum())
    note_malformed(prob.messages(), excluded, notes, option)
    keep = ~(end_first | early | dropped)

    jobs = pd.DataFrame(
        {
            "job": names["job"][keep],
            "submit": submit[keep],
            "start": start[keep],
            "end": end[keep],
            "processors": processors[keep],
            "requested": limits[keep],
            "user": names["user"][keep],
            "group": names["group"][keep],
            "account": names["account"][keep],
            "partition": names["partition"][keep],
            "queue": np.full(int(keep.sum()), "", dtype=object),
            "line": prob.lines[keep],
        },
        columns=list(COLUMNS),
    )
    for c in ("submit", "start", "end", "processors", "requested", "line"):
        jobs[c] = jobs[c].astype("int64")
    for c in ("job", "user", "group", "account", "partition", "queue"):
        jobs[c] = jobs[c].astype(object)
    return RecordedLog(
        path=path_s,
        jobs=jobs,
        excluded=excluded,
        machines=machines,
        epoch=0,
        timezone=zone_name,
        source=source,
        notes=notes,
    )
