import json
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.cli import main
from coopsched.migration.constructions import first_on_slow, for_policy, hunt, prop1, prop2, prop3
from coopsched.migration.engine import MigrationError, MigrationPolicy, RelatedInstance, simulate
from coopsched.migration.policies import NON_MIGRATING, POLICIES, get_policy
from coopsched.migration.properties import (
    check_ef,
    check_ilv,
    check_non_wasteful,
    check_wpm,
    ef_violations,
)


@st.composite
def related(draw, max_jobs=6, distinct=False):
    speeds = draw(st.lists(st.sampled_from([1, 2, 3]), min_size=1, max_size=3))
    n = draw(st.integers(1, max_jobs))
    rel = draw(st.lists(st.integers(0, 10), min_size=n, max_size=n, unique=distinct))
    jobs = [(r, draw(st.integers(1, 8)), draw(st.sampled_from([1, 2, 3]))) for r in rel]
    return RelatedInstance.make(speeds, jobs)


def test_exact_rational_completion():
    res = simulate(RelatedInstance.make([3], [(6, 4, 1), (7, 2, 2)]), get_policy("gm"))
    # job 1 (priority 2) preempts job 0 at 7: 2 units at speed 3 -> 23/3; job 0 has 1 unit left -> 8
    assert res.completion == [Fraction(8), Fraction(23, 3)]
    assert res.preemptions == [1, 0]


@settings(max_examples=80, deadline=None)
@given(inst=related())
def test_gm_is_envy_free_and_weakly_performance_monotone(inst):
    make = lambda: get_policy("gm")  # noqa: E731
    res = simulate(inst, make())
    assert check_ef(res).holds
    assert check_wpm(make, inst, base=res).holds


@settings(max_examples=80, deadline=None)
@given(inst=related(distinct=True))
def test_gm_independent_of_low_value_jobs(inst):
    assert check_ilv(lambda: get_policy("gm"), inst).holds


@pytest.mark.parametrize("name", NON_MIGRATING)
@pytest.mark.parametrize("X", [10, 40, 100])
def test_prop_1_every_non_migrating_busy_scheduler_violates_ef(name, X):
    def make():
        return get_policy(name, seed=3)

    inst = for_policy(make, "ef", X)
    v = check_ef(simulate(inst, make()))
    assert not v.holds and v.jobs == (3, 4)
    assert check_ef(simulate(inst, get_policy("gm"))).holds


@pytest.mark.parametrize("name", NON_MIGRATING)
@pytest.mark.parametrize("X", [10, 40, 100])
def test_prop_2_every_non_migrating_busy_scheduler_violates_wpm(name, X):
    def make():
        return get_policy(name, seed=3)

    inst = for_policy(make, "wpm", X)
    v = check_wpm(make, inst, jobs=[3], deltas=[2])
    assert not v.holds, v
    assert check_wpm(lambda: get_policy("gm"), inst).holds


@pytest.mark.parametrize("name", ["fcfs-fastest", "fcfs-random", "priority-fastest"])
@pytest.mark.parametrize("n", [2, 3, 5])
def test_prop_3_non_preemptive_busy_schedulers_violate_ilv(name, n):
    inst = prop3(n)
    v = check_ilv(lambda: get_policy(name), inst)
    assert not v.holds and v.jobs == (n,)
    res = simulate(inst, get_policy(name))
    assert res.completion[n] == 5 * n  # waits for the low jobs until 2n
    assert check_ilv(lambda: get_policy("gm"), inst).holds


@pytest.mark.parametrize("n", [2, 3, 5])
def test_observation_preemption_without_migration_is_wasteful(n):
    inst = prop3(n)
    assert check_ilv(lambda: get_policy("preemptive-priority"), inst).holds
    v = check_non_wasteful(simulate(inst, get_policy("preemptive-priority")))
    assert not v.holds
    assert check_non_wasteful(simulate(inst, get_policy("gm"))).holds


def test_constructions_cover_both_cases():
    assert first_on_slow(get_policy("fcfs-fastest")) is False
    slow_first = {first_on_slow(get_policy("fcfs-random", seed=s)) for s in range(20)}
    assert slow_first == {True, False}
    for flag in (True, False):
        for name in NON_MIGRATING:

            class Forced(POLICIES[name]):
                def order_machines(self, idle, _flag=flag):
                    return sorted(
                        idle,
                        key=lambda m: (self.inst.speeds[m] if _flag else -self.inst.speeds[m], m),
                    )

            if name == "preemptive-priority":
                continue
            assert not check_ef(simulate(prop1(40, flag), Forced())).holds
            assert not check_wpm(lambda F=Forced: F(), prop2(40, flag), jobs=[3], deltas=[2]).holds


@settings(max_examples=60, deadline=None)
@given(inst=related(), name=st.sampled_from(sorted(POLICIES)), data=st.data())
def test_non_clairvoyant(inst, name, data):
    """Changing the work of jobs unfinished at t0 changes no placement before t0."""
    a = simulate(inst, get_policy(name, 1))
    t0 = data.draw(st.integers(0, 12))
    work = list(inst.work)
    for j in range(inst.n):
        if a.completion[j] > t0:
            work[j] += data.draw(st.integers(0, 5))
    other = RelatedInstance(
        inst.speeds,
        inst.machine_org,
        inst.release,
        tuple(work),
        inst.priority,
        inst.org,
        inst.names,
    )
    b = simulate(other, get_policy(name, 1))

    def before(res):
        return sorted((j, m, s) for j, m, s, e in res.segments if s < t0)

    assert before(a) == before(b)


@settings(max_examples=60, deadline=None)
@given(inst=related(), name=st.sampled_from(["fcfs-fastest", "fcfs-random", "priority-fastest"]))
def test_busy_schedulers_are_busy_and_never_preempt(inst, name):
    res = simulate(inst, get_policy(name, 2))
    assert sum(res.migrations) == 0 and sum(res.preemptions) == 0
    assert check_non_wasteful(res).holds
    points = sorted({r for r in inst.release} | {c for c in res.completion})
    for a, b in zip(points, points[1:], strict=False):
        mid = (Fraction(a) + Fraction(b)) / 2
        busy = {m for j, m, s, e in res.segments if s <= mid < e}
        waiting = [
            j
            for j in range(inst.n)
            if inst.release[j] <= mid
            and not any(jj == j and s <= mid for jj, _, s, _ in res.segments)
        ]
        assert not (waiting and len(busy) < inst.machines)


def test_engine_enforces_declared_capabilities():
    class Cheater(MigrationPolicy):
        name = "cheater"

        def assign(self, t, jobs, idle):
            return {len(jobs) % 2: jobs[0].id} if jobs else {}

    inst = RelatedInstance.make([1, 1], [(0, 4, 1), (1, 4, 1)])
    with pytest.raises(MigrationError, match="non-preemptive"):
        simulate(inst, Cheater())


def test_migration_cost_breaks_envy_freeness_but_not_without_cost():
    # found by hunt("gm", "ef", cost=10): the high-priority job 2 preempts job 0, which
    # then migrates to the fast machine and pays the delay
    inst = RelatedInstance.make([2, 1], [(5, 4, 1), (8, 8, 1), (4, 7, 2)])
    assert ef_violations(simulate(inst, get_policy("gm"), 0)) == []
    costly = simulate(inst, get_policy("gm"), 10)
    assert sum(costly.migrations) > 0
    assert ef_violations(costly) == [(0, 1)]
    for name in NON_MIGRATING:
        assert (
            simulate(inst, get_policy(name), 10).completion
            == simulate(inst, get_policy(name), 0).completion
        )


@settings(max_examples=40, deadline=None)
@given(inst=related())
def test_literal_and_sticky_gm_give_the_same_completions_at_zero_cost(inst):
    a = simulate(inst, POLICIES["gm"](sticky=True))
    b = simulate(inst, POLICIES["gm"](sticky=False))
    assert a.completion == b.completion
    assert sum(a.migrations) <= sum(b.migrations)


def test_hunt_finds_small_counterexamples():
    c = hunt("fcfs-fastest", "ilv", tries=200)
    assert c is not None and not c.verdict.holds and c.instance.n <= 3
    assert hunt("gm", "ef", tries=100) is None


def test_cli_migration(tmp_path, capsys):
    p = tmp_path / "m.json"
    p.write_text(
        json.dumps(
            {
                "organizations": [{"name": "a", "machines": 2, "speeds": [1, 2]}],
                "jobs": [
                    {"org": "a", "release": r, "size": t, "priority": 1}
                    for r, t in [(0, 8), (1, 7), (4, 10), (8, 8), (9, 9)]
                ],
            }
        )
    )
    assert main(["migration", str(p), "--policy", "fcfs-fastest", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["properties"]["ef"]["holds"] is False and out["properties"]["wpm"]["holds"] is False
    assert out["jobs"][4]["completion"] == "27/2"
    assert main(["migration", str(p), "--policy", "gm", "--format", "json"]) == 0
    assert all(v["holds"] for v in json.loads(capsys.readouterr().out)["properties"].values())
    assert (
        main(["migration", "--hunt", "ilv", "--policy", "priority-fastest", "--tries", "200"]) == 0
    )
    assert "ilv: VIOLATED" in capsys.readouterr().out
    assert main(["migration", "--policy", "nope", str(p)]) == 1


@pytest.mark.slow
def test_quick_study(tmp_path):
    from conftest import TRACES

    if not (TRACES / "LPC-EGEE-2004-1.2-cln.swf.gz").exists():
        pytest.skip("traces not available")
    from coopsched.experiments.studies import run_study

    df, md = run_study(
        "migration", tmp_path / "s", quick=True, traces=TRACES, workers=2, quiet=True
    )
    gm0 = df[(df.policy == "gm") & (df.cost == 0)]
    assert (gm0["ef_violations"] == 0).all()  # zero-cost GM is envy-free (Lemma 1)
    assert (tmp_path / "s" / "migration.png").stat().st_size > 1000
    assert "| GM | 0 |" in md


def test_an_unknown_property_names_the_parameter_and_on_the_command_line_the_flag(capsys):
    from coopsched.migration.reports import hunt_report

    with pytest.raises(ValueError, match="^prop: takes one of ef"):
        hunt_report("fairness")
    assert main(["migration", "--hunt", "fairness"]) == 1
    assert "--hunt: takes one of ef" in capsys.readouterr().err
