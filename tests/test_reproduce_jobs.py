"""``jobs`` and ``backfill`` on the trace-reading reproductions (table1/2, fig10,
sensitivity, production): sequential stays the default and leaves the tasks (and so the
results) as they were; rigid reaches the instance, REF and every policy, and the summary
says so."""

from __future__ import annotations

import pytest
from conftest import TRACES

from coopsched.cli import main
from coopsched.experiments.reproduce import Table1, TableSpec, table_tasks
from coopsched.experiments.sensitivity import sensitivity_tasks
from coopsched.experiments.studies import get_study, run_study
from coopsched.experiments.windows import WindowState, evaluate_window, policy_params
from coopsched.online.checker import check_schedule
from coopsched.online.fairness import fairness
from coopsched.online.policies import get_policy
from coopsched.online.policies.ref import Ref
from coopsched.workloads.archive import load_trace
from coopsched.workloads.prepare import trace_to_instance

have_traces = pytest.mark.skipif(
    not (TRACES / "KTH-SP2-1996-2.1-cln.swf.gz").exists()
    or not (TRACES / "LPC-EGEE-2004-1.2-cln.swf.gz").exists(),
    reason="traces not available",
)
STUDIES = ("table1", "table2", "fig10", "sensitivity", "production")


@pytest.mark.parametrize("name", STUDIES)
def test_the_job_model_is_checked_before_anything_runs(name):
    study = get_study(name)
    assert {"jobs", "backfill"} <= set(study.option_names())
    with pytest.raises(ValueError, match="^backfill: applies to rigid jobs only"):
        study(backfill="easy", traces=TRACES)
    with pytest.raises(ValueError, match="^jobs: 'parallel'; choose from sequential, rigid"):
        study(jobs="parallel", traces=TRACES)
    with pytest.raises(ValueError, match="^backfill: 'greedy'; choose from none, first-fit"):
        study(jobs="rigid", backfill="greedy", traces=TRACES)


def test_the_cli_names_the_flags(capsys):
    assert main(["reproduce", "table1", "--backfill", "easy"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: --backfill: applies to rigid jobs only (--jobs rigid)")
    assert err.count("\n") == 1
    assert main(["reproduce", "rigid", "--jobs", "rigid"]) == 1  # rigid already
    err = capsys.readouterr().err
    assert err.startswith(
        "error: reproduce rigid: option(s) --jobs do not apply (accepted: --traces,"
    )


def test_the_summary_states_the_model():
    assert "Jobs" not in WindowState().describe()
    easy = WindowState(jobs="rigid", backfill="easy").describe()
    assert "Jobs rigid (a job on q processors takes q machines at once" in easy
    assert easy.endswith("REF and every policy under the backfilling rule easy.")
    assert "first-fit otherwise" in WindowState(jobs="rigid").describe()


@have_traces
def test_sequential_tasks_are_unchanged_and_rigid_ones_carry_the_model():
    plain = table_tasks(TableSpec(50_000, traces=("KTH-SP2",), windows=2), TRACES)
    assert all("window_options" not in t and "backfill" not in t for t in plain)
    spec = TableSpec(50_000, traces=("KTH-SP2",), windows=2, jobs="rigid", backfill="none")
    rigid = table_tasks(spec, TRACES)
    assert [t["start"] for t in rigid] == [t["start"] for t in plain]  # the same windows
    assert all(t["window_options"] == {"jobs": "rigid"} and t["backfill"] == "none" for t in rigid)
    auto = table_tasks(TableSpec(50_000, traces=("KTH-SP2",), windows=2, jobs="rigid"), TRACES)
    assert all("backfill" not in t for t in auto)
    sens = sensitivity_tasks(
        TRACES, windows={"table1": 1}, states=("empty",), traces=("KTH-SP2",), jobs="rigid"
    )
    assert all(t["window_options"].get("jobs") == "rigid" for t in sens)


@have_traces
def test_a_rigid_window_runs_ref_and_every_policy_on_rigid_jobs():
    path = str(TRACES / "KTH-SP2-1996-2.1-cln.swf.gz")
    task = {
        "trace": "KTH-SP2",
        "path": path,
        "start": 5_000_000,
        "length": 20_000,
        "k": 3,
        "split": "zipf",
        "seed": 1,
        "machines": 100,
        "policies": ["fifo", "fairshare"],
        "rand_samples": 15,
        "window": 0,
    }
    seq = evaluate_window(task)
    row = evaluate_window({**task, "window_options": {"jobs": "rigid"}, "backfill": "first-fit"})
    assert "backfill" not in seq and row["backfill"] == "first-fit"
    inst = trace_to_instance(
        load_trace(path),
        k=3,
        start=5_000_000,
        length=20_000,
        machines=100,
        split="zipf",
        seed=1,
        jobs="rigid",
    )
    assert inst.rigid and int(inst.width.max()) > 1  # parallel jobs in this window
    assert row["n_jobs"] == inst.n < seq["n_jobs"] == int(inst.width.sum())
    T = int(inst.meta["horizon"])
    ref = Ref().run(inst, T, backfill="first-fit")
    assert check_schedule(ref) == []
    assert row["util_ref"] == ref.utilization(T) and row["p_tot"] == sum(ref.work(T))
    for name in ("fifo", "fairshare"):
        policy, params = policy_params(name, 1, 15)
        sched = get_policy(policy, **params).run(inst, T, backfill="first-fit")
        assert check_schedule(sched) == []
        assert row[f"ratio_{name}"] == fairness(sched, ref, T).ratio
        assert row[f"util_{name}"] == sched.utilization(T)
    auto = evaluate_window({**task, "window_options": {"jobs": "rigid"}})
    assert auto["backfill"] == "easy"  # every job of the log has a requested time


@have_traces
def test_a_tiny_rigid_reproduction_runs_and_says_so(tmp_path):
    out = tmp_path / "fig10"
    df, md = run_study(
        "fig10",
        out,
        traces=TRACES,
        windows=1,
        orgs="2",
        policies="fifo,directcontr",
        jobs="rigid",
        backfill="easy",
        workers=1,
        quiet=True,
    )
    assert list(df["backfill"]) == ["easy"] and (df["ratio_fifo"] >= 0).all()
    assert "REF and every policy under the backfilling rule easy." in md
    assert Table1(traces=TRACES, jobs="rigid").spec.window().options() == {"jobs": "rigid"}
