import json

import pandas as pd
import pytest
from conftest import TRACES
from sweep_helpers import square

from coopsched.experiments.sweep import load_rows, run_sweep, task_key


def tasks(tmp_path, n=6, **extra):
    d = tmp_path / "marks"
    d.mkdir(exist_ok=True)
    return [{"x": i, "dir": str(d), **extra} for i in range(n)], d


@pytest.mark.parametrize("workers", [1, 2])
def test_sweep_runs_all_and_resumes_without_recomputing(tmp_path, workers):
    ts, marks = tasks(tmp_path)
    out = tmp_path / "rows.jsonl"
    rows = run_sweep(ts, square, out, workers=workers, quiet=True)
    assert [r["y"] for r in rows] == [i * i for i in range(6)]
    assert len(list(marks.iterdir())) == 6
    again = run_sweep(ts, square, out, workers=workers, quiet=True)
    assert [r["y"] for r in again] == [i * i for i in range(6)]
    assert len(list(marks.iterdir())) == 6  # nothing recomputed


def test_interrupted_sweep_keeps_finished_rows(tmp_path):
    ts, marks = tasks(tmp_path)
    out = tmp_path / "rows.jsonl"
    failing = [dict(t, fail_at=3) for t in ts]
    with pytest.raises(RuntimeError):
        run_sweep(failing, square, out, workers=1, quiet=True)
    kept = load_rows(out)
    assert sorted(r["y"] for r in kept.values()) == [0, 1, 4]
    # the fixed sweep (same keys minus fail_at is a different task): resume the original tasks
    ok = [dict(t, fail_at=None) for t in ts]
    run_sweep(ok[:3], square, out, workers=1, quiet=True)
    assert len(load_rows(out)) == 6


def test_truncated_last_line_is_dropped(tmp_path):
    ts, marks = tasks(tmp_path, n=3)
    out = tmp_path / "rows.jsonl"
    run_sweep(ts, square, out, workers=1, quiet=True)
    with out.open("a") as fh:
        fh.write('{"task_key": "abc", "y": ')  # a crash in the middle of a write
    rows = load_rows(out)
    assert len(rows) == 3
    assert all(json.loads(line) for line in out.read_text().splitlines())
    run_sweep(ts + [dict(ts[0], x=9)], square, out, workers=1, quiet=True)
    assert len(load_rows(out)) == 4


def test_task_key_is_order_independent():
    assert task_key({"a": 1, "b": 2}) == task_key({"b": 2, "a": 1})
    assert task_key({"a": 1}) != task_key({"a": 2})


def test_sweep_on_dask_cluster(tmp_path):
    distributed = pytest.importorskip("distributed")
    ts, marks = tasks(tmp_path, n=4)
    with (
        distributed.LocalCluster(
            n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        rows = run_sweep(ts, square, tmp_path / "rows.jsonl", scheduler=client, quiet=True)
    assert [r["y"] for r in rows] == [0, 1, 4, 9]


@pytest.mark.skipif(
    not (TRACES / "LPC-EGEE-2004-1.2-cln.swf.gz").exists(), reason="traces not available"
)
@pytest.mark.parametrize("what", ["table1", "table2", "fig10"])
def test_quick_reproduction_runs_and_resumes(tmp_path, what):
    from coopsched.experiments.studies import run_study

    out = tmp_path / what
    _, md = run_study(what, out, quick=True, traces=TRACES, workers=2, quiet=True)
    assert (out / "summary.md").read_text() == md
    df = pd.read_csv(out / "results.csv")
    assert len(df) == (9 if what == "fig10" else 16)
    assert (df.filter(like="ratio_") >= 0).all().all()
    if what == "table1":
        assert "| ROUNDROBIN |" in md and "238 (353)" in md  # paper beside ours
    if what == "table2":
        assert "4511 (6257)" in md
    if what == "fig10":
        assert (out / "fig10.png").stat().st_size > 1000
    lines = (out / "rows.jsonl").read_text().splitlines()
    run_study(what, out, quick=True, traces=TRACES, workers=2, quiet=True)
    assert (out / "rows.jsonl").read_text().splitlines() == lines  # resumed: nothing recomputed
