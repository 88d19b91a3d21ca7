"""Trace windows that start from the log's own state (issue #16 item 1, ``backlog=True``):
jobs waiting at the window start are kept, jobs running are pinned with their remaining run
time (docs/conventions.md §5, shared with the audit: ``workloads/backlog.py``)."""

import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.checker import check_schedule
from coopsched.online.policies import get_policy, names
from coopsched.workloads.instance import InstanceError
from coopsched.workloads.prepare import trace_to_instance
from coopsched.workloads.swf import read_swf

# job submit wait run procs user; the window is [100, 300) on the log's clock
ROWS = [
    (1, 0, 10, 50, 1, 1),  # runs [10, 60): ended before the window
    (2, 20, 30, 200, 2, 2),  # runs [50, 250): running at 100, 150 s left, 2 processors
    (3, 40, 0, 100, 1, 3),  # runs [40, 140): running at 100, 40 s left
    (4, 60, 60, 30, 1, 1),  # starts at 120: waiting at 100
    (5, 90, 100, 5, 3, 2),  # starts at 190: waiting, 3 processors
    (6, 80, 20, 7, 1, 4),  # starts exactly at 100: waiting (not yet started)
    (7, 70, 10, 20, 1, 4),  # runs [80, 100): ended exactly at the window start
    (8, 95, -1, 9, 1, 5),  # wait unknown: cannot be placed, counted
    (9, 150, 0, 10, 1, 4),  # submitted in the window: released at 50
    (10, 150, -1, 11, 1, 5),  # in the window; its unknown wait does not matter
    (11, 400, 0, 10, 1, 1),  # after the window
]


def swf(tmp_path, rows=ROWS, name="b.swf", max_procs=8):
    text = f"; MaxProcs: {max_procs}\n" + "\n".join(
        f"{j} {s} {w} {r} {q} -1 -1 {q} -1 -1 1 {u} 1 -1 1 1 -1 -1" for j, s, w, r, q, u in rows
    )
    p = tmp_path / name
    p.write_text(text + "\n")
    return read_swf(p)


def window(tmp_path, **kw):
    opts = dict(k=2, start=100, length=200, relative_start=False, seed=0, backlog=True)
    opts.update(kw)
    return trace_to_instance(swf(tmp_path), **opts)


def test_backlog_instance_by_hand(tmp_path):
    inst = window(tmp_path)
    # pinned first by recorded start (job 3 started at 40, job 2 at 50), then the waiting
    # jobs in submission order (4, 6, 5), then the window's own jobs (9, 10)
    assert inst.size.tolist() == [40, 150, 150, 30, 7, 5, 5, 5, 10, 11]
    assert inst.release.tolist() == [0] * 8 + [50, 50]
    assert inst.pinned.tolist() == [True] * 3 + [False] * 7
    assert inst.meta["backlog"] == {"waiting": 3, "running": 2, "wait unknown": 1}
    assert inst.meta["horizon"] == 200 and inst.meta["measure_from"] == 0
    assert inst.meta["warmup"] == 0 and inst.meta["trace_jobs"] == 7
    assert inst.start is None  # a simulation input, not a recorded schedule
    # the copies of a parallel job (and a user's jobs) share an organization
    assert len(set(inst.org[1:3].tolist())) == 1 and len(set(inst.org[5:8].tolist())) == 1
    assert inst.org[1] == inst.org[5]  # user 2


def test_without_backlog_the_window_is_empty_at_its_start(tmp_path):
    inst = window(tmp_path, backlog=False)
    assert inst.pinned is None and "backlog" not in inst.meta
    assert inst.release.tolist() == [50, 50] and inst.size.tolist() == [10, 11]


def test_backlog_errors(tmp_path):
    with pytest.raises(InstanceError, match="warm-up period and the log's backlog"):
        window(tmp_path, warmup=50)
    rows = [*ROWS[:3], (4, 60, -7, 30, 1, 1), *ROWS[4:]]
    bad = swf(tmp_path, rows, name="bad.swf")
    with pytest.raises(InstanceError) as e:
        trace_to_instance(bad, k=2, start=100, length=200, relative_start=False, backlog=True)
    assert str(e.value).startswith(f"{bad.path}:5: field 3 (wait): -7 is negative")
    # without the backlog, the wait field is not read
    assert trace_to_instance(bad, k=2, start=100, length=200, relative_start=False).n == 2


@pytest.mark.parametrize("name", names())
def test_every_policy_starts_the_running_jobs_first(tmp_path, name):
    inst = window(tmp_path)
    T = inst.meta["horizon"]
    sched = get_policy(name).run(inst, T)
    assert check_schedule(sched) == [], name
    # 8 machines: the 3 pinned copies start at once, whatever the policy
    assert sched.start[inst.pinned].tolist() == [0, 0, 0], name
    for u in range(inst.k):  # each organization alone, on its own machines
        sub = get_policy(name).run(inst, T, members=[u])
        assert check_schedule(sub) == [], (name, u)


def test_pinned_jobs_wait_when_the_machines_are_full(tmp_path):
    # 2 machines for 3 pinned copies: two start at 0, the third when one ends, ahead of
    # every waiting job
    inst = trace_to_instance(
        swf(tmp_path, max_procs=2), k=1, start=100, length=200, relative_start=False, backlog=True
    )
    for name in names():
        s = get_policy(name).run(inst, 200)
        assert check_schedule(s) == [], name
        assert sorted(s.start[:3].tolist()) == [0, 0, 40], name
        assert s.start[3:][s.start[3:] >= 0].min() >= 40, name


def test_cli_backlog(tmp_path, capsys):
    from coopsched.cli import main

    t = swf(tmp_path)
    args = ["simulate", t.path, "-k", "2", "--window-start", "100", "--window-length", "200"]
    assert main([*args, "--backlog", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["jobs"]) == 10 and out["horizon"] == 200
    assert main([*args, "--backlog", "--warmup", "50"]) == 1
    assert "choose one" in capsys.readouterr().err
    assert main(["compare", t.path, "-k", "2", "--window-start", "100", "--backlog"]) == 0
    capsys.readouterr()
    assert main(["simulate", "--backlog"]) == 1  # synthetic workload: no log state
    assert "--backlog: not applicable" in capsys.readouterr().err


# ------------------------------------------------------------------ property


def slow_backlog(rows, t0, t1):
    """Independent reconstruction, one job at a time: (pinned, release, size) per copy in
    FIFO order, and the counts."""
    kept, counts = [], {"waiting": 0, "running": 0, "wait unknown": 0}
    for line, (_, submit, wait, run, q, _) in enumerate(rows, start=2):  # line 1: header
        if submit >= t1:
            continue
        if submit >= t0:
            kept.append(((1, 0, submit - t0, submit, line), (False, submit - t0, run), q))
            continue
        if wait == -1:
            counts["wait unknown"] += 1
            continue
        start, end = submit + wait, submit + wait + run
        if end <= t0:
            continue
        if start < t0:
            counts["running"] += 1
            kept.append(((0, start, 0, submit, line), (True, 0, end - t0), q))
        else:
            counts["waiting"] += 1
            kept.append(((1, 0, 0, submit, line), (False, 0, run), q))
    kept.sort(key=lambda x: x[0])
    copies = [job for _, job, q in kept for _ in range(q)]
    return copies, counts


@st.composite
def logs(draw):
    n = draw(st.integers(1, 12))
    rows = []
    for j in range(n):
        wait = draw(st.one_of(st.just(-1), st.integers(0, 30)))
        rows.append(
            (
                j + 1,
                draw(st.integers(0, 60)),
                wait,
                draw(st.integers(1, 40)),
                draw(st.integers(1, 3)),
                draw(st.integers(1, 4)),
            )
        )
    t0 = draw(st.integers(0, 70))
    return rows, t0, draw(st.integers(1, 40))


@settings(max_examples=150, deadline=None)
@given(case=logs(), owners=st.sampled_from(["user", "random"]))
def test_backlog_matches_a_slow_reconstruction(tmp_path_factory, case, owners):
    rows, t0, length = case
    tr = swf(tmp_path_factory.mktemp("h"), rows, max_procs=12)
    copies, counts = slow_backlog(rows, t0, t0 + length)
    if not copies:
        return  # an empty window is not an instance worth checking
    inst = trace_to_instance(
        tr, k=2, start=t0, length=length, relative_start=False, backlog=True, owners=owners
    )
    pinned = np.zeros(inst.n, dtype=bool) if inst.pinned is None else inst.pinned
    got = list(zip(pinned.tolist(), inst.release.tolist(), inst.size.tolist(), strict=True))
    assert got == copies
    assert inst.meta["backlog"] == counts
    # every policy keeps the pinned-first rule on these instances
    s = get_policy("fairshare").run(inst, length)
    assert check_schedule(s) == []


def test_reproduce_backlog_option(tmp_path, capsys):
    from coopsched.cli import main
    from coopsched.experiments.reproduce import TableSpec

    # the option reaches the table's window options; exclusive with --warmup
    assert TableSpec(50_000, backlog=True).window_options() == {"backlog": True}
    assert TableSpec(50_000).window_options() == {}
    out = str(tmp_path / "r")
    assert main(["reproduce", "table1", "--backlog", "--warmup", "5", "--out", out]) == 1
    assert "choose one" in capsys.readouterr().err
    # the sensitivity study takes its states from --states, not --backlog
    assert main(["reproduce", "sensitivity", "--backlog", "--out", out]) == 1
    assert "backlog" in capsys.readouterr().err


def test_same_rule_as_the_audit(tmp_path):
    """With every wait known, the audit's window of the same SWF log holds the same jobs,
    in the same order, with the same releases, sizes and pinned flags."""
    from coopsched.audit.organizations import by_column
    from coopsched.audit.window import window_instance
    from coopsched.workloads.swf import read_swf_recorded

    rows = [r for r in ROWS if r[2] >= 0]
    tr = swf(tmp_path, rows)
    mine = trace_to_instance(tr, k=1, start=100, length=200, relative_start=False, backlog=True)
    log = read_swf_recorded(tr.path)
    audit = window_instance(log, by_column(log.jobs, "group", log.path), 100, 300).instance
    assert mine.release.tolist() == audit.release.tolist()
    assert mine.size.tolist() == audit.size.tolist()
    assert mine.pinned.tolist() == audit.pinned.tolist()


def _fake_lpc_egee(dirpath):
    """A small SWF log under LPC-EGEE's file name: 120 serial jobs over 3e5 s, each
    waiting a while, 4 users in 2 groups."""
    import gzip

    lines = ["; MaxProcs: 8"]
    for j in range(120):
        submit = j * 2500
        wait, run = (j * 37) % 4000, 3000 + (j * 91) % 9000
        f = [j + 1, submit, wait, run, 1, -1, -1, 1, -1, -1, 1, 1 + j % 4, 1 + j % 2]
        f += [-1, 1, 1, -1, -1]
        lines.append(" ".join(str(x) for x in f))
    path = dirpath / "LPC-EGEE-2004-1.2-cln.swf.gz"
    with gzip.open(path, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    return dirpath


def test_fig10_and_production_take_the_window_options(tmp_path):
    """The window options reach every task of Figure 10 and of the production study, and
    Figure 10 runs end to end from the log's own state (pinned running jobs)."""
    import json

    from coopsched.cli import main
    from coopsched.experiments.studies import get_study
    from coopsched.experiments.windows import WindowState

    traces = _fake_lpc_egee(tmp_path)
    out = tmp_path / "fig10"
    args = ["reproduce", "fig10", "--traces", str(traces), "--windows", "2", "--orgs", "2,3"]
    args += ["--backlog", "--window-sampling", "job", "--owners", "random", "--workers", "1"]
    assert main([*args, "--out", str(out)]) == 0
    rows = [json.loads(x) for x in (out / "rows.jsonl").read_text().splitlines()]
    assert len(rows) == 4
    for r in rows:
        assert r["task"]["window_options"] == {"backlog": True, "owners": "random"}
    assert any(r["backlog_running"] > 0 for r in rows)
    assert "running (pinned)" in (out / "summary.md").read_text()
    with pytest.raises(ValueError, match="choose one"):
        WindowState(warmup=10, backlog=True)
    prod = get_study("production")(traces=str(traces), windows=1, warmup=5000)
    prod.traces = ("LPC-EGEE",)  # the fake folder holds only this log
    tasks = prod.tasks()
    assert tasks and all(t["window_options"] == {"warmup": 5000} for t in tasks)
