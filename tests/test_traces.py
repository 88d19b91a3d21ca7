"""Tests on the real traces in ../shared/traces (skipped when absent)."""

import pytest
from conftest import trace_path

from coopsched.online.checker import check_schedule
from coopsched.online.fairness import fairness
from coopsched.online.policies import get_policy, names
from coopsched.workloads.prepare import random_windows, trace_machines, trace_to_instance
from coopsched.workloads.swf import read_swf


@pytest.fixture(scope="module")
def lpc():
    return read_swf(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))


def test_lpc_egee_loads(lpc):
    assert len(lpc.jobs) + lpc.n_dropped == 234889
    assert lpc.max_nodes == 70 and trace_machines(lpc) == 70
    assert (lpc.jobs["processors"] == 1).all()


def test_ricc_loads_with_header():
    tr = read_swf(trace_path("RICC-2010-2.swf.gz"))
    assert len(tr.jobs) + tr.n_dropped == 447794
    assert trace_machines(tr) == 8192


def test_metacentrum_needs_machines():
    tr = read_swf(trace_path("METACENTRUM-2009-2.swf.gz"))
    assert tr.max_procs is None
    assert trace_to_instance(tr, k=5, length=10_000, machines=60).total_machines == 60


@pytest.mark.parametrize("policy", names())
def test_policies_on_lpc_windows(lpc, policy):
    for start in random_windows(lpc, 50_000, 3, seed=11):
        inst = trace_to_instance(lpc, k=5, start=start, length=50_000, seed=start)
        s = get_policy(policy).run(inst, 50_000)
        assert check_schedule(s) == []


def test_fairness_metric_on_a_loaded_lpc_window(lpc):
    # a window with contention (the 90th-percentile load of 5e4-s windows is above 1)
    starts = random_windows(lpc, 50_000, 40, seed=5)
    loads = []
    for st in starts:
        inst = trace_to_instance(lpc, k=5, start=st, length=50_000, seed=1)
        loads.append((int(inst.size.sum()), st))
    st = max(loads)[1]
    inst = trace_to_instance(lpc, k=5, start=st, length=50_000, seed=1)
    ref = get_policy("ref").run(inst, 50_000)
    rr = fairness(get_policy("roundrobin").run(inst, 50_000), ref, 50_000)
    assert rr.p_tot > 0
    assert fairness(ref, ref, 50_000).dpsi == 0
