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

The file is read :data:`CHUNK_LINES` lines at a time (:func:`read_sacct`), keeping compact
columns only; with ``window=(t0, t1)`` only what an audit of that window needs
(:class:`~coopsched.workloads.recorded.LogWindow`), so that memory follows the window.
"""

from __future__ import annotations

import itertools
import os
import re
import warnings
from collections.abc import Callable, Iterator
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import pandas as pd

from coopsched.workloads.recorded import (
    COLUMNS,
    MALFORMED_LISTED,
    REPRESENTED,
    LogWindow,
    RecordedLog,
    decode_utf8,
    note_malformed,
)
from coopsched.workloads.textblocks import line_blocks

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


#: Lines parsed at a time: the reader's memory follows this many lines (and what it keeps),
#: not the file.
CHUNK_LINES = 10_000
#: Bytes read from the file at a time (whole lines are decoded and parsed).
BLOCK_BYTES = 4 << 20


def _text_blocks(path: str | os.PathLike, path_s: str) -> Iterator[tuple[int, list[str]]]:
    """The file's lines, a block at a time: ``(number of the block's first line, lines)``
    (:func:`~coopsched.workloads.textblocks.line_blocks`: a line longer than a megabyte is
    an error)."""
    try:
        fh = open(path, "rb")  # noqa: SIM115 (closed below; errors are the reader's)
    except OSError as exc:
        raise SacctError(f"{path_s}: cannot read: {exc.strerror or exc}") from None

    def read(n: int) -> bytes:
        try:
            return fh.read(n)
        except OSError as exc:
            raise SacctError(f"{path_s}: cannot read: {exc.strerror or exc}") from None

    def decode(data: bytes, line: int, first: bool) -> str:
        return decode_utf8(data, path_s, SacctError, line, bom=first)

    with fh:
        yield from line_blocks(read, decode, path_s, SacctError, block=BLOCK_BYTES)


class _Seen:
    """Every record kept so far as two 64-bit hashes (16 bytes a record): of its key (job id,
    submit, start) and of all its fields; in sorted runs, merged while they are small (a
    merge needs a few times a run's memory for a moment)."""

    #: Runs stop growing at this many records.
    RUN = 1 << 21

    def __init__(self) -> None:
        self.runs: list[tuple[np.ndarray, np.ndarray]] = []

    def add(self, keys: np.ndarray, records: np.ndarray) -> None:
        if not len(keys):
            return
        o = np.argsort(keys, kind="stable")
        self.runs.append((keys[o], records[o]))
        while (
            len(self.runs) > 1
            and len(self.runs[-2][0]) <= 2 * len(self.runs[-1][0])
            and len(self.runs[-2][0]) + len(self.runs[-1][0]) <= self.RUN
        ):
            (k1, r1), (k2, r2) = self.runs.pop(), self.runs.pop()
            k, r = np.concatenate([k2, k1]), np.concatenate([r2, r1])
            del k1, r1, k2, r2
            o = np.argsort(k, kind="stable")
            self.runs.append((k[o], r[o]))

    def find(self, keys: np.ndarray, records: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """For each record: an earlier one has its key hash and its record hash (a
        duplicate), or its key hash only (``check``: decided from the file itself)."""
        same = np.zeros(len(keys), dtype=bool)
        check = np.zeros(len(keys), dtype=bool)
        for k, r in self.runs:
            lo = np.searchsorted(k, keys, side="left")
            hit = np.flatnonzero(k[np.minimum(lo, len(k) - 1)] == keys)
            for i in hit.tolist():
                hi = int(np.searchsorted(k, keys[i], side="right"))
                if (r[lo[i] : hi] == records[i]).any():
                    same[i] = True
                else:
                    check[i] = True
        return same, check & ~same


class Repeats:
    """One run of one job is one record: the same key (job id, submit, start) twice is a
    repeated record (merged when the two agree, counted, warned about) or two captures that
    disagree (a :class:`SacctError` naming both); another start is another run of a requeued
    job (``sacct -D``), kept. Shared by the text and the JSON reader, which read records a
    chunk at a time: what was kept is remembered as hashes (:class:`_Seen`), and a key hash
    met again with another record hash is decided from the file itself (``earlier``).

    ``earlier(key, before)``: the first record with ``key`` at a place before ``before``
    (``(place, record)``), read again from the file, or ``None``. ``where(place)`` locates a
    record in a message (``file:12``, ``file: jobs[3] (job 4)``), ``at(place)`` refers to
    one in a sentence (``line 12``, ``jobs[3]``).
    """

    def __init__(
        self,
        earlier: Callable[[tuple, int], tuple[int, tuple] | None],
        where: Callable[[int], str],
        at: Callable[[int], str],
    ) -> None:
        self.earlier, self.where, self.at = earlier, where, at
        self.seen = _Seen()
        self.count = 0
        self.first: int | None = None

    def disagree(self, place: int, key: tuple, earlier: int) -> SacctError:
        """The error for the record at ``place`` whose ``key`` is also at ``earlier`` with
        other fields."""
        return SacctError(
            f"{self.where(place)}: job {key[0]} (submitted {key[1]}, started {key[2]}) is "
            f"also on {self.at(earlier)} with other fields: two captures disagree; keep one "
            "of them"
        )

    def keep(self, keys: list[tuple], records: list[tuple], places: list[int]) -> np.ndarray:
        """Which of one chunk's records to keep (the mask); raises for the first pair that
        disagrees, in the order of ``places``."""
        key_h = np.fromiter((hash(k) for k in keys), dtype=np.int64, count=len(keys))
        rec_h = np.fromiter((hash(r) for r in records), dtype=np.int64, count=len(keys))
        same, check = self.seen.find(key_h, rec_h)
        local: dict[tuple, int] = {}
        kept = np.ones(len(keys), dtype=bool)
        for i, key in enumerate(keys):
            repeat = bool(same[i])
            if check[i]:
                earlier = self.earlier(key, places[0])
                if earlier is not None:
                    if earlier[1] != records[i]:
                        raise self.disagree(places[i], key, earlier[0])
                    repeat = True
            if not repeat and key in local:
                j = local[key]
                if records[j] != records[i]:
                    raise self.disagree(places[i], key, places[j])
                repeat = True
            if repeat:
                kept[i] = False
                self.count += 1
                if self.first is None:
                    self.first = places[i]
                continue
            local[key] = i
        self.seen.add(key_h[kept], rec_h[kept])
        return kept

    def note(self, path_s: str, excluded: dict[str, int]) -> None:
        """Count the repeated records in ``excluded`` and warn, once."""
        if self.count:
            excluded[DUPLICATE_LINE] = self.count
            assert self.first is not None
            warnings.warn(
                f"{path_s}: {self.count} record(s) repeat an earlier one exactly (first: "
                f"{self.at(self.first)}); each job run is counted once",
                stacklevel=3,
            )


class _Lines:
    """Phase 1 of the reader: the layout of the lines (header, fields, job ids, steps,
    repeated records), a chunk at a time, with what it must remember between chunks."""

    def __init__(self, path: str | os.PathLike, path_s: str, skip: bool) -> None:
        self.path, self.path_s, self.skip = path, path_s, skip
        self.columns: list[str] | None = None
        self.trailing = False
        self.header_line = ""
        self.i_job = self.i_submit = self.i_start = 0
        self.steps = 0
        self.repeats = Repeats(self._earlier, lambda n: f"{path_s}:{n}", "line {}".format)

    def _split(self, lineno: int, line: str) -> tuple[str, list[str] | None, str | None]:
        """One line: ``("skip", None, None)``, ``("bad", None, message)``, ``("step", ...)``
        or ``("job", fields, None)``."""
        if not line.strip():
            return "skip", None, None
        if self.columns is None:
            self.columns, self.trailing = _header(self.path_s, lineno, line)
            self.header_line = line
            self.i_job = self.columns.index("JobID")
            self.i_submit = self.columns.index("Submit")
            self.i_start = self.columns.index("Start")
            return "skip", None, None
        if line == self.header_line:  # concatenated sacct outputs repeat the header
            return "skip", None, None
        fields = line.split("|")
        if self.trailing:
            if fields[-1] != "":
                return "bad", None, "line does not end with '|' like the header (sacct -p)"
            fields.pop()
        if len(fields) != len(self.columns):
            return (
                "bad",
                None,
                f"{len(fields)} fields, the header has {len(self.columns)} "
                "(a '|' inside a field? leave free-text columns such as JobName out)",
            )
        job = fields[self.i_job].strip()
        m = _JOBID_RE.match(job)
        if m is None:
            return "bad", None, f"field JobID: {job!r} is not a Slurm job id"
        if m.group(2) is not None:
            return "step", None, None
        return "job", fields, None

    def _key(self, fields: list[str]) -> tuple[str, str, str]:
        return (
            fields[self.i_job].strip(),
            fields[self.i_submit].strip(),
            fields[self.i_start].strip(),
        )

    def _earlier(self, key: tuple, before: int) -> tuple[int, tuple] | None:
        """The first record with ``key`` on a line before ``before``, read again from the file
        (its key hash matched: a disagreement, or two keys with one hash)."""
        again = _Lines(self.path, self.path_s, skip=True)
        for first, lines in _text_blocks(self.path, self.path_s):
            for lineno, line in enumerate(lines, start=first):
                if lineno >= before:
                    return None
                kind, fields, _ = again._split(lineno, line)
                if kind == "job" and fields is not None and again._key(fields) == key:
                    return lineno, tuple(map(str.strip, fields))
        return None

    def chunk(
        self, first: int, lines: list[str], early: list[tuple[int, str]]
    ) -> tuple[list[list[str]], list[int]]:
        """The job records of ``lines`` (numbered from ``first``) that are not repeats of
        earlier ones, and their line numbers; malformed lines go to ``early`` (with
        ``skip``) or raise, in the order of the lines."""
        records: list[list[str]] = []
        numbers: list[int] = []
        stop: SacctError | None = None
        for lineno, line in enumerate(lines, start=first):
            kind, fields, message = self._split(lineno, line)
            if kind == "bad":
                text = f"{self.path_s}:{lineno}: {message}"
                if not self.skip:
                    stop = SacctError(text)
                    break
                early.append((lineno, text))
            elif kind == "step":
                self.steps += 1
            elif kind == "job" and fields is not None:
                records.append(fields)
                numbers.append(lineno)
        # every record precedes the malformed line that stopped the loop, if any: a pair
        # that disagrees among them is the first problem in the order of the lines
        kept = self.repeats.keep(
            [self._key(f) for f in records], [tuple(map(str.strip, f)) for f in records], numbers
        )
        if stop is not None:
            raise stop
        idx = np.flatnonzero(kept).tolist()
        return [records[i] for i in idx], [numbers[i] for i in idx]


def _fields(
    columns: list[str], kept: list[list[str]], zone: ZoneInfo, prob: Problems
) -> tuple[dict[str, np.ndarray], tuple[int, int]]:
    """Phase 2 of the reader on one chunk's records, column by column: the arrays
    :func:`_rules` takes, and the records with an undecided repeated hour (count, first
    line)."""
    raw = pd.DataFrame(kept, columns=columns, dtype=object)
    for c in raw.columns:
        if c in REQUIRED or c in USED:
            raw[c] = raw[c].astype(object).str.strip()
    n = len(raw)

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
        prob.lines,
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
    out: dict[str, np.ndarray] = {
        "job": raw["JobID"].to_numpy(dtype=object),
        "user": column("User").to_numpy(dtype=object),
        "group": column("Group").to_numpy(dtype=object),
        "account": column("Account").to_numpy(dtype=object),
        "partition": column("Partition").to_numpy(dtype=object),
        "submit": submit,
        "start": start,
        "end": end,
        "alloc": alloc,
        "state": state,
        "limits": limits,
    }
    if requested_cpus is not None:
        out["requested_cpus"] = requested_cpus
    return out, (unresolved, unresolved_line)


#: Name columns of a recorded log (interned: one string object per distinct name).
_NAMES = ("user", "group", "account", "partition")


class _Window:
    """What a log read for the window ``[t0, t1)`` keeps (:class:`LogWindow`)."""

    def __init__(self, t0: int, t1: int) -> None:
        self.t0, self.t1 = int(t0), int(t1)
        self.excluded = {
            "started, end unknown": 0,
            "never started (run time unknown)": 0,
            "run time 0": 0,
        }
        self.ended: dict[int, int] = {}
        self.after: dict[int, int] = {}
        self.combos: dict[tuple, list[int]] = {}  # names -> [records, rows kept, code]
        self.submitted: tuple[int, int] | None = None  # every record's first and last submit

    def select(self, cols: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """Rows of one chunk to keep (in order) and, per kept row, the code of its names'
        combination when it stands for records outside the window (-1: in the window)."""
        submit, start, end = cols["submit"], cols["start"], cols["end"]
        if len(submit):
            lo, hi = int(submit.min()), int(submit.max())
            if self.submitted is not None:
                lo, hi = min(lo, self.submitted[0]), max(hi, self.submitted[1])
            self.submitted = (lo, hi)
        started = start >= 0
        c1 = started & (end < 0)
        c2 = ~started
        c3 = started & (end == start)
        inside = ~(c1 | c2 | c3) & (submit < self.t1) & ((submit >= self.t0) | (end > self.t0))
        for reason, mask in zip(self.excluded, (c1, c2, c3), strict=True):
            self.excluded[reason] += int(mask.sum())
        rest = ~(c1 | c2 | c3 | inside)
        width = cols["processors"]
        for counts, mask in (
            (self.ended, rest & (submit < self.t0)),
            (self.after, rest & (submit >= self.t1)),
        ):
            values, n = np.unique(width[mask], return_counts=True)
            for w, c in zip(values.tolist(), n.tolist(), strict=True):
                counts[w] = counts.get(w, 0) + c
        code = np.full(len(submit), -1, dtype=np.int64)
        take = inside.copy()
        out = np.flatnonzero(~inside)
        names = zip(*(cols[c][out].tolist() for c in _NAMES), strict=True)
        for i, combo in zip(out.tolist(), names, strict=True):
            seen = self.combos.get(combo)
            if seen is None:
                seen = self.combos[combo] = [0, 0, len(self.combos)]
            seen[0] += 1
            if seen[1] < REPRESENTED:
                seen[1] += 1
                take[i] = True
                code[i] = seen[2]
        rows = np.flatnonzero(take)
        return rows, code[rows]

    def result(self, code: np.ndarray) -> LogWindow:
        outside = code >= 0
        weight = np.ones(len(code), dtype=np.int64)
        if outside.any():
            codes, first = np.unique(code[outside], return_index=True)
            rows = np.flatnonzero(outside)[first]
            extra = {seen[2]: seen[0] - seen[1] for seen in self.combos.values()}
            weight[rows] += np.array([extra[int(c)] for c in codes], dtype=np.int64)
        return LogWindow(
            self.t0,
            self.t1,
            outside,
            weight,
            {k: v for k, v in self.excluded.items() if v},
            dict(sorted(self.ended.items())),
            dict(sorted(self.after.items())),
            self.submitted,
        )


def read_sacct(
    path: str | os.PathLike,
    timezone: str | None = None,
    machines: int | None = None,
    skip_malformed: bool = False,
    window: tuple[int, int] | None = None,
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

    The file is read :data:`CHUNK_LINES` lines at a time and only compact columns are kept
    (names interned), so memory follows the jobs kept, not the text. ``window``: ``(t0,
    t1)`` in Unix seconds: keep only what an audit of that window needs
    (:class:`~coopsched.workloads.recorded.LogWindow`; every line is still checked), so that
    memory follows the window and its backlog. A file with several malformed records
    names the first in the order of the checks within the first chunk that has one.
    """
    path_s, zone_name, zone = _arguments(path, timezone, machines)
    phase1 = _Lines(path, path_s, skip_malformed)
    out = Collect(path_s, machines, window)
    unresolved, unresolved_line = 0, 0
    for first, block in _text_blocks(path, path_s):
        for at in range(0, len(block), CHUNK_LINES):
            lines = block[at : at + CHUNK_LINES]
            early: list[tuple[int, str]] = []
            kept, numbers = phase1.chunk(first + at, lines, early)
            assert phase1.columns is not None or not kept
            prob = Problems(path_s, np.asarray(numbers, dtype=np.int64), skip_malformed)
            prob.early = early
            cols = None
            if kept:
                assert phase1.columns is not None
                cols, (u, u_line) = _fields(phase1.columns, kept, zone, prob)
                del kept
                unresolved += u
                unresolved_line = unresolved_line or u_line
            out.add(prob, cols)
    if phase1.columns is None:
        raise SacctError(f"{path_s}: empty file: expected a sacct -P header line")
    excluded: dict[str, int] = {STEP_LINE: phase1.steps} if phase1.steps else {}
    phase1.repeats.note(path_s, excluded)
    notes = []
    if unresolved:
        notes.append(
            f"{unresolved} job(s) with a local time in a repeated daylight-saving hour that "
            f"their own order does not decide (first: {path_s}:{unresolved_line}); read as the "
            "first occurrence. Export with SLURM_TIME_FORMAT=%s to avoid the question"
        )
    return out.log(excluded, notes, zone_name, "sacct", "--skip-malformed")


def _arguments(
    path: str | os.PathLike, timezone: str | None, machines: int | None
) -> tuple[str, str, ZoneInfo]:
    """The checked arguments of a reader: the path as text, the zone's name and the zone."""
    path_s = str(path)
    zone_name = timezone or local_timezone()
    zone = _zone(zone_name)
    if machines is not None and (
        isinstance(machines, bool) or not isinstance(machines, int | np.integer) or machines < 1
    ):
        raise SacctError(f"{path_s}: machines must be an integer >= 1, got {machines!r}")
    return path_s, zone_name, zone


class Collect:
    """What a reader keeps of a log, a chunk of parsed records at a time (text or JSON):
    the rules of ``docs/formats.md`` (:func:`_rules`), the window's selection
    (:class:`_Window`), names interned (one string object per distinct name), and the
    malformed records counted and the first listed."""

    def __init__(self, path_s: str, machines: int | None, window: tuple[int, int] | None) -> None:
        self.path_s, self.machines = path_s, machines
        self.win = None if window is None else _Window(*window)
        self.interned: dict[str, dict[str, str]] = {c: {} for c in _NAMES}
        self.parts: dict[str, list[np.ndarray]] = {c: [] for c in (*COLUMNS, "code")}
        self.order_excluded = {END_BEFORE_START: 0, START_BEFORE_SUBMIT: 0}
        self.malformed_count = 0
        self.malformed_first: list[str] = []

    def add(self, prob: Problems, cols: dict[str, np.ndarray] | None) -> None:
        """One chunk: ``cols`` as :func:`_rules` takes them (``None``: no record kept),
        ``prob`` its malformed records."""
        if cols is not None:
            chunk_excluded: dict[str, int] = {}
            rows = _rules(prob, cols, self.machines, chunk_excluded)
            for reason, count in chunk_excluded.items():
                self.order_excluded[reason] += count
            if self.win is not None:
                take, code = self.win.select(rows)
            else:
                take = np.arange(len(rows["submit"]))
                code = np.full(len(take), -1, dtype=np.int64)
            for c in _NAMES:
                table = self.interned[c]
                rows[c] = np.array(
                    [table.setdefault(v, v) for v in rows[c][take].tolist()], dtype=object
                )
            for c in COLUMNS:
                if c in _NAMES:
                    self.parts[c].append(rows[c])
                elif c == "queue":
                    self.parts[c].append(np.full(len(take), "", dtype=object))
                else:
                    self.parts[c].append(rows[c][take])
            self.parts["code"].append(code)
        found = prob.messages()
        self.malformed_count += len(found)
        self.malformed_first.extend(found[: MALFORMED_LISTED - len(self.malformed_first)])

    def log(
        self, excluded: dict[str, int], notes: list[str], zone_name: str, source: str, option: str
    ) -> RecordedLog:
        """The recorded log of every chunk added; ``excluded`` and ``notes`` are the reader's
        own (the rules' exclusions and the malformed records are added after them)."""
        for reason, count in self.order_excluded.items():
            if count:
                excluded[reason] = count
        note_malformed(self.malformed_first, excluded, notes, option, count=self.malformed_count)
        empty = {c: np.empty(0, dtype=object if c in _TEXT else np.int64) for c in self.parts}
        data = {c: np.concatenate(v) if v else empty[c] for c, v in self.parts.items()}
        self.parts.clear()
        code = data.pop("code")
        return _recorded_log(
            self.path_s,
            data,
            excluded,
            self.machines,
            zone_name,
            source,
            notes,
            window=None if self.win is None else self.win.result(code),
        )


#: Text columns of a recorded log.
_TEXT = ("job", "user", "group", "account", "partition", "queue")


def _recorded_log(
    path_s: str,
    columns: dict[str, np.ndarray],
    excluded: dict[str, int],
    machines: int | None,
    zone_name: str,
    source: str,
    notes: list[str],
    window: LogWindow | None = None,
) -> RecordedLog:
    """The recorded log of a sacct export from its kept jobs' ``columns`` (those of
    :data:`~coopsched.workloads.recorded.COLUMNS`: text in :data:`_TEXT`, the rest int64),
    times in Unix seconds."""
    jobs = pd.DataFrame(columns, columns=list(COLUMNS))
    for c in COLUMNS:
        jobs[c] = jobs[c].astype(object if c in _TEXT else bool if c == "cancelled" else "int64")
    return RecordedLog(
        path=path_s,
        jobs=jobs,
        excluded=excluded,
        machines=machines,
        epoch=0,
        timezone=zone_name,
        source=source,
        notes=notes,
        window=window,
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


def _rules(
    prob: Problems,
    cols: dict[str, np.ndarray],
    machines: int | None,
    excluded: dict[str, int],
) -> dict[str, np.ndarray]:
    """The rules of ``docs/formats.md`` (never started, widths, contradictory times,
    malformed records) on parsed sacct columns: the rows kept, as the log's columns (no
    ``queue``). ``cols`` holds ``job``, ``user``, ``group``, ``account``, ``partition``,
    times (Unix seconds, -1: none) ``submit``, ``start``, ``end``, ``alloc``, ``state``,
    ``limits`` (seconds, -1: none) and, when it replaces ``alloc`` for jobs that never
    started, ``requested_cpus``; the contradictory times excluded are counted in
    ``excluded``."""
    submit, start, end = cols["submit"], cols["start"], cols["end"]
    alloc, state, requested_cpus = cols["alloc"], cols["state"], cols.get("requested_cpus")
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
            f"{prob.where(i)}: field AllocCPUS: job {cols['job'][i]} was allocated "
            f"{processors[i]} processors, more than the platform's {machines} (check machines=)"
        )
    end_first = ~dropped & ~never & (end >= 0) & (end < start)
    early = ~dropped & ~never & ~end_first & (start < submit)
    for reason, mask in ((END_BEFORE_START, end_first), (START_BEFORE_SUBMIT, early)):
        if mask.any():
            excluded[reason] = int(mask.sum())
    keep = ~(end_first | early | dropped)
    return {
        "job": cols["job"][keep],
        "submit": submit[keep],
        "start": start[keep],
        "end": end[keep],
        "processors": processors[keep],
        "requested": cols["limits"][keep],
        "cancelled": (state == "CANCELLED")[keep],
        "user": cols["user"][keep],
        "group": cols["group"][keep],
        "account": cols["account"][keep],
        "partition": cols["partition"][keep],
        "line": prob.lines[keep],
    }


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
    cols = dict(names)
    cols.update(submit=submit, start=start, end=end, alloc=alloc, state=state, limits=limits)
    if requested_cpus is not None:
        cols["requested_cpus"] = requested_cpus
    rows = _rules(prob, cols, machines, excluded)
    note_malformed(prob.messages(), excluded, notes, option)
    rows["queue"] = np.full(len(rows["submit"]), "", dtype=object)
    return _recorded_log(path_s, rows, excluded, machines, zone_name, source, notes)
