"""``sacct --json`` (Slurm 22.05.8, data_parser v0.0.38): the same recorded schedule as the
text capture of the same jobs (tests/fixtures/slurm-tree, CAPTURE.txt), and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from coopsched.audit import audit, load_log
from coopsched.cli import main
from coopsched.workloads.recorded import RecordedLog
from coopsched.workloads.sacct import SacctError, read_sacct
from coopsched.workloads.sacct_json import is_sacct_json, read_sacct_json

TREE = Path(__file__).parent / "fixtures" / "slurm-tree"
JSON = TREE / "sacct_json.json"  # TZ=UTC sacct -a -X --json
TEXT = TREE / "sacct_X_utc.txt"  # TZ=UTC sacct -a -X -P --format=... (same jobs)


def _sorted(log: RecordedLog):
    return log.jobs.drop(columns="line").sort_values("job").reset_index(drop=True)


def test_the_json_and_the_text_capture_give_the_same_recorded_schedule():
    j = read_sacct_json(JSON, timezone="UTC")
    t = read_sacct(TEXT, timezone="UTC")
    assert j.n == t.n == 22
    assert _sorted(j).equals(_sorted(t))
    assert (j.excluded, j.notes, j.timezone, j.epoch) == (t.excluded, t.notes, "UTC", 0)
    assert j.source == "sacct-json"
    # what the capture holds: array tasks, a running job, two pending ones
    jobs = j.jobs.set_index("job")
    assert jobs.loc["5_3", "processors"] == 1 and jobs.loc["12_0", "requested"] == 60
    assert jobs.loc["20", ["start", "end"]].tolist() == [1795479927, -1]  # RUNNING
    assert jobs.loc["21", ["start", "end", "processors"]].tolist() == [-1, -1, 4]  # PENDING
    assert j.jobs["line"].tolist() == list(range(22))  # the index in "jobs"


def test_load_log_tells_sacct_json_from_a_json_schedule_by_content(tmp_path):
    assert isinstance(load_log(JSON, timezone="UTC"), RecordedLog)
    assert not is_sacct_json({"organizations": [], "jobs": [], "meta": {}})
    assert is_sacct_json(json.loads(JSON.read_text()))


def test_the_audit_of_the_json_capture_equals_the_texts(capsys):
    opts = dict(org_by="account", timezone="UTC", with_counterfactuals=False, points=2)
    a, b = audit(JSON, **opts), audit(TEXT, **opts)
    assert a.organizations == b.organizations and a.excluded == b.excluded
    args = ["audit", str(JSON), "--org-by", "user", "--timezone", "UTC", "--format", "json"]
    assert main([*args, "--no-counterfactuals", "--points", "2"]) == 0
    assert len(json.loads(capsys.readouterr().out)["organizations"]) == 6
    # a log is windowed from a date: horizon alone is refused, as for text logs
    assert main([*args, "--horizon", "60"]) == 1
    assert "--horizon: needs --from" in capsys.readouterr().err


def test_numbers_wrapped_as_later_parsers_write_them_read_the_same(tmp_path):
    """data_parser v0.0.39+ writes {"set", "infinite", "number"} and a list of states."""
    data = json.loads(JSON.read_text())
    for job in data["jobs"]:
        for key in ("submission", "start", "end", "limit"):
            v = job["time"][key]
            job["time"][key] = {"set": v is not None, "infinite": False, "number": v or 0}
        job["state"]["current"] = [job["state"]["current"]]
    p = tmp_path / "v39.json"
    p.write_text(json.dumps(data))
    assert _sorted(read_sacct_json(p, timezone="UTC")).equals(
        _sorted(read_sacct_json(JSON, timezone="UTC"))
    )


def _edit(tmp_path, index, change):
    data = json.loads(JSON.read_text())
    change(data["jobs"][index]) if index is not None else change(data)
    p = tmp_path / "x.json"
    p.write_text(json.dumps(data))
    return p


def _set(dotted, value):
    def change(job):
        *path, last = dotted.split(".")
        for key in path:
            job = job[key]
        job[last] = value

    return change


@pytest.mark.parametrize(
    "index, change, message",
    [
        (3, _set("time.start", "soon"), "jobs[3] (job 4): field time.start: 'soon' is not"),
        (3, _set("time.submission", None), "jobs[3] (job 4): field time.submission: missing"),
        (0, _set("time.end", -5), "jobs[0] (job 1): field time.end: -5 is not a whole number"),
        (1, _set("state.current", "DONE"), "jobs[1] (job 2): field state.current: 'DONE'"),
        (2, _set("user", 7), "jobs[2] (job 3): field user: 7 is not a name"),
        (2, _set("job_id", "3"), "jobs[2]: field job_id: '3' is not a whole number"),
        (5, _set("time.limit", 1.5), "jobs[5] (job 6): field time.limit: 1.5"),
        (
            20,
            _set("tres.requested", {"cpu": 4}),
            "jobs[20] (job 21): field tres.requested: expected a list",
        ),
    ],
)
def test_a_malformed_job_names_the_file_the_job_index_and_the_field(
    tmp_path, index, change, message
):
    p = _edit(tmp_path, index, change)
    with pytest.raises(SacctError) as e:
        read_sacct_json(p, timezone="UTC")
    assert str(e.value).startswith(f"{p}: {message}")
    # skipped: left out, counted, listed
    log = read_sacct_json(p, timezone="UTC", skip_malformed=True)
    assert log.n == 21 and log.excluded == {"malformed record (skip_malformed)": 1}
    assert log.notes == [f"1 malformed record(s) left out (--skip-malformed); first: {e.value}"]


def test_malformed_documents(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"meta": {}, "jobs": [\n{"job_id": 1,}\n]}')
    with pytest.raises(SacctError, match=r"x.json:2: invalid JSON"):
        read_sacct_json(p, timezone="UTC")
    p.write_text('{"meta": {}, "jobs": {}}')
    with pytest.raises(SacctError, match="x.json: field jobs: expected a list"):
        read_sacct_json(p, timezone="UTC")
    p.write_text('{"meta": {}, "errors": [{"error": "no db"}], "jobs": []}')
    with pytest.raises(SacctError, match="sacct reported error"):
        read_sacct_json(p, timezone="UTC")
    p.write_text('{"jobs": []}')
    with pytest.raises(SacctError, match="not sacct --json output"):
        read_sacct_json(p, timezone="UTC")
    p.write_text('{"meta": {}, "jobs": [3]}')
    with pytest.raises(SacctError, match=r"x.json: jobs\[0\]: expected a job object, got int"):
        read_sacct_json(p, timezone="UTC")


def test_the_platform_size_is_checked_as_for_text():
    with pytest.raises(SacctError, match=r"jobs\[8\] \(job 9\): field AllocCPUS: job 9 was"):
        read_sacct_json(JSON, timezone="UTC", machines=3)


def test_a_copy_edit_helper_changes_only_its_job(tmp_path):
    """The malformed-job cases above edit one job; the rest stays the capture."""
    p = _edit(tmp_path, 3, _set("partition", "other"))
    a, b = read_sacct_json(p, timezone="UTC").jobs, read_sacct_json(JSON, timezone="UTC").jobs
    diff = a.compare(b)
    assert diff.index.tolist() == [3]
    assert set(diff.columns.get_level_values(0)) == {"partition"}
