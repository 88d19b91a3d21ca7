"""``coopsched reproduce rigid``: the price of fairness with rigid jobs (its pieces, and a
small run on a real parallel log)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import TRACES

from coopsched.experiments.rigid_study import RULES, censored
from coopsched.online.policies import get_policy
from coopsched.workloads.instance import Instance, Organization


def _two_jobs() -> Instance:
    # a 20-wide job waits for a 1-wide one on 20 machines; a third job arrives late
    return Instance(
        [Organization("a", 10), Organization("b", 10)],
        org=np.array([0, 1, 0]),
        release=np.array([0, 1, 8]),
        size=np.array([5, 20, 3]),
        processors=np.array([1, 20, 1]),
        requested=np.array([5, 20, 3]),
    )


def test_censored_waits_count_unstarted_jobs_at_the_horizon():
    inst = _two_jobs()
    sched = get_policy("fifo").run(inst, 10, backfill="easy")
    assert sched.start.tolist()[:2] == [0, 5]
    got = censored(sched, 10)
    # waits: 0, 4, and the third job (released 8) waits until 25 > horizon: counted as 2
    s2 = int(sched.start[2])
    assert s2 >= 25 or s2 == -1
    assert got["wait"] == pytest.approx((0 + 4 + 2) / 3)
    bsld = [1.0, (4 + 20) / 20, max(1.0, (2 + 3) / 10)]
    assert got["bsld"] == pytest.approx(sum(bsld) / 3)
    assert got["wide_wait"] == pytest.approx(4.0)  # the 20-wide job is the only wide one
    # a job released after the horizon does not count
    assert censored(sched, 1)["wait"] == 0.0


@pytest.mark.skipif(
    not (TRACES / "SDSC-SP2-1998-4.2-cln.swf.gz").exists(), reason="traces not available"
)
def test_small_rigid_study_on_a_parallel_log(tmp_path):
    from coopsched.experiments.studies import run_study

    out = tmp_path / "rigid"
    _, md = run_study(
        "rigid",
        out,
        windows=1,
        traces=TRACES,
        logs="SDSC-SP2",
        lengths="20000",
        policies="fifo,directcontr,slurm-fairtree",
        workers=1,
        quiet=True,
    )
    df = pd.read_csv(out / "results.csv")
    assert len(df) == 2  # one window, two machine splits
    for rule in RULES:
        assert (df[f"ratio_{rule}_fifo"] >= 0).all()
        assert ((df[f"util_{rule}_ref"] > 0) & (df[f"util_{rule}_ref"] <= 1)).all()
    stats = pd.read_csv(out / "summary.csv")
    ref = stats[(stats.policy == "ref") & (stats.rule == "easy")]
    assert float(ref["ratio"].iloc[0]) == 0.0
    assert "| SDSC-SP2 | 20,000 | easy |" in md
    assert (out / "utilization.png").stat().st_size > 1000


def test_unknown_log_is_refused():
    from coopsched.experiments.rigid_study import RigidStudy

    with pytest.raises(ValueError, match="unknown log"):
        RigidStudy(logs="NOPE", traces=TRACES)
