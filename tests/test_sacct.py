"""The sacct reader on output captured from a real Slurm, and on bad input (issue #14, 1 and 8).

The fixtures in ``tests/fixtures/slurm/`` were made by ``scripts/slurm/capture.sh`` on a
one-host Slurm 22.05 cluster (``CAPTURE.txt`` says how); these tests need no Slurm.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sacct_reference import reference_read_sacct

from coopsched.workloads.recorded import COLUMNS, RecordedLog
from coopsched.workloads.sacct import (
    DUPLICATE_LINE,
    END_BEFORE_START,
    START_BEFORE_SUBMIT,
    STEP_LINE,
    SacctError,
    local_timezone,
    read_sacct,
)

FIXTURES = Path(__file__).parent / "fixtures" / "slurm"
X_UTC = FIXTURES / "sacct_X_utc.txt"
X_WARSAW = FIXTURES / "sacct_X_warsaw.txt"
STEPS_UTC = FIXTURES / "sacct_steps_utc.txt"
EXTRA_UTC = FIXTURES / "sacct_X_extra_utc.txt"
RUN2_UTC = FIXTURES / "sacct_X_utc_run2.txt"
HEADER = "JobID|User|Account|Group|Partition|Submit|Start|End|AllocCPUS|State"


def raw_rows(path: Path) -> list[dict[str, str]]:
    """The fixture's lines as dicts, by a plain split (an independent reading)."""
    lines = path.read_text().splitlines()
    names = lines[0].split("|")
    return [dict(zip(names, line.split("|"), strict=True)) for line in lines[1:] if line]


def never_started(raw: dict[str, str]) -> bool:
    """Independent statement of the rule in docs/formats.md."""
    cancelled_pending = raw["State"].startswith("CANCELLED") and raw["Start"] == raw["End"]
    return raw["Start"] in ("Unknown", "None") or raw["State"] == "PENDING" or cancelled_pending


def utc(stamp: str) -> int:
    return int(datetime.fromisoformat(stamp).replace(tzinfo=UTC).timestamp())


# --- the real fixtures -----------------------------------------------------------------------


def test_fixture_jobs_match_the_raw_lines():
    log = read_sacct(X_UTC, timezone="UTC")
    assert isinstance(log, RecordedLog)
    assert list(log.jobs.columns) == list(COLUMNS)
    assert (log.source, log.epoch, log.timezone, log.excluded) == ("sacct", 0, "UTC", {})
    rows = raw_rows(X_UTC)
    assert log.n == len(rows)
    for (_, job), raw in zip(log.jobs.iterrows(), rows, strict=True):
        assert job["job"] == raw["JobID"]
        assert (job["user"], job["account"], job["group"], job["partition"], job["queue"]) == (
            raw["User"],
            raw["Account"],
            raw["Group"],
            raw["Partition"],
            "",
        )
        assert job["submit"] == utc(raw["Submit"])
        if never_started(raw):
            assert job["start"] == job["end"] == -1
        else:
            assert job["start"] == utc(raw["Start"])
            assert job["end"] == (-1 if raw["End"] == "Unknown" else utc(raw["End"]))
            assert job["processors"] == int(raw["AllocCPUS"]) >= 1
    assert list(log.jobs["line"]) == list(range(2, len(rows) + 2))


def test_fixture_covers_every_case_the_reader_handles():
    log = read_sacct(X_UTC, timezone="UTC")
    jobs = log.jobs
    states = [r["State"] for r in raw_rows(X_UTC)]
    assert {"physics", "chemistry", "biology", "astro"} <= set(jobs["account"])
    assert {"batch", "short"} <= set(jobs["partition"])
    # array tasks keep their ids as strings
    tasks = [j for j in jobs["job"] if "_" in j]
    assert len(tasks) >= 4 and all(isinstance(j, str) for j in jobs["job"])
    # parallel jobs, cancelled jobs (CANCELLED by <uid>), a failed job, running and pending
    started = jobs[jobs["start"] >= 0]
    assert (started["processors"] == 2).sum() >= 2
    assert any(s.startswith("CANCELLED by ") for s in states)
    assert "FAILED" in states and "RUNNING" in states and "PENDING" in states
    never = jobs[jobs["start"] == -1]
    assert len(never) == sum(never_started(r) for r in raw_rows(X_UTC)) >= 3
    # captured: one job cancelled while pending (Start = End), one cancelled while running
    cancelled = [r for r in raw_rows(X_UTC) if r["State"].startswith("CANCELLED by ")]
    assert any(never_started(r) for r in cancelled)
    ran = [r["JobID"] for r in cancelled if not never_started(r)]
    assert ran and set(ran) <= set(started["job"])
    # a pending array range is one job
    assert any(j.endswith("]") and "_[" in j for j in never["job"])
    running = started[started["end"] == -1]
    assert len(running) == states.count("RUNNING") >= 1
    done = started[started["end"] >= 0]
    assert (done["end"] >= done["start"]).all() and (started["start"] >= started["submit"]).all()


def test_two_runs_of_the_capture_agree_on_what_ran():
    # Slurm wrote the job cancelled while pending as Start=End in one run, Start=None in
    # the other: both are read as never started
    one, two = read_sacct(X_UTC, timezone="UTC"), read_sacct(RUN2_UTC, timezone="UTC")
    starts = {r["Start"] for r in raw_rows(RUN2_UTC) if r["JobID"] == "7"}
    assert starts == {"None"}
    assert list(one.jobs["job"]) == list(two.jobs["job"])
    assert list(one.jobs["start"] == -1) == list(two.jobs["start"] == -1)
    assert list(one.jobs["end"] == -1) == list(two.jobs["end"] == -1)
    assert list(one.jobs["processors"]) == list(two.jobs["processors"])


def test_steps_listing_gives_the_same_jobs_and_counts_the_steps():
    x = read_sacct(X_UTC, timezone="UTC")
    steps = read_sacct(STEPS_UTC, timezone="UTC")
    raw = raw_rows(STEPS_UTC)
    n_steps = sum("." in r["JobID"] for r in raw)
    assert n_steps > 0
    assert steps.excluded == {STEP_LINE: n_steps}
    cols = [c for c in COLUMNS if c != "line"]
    assert steps.jobs[cols].equals(x.jobs[cols])
    kinds = {r["JobID"].split(".", 1)[1] for r in raw if "." in r["JobID"]}
    assert {"batch", "extern", "0"} <= kinds


def test_timezone_shift_between_two_captures_of_the_same_jobs():
    utc_log = read_sacct(X_UTC, timezone="UTC")
    warsaw = read_sacct(X_WARSAW, timezone="Europe/Warsaw")
    assert warsaw.timezone == "Europe/Warsaw"
    cols = [c for c in COLUMNS if c != "line"]
    assert warsaw.jobs[cols].equals(utc_log.jobs[cols])
    # the same text read in the wrong zone is shifted by the zone's offset
    wrong = read_sacct(X_WARSAW, timezone="UTC")
    first = utc_log.jobs["submit"].iloc[0]
    offset = wrong.jobs["submit"].iloc[0] - first
    assert offset in (3600, 7200)  # CET or CEST
    assert (wrong.jobs["submit"] - utc_log.jobs["submit"] == offset).all()


def test_columns_in_another_order_with_extra_columns():
    base = read_sacct(X_UTC, timezone="UTC")
    extra = read_sacct(EXTRA_UTC, timezone="UTC")
    header = EXTRA_UTC.read_text().splitlines()[0].split("|")
    assert header[0] != "JobID" and "JobName" in header and "ReqCPUS" in header
    started = base.jobs["start"] >= 0
    cols = [c for c in COLUMNS if c != "line"]
    # same jobs, same times; never-started jobs take ReqCPUS as their width
    assert extra.jobs.loc[started, cols].equals(base.jobs.loc[started, cols])
    raw = raw_rows(EXTRA_UTC)
    for (_, job), r in zip(extra.jobs.iterrows(), raw, strict=True):
        if job["start"] == -1:
            assert job["processors"] == int(r["ReqCPUS"])


def test_default_timezone_is_the_machines_and_is_stated(monkeypatch):
    monkeypatch.setenv("TZ", "Europe/Warsaw")
    assert local_timezone() == "Europe/Warsaw"
    log = read_sacct(X_WARSAW)
    assert log.timezone == "Europe/Warsaw"
    assert log.jobs["submit"].equals(read_sacct(X_UTC, timezone="UTC").jobs["submit"])


def test_machines_check_on_the_fixture():
    assert read_sacct(X_UTC, timezone="UTC", machines=4).machines == 4
    with pytest.raises(SacctError, match=r"sacct_X_utc.txt:\d+: field AllocCPUS: job \d+ .* 1"):
        read_sacct(X_UTC, timezone="UTC", machines=1)


# --- bad input -------------------------------------------------------------------------------

GOOD = "7|u1|acc|grp|batch|2024-01-01T10:00:00|2024-01-01T10:00:05|2024-01-01T10:01:00|2|COMPLETED"


def write(tmp_path: Path, *lines: str, name: str = "jobs.txt") -> Path:
    path = tmp_path / name
    path.write_text("\n".join(lines) + "\n")
    return path


def one_line_error(path: Path, **kw) -> str:
    with pytest.raises(SacctError) as info:
        read_sacct(path, timezone=kw.pop("timezone", "UTC"), **kw)
    message = str(info.value)
    assert "\n" not in message and message.startswith(str(path))
    return message


def test_good_line_parses(tmp_path):
    log = read_sacct(write(tmp_path, HEADER, GOOD), timezone="UTC")
    job = log.jobs.iloc[0]
    assert (job["job"], job["start"] - job["submit"], job["end"] - job["start"]) == ("7", 5, 55)
    assert job["submit"] == utc("2024-01-01T10:00:00") and job["processors"] == 2


def test_parsable_with_trailing_bar(tmp_path):
    log = read_sacct(write(tmp_path, HEADER + "|", GOOD + "|"), timezone="UTC")
    assert log.n == 1 and log.jobs.iloc[0]["processors"] == 2


@pytest.mark.parametrize(
    ("line", "where"),
    [
        (GOOD.replace("|2|", "|two|"), ":2: field AllocCPUS: 'two'"),
        (GOOD.replace("|2|", "|-1|"), ":2: field AllocCPUS: '-1'"),
        (GOOD.replace("2024-01-01T10:00:05", "2024-13-01T10:00:05"), ":2: field Start:"),
        (GOOD.replace("2024-01-01T10:00:00", "01/01/24 10:00"), ":2: field Submit:"),
        (GOOD.replace("2024-01-01T10:00:00", "Unknown"), ":2: field Submit: 'Unknown'"),
        (GOOD.replace("2024-01-01T10:01:00", "later"), ":2: field End: 'later'"),
        (GOOD.replace("COMPLETED", "DONE"), ":2: field State: 'DONE'"),
        (GOOD.replace("7|", "x7|", 1), ":2: field JobID: 'x7'"),
        (GOOD + "|extra", ":2: 11 fields, the header has 10"),
        ("7|u1|acc", ":2: 3 fields, the header has 10"),
    ],
)
def test_malformed_line_names_file_line_and_field(tmp_path, line, where):
    message = one_line_error(write(tmp_path, HEADER, line))
    assert where in message


def test_error_on_a_later_line_names_that_line(tmp_path):
    bad = GOOD.replace("7|", "8|", 1).replace("|2|", "|2.5|")
    message = one_line_error(write(tmp_path, HEADER, GOOD, "", bad))
    assert ":4: field AllocCPUS: '2.5'" in message


def test_unknown_column_is_named(tmp_path):
    message = one_line_error(write(tmp_path, HEADER.replace("Account", "Acount"), GOOD))
    assert ":1: column 3: unknown sacct column 'Acount'" in message


def test_missing_and_duplicate_columns(tmp_path):
    message = one_line_error(write(tmp_path, HEADER.replace("|AllocCPUS", ""), "x"))
    assert "lacks required column(s) AllocCPUS" in message
    message = one_line_error(write(tmp_path, HEADER + "|User", GOOD + "|u1"))
    assert "column 11: column User appears twice" in message


def test_empty_file_and_unknown_zone(tmp_path):
    assert "empty file" in one_line_error(write(tmp_path, ""))
    with pytest.raises(SacctError, match="unknown time zone 'Mars/Olympus'"):
        read_sacct(write(tmp_path, HEADER, GOOD), timezone="Mars/Olympus")


def test_contradictory_times_are_excluded_and_counted(tmp_path):
    end_first = GOOD.replace("7|", "8|", 1).replace("T10:01:00", "T10:00:01")
    early = GOOD.replace("7|", "9|", 1).replace("T10:00:05", "T09:59:00")
    log = read_sacct(write(tmp_path, HEADER, GOOD, end_first, early), timezone="UTC")
    assert list(log.jobs["job"]) == ["7"]
    assert log.excluded == {END_BEFORE_START: 1, START_BEFORE_SUBMIT: 1}


def test_job_wider_than_the_platform(tmp_path):
    message = one_line_error(write(tmp_path, HEADER, GOOD), machines=1)
    assert ":2: field AllocCPUS: job 7 was allocated 2 processors, more than" in message


def test_never_started_and_steps_and_arrays(tmp_path):
    lines = [
        HEADER,
        "10_[3-5%2]|u1|acc|grp|batch|2024-01-01T10:00:00|Unknown|Unknown|0|PENDING",
        "11|u1|acc|grp|batch|2024-01-01T10:00:00|None|2024-01-01T10:02:00|0|CANCELLED by 1000",
        "12_4|u2|acc|grp|batch|2024-01-01T10:00:00|2024-01-01T10:00:01|Unknown|3|RUNNING",
        "12_4.batch||acc|||2024-01-01T10:00:01|2024-01-01T10:00:01|Unknown|3|RUNNING",
        "12_4.extern||acc|||2024-01-01T10:00:01|2024-01-01T10:00:01|Unknown|3|RUNNING",
        "13+1|u2|acc|grp|batch|2024-01-01T10:00:00|2024-01-01T10:00:02|2024-01-01T10:00:03|1|TIMEOUT",
    ]
    log = read_sacct(write(tmp_path, *lines), timezone="UTC")
    assert list(log.jobs["job"]) == ["10_[3-5%2]", "11", "12_4", "13+1"]
    assert list(log.jobs["start"] == -1) == [True, True, False, False]
    assert list(log.jobs["end"] == -1) == [True, True, True, False]
    assert log.excluded == {STEP_LINE: 2}


def test_requeued_runs_listed_by_D_are_each_kept(tmp_path):
    first = GOOD.replace("COMPLETED", "REQUEUED").replace("T10:01:00", "T10:00:30")
    second = GOOD.replace("T10:00:05", "T10:00:40")
    log = read_sacct(write(tmp_path, HEADER, first, second), timezone="UTC")
    assert list(log.jobs["job"]) == ["7", "7"]
    assert (log.jobs["end"] - log.jobs["start"]).tolist() == [25, 20]


def test_repeated_header_and_blank_lines_are_skipped(tmp_path):
    second = GOOD.replace("7|", "8|", 1)
    log = read_sacct(write(tmp_path, "", HEADER, GOOD, "", HEADER, second), timezone="UTC")
    assert list(log.jobs["job"]) == ["7", "8"] and list(log.jobs["line"]) == [3, 6]


def test_a_repeated_hour_is_resolved_by_the_records_own_order(tmp_path):
    """Submitted at 02:50 and started at 02:10, both in the repeated hour of 2024-10-27 in
    Warsaw: only "02:50 summer time, 02:10 winter time" keeps submit <= start."""
    line = GOOD.replace("2024-01-01T10:00:00", "2024-10-27T02:50:00")
    line = line.replace("2024-01-01T10:00:05", "2024-10-27T02:10:00")
    line = line.replace("2024-01-01T10:01:00", "2024-10-27T04:00:00")
    log = read_sacct(write(tmp_path, HEADER, line), timezone="Europe/Warsaw")
    job = log.jobs.iloc[0]
    assert job["submit"] == utc("2024-10-27T00:50:00")
    assert job["start"] == utc("2024-10-27T01:10:00")  # 02:10 CET
    assert log.notes == [] and log.excluded == {}


def test_an_undecided_repeated_hour_is_reported_with_its_line(tmp_path):
    line = GOOD.replace("2024-01-01T10:00:00", "2024-10-27T02:10:00")
    line = line.replace("2024-01-01T10:00:05", "2024-10-27T02:20:00")
    line = line.replace("2024-01-01T10:01:00", "2024-10-27T02:30:00")
    path = write(tmp_path, HEADER, GOOD, line)
    log = read_sacct(path, timezone="Europe/Warsaw")
    assert len(log.notes) == 1
    assert "1 job(s)" in log.notes[0] and f"{path}:3" in log.notes[0]
    assert "SLURM_TIME_FORMAT=%s" in log.notes[0]


def test_epoch_seconds_are_read_whatever_the_zone(tmp_path):
    line = GOOD.replace("2024-01-01T10:00:00", "1704103200")
    line = line.replace("2024-01-01T10:00:05", "1704103205").replace(
        "2024-01-01T10:01:00", "1704103260"
    )
    a = read_sacct(write(tmp_path, HEADER, line), timezone="Europe/Warsaw").jobs
    b = read_sacct(write(tmp_path, HEADER, GOOD), timezone="UTC").jobs
    assert a[["submit", "start", "end"]].equals(b[["submit", "start", "end"]])


def test_the_real_epoch_capture_equals_the_utc_capture():
    """The tree capture exported the same jobs with SLURM_TIME_FORMAT=%s and with TZ=UTC."""
    tree = FIXTURES.parent / "slurm-tree"
    a = read_sacct(tree / "sacct_X_epoch.txt", timezone="Europe/Warsaw").jobs
    b = read_sacct(tree / "sacct_X_utc.txt", timezone="UTC").jobs
    cols = ["job", "submit", "start", "end", "processors", "account"]
    assert len(a) == 22 and a[cols].equals(b[cols])


def test_identical_repeated_records_are_merged_and_counted(tmp_path):
    with pytest.warns(UserWarning, match="repeat an earlier one exactly"):
        log = read_sacct(write(tmp_path, HEADER, GOOD, GOOD), timezone="UTC")
    assert list(log.jobs["job"]) == ["7"]
    assert log.excluded == {DUPLICATE_LINE: 1}


def test_two_records_of_one_run_that_disagree_are_an_error(tmp_path):
    other = GOOD.replace("COMPLETED", "FAILED")
    with pytest.raises(SacctError, match=r":3: job 7 .* also on line 2 with other fields"):
        read_sacct(write(tmp_path, HEADER, GOOD, other), timezone="UTC")


def test_a_count_beyond_int64_is_a_line_numbered_error(tmp_path):
    line = GOOD.replace("|2|COMPLETED", "|99999999999999999999999|COMPLETED")
    assert line != GOOD
    with pytest.raises(SacctError, match=r":2: field AllocCPUS: .* beyond 2\^53"):
        read_sacct(write(tmp_path, HEADER, line), timezone="UTC")


def test_non_utf8_names_are_an_error_never_merged(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes((HEADER + "\n" + GOOD.replace("u1", "jos\xe9") + "\n").encode("latin1"))
    with pytest.raises(SacctError, match=r":2: byte 0xe9 at column \d+ is not UTF-8"):
        read_sacct(path, timezone="UTC")


def test_dst_local_times(tmp_path):
    # 2024-10-27 02:30 happens twice in Warsaw: read as the first (summer time, UTC+2)
    line = GOOD.replace("2024-01-01T10:00:00", "2024-10-27T02:30:00")
    line = line.replace("2024-01-01T10:00:05", "2024-10-27T03:30:00")
    line = line.replace("2024-01-01T10:01:00", "2024-10-27T04:00:00")
    log = read_sacct(write(tmp_path, HEADER, line), timezone="Europe/Warsaw")
    job = log.jobs.iloc[0]
    assert job["submit"] == utc("2024-10-27T00:30:00")
    assert job["start"] == utc("2024-10-27T02:30:00")  # 03:30 CET


# --- the fast reader against the line-by-line reference -------------------------------------

ZONES = ["UTC", "Europe/Warsaw", "America/New_York", "Australia/Lord_Howe", "Asia/Kolkata"]
STATE_CHOICES = ["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED by 0", "RUNNING", "PENDING"]


@st.composite
def sacct_files(draw):
    """Valid sacct -P text: random jobs around DST changes, steps, never-started jobs."""
    # days with a clock change in New York, the EU and Lord Howe (30-minute shift)
    day = draw(st.sampled_from(["03-10", "11-03", "03-31", "10-27", "04-07", "10-06", "06-15"]))
    base = datetime.fromisoformat(f"2024-{day}T00:00:00")
    order = draw(st.permutations(HEADER.split("|") + ["ReqCPUS"]))
    lines = ["|".join(order)]
    for j in range(draw(st.integers(0, 25))):
        submit = base + timedelta(seconds=draw(st.integers(0, 6 * 3600)))
        start = submit + timedelta(seconds=draw(st.integers(-60, 3600)))
        end = start + timedelta(seconds=draw(st.integers(-60, 3600)))
        state = draw(st.sampled_from(STATE_CHOICES))
        stamp = draw(st.sampled_from(["time", "time", "Unknown", "None"]))
        fields = {
            "JobID": draw(st.sampled_from([f"{j + 1}", f"{j + 1}_{j % 3}", f"{j + 1}_[1-3]"])),
            "User": f"u{j % 4}",
            "Account": draw(st.sampled_from(["a", "b", ""])),
            "Group": "g",
            "Partition": "batch",
            "Submit": f"{submit:%Y-%m-%dT%H:%M:%S}",
            "Start": f"{start:%Y-%m-%dT%H:%M:%S}" if stamp == "time" else stamp,
            "End": f"{end:%Y-%m-%dT%H:%M:%S}" if state != "RUNNING" else "Unknown",
            "AllocCPUS": str(draw(st.integers(0, 8))),
            "State": state,
            "ReqCPUS": str(draw(st.integers(1, 8))),
        }
        lines.append("|".join(fields[c] for c in order))
        for step in draw(st.lists(st.sampled_from(["batch", "extern", "0"]), max_size=2)):
            lines.append(
                "|".join(f"{fields['JobID']}.{step}" if c == "JobID" else fields[c] for c in order)
            )
    return "\n".join(lines) + "\n"


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(text=sacct_files(), zone=st.sampled_from(ZONES))
def test_fast_reader_equals_the_reference(tmp_path, text, zone):
    path = tmp_path / "h.txt"
    path.write_text(text)
    fast = read_sacct(path, timezone=zone)
    slow = reference_read_sacct(path, timezone=zone)
    assert fast.excluded == slow.excluded
    assert fast.jobs.equals(slow.jobs)


@pytest.mark.parametrize("zone", ZONES)
def test_local_times_around_every_clock_change_match_zoneinfo(zone):
    """Every 7 s of the nights with a clock change: fast offsets = zoneinfo with fold=0."""
    from zoneinfo import ZoneInfo

    import numpy as np
    import pandas as pd

    from coopsched.workloads.sacct import _seconds

    tz = ZoneInfo(zone)
    stamps = [
        f"{datetime.fromisoformat(f'2024-{day}T00:00:00') + timedelta(seconds=s):%Y-%m-%dT%H:%M:%S}"
        for day in ("03-10", "11-03", "03-31", "10-27", "04-07", "10-06")
        for s in range(0, 4 * 3600, 7)
    ]
    got = _seconds(pd.Series(stamps, dtype=object), tz, np.arange(len(stamps)), "x", "T", False)
    want = [int(datetime.fromisoformat(v).replace(tzinfo=tz).timestamp()) for v in stamps]
    assert got.tolist() == want


def test_timelimit_of_the_real_tree_capture():
    """The tree capture's Timelimit column: 00:02:00, 00:01:00, 00:05:00, 00:30:00, ...;
    job 7 ran 75 s with a 1-minute limit (Slurm's OverTimeLimit let it)."""
    tree = FIXTURES.parent / "slurm-tree"
    log = read_sacct(tree / "sacct_X_utc.txt", timezone="UTC")
    req = dict(zip(log.jobs["job"], log.jobs["requested"], strict=True))
    assert req["1"] == 120 and req["2"] == 60 and req["6"] == 300 and req["20"] == 1800
    seven = log.jobs[log.jobs["job"] == "7"].iloc[0]
    assert seven["end"] - seven["start"] == 75 > seven["requested"] == 60


@pytest.mark.parametrize(
    "value, seconds",
    [
        ("00:01:00", 60),
        ("1-00:00:00", 86400),
        ("05:30", 330),
        ("2-03:04:05", 183845),
        ("UNLIMITED", -1),
        ("Partition_Limit", -1),
    ],
)
def test_timelimit_formats(value, seconds):
    from coopsched.workloads.sacct import timelimit_seconds

    assert timelimit_seconds(value) == seconds


def test_a_malformed_timelimit_names_the_line(tmp_path):
    header = HEADER + "|Timelimit"
    with pytest.raises(SacctError, match=r":2: field Timelimit: 'soon'"):
        read_sacct(write(tmp_path, header, GOOD + "|soon"), timezone="UTC")
