"""``sacct --json`` (Slurm 22.05.8, data_parser v0.0.38): the same recorded schedule as the
text capture of the same jobs (tests/fixtures/slurm-tree, CAPTURE.txt), and clear errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

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
    with pytest.raises(SacctError, match=r"x.json:2:\d+: invalid JSON"):
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


# ---------------------------------------------------------------- issue 41: streamed, checked


def _write(tmp_path, data, name="x.json", indent=2):
    p = tmp_path / name
    p.write_text(json.dumps(data, indent=indent))
    return p


def test_an_identical_repeated_job_is_counted_once_as_in_text(tmp_path):
    """An identical record appended: merged, counted and warned about, as the text reader
    does (it was counted twice: one account's psi 13,738 instead of 8,698)."""
    data = json.loads(JSON.read_text())
    data["jobs"].append(data["jobs"][0])
    with pytest.warns(UserWarning, match=r"1 record\(s\) repeat an earlier one exactly"):
        log = read_sacct_json(_write(tmp_path, data), timezone="UTC")
    assert _sorted(log).equals(_sorted(read_sacct_json(JSON, timezone="UTC")))
    assert log.excluded == {"repeated record (identical to an earlier line)": 1}
    opts = dict(org_by="account", timezone="UTC", with_counterfactuals=False, points=2)
    with pytest.warns(UserWarning):
        a = audit(_write(tmp_path, data), **opts)
    b = audit(JSON, **opts)
    assert [o.psi for o in a.organizations] == [o.psi for o in b.organizations]


def test_one_run_repeated_with_another_account_is_an_error_naming_both(tmp_path):
    data = json.loads(JSON.read_text())
    twin = json.loads(json.dumps(data["jobs"][0]))
    twin["account"] = "chemistry"
    data["jobs"].append(twin)
    p = _write(tmp_path, data)
    message = r"x.json: jobs\[22\]: job 1 \(submitted \d+, started \d+\) is also on jobs\[0\]"
    with pytest.raises(SacctError, match=message):
        read_sacct_json(p, timezone="UTC")
    with pytest.raises(SacctError, match=message):  # not a malformed record: never skipped
        read_sacct_json(p, timezone="UTC", skip_malformed=True)
    assert main(["audit", str(p), "--org-by", "account", "--timezone", "UTC"]) == 1


def test_a_repeat_across_chunks_is_found(tmp_path, monkeypatch):
    """Jobs are parsed a chunk at a time: a repeat of a job of an earlier chunk is found
    from the kept hashes, and a disagreement is confirmed from the file itself."""
    import coopsched.workloads.sacct_json as sj

    monkeypatch.setattr(sj, "CHUNK_JOBS", 4)
    data = json.loads(JSON.read_text())
    data["jobs"].append(data["jobs"][1])
    with pytest.warns(UserWarning, match="first: jobs\\[22\\]"):
        assert read_sacct_json(_write(tmp_path, data), timezone="UTC").n == 22
    data["jobs"][-1] = dict(data["jobs"][1], group="other")
    with pytest.raises(SacctError, match=r"jobs\[22\]: job 2 .* also on jobs\[1\]"):
        read_sacct_json(_write(tmp_path, data), timezone="UTC")


def test_a_job_without_account_is_an_error_never_an_organization_named_empty(tmp_path):
    data = json.loads(JSON.read_text())
    del data["jobs"][0]["account"]
    with pytest.raises(SacctError, match=r"jobs\[0\] \(job 1\): field account: missing"):
        read_sacct_json(_write(tmp_path, data), timezone="UTC")
    data = json.loads(JSON.read_text())
    data["jobs"][3]["account"] = ""  # present but empty: no organization either
    p = _write(tmp_path, data)
    assert main(["audit", str(p), "--org-by", "account", "--timezone", "UTC"]) == 1
    with pytest.raises(ValueError, match=r"1 job\(s\) have no account, e.g. job 4"):
        audit(p, org_by="account", timezone="UTC")
    # by user every job has a name: the empty account does not matter
    assert audit(p, org_by="user", timezone="UTC", with_counterfactuals=False, points=2)


@pytest.mark.parametrize(
    "change, message",
    [
        (_set("tres.allocated", [{"type": "cpu", "count": 2**63}]), "beyond 2\\^53"),
        (_set("time.limit", 2**53 // 60 + 1), "beyond 2\\^53 s"),
        (_set("job_id", 2**64), "not a whole number in 0..2\\^53"),
    ],
)
def test_huge_numbers_are_errors_not_overflows(tmp_path, change, message):
    with pytest.raises(SacctError, match=r"jobs\[0\]( \(job 1\))?: field .*" + message):
        read_sacct_json(_edit(tmp_path, 0, change), timezone="UTC")


def test_deep_nesting_and_broken_documents_are_one_line_errors(tmp_path):
    p = tmp_path / "x.json"
    text = JSON.read_text().replace('"jobs": [', '"jobs": [' + "[" * 100_000 + "]" * 100_000 + ",")
    p.write_text(text)
    with pytest.raises(SacctError, match=r"x.json:\d+:\d+: a job: JSON nested too deeply"):
        read_sacct_json(p, timezone="UTC")
    for bad, message in [
        ("", "x.json:1:1: invalid JSON: the file ends"),
        ('{"meta": {}, "jobs": [', "x.json:1:23: invalid JSON: the file ends"),
        ('{"meta": {}, "jobs": []} []', "x.json:1:26: invalid JSON: extra data"),
        ('{"meta": {}, "meta": {}, "jobs": []}', "key 'meta' appears twice"),
        ('{"meta": {}, "jobs": [1e99999]}', r"jobs\[0\]: expected a job object"),
    ]:
        p.write_text(bad)
        with pytest.raises(SacctError, match=message):
            read_sacct_json(p, timezone="UTC")
    p.write_bytes(b'{"meta": {}, "jobs": [\n{"user": "jos\xe9"}]}')
    with pytest.raises(SacctError, match=r"x.json:2: byte 0xe9 at column \d+ is not UTF-8"):
        read_sacct_json(p, timezone="UTC")


def test_a_json_schedule_listing_its_jobs_before_organizations_is_still_a_schedule(tmp_path):
    doc = '{"meta": {}, "jobs": [{"org": "a", "release": 0, "size": 2, "start": 0}],'
    p = tmp_path / "s.json"
    p.write_text(doc + ' "organizations": [{"name": "a", "machines": 1}]}')
    inst = load_log(p)
    assert not isinstance(inst, RecordedLog) and inst.n == 1


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(block=st.integers(1, 5000), indent=st.sampled_from([None, 0, 2]))
def test_the_streamed_reader_equals_the_whole_document(tmp_path, monkeypatch, block, indent):
    """Whatever the block size and layout (a value cut anywhere by a block's end: inside a
    string, a number, a multi-byte character), the jobs read are those of ``json.loads``."""
    import coopsched.workloads.jsonstream as js

    monkeypatch.setattr(js, "BLOCK_BYTES", block)
    data = json.loads(JSON.read_text())
    data["jobs"][2]["user"] = "zoë ✓"  # multi-byte characters
    p = _write(tmp_path, data, indent=indent)
    log = read_sacct_json(p, timezone="UTC")
    assert log.n == 22 and "zoë ✓" in set(log.jobs["user"])
    assert log.jobs.drop(columns="user").equals(
        read_sacct_json(JSON, timezone="UTC").jobs.drop(columns="user")
    )
