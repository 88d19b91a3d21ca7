"""Recorded schedules from accounting logs: the common input of the audit.

A :class:`RecordedLog` is what a platform actually did: every job with its submit time, the
time it actually started (or ``-1`` if it never started), its end, its width and the names
an operator may group organizations by. Readers of concrete formats (SWF: start = submit +
wait; Slurm's ``sacct``: the ``Start`` column) return this one type, so the audit never
depends on where a log came from.

Times are integer seconds on one clock per log: seconds since the Unix epoch when the log
says when it started (SWF ``UnixStartTime``, sacct timestamps), otherwise seconds since the
log's own origin. ``epoch`` is the Unix time of ``0`` on that clock, or ``None`` if unknown.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd

#: Columns of :attr:`RecordedLog.jobs`, in order, with their meaning.
COLUMNS: dict[str, str] = {
    "job": "job id as the log writes it (str)",
    "submit": "submit time (int s)",
    "start": "actual start time (int s), -1 if the job never started",
    "end": "end time (int s), -1 if unknown or never started",
    "processors": "processors allocated (int >= 1)",
    "requested": "requested time (walltime) in s, -1 if the log has none (int)",
    "cancelled": "the log marks the job cancelled (bool; SWF status 5; False if unknown)",
    "user": "user name or id (str)",
    "group": "group name or id (str)",
    "account": "account (str; '' if the log has none)",
    "partition": "partition (str; '' if the log has none)",
    "queue": "queue (str; '' if the log has none)",
    "line": "line number in the source file (int), for error messages",
}

#: Exclusion reason for records a reader left out with ``skip_malformed=True``.
MALFORMED = "malformed record (skip_malformed)"
#: How many malformed records a log's note lists (the count covers all of them).
MALFORMED_LISTED = 5


def note_malformed(
    found: list[str],
    excluded: dict[str, int],
    notes: list[str],
    option: str = "--skip-malformed",
    count: int | None = None,
) -> None:
    """Count the malformed records ``found`` (one message each: file, line, field, reason)
    in ``excluded`` and list the first :data:`MALFORMED_LISTED` in ``notes``, which every
    output of the audit repeats. ``count``: how many there are when ``found`` holds only the
    first ones (a streaming reader keeps no more)."""
    total = len(found) if count is None else count
    if total:
        excluded[MALFORMED] = total
        notes.append(
            f"{total} malformed record(s) left out ({option}); first: "
            + "; ".join(found[:MALFORMED_LISTED])
        )


#: The grouping keys an operator may use as organizations (``--org-by``).
ORG_KEYS: tuple[str, ...] = ("user", "group", "account", "partition", "queue")


@dataclass
class LogWindow:
    """What a log read for one window (``read_sacct(..., window=(t0, t1))``) keeps of the
    records that cannot enter ``[t0, t1)``, so that the audit of that window gives what it
    gives on the whole log (:func:`coopsched.audit.window.window_instance`).

    ``jobs`` then holds every record that can enter the window (submitted before ``t1``,
    not ended by ``t0``, with a start and a run time > 0), and, of the others, the first
    :data:`REPRESENTED` of each combination of names (user, group, account, partition,
    queue), flagged ``outside``: organizations are formed, matched and checked over every
    record's names, and an error names the same first job. ``weight`` is how many records
    each row stands for (its combination's other records go on its first row), so that
    counts of jobs in messages are the whole log's. The others are counted: ``excluded``
    by the audit's reasons (``"started, end unknown"``, ``"never started (run time
    unknown)"``, ``"run time 0"``), and by processors (``width -> count``) those that ended
    by ``t0`` (``ended``) or were submitted at or after ``t1`` (``after``), so that the
    audit can count the ones wider than the platform it is given. ``submitted`` is the first
    and last submit time of every record (``None``: no record), so that a message about the
    whole log (an empty window) reads the same as on the whole log.
    """

    t0: int
    t1: int
    outside: np.ndarray
    weight: np.ndarray
    excluded: dict[str, int] = field(default_factory=dict)
    ended: dict[int, int] = field(default_factory=dict)
    after: dict[int, int] = field(default_factory=dict)
    submitted: tuple[int, int] | None = None


#: How many records of each combination of names a window's log keeps (:class:`LogWindow`):
#: enough for the first five unmatched jobs a mapping error lists.
REPRESENTED = 5


@dataclass
class RecordedLog:
    """A recorded schedule read from an accounting log.

    ``jobs`` has exactly the columns of :data:`COLUMNS`. ``excluded`` counts the jobs the
    reader left out, by reason (never silently); ``machines`` is the platform's processor
    count when the log states it; ``timezone`` is the IANA name the timestamps were read in.
    ``notes`` are caveats every output repeats, e.g. local times in a repeated
    daylight-saving hour that the record itself could not resolve (count and first line).
    """

    path: str
    jobs: pd.DataFrame
    excluded: dict[str, int] = field(default_factory=dict)
    machines: int | None = None
    epoch: int | None = None
    timezone: str | None = None
    source: str = "swf"
    notes: list[str] = field(default_factory=list)
    #: Set when the log was read for one window only (:class:`LogWindow`).
    window: LogWindow | None = None

    def __post_init__(self) -> None:
        if "requested" not in self.jobs.columns:  # optional: logs without walltimes
            self.jobs = self.jobs.assign(requested=-1)
        if "cancelled" not in self.jobs.columns:  # optional: logs without a status
            self.jobs = self.jobs.assign(cancelled=False)
        missing = [c for c in COLUMNS if c not in self.jobs.columns]
        if missing:
            raise ValueError(f"{self.path}: recorded log lacks column(s) {', '.join(missing)}")
        self.jobs = self.jobs[list(COLUMNS)].reset_index(drop=True)

    @property
    def n(self) -> int:
        """Number of jobs kept."""
        return len(self.jobs)

    @property
    def weight(self) -> np.ndarray:
        """How many log records each row of :attr:`jobs` stands for (1 unless the log was
        read for one window: :class:`LogWindow`)."""
        if self.window is not None:
            return self.window.weight
        return np.ones(len(self.jobs), dtype=np.int64)


def check_timezone(name: str, where: str = "time zone") -> str:
    """``name`` if it is a known IANA time zone (``zoneinfo``), else a one-line error."""
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    try:
        ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError):
        raise ValueError(
            f"{where}: unknown time zone {name!r} (expected e.g. Europe/Paris)"
        ) from None
    return name


def decode_utf8(
    data: bytes,
    path: str,
    error: type[Exception] = ValueError,
    first_line: int = 1,
    bom: bool = True,
) -> str:
    """``data`` as UTF-8 text (a byte-order mark dropped), or an error naming the line and the
    byte that is not UTF-8. Names are never decoded lossily: replacing undecodable bytes
    could merge two distinct user or account names into one organization.

    A part of a file (whole lines) is decoded with ``first_line``, the line it starts on
    (counted in ``\\n``), and ``bom=False`` when it does not start the file."""
    if bom and data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + first_line
        col = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        raise error(
            f"{path}:{line}: byte {data[exc.start]:#04x} at column {col} is not UTF-8; names "
            "are never guessed (two names could merge): convert the file first, e.g. "
            "iconv -f latin1 -t utf-8"
        ) from None
