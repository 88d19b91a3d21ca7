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

import os
import re
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd

from coopsched.workloads.recorded import COLUMNS, RecordedLog

#: Columns the reader needs.
REQUIRED: tuple[str, ...] = ("JobID", "User", "Submit", "Start", "End", "AllocCPUS")

#: Optional columns the reader uses when present.
USED: tuple[str, ...] = ("Account", "Group", "Partition", "State", "ReqCPUS")

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
END_BEFORE_START = "end before start"
START_BEFORE_SUBMIT = "start before submit"

_CANONICAL = {name.lower(): name for name in KNOWN}
_JOBID_RE = re.compile(r"^(\d+)(?:_(?:\d+|\[[0-9,\-%]+\]))?(?:\+\d+)?(\.[A-Za-z0-9_]+)?$")
_TIME_RE = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}$")
_STATE_RE = re.compile(r"^([A-Z_]+)(?: by (\d+))?\+?$")
_NO_TIME = frozenset({"Unknown", "None", ""})


class SacctError(ValueError):
    """Malformed sacct input: the message names the file, the line and the field."""


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
    raise SacctError("cannot tell this machine's time zone: give --timezone (an IANA name)")


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


def read_sacct(
    path: str | os.PathLike, timezone: str | None = None, machines: int | None = None
) -> RecordedLog:
    """Read ``sacct -P`` output into a :class:`RecordedLog` (``docs/formats.md``, sacct).

    ``timezone`` is the IANA zone sacct printed its local times in (default: this machine's,
    :func:`local_timezone`); the result states it. ``machines``, when given, is the
    platform's processor count: a job allocated more is an error (the count is wrong).
    """
    path_s = str(path)
    zone_name = timezone or local_timezone()
    zone = _zone(zone_name)
    if machines is not None and machines < 1:
        raise SacctError(f"{path_s}: machines must be >= 1, got {machines}")
    try:
        text = Path(path).read_bytes().decode("utf-8", errors="replace")
    except OSError as exc:
        raise SacctError(f"{path_s}: cannot read: {exc.strerror or exc}") from None

    cache: dict[str, int] = {}

    def seconds(value: str, lineno: int, column: str, allow_none: bool) -> int:
        if value in _NO_TIME:
            if allow_none:
                return -1
            raise SacctError(f"{path_s}:{lineno}: field {column}: {value!r} is not a time")
        got = cache.get(value)
        if got is None:
            if not _TIME_RE.match(value):
                raise SacctError(
                    f"{path_s}:{lineno}: field {column}: {value!r} is not a time "
                    "YYYY-MM-DDTHH:MM:SS (sacct's default format; unset SLURM_TIME_FORMAT)"
                )
            try:
                local = datetime.fromisoformat(value).replace(tzinfo=zone)
            except ValueError as exc:
                raise SacctError(f"{path_s}:{lineno}: field {column}: {value!r}: {exc}") from None
            got = cache[value] = int(local.timestamp())
        return got

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
        submit = seconds(get("Submit"), lineno, "Submit", allow_none=False)
        start = seconds(get("Start"), lineno, "Start", allow_none=True)
        end = seconds(get("End"), lineno, "End", allow_none=True)
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
        rows.append(
            (
                job,
                submit,
                start,
                end,
                processors,
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
    for c in ("submit", "start", "end", "processors", "line"):
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
        source="sacct",
    )
