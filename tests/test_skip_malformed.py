"""One malformed record in a long log: strict by default (file, line, field), or with
``skip_malformed`` / ``--skip-malformed`` left out, counted and listed in every output."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coopsched.audit import audit
from coopsched.cli import main
from coopsched.workloads.recorded import MALFORMED
from coopsched.workloads.sacct import SacctError, read_sacct
from coopsched.workloads.swf import SWFError, read_swf_recorded

TREE = Path(__file__).parent / "fixtures" / "slurm-tree"
TEXT = TREE / "sacct_X_utc.txt"


def _corrupt(tmp_path: Path, edits: dict[int, str]) -> Path:
    """The real capture with some lines (1-based) replaced."""
    lines = TEXT.read_text().splitlines()
    for no, line in edits.items():
        lines[no - 1] = line
    p = tmp_path / "sacct.txt"
    p.write_text("\n".join(lines) + "\n")
    return p


def _field(no: int, column: int, value: str) -> str:
    fields = TEXT.read_text().splitlines()[no - 1].split("|")
    fields[column] = value
    return "|".join(fields)


# header: JobID|User|Account|Group|Partition|Submit|Start|End|AllocCPUS|State|Timelimit
EDITS = {
    3: _field(3, 6, "2026-11-24T25:00:00"),  # job 2: an hour that does not exist
    5: "5|cs_bob|physics",  # a line cut short
    9: _field(9, 8, "two"),  # AllocCPUS
    12: _field(12, 10, "forever"),  # Timelimit
    14: _field(14, 9, "FINISHED"),  # State
    16: _field(16, 0, "12_x"),  # JobID
    18: _field(18, 5, "yesterday"),  # Submit
}


def test_sacct_text_strict_names_the_first_line_and_field(tmp_path):
    p = _corrupt(tmp_path, EDITS)
    with pytest.raises(SacctError) as e:
        read_sacct(p, timezone="UTC")
    # the line-level problems are found first, in the pass over the lines
    assert str(e.value).startswith(f"{p}:5: 3 fields, the header has 11")


def test_sacct_text_skipped_records_are_counted_and_the_first_five_listed(tmp_path):
    p = _corrupt(tmp_path, EDITS)
    log = read_sacct(p, timezone="UTC", skip_malformed=True)
    whole = read_sacct(TEXT, timezone="UTC")
    gone = {TEXT.read_text().splitlines()[no - 1].split("|")[0] for no in EDITS}
    assert sorted(log.jobs["job"]) == sorted(set(whole.jobs["job"]) - gone)
    assert log.n == 22 - 7
    assert log.excluded == {MALFORMED: 7}
    (note,) = log.notes
    assert note.startswith("7 malformed record(s) left out (--skip-malformed); first: ")
    listed = note.split("; first: ", 1)[1].split("; ")
    assert [m.split(": ")[0] for m in listed] == [f"{p}:{no}" for no in (3, 5, 9, 12, 14)]
    assert listed[0] == f"{p}:3: field Start: '2026-11-24T25:00:00' is not a date"
    assert listed[2] == f"{p}:9: field AllocCPUS: 'two' is not a whole number >= 0"
    # the jobs kept are exactly the capture's
    kept = whole.jobs[whole.jobs["job"].isin(log.jobs["job"])].drop(columns="line")
    assert kept.reset_index(drop=True).equals(log.jobs.drop(columns="line"))


def test_the_header_is_never_skipped(tmp_path):
    p = _corrupt(tmp_path, {1: "JobID|User|Submit|Start|End|Nonsense|AllocCPUS"})
    with pytest.raises(SacctError, match="unknown sacct column 'Nonsense'"):
        read_sacct(p, timezone="UTC", skip_malformed=True)


def _row(job, submit, wait, run, procs, user=1):
    f = [-1] * 18
    f[:5] = [job, submit, wait, run, procs]
    f[11], f[12] = user, 1
    return " ".join(map(str, f))


def test_swf_strict_and_skipped(tmp_path):
    p = tmp_path / "t.swf"
    rows = [_row(i, 10 * i, 1, 5, 1) for i in range(1, 9)]
    rows[1] = rows[1].replace(" 1 5 1 ", " 1 5 x ", 1)  # line 4: processors not a number
    rows[3] = _row(4, 40, -3, 5, 1)  # line 6: a negative wait
    rows[5] = " ".join(rows[5].split()[:17])  # line 8: 17 fields
    rows[6] = _row(7, 70, 1.5, 5, 1)  # line 9: a fractional wait
    p.write_text("; MaxProcs: 4\n; UnixStartTime: 0\n" + "\n".join(rows) + "\n")
    with pytest.raises(SWFError, match=r"t.swf:4: field 5 \(alloc_procs\): 'x' is not a number"):
        read_swf_recorded(p)
    log = read_swf_recorded(p, skip_malformed=True)
    assert log.jobs["job"].tolist() == ["1", "3", "5", "8"]
    assert log.jobs["line"].tolist() == [3, 5, 7, 10]  # the file's own line numbers
    assert log.excluded == {MALFORMED: 4}
    listed = log.notes[0].split("; first: ", 1)[1].split("; ")
    assert [m.split(": ")[0] for m in listed] == [f"{p}:{no}" for no in (4, 6, 8, 9)]
    assert listed[1].startswith(f"{p}:6: field 3 (wait): -3 is negative")
    assert listed[3].startswith(f"{p}:9: field 3 (wait): 1.5 is not a whole number")


def test_a_clean_swf_is_read_the_same_with_or_without_the_option(tmp_path):
    p = tmp_path / "t.swf"
    p.write_text("; MaxProcs: 4\n" + "\n".join(_row(i, i, 0, 3, 1) for i in (1, 2)) + "\n")
    a, b = read_swf_recorded(p), read_swf_recorded(p, skip_malformed=True)
    assert a.jobs.equals(b.jobs) and a.excluded == b.excluded and b.notes == []


def test_every_output_says_what_was_left_out(tmp_path, capsys):
    p = _corrupt(tmp_path, {9: EDITS[9]})
    args = ["audit", str(p), "--org-by", "account", "--timezone", "UTC", "--points", "2"]
    args.append("--no-counterfactuals")
    assert main(args) == 1
    assert f"{p}:9: field AllocCPUS: 'two'" in capsys.readouterr().err
    args.append("--skip-malformed")
    message = f"{p}:9: field AllocCPUS: 'two' is not a whole number >= 0"
    assert main([*args, "--format", "json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["excluded"][MALFORMED] == 1 and message in r["notes"][0]
    assert main([*args, "--format", "csv"]) == 0
    assert f"# note: 1 malformed record(s) left out (--skip-malformed); first: {message}" in (
        capsys.readouterr().out
    )
    assert main(args) == 0
    table = " ".join(capsys.readouterr().out.split())
    assert "1 malformed record(s) left out" in table and f"{MALFORMED}: 1" in table
    try:
        from coopsched.audit.html import render_html
    except ImportError:
        return
    report = audit(p, org_by="account", timezone="UTC", skip_malformed=True, points=2)
    page = render_html(report)
    assert "1 malformed record(s) left out" in page and MALFORMED in page


def test_a_json_schedule_has_no_records_to_skip(tmp_path):
    p = tmp_path / "s.json"
    p.write_text(
        json.dumps(
            {
                "organizations": [{"name": "a", "machines": 1}],
                "jobs": [{"org": "a", "release": 0, "size": 1, "start": 0}],
            }
        )
    )
    with pytest.raises(ValueError, match="skip_malformed: applies to logs"):
        audit(p, horizon=2, skip_malformed=True)
