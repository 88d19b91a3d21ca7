"""Schedules written as SWF (read back by our reader) and as Batsim's out_jobs.csv
(read back with pandas), and Gantt charts of thousands of jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd

import coopsched as cs
from coopsched.online.export import BATSIM_COLUMNS, batsim_frame


def _sched(horizon=None):
    inst = cs.synthetic_instance(k=3, seed=2)
    return cs.simulate(inst, "fairshare", horizon=horizon)


def test_swf_round_trip_with_waits(tmp_path):
    s = _sched(horizon=3000)
    p = tmp_path / "s.swf"
    left_out = cs.write_schedule_swf(s, p)
    assert left_out == len(s.unstarted) > 0
    tr = cs.read_swf(p)
    started = np.flatnonzero(s.start >= 0)
    assert len(tr.jobs) == len(started)
    j = tr.jobs.set_index("job")
    inst = s.instance
    np.testing.assert_array_equal(j.loc[started + 1, "submit"], inst.release[started])
    np.testing.assert_array_equal(
        j.loc[started + 1, "wait"], s.start[started] - inst.release[started]
    )
    np.testing.assert_array_equal(j.loc[started + 1, "run_time"], inst.size[started])
    np.testing.assert_array_equal(j.loc[started + 1, "group"], inst.org[started] + 1)
    assert tr.header["Excluded"].startswith(f"{left_out} job(s)")


def test_batsim_out_jobs_read_back(tmp_path):
    s = _sched()
    p = tmp_path / "out_jobs.csv"
    assert cs.write_batsim_jobs(s, p) == 0
    df = pd.read_csv(p)
    assert tuple(df.columns) == BATSIM_COLUMNS
    assert len(df) == s.instance.n
    inst = s.instance
    np.testing.assert_array_equal(df["starting_time"], s.start)
    np.testing.assert_array_equal(df["finish_time"], s.start + inst.size)
    np.testing.assert_array_equal(df["waiting_time"], s.start - inst.release)
    np.testing.assert_array_equal(df["allocated_resources"], s.machine)
    assert (df["turnaround_time"] == df["waiting_time"] + df["execution_time"]).all()
    assert set(df["metadata"]) == set(inst.names)


def test_batsim_leaves_out_unstarted_jobs():
    s = _sched(horizon=3000)
    assert len(batsim_frame(s)) == int((s.start >= 0).sum())


def test_gantt_thousands_of_jobs(tmp_path):
    inst = cs.synthetic_instance(k=5, machines=200, jobs=4000, seed=0)
    s = cs.simulate(inst, "fifo")
    assert s.instance.n == 4000
    p = tmp_path / "g.png"
    cs.plot_gantt(s, p)
    data = p.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
