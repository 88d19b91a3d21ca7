import itertools

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import best_utilization, psi_job

from coopsched.online.checker import ScheduleError, assert_valid, check_schedule
from coopsched.online.engine import Policy, PolicyError, simulate
from coopsched.online.policies import POLICIES, get_policy
from coopsched.online.schedule import Schedule
from coopsched.workloads.instance import make_instance

SIMPLE = [
    "fifo",
    "roundrobin",
    "fairshare",
    "utfairshare",
    "currfairshare",
    "directcontr",
    "slurmclassic",
    "slurmfairtree",
    "maui",
    "htcondor",
]
ALL = SIMPLE + ["rand", "ref"]


@settings(max_examples=60, deadline=None)
@given(
    inst=small_instances(),
    policy=st.sampled_from(ALL),
    horizon=st.one_of(st.none(), st.integers(1, 30)),
)
def test_every_policy_gives_valid_schedules(inst, policy, horizon):
    """Valid, greedy, FIFO per organization, nothing lost (hypothesis)."""
    if policy == "ref" and horizon is None:
        horizon = 40
    sched = get_policy(policy).run(inst, horizon)
    assert check_schedule(sched) == []
    if horizon is None:
        assert (sched.start >= 0).all()


@settings(max_examples=40, deadline=None)
@given(inst=small_instances(max_k=3), policy=st.sampled_from(ALL), data=st.data())
def test_coalition_schedules_are_valid(inst, policy, data):
    members = data.draw(st.sets(st.integers(0, inst.k - 1), min_size=1))
    sched = get_policy(policy).run(inst, 40, members=members)
    assert sched.coalition == tuple(sorted(members))
    assert check_schedule(sched) == []
    assert (sched.start[~np.isin(inst.org, list(members))] == -1).all()


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(max_jobs=12), policy=st.sampled_from(SIMPLE), data=st.data())
def test_non_clairvoyant(inst, policy, data):
    """Changing the sizes of jobs not completed by t0 changes no decision up to t0."""
    a = get_policy(policy).run(inst)
    t0 = data.draw(st.integers(0, 25))
    size = inst.size.copy()
    for j in range(inst.n):
        s = a.start[j]
        if s + size[j] > t0:  # not completed by t0 (s >= 0 always here: no horizon)
            low = max(1, t0 - s + 1)
            size[j] = data.draw(st.integers(low, low + 6))
    other = make_instance(
        inst.machines.tolist(),
        list(zip(inst.org.tolist(), inst.release.tolist(), size.tolist(), strict=True)),
    )
    b = get_policy(policy).run(other)
    for j in range(inst.n):
        if a.start[j] <= t0 or b.start[j] <= t0:
            assert a.start[j] == b.start[j] and a.machine[j] == b.machine[j]


def test_engine_small_example_by_hand():
    # two orgs, one machine each; FIFO in global submission order
    inst = make_instance([1, 1], [(0, 0, 3), (0, 0, 2), (1, 1, 4), (0, 2, 1)])
    s = get_policy("fifo").run(inst)
    assert s.start.tolist() == [0, 0, 2, 3]
    assert s.machine.tolist() == [0, 1, 1, 0]
    assert_valid(s)
    # psi_sp at t=4 by Eq. 3: job0 q=3 -> 3*4-3=9; job1 q=2 -> 2*4-1=7; job3 q=1 -> 1; job2 q=2 -> 2*2-1=3
    assert s.psi(4) == [9 + 7 + 1, 3]


def test_psi_matches_eq3_everywhere():
    inst = make_instance([2], [(0, 0, 5), (0, 1, 2), (0, 1, 7)])
    s = get_policy("fifo").run(inst)
    for t in range(0, 15):
        direct = sum(psi_job(int(s.start[j]), int(inst.size[j]), t) for j in range(inst.n))
        assert s.psi(t) == [direct]


def test_psi_as_sum_of_w():
    """psi_sp(t) = W(1) + ... + W(t), W(tau) unit parts processed before tau."""
    inst = make_instance([1, 1], [(0, 0, 4), (1, 2, 3), (0, 3, 2)])
    s = get_policy("roundrobin").run(inst)
    for t in range(12):
        assert sum(s.psi(t)) == sum(sum(s.work(tau)) for tau in range(1, t + 1))


def test_horizon_reports_unstarted():
    inst = make_instance([1], [(0, 0, 10), (0, 0, 10), (0, 5, 1)])
    s = get_policy("fifo").run(inst, horizon=8)
    assert s.start.tolist() == [0, -1, -1]
    assert s.unstarted.tolist() == [1, 2]
    assert check_schedule(s) == []


def test_policy_returning_bad_org_is_an_error():
    class Bad(Policy):
        name = "bad"

        def select(self, view):
            return 1

    with pytest.raises(PolicyError, match="no waiting job"):
        Bad().run(make_instance([1, 1], [(0, 0, 1)]))


def test_roundrobin_cycles():
    inst = make_instance([1, 0, 0], [(0, 0, 1)] * 3 + [(1, 0, 1)] * 3 + [(2, 0, 1)] * 3)
    s = get_policy("roundrobin").run(inst)
    order = inst.org[np.argsort(s.start, kind="stable")].tolist()
    assert order == [0, 1, 2] * 3


def test_fairshare_family_prefers_smallest_ratio():
    # org 0 owns 3 machines, org 1 one; both flood the system at t=0 with long jobs
    jobs = [(0, 0, 10)] * 4 + [(1, 0, 10)] * 4
    inst = make_instance([3, 1], jobs)
    s = get_policy("currfairshare").run(inst, horizon=5)
    # running counts kept proportional to shares 3:1
    assert sorted(inst.org[s.start == 0].tolist()) == [0, 0, 0, 1]
    fs = get_policy("fairshare").run(inst)
    assert check_schedule(fs) == []


def test_directcontr_credits_machine_owner():
    # org 1 contributes the only machine and has no jobs: its estimated contribution grows
    inst = make_instance([0, 1], [(0, 0, 3), (0, 0, 3)])
    pol = get_policy("directcontr")
    s = pol.run(inst)
    assert s.start.tolist() == [0, 3]
    assert pol.phi(1, 6) == sum(s.psi(6))  # all utility was produced on org 1's machine
    assert pol.phi(0, 6) == 0


def test_registry():
    assert set(ALL) <= set(POLICIES)
    with pytest.raises(KeyError, match="unknown policy"):
        get_policy("nope")
    assert get_policy("Round-Robin").name == "roundrobin"


# ------------------------------------------------------------------ the paper's examples


def coalition_values(inst, policy, t):
    k = inst.k
    vals = {}
    for r in range(1, k + 1):
        for C in itertools.combinations(range(k), r):
            s = get_policy(policy).run(inst, members=C)
            vals[C] = sum(s.psi(t)[u] for u in C)
    return vals


@settings(max_examples=40, deadline=None)
@given(inst=small_instances(max_k=3, unit=True), t=st.integers(0, 20))
def test_prop_5_4_unit_jobs_every_greedy_policy_same_values(inst, t):
    """Prop. 5.4: with unit jobs all greedy policies give every coalition the same value."""
    base = coalition_values(inst, "fifo", t)
    for policy in ["roundrobin", "fairshare", "utfairshare", "currfairshare", "directcontr"]:
        assert coalition_values(inst, policy, t) == base


def test_prop_5_5_values_not_supermodular():
    """Prop. 5.5: v({a,c}) = 4, v({b,c}) = 4, v({a,b,c}) = 7, v({c}) = 0 at t = 2."""
    inst = make_instance([1, 1, 1], [(0, 0, 1), (0, 0, 1), (1, 0, 1), (1, 0, 1)], names="abc")
    for policy in SIMPLE + ["ref"]:
        v = coalition_values(inst, policy, 2)
        assert (v[(0, 2)], v[(1, 2)], v[(0, 1, 2)], v[(2,)]) == (4, 4, 7, 0)
        assert v[(0, 1, 2)] + v[(2,)] < v[(0, 2)] + v[(1, 2)]


def test_fig7_greedy_utilization_100_vs_75():
    """Fig. 7: 4 jobs of size 3 (O1), 2 of size 6 (O2), 4 machines, T = 6."""
    o2_first = make_instance([2, 2], [(1, 0, 6)] * 2 + [(0, 0, 3)] * 4)
    o1_first = make_instance([2, 2], [(0, 0, 3)] * 4 + [(1, 0, 6)] * 2)
    a = get_policy("fifo").run(o2_first, horizon=6)
    b = get_policy("fifo").run(o1_first, horizon=6)
    assert a.utilization(6) == 1.0
    assert b.utilization(6) == 0.75
    assert best_utilization(o1_first, 6) == 24


@settings(max_examples=25, deadline=None)
@given(
    inst=small_instances(max_k=2, max_jobs=5, max_release=4, max_size=5),
    T=st.integers(1, 7),
    policy=st.sampled_from(SIMPLE + ["ref"]),
)
def test_theorem_6_2_greedy_is_three_quarters_competitive(inst, T, policy):
    """Thm. 6.2: any greedy schedule reaches >= 3/4 of the best utilization (exhaustive)."""
    if inst.total_machines > 3:
        return
    best = best_utilization(inst, T)
    got = sum(get_policy(policy).run(inst, T).work(T))
    assert 4 * got >= 3 * best


# ------------------------------------------------------------------ the checker can fail


def bad_schedule(start, machine, inst, horizon=None):
    return Schedule(inst, np.array(start), np.array(machine), "hand", horizon)


def test_checker_detects_each_rule():
    inst = make_instance([1, 1], [(0, 2, 3), (0, 2, 3), (1, 0, 2)])
    rules = lambda s: {v.rule for v in check_schedule(s)}  # noqa: E731
    assert "release" in rules(bad_schedule([1, 5, 0], [0, 0, 1], inst))
    assert "overlap" in rules(bad_schedule([2, 3, 0], [0, 0, 1], inst))
    assert "fifo" in rules(bad_schedule([5, 2, 0], [0, 1, 1], inst))
    assert "greedy" in rules(bad_schedule([2, 2, 3], [0, 1, 0], inst))
    assert "lost" in rules(bad_schedule([2, -1, 0], [0, -1, 1], inst))
    assert "machine" in rules(bad_schedule([2, 2, 0], [0, 7, 1], inst))
    good = bad_schedule([2, 2, 0], [0, 1, 1], inst)
    assert check_schedule(good) == []
    with pytest.raises(ScheduleError):
        assert_valid(bad_schedule([1, 5, 0], [0, 0, 1], inst))


def test_simulate_members_uses_only_their_machines():
    inst = make_instance([1, 2], [(0, 0, 5), (0, 0, 5), (0, 0, 5)])
    s = simulate(inst, get_policy("fifo"), members=[0])
    assert s.start.tolist() == [0, 5, 10]
    assert set(s.machine.tolist()) == {0}


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(max_k=3, max_jobs=20), horizon=st.one_of(st.none(), st.integers(1, 30)))
def test_fifo_kernel_matches_engine(inst, horizon):
    from coopsched.online.kernels import fifo_starts

    s = get_policy("fifo").run(inst, horizon)
    order = inst.fifo_order()
    fast = np.full(inst.n, -1)
    fast[order] = fifo_starts(inst.release[order], inst.size[order], inst.total_machines, horizon)
    assert fast.tolist() == s.start.tolist()


@pytest.mark.parametrize("policy", ["ref", "rand", "fifo"])
def test_coalition_of_machineless_members(policy):
    """Found by hypothesis: a coalition whose members own no machine starts nothing."""
    inst = make_instance([1, 0], [(1, 0, 1)])
    s = get_policy(policy).run(inst, 40, members=[1])
    assert s.start.tolist() == [-1] and s.machine.tolist() == [-1]
    assert check_schedule(s) == []
