"""Rigid parallel jobs and backfilling in the online engine (docs/conventions.md, "Rigid jobs
and backfilling"; coopsched.online.rigid)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import psi_job

from coopsched.online.checker import check_schedule
from coopsched.online.engine import simulate
from coopsched.online.policies import available, get_policy
from coopsched.online.rigid import BACKFILL, QUEUE_RULES
from coopsched.online.schedule import Schedule
from coopsched.testing import random_rigid_instance
from coopsched.workloads.instance import Instance, InstanceError, make_instance

RULES = BACKFILL
NAMES = [c.name for c in available()]


def rigid(inst: Instance, q, requested=None) -> Instance:
    req = None if requested is None else np.asarray(requested)
    return Instance(
        inst.organizations,
        inst.org,
        inst.release,
        inst.size,
        np.asarray(q),
        requested=req,
        pinned=inst.pinned,
    )


# A worked example: machines 2 + 1 + 1; jobs (org, release, size), processors, requested
EXAMPLE = make_instance(
    [2, 1, 1], [(0, 0, 3), (1, 0, 2), (1, 1, 4), (2, 1, 2), (0, 2, 1), (2, 3, 3), (1, 3, 1)]
)
Q = [2, 1, 3, 1, 4, 2, 1]


def example(requested=True):
    return rigid(EXAMPLE, Q, EXAMPLE.size + 1 if requested else None)


def test_fifo_easy_worked_example():
    """By hand: at t=1 job 2 (3 processors) waits for 3 machines; the shadow time is 4
    (job 1 expected at 3, job 0 at 4), so job 3 (1 processor, requested 3: ends by 4)
    backfills; at t=3 job 6 backfills beside job 4's reservation (shadow 8)."""
    s = simulate(example(), get_policy("fifo"), backfill="easy")
    assert s.start.tolist() == [0, 0, 3, 1, 7, 8, 3]
    assert s.info["backfill"] == "easy" and s.machine.tolist() == [-1] * 7
    assert check_schedule(s) == []


def test_fifo_none_and_first_fit_worked_example():
    # none: FIFO's pick at t=1 (job 2, 3 processors) does not fit: nothing else starts
    assert simulate(example(), get_policy("fifo"), backfill="none").start.tolist() == [
        0,
        0,
        3,
        3,
        7,
        8,
        8,
    ]
    # first-fit: the oldest job that fits, among the organizations' oldest jobs
    assert simulate(example(), get_policy("fifo"), backfill="first-fit").start.tolist() == [
        0,
        0,
        3,
        1,
        7,
        8,
        3,
    ]


def test_auto_rule_is_easy_with_requested_times_else_first_fit():
    assert simulate(example(), get_policy("fifo")).info["backfill"] == "easy"
    assert simulate(example(False), get_policy("fifo")).info["backfill"] == "first-fit"


def test_easy_needs_requested_times():
    with pytest.raises(ValueError, match="backfill='easy' reads requested times, and job 0"):
        simulate(example(False), get_policy("fifo"), backfill="easy")
    with pytest.raises(ValueError, match="backfill: 'eager'"):
        simulate(example(), get_policy("fifo"), backfill="eager")


def test_a_job_wider_than_the_machines_never_starts_and_holds_nothing():
    inst = rigid(make_instance([1, 1], [(0, 0, 2), (0, 0, 2), (1, 0, 2)]), [3, 1, 1])
    s = simulate(inst, get_policy("fifo"), backfill="none")
    assert s.start.tolist() == [-1, 0, 0]  # its organization's next job is not held
    assert s.info["too_wide"] == {"count": 1, "machines": 2, "first": [0]}
    assert check_schedule(s) == []
    # in organization 0's coalition alone (1 machine) job 0 is too wide there as well
    alone = simulate(inst, get_policy("fifo"), members=[0], backfill="first-fit")
    assert alone.start.tolist() == [-1, 0, -1]


def test_a_job_outliving_its_request_repairs_the_reservation():
    """Job 0 requested 2 but runs 10. At t=1 job 1 (2 processors) reserves for t=2, job
    0's expected end, and job 2 (another organization, requested 1) backfills: it ends
    by 2. At t=2 job 0 has outlived its request: it is expected at t+1, the reservation
    is recomputed, and job 1 starts when job 0 really ends."""
    inst = rigid(make_instance([2, 0], [(0, 0, 10), (0, 1, 3), (1, 1, 1)]), [1, 2, 1], [2, 3, 1])
    s = simulate(inst, get_policy("fifo"), backfill="easy")
    assert s.start.tolist() == [0, 10, 1]
    assert check_schedule(s) == []


def test_psi_counts_a_job_on_q_processors_as_q_unit_parts():
    inst = rigid(make_instance([4], [(0, 0, 3)]), [3])
    s = simulate(inst, get_policy("fifo"), 10)
    assert s.psi(10) == [3 * psi_job(0, 3, 10)]
    assert s.work(10) == [9] and s.utilization(10) == pytest.approx(9 / 40)


@settings(max_examples=30, deadline=None)
@given(inst=small_instances(max_k=3, max_jobs=9), rule=st.sampled_from(RULES))
def test_with_one_processor_per_job_every_rule_is_the_greedy_engine(inst, rule):
    """Every registered policy (REF and RAND included): rigid jobs on one processor each
    give exactly the sequential schedule, under every rule."""
    one = rigid(inst, np.ones(inst.n, np.int64), inst.size + 1)
    from coopsched.online.ref.rigid import ref_rigid_schedule

    by_coalition, values = ref_rigid_schedule(one, 25, rule, coalition_runs=True)
    kernel, kernel_values = ref_rigid_schedule(one, 25, rule)
    assert by_coalition.start.tolist() == kernel.start.tolist() and values == kernel_values
    for name in NAMES:
        a = simulate(inst, get_policy(name), 25)
        b = simulate(one, get_policy(name), 25, backfill=rule)
        assert a.start.tolist() == b.start.tolist(), name
        assert a.psi() == b.psi(), name


@pytest.mark.parametrize("name", NAMES)
def test_every_policy_gives_valid_rigid_schedules_under_every_rule(name):
    rng = np.random.default_rng(7)
    for _ in range(15):
        inst = random_rigid_instance(rng)
        for rule in RULES:
            for horizon in (None, 8):
                s = simulate(inst, get_policy(name), horizon, backfill=rule, engine="python")
                assert check_schedule(s) == [], (rule, horizon)


# ----------------------------------------------------------------------- the checker


def _sched(inst, start, rule, horizon=None):
    return Schedule(
        inst,
        np.array(start),
        np.full(inst.n, -1),
        "hand",
        horizon,
        info={"backfill": rule},
    )


def test_checker_catches_overload_fifo_and_too_wide():
    inst = rigid(make_instance([2], [(0, 0, 2), (0, 0, 2), (0, 0, 1)]), [2, 1, 3])
    v = check_schedule(_sched(inst, [0, 0, 0], "first-fit"))
    rules = {x.rule for x in v}
    assert {"capacity", "too-wide"} <= rules
    inst2 = rigid(make_instance([2], [(0, 0, 2), (0, 0, 2)]), [1, 1])
    assert "fifo" in {x.rule for x in check_schedule(_sched(inst2, [2, 0], "first-fit"))}


def test_checker_knows_each_rules_greedy_property():
    # machines 2; job 0 holds 1 until 5; job 1 needs 2; job 2 (another org) needs 1
    inst = rigid(make_instance([2, 0], [(0, 0, 5), (0, 1, 1), (1, 1, 1)]), [1, 2, 1], [5, 1, 1])
    waiting = [0, 5, 6]  # job 2 waits until 6 although it fits at 1
    assert check_schedule(_sched(inst, waiting, "none")) == []  # FIFO's pick did not fit
    assert "greedy" in {x.rule for x in check_schedule(_sched(inst, waiting, "first-fit"))}
    # EASY: job 1's shadow time is 5; job 2 ends by 2 <= 5: it must backfill
    assert "easy-reservation" in {x.rule for x in check_schedule(_sched(inst, waiting, "easy"))}
    assert check_schedule(_sched(inst, [0, 5, 1], "easy")) == []


# 2 machines, three organizations: job 0 (1 processor, requested 5) runs; job 1 (2
# processors, requested 1) is FIFO's next pick and reserves for t=5; job 2 (1 processor,
# requested 10) may not backfill: it would end after 5 and no machine is spare then
RESERVED = rigid(
    make_instance([1, 1, 0], [(0, 0, 5), (1, 0, 1), (2, 0, 10)]), [1, 2, 1], [5, 1, 10]
)


def test_backfilling_past_the_reservation_is_caught():
    s = simulate(RESERVED, get_policy("fifo"), backfill="easy", engine="python")
    assert s.start.tolist() == [0, 5, 6] and check_schedule(s) == []
    assert s.info["blocked"][0] == (0, 1, 5, 0, ())
    # job 2 backfilled at 2 (no event then), the reserved job slipped to 12
    bad = check_schedule(_sched(RESERVED, [0, 12, 2], "easy"))
    assert "event" in {v.rule for v in bad}
    # at an event, with the engine's record of FIFO's pick: job 2 delays the reservation
    late = _sched(RESERVED, [0, 10, 0], "easy")
    late.info["blocked"] = [(0, 1, 5, 0, (2,)), (5, 1, 10, 0, ())]
    assert [v.rule for v in check_schedule(late)] == ["easy-reservation"]
    assert "shadow time 5" in str(check_schedule(late)[0])
    # job 2 picked first, then job 1: the shadow is 10, a valid EASY step for some policy
    late.info["blocked"] = [(0, 1, 10, 0, ()), (5, 1, 10, 0, ())]
    assert check_schedule(late) == []
    # a record must agree with the requested times, and every stop must be recorded
    late.info["blocked"] = [(0, 1, 5, 0, ()), (5, 1, 10, 0, ())]
    assert [v.rule for v in check_schedule(late)] == ["easy-reservation"]
    late.info["blocked"] = [(0, 1, 10, 0, ())]
    assert [v.rule for v in check_schedule(late)] == ["blocked"]


def test_backfilled_jobs_keep_fifo_within_an_organization():
    # 4 machines; job 0 holds 2 until 9; job 1 (4 processors) reserves for 9; jobs 2 and 3
    # of another organization (1 processor, requested 2) both backfill, oldest first
    inst = rigid(
        make_instance([4, 0], [(0, 0, 9), (0, 0, 1), (1, 0, 2), (1, 0, 2)]),
        [2, 4, 1, 1],
        [9, 1, 2, 2],
    )
    s = simulate(inst, get_policy("fifo"), backfill="easy", engine="python")
    assert s.start.tolist() == [0, 9, 0, 0] and check_schedule(s) == []
    assert s.info["blocked"][0] == (0, 1, 9, 0, (2, 3))
    swapped = _with(s, s.start)
    swapped.info = {**s.info, "blocked": [(0, 1, 9, 0, (3, 2)), *s.info["blocked"][1:]]}
    assert [v.rule for v in check_schedule(swapped)] == ["fifo"]


def _with(s, start):
    return Schedule(s.instance, np.array(start), s.machine, s.policy, s.horizon, info=s.info)


def test_none_checks_the_chosen_job_does_not_fit():
    """``none``: no machine idles while the chosen job fits (the record names the pick)."""
    s = simulate(RESERVED, get_policy("fifo"), backfill="none", engine="python")
    assert s.start.tolist() == [0, 5, 6] and check_schedule(s) == []
    assert s.info["blocked"] == [(0, 1, -1, -1, ())]
    wrong = _with(s, [0, 5, 6])
    wrong.info = {**s.info, "blocked": [(0, 2, -1, -1, ())]}  # job 2 fits: not a stop
    assert [v.rule for v in check_schedule(wrong)] == ["greedy"]


# ------------------------------------------------------------------------------ metrics


def _busy(s, t, jobs):
    """Processor-seconds of ``jobs`` before ``t``, by brute force over the seconds."""
    inst = s.instance
    return sum(
        int(inst.width[j])
        for j in jobs
        if s.start[j] >= 0
        for x in range(int(s.start[j]), int(s.start[j] + inst.size[j]))
        if x < t
    )


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), rule=st.sampled_from(RULES), t=st.integers(1, 30))
def test_per_org_utilization_is_its_share_of_the_machines_time(seed, rule, t):
    inst = random_rigid_instance(np.random.default_rng(seed))
    s = simulate(inst, get_policy("fifo"), backfill=rule)
    rows = s.per_org_table(t, overall=True)
    M = int(inst.machines.sum())
    for u, row in enumerate(rows[:-1]):
        assert row["utilization"] == pytest.approx(
            _busy(s, t, np.flatnonzero(inst.org == u)) / (M * t)
        )
    assert rows[-1]["org"] == "all"
    assert rows[-1]["utilization"] == pytest.approx(s.utilization(t))
    assert rows[-1]["utilization"] == pytest.approx(sum(r["utilization"] for r in rows[:-1]))
    ran = s.start >= 0
    if ran.any():
        assert rows[-1]["mean_wait"] == pytest.approx((s.start - inst.release)[ran].mean())
        run = inst.size[ran]
        bsld = np.maximum(1, (s.start - inst.release)[ran] + run) / np.maximum(run, 10)
        assert rows[-1]["mean_bsld"] == pytest.approx(np.maximum(1, bsld).mean())


def test_simulate_and_compare_show_metrics_and_counted_treatments(tmp_path, capsys):
    import json

    from coopsched.cli import main

    doc = {
        "organizations": [{"name": "a", "machines": 2}, {"name": "b", "machines": 1}],
        "jobs": [
            {"org": "a", "release": 0, "size": 5, "processors": 1, "requested": 5},
            {"org": "b", "release": 0, "size": 3, "processors": 2, "requested": 1},
            {"org": "b", "release": 1, "size": 2, "processors": 4, "requested": 3},
        ],
    }
    path = tmp_path / "i.json"
    path.write_text(json.dumps(doc))
    base = [str(path), "--backfill", "easy", "--horizon", "20"]
    assert main(["simulate", *base, "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["treatments"] == {
        "too_wide": 1,  # 4 processors on 3 machines
        "outlived_request": 1,  # job 1 runs 3, requested 1
        "requested_filled": {"jobs": 0, "with": None},
    }
    assert [r["org"] for r in out["per_org"]] == ["a", "b"] and out["overall"]["org"] == "all"
    # job 1: 2 processors for 3 s of the 3 machines' 20 s
    assert out["per_org"][1]["mean_wait"] == 0 and out["per_org"][1]["utilization"] == 0.1
    assert out["overall"]["utilization"] == pytest.approx((5 + 6) / 60)
    assert main(["simulate", *base]) == 0
    assert "1 job(s) wider than the machines never started; 1 job(s) outlived" in (
        capsys.readouterr().out
    )
    assert main(["simulate", *base, "--format", "csv"]) == 0
    csv = capsys.readouterr().out.splitlines()
    assert csv[0].endswith(",mean_wait,mean_bsld,utilization") and csv[-1].startswith("all,3,")
    assert main(["compare", *base, "--policies", "fifo,ref", "--format", "json"]) == 0
    cmp = json.loads(capsys.readouterr().out)
    assert cmp["treatments"] == out["treatments"]
    assert cmp["per_org"]["fifo"][:-1] == out["per_org"]
    assert [r["policy"] for r in cmp["rows"]] == ["fifo", "ref"]
    assert any("outlived their requested time" in n for n in cmp["notes"])


def test_a_trace_windows_filled_requested_times_are_shown():
    inst = rigid(make_instance([2], [(0, 0, 3), (0, 1, 2)]), [1, 2], [4, 9])
    inst.meta["requested_filled"] = {"jobs": 1, "with": 9}
    s = simulate(inst, get_policy("fifo"), backfill="easy")
    assert s.treatments()["requested_filled"] == {"jobs": 1, "with": 9}
    assert (
        s.report()
        .notes[-1]
        .endswith("1 job(s) without a requested time given the log's longest (9 s)")
    )


def test_requested_times_need_processors():
    with pytest.raises(InstanceError, match="give 'processors' with 'requested'"):
        Instance(
            EXAMPLE.organizations,
            EXAMPLE.org,
            EXAMPLE.release,
            EXAMPLE.size,
            requested=EXAMPLE.size,
        )
    with pytest.raises(InstanceError, match="requested time 0 must be >= 1"):
        rigid(EXAMPLE, Q, [0] * 7)


# ------------------------------------------------------------------------------- inputs


def test_json_processors_make_a_rigid_instance_that_simulate_honours(tmp_path, capsys):
    """The bug of the issue: a 2-processor job must hold 2 machines, never 1."""
    import json

    from coopsched.cli import main

    doc = {
        "organizations": [{"name": "a", "machines": 2}],
        "jobs": [
            {"org": "a", "release": 0, "size": 4, "processors": 2, "requested": 5},
            {"org": "a", "release": 0, "size": 4, "processors": 1, "requested": None},
        ],
    }
    path = tmp_path / "i.json"
    path.write_text(json.dumps(doc))
    assert main(["simulate", str(path), "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [j["start"] for j in out["jobs"]] == [0, 4]
    assert [j["processors"] for j in out["jobs"]] == [2, 1]
    assert out["backfill"] == "first-fit"  # not every job has a requested time
    # absent is not unknown (issue 41): one job without the key is an error, never a
    # silent switch of every job to first-fit
    del doc["jobs"][1]["requested"]
    path.write_text(json.dumps(doc))
    assert main(["simulate", str(path)]) == 1
    assert "jobs[1]: no 'requested', which other jobs have" in capsys.readouterr().err


@pytest.mark.parametrize(
    "job, message",
    [
        ({"processors": 0}, r"jobs\[0\].processors"),
        ({"processors": -2}, r"jobs\[0\].processors"),
        ({"processors": 2, "requested": 0}, r"jobs\[0\].requested"),
        ({"processors": 2, "requested": -5}, r"jobs\[0\].requested"),
        ({"requested": 3}, r"jobs\[0\].requested: a requested time belongs to rigid jobs"),
    ],
)
def test_json_rigid_job_errors_name_the_place(tmp_path, job, message):
    import json

    from coopsched.workloads.jsonio import read_instance

    doc = {
        "organizations": [{"name": "a", "machines": 2}],
        "jobs": [{"org": "a", "release": 0, "size": 4, **job}],
    }
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(doc))
    with pytest.raises(InstanceError, match=message):
        read_instance(path)


def test_backfill_is_refused_for_sequential_jobs(capsys):
    from coopsched.cli import main

    assert main(["simulate", "--backfill", "easy"]) == 1
    assert "--backfill applies to rigid jobs" in capsys.readouterr().err


def test_a_rigid_trace_window_keeps_processors_and_requested_times():
    from conftest import trace_path

    from coopsched.workloads.prepare import trace_to_instance
    from coopsched.workloads.swf import read_swf

    tr = read_swf(trace_path("SDSC-SP2-1998-4.2-cln.swf.gz"))
    inst = trace_to_instance(tr, k=3, start=0, length=86_400, jobs="rigid")
    seq = trace_to_instance(tr, k=3, start=0, length=86_400)
    assert inst.rigid and inst.n == inst.meta["trace_jobs"] and seq.n == int(inst.width.sum())
    s = simulate(inst, get_policy("fifo"), 86_400, backfill="easy")
    assert check_schedule(s) == []
    assert inst.requested is not None and (inst.requested >= 1).all()


# ------------------------------------------------------------------- the compiled engine


@st.composite
def rigid_instances(draw, pins: bool = False):
    # many jobs over few release times and sizes: queues, reservations and exact ties at
    # the shadow time are frequent
    inst = draw(small_instances(max_k=4, max_jobs=22, max_release=4, max_size=4))
    n = inst.n
    q = draw(st.lists(st.integers(1, 4), min_size=n, max_size=n))
    slack = draw(st.lists(st.sampled_from([-1, 0, 0, 0, 1, 2]), min_size=n, max_size=n))
    requested = np.maximum(1, inst.size + np.array(slack, dtype=np.int64))
    pinned = None
    if pins and n:
        # pinned jobs head their organizations' queues: the first jobs of some organizations
        chosen = draw(st.sets(st.integers(0, inst.k - 1)))
        pinned = np.zeros(n, bool)
        order = inst.fifo_order()
        for u in chosen:
            own = order[inst.org[order] == u]
            if len(own) and inst.release[own[0]] == inst.release.min():
                pinned[own[0]] = True
    return Instance(
        inst.organizations,
        inst.org,
        inst.release,
        inst.size,
        np.array(q, dtype=np.int64),
        requested=requested,
        pinned=pinned,
    )


from coopsched.online.backends import compiled_names  # noqa: E402

COMPILED = [n for n in compiled_names() if n != "rand"]


@settings(max_examples=120, deadline=None)
@given(
    inst=rigid_instances(pins=True),
    name=st.sampled_from(COMPILED),
    rule=st.sampled_from(RULES),
    horizon=st.one_of(st.none(), st.integers(1, 25)),
    seed=st.integers(0, 2**32),
    data=st.data(),
)
def test_compiled_rigid_engine_equals_python(inst, name, rule, horizon, seed, data):
    members = data.draw(st.one_of(st.none(), st.sets(st.integers(0, inst.k - 1), min_size=1)))
    a = simulate(
        inst, get_policy(name, seed=seed), horizon, members, backfill=rule, engine="python"
    )
    b = simulate(
        inst, get_policy(name, seed=seed), horizon, members, backfill=rule, engine="compiled"
    )
    assert b.info["engine"] == "compiled" and a.info["engine"] == "python"
    assert a.start.tolist() == b.start.tolist()
    assert a.info["too_wide"] == b.info["too_wide"]
    assert check_schedule(b) == []


@settings(max_examples=40, deadline=None)
@given(
    inst=rigid_instances(),
    rule=st.sampled_from(RULES),
    n=st.integers(1, 8),
    seed=st.integers(0, 99),
)
def test_compiled_rigid_rand_equals_python(inst, rule, n, seed):
    from coopsched.online.policies.rand import Rand

    runs = []
    for engine in ("python", "compiled"):
        pol = Rand(n_samples=n, seed=seed)
        pol._backfill = rule
        pol.prepare(inst, None)
        with pol.engine_pass():
            runs.append(simulate(inst, pol, None, backfill=rule, engine=engine))
    assert runs[0].start.tolist() == runs[1].start.tolist()
    assert runs[1].info["engine"] == "compiled"


def test_directcontr_rigid_credits_each_machine_to_its_owner_in_both_engines():
    inst = example()
    pa, pb = get_policy("directcontr", seed=3), get_policy("directcontr", seed=3)
    simulate(inst, pa, backfill="easy", engine="python")
    simulate(inst, pb, backfill="easy", engine="compiled")
    t = 50
    assert [pa.phi(v, t) for v in range(inst.k)] == [pb.phi(v, t) for v in range(inst.k)]
    # every processor-second run is credited to some machine owner
    assert sum(pa.phi(v, t) for v in range(inst.k)) == sum(
        simulate(inst, get_policy("directcontr", seed=3), backfill="easy").psi(t)
    )


def test_directcontr_on_a_huge_platform_wraps_exactly():
    """Utilities beyond 2^63 (10^4 processors for 10^9 s): the compiled engine keeps them
    modulo 2^64 beside float64 copies and decides every comparison exactly; schedules and
    final contributions equal the Python engine's exact integers."""
    rng = np.random.default_rng(5)
    n = 8
    jobs = [
        (
            int(rng.integers(0, 2)),
            int(rng.integers(0, 2 * 10**8)),
            int(rng.integers(10**8, 25 * 10**7)),
        )
        for _ in range(n)
    ]
    base = make_instance([6_000, 4_000], sorted(jobs, key=lambda j: j[1]))
    q = rng.integers(2_000, 6_000, size=n)
    inst = rigid(base, q, base.size + rng.integers(0, 10**7, size=n))
    pa, pb = get_policy("directcontr", seed=1), get_policy("directcontr", seed=1)
    a = simulate(inst, pa, backfill="easy", engine="python")
    b = simulate(inst, pb, backfill="easy", engine="compiled")
    assert b.info["engine"] == "compiled"
    assert a.start.tolist() == b.start.tolist()
    t = int((a.start + inst.size).max())
    assert max(pa.phi(v, t) for v in range(2)) > 2**63  # the values did pass int64
    assert [pa.phi(v, t) for v in range(2)] == [pb.phi(v, t) for v in range(2)]


# ----------------------------------------------------------------------------- exports


def test_batsim_export_of_rigid_jobs_is_read_by_evalys(tmp_path):
    """evalys (Batsim's analysis library, a real peer tool) reads the out_jobs.csv of a
    rigid schedule: one row per job, its processors, its machines as intervals; its
    utilisation curve is the processors the schedule keeps busy."""
    pytest.importorskip("evalys")
    from evalys.jobset import JobSet

    from coopsched.online.export import write_batsim_jobs

    s = simulate(example(), get_policy("fifo"), backfill="easy")
    path = tmp_path / "out_jobs.csv"
    write_batsim_jobs(s, path)
    js = JobSet.from_csv(str(path))
    assert len(js.df) == 7
    assert js.df["requested_number_of_resources"].tolist() == Q
    load = js.utilisation["load"]
    busy = [
        int(sum(q for j, q in enumerate(Q) if s.start[j] <= t < s.start[j] + EXAMPLE.size[j]))
        for t in load.index
    ]
    assert load.tolist() == busy


def test_swf_export_writes_a_rigid_job_once(tmp_path):
    from coopsched.online.export import write_schedule_swf
    from coopsched.workloads.swf import read_swf

    s = simulate(example(), get_policy("fifo"), backfill="easy")
    path = tmp_path / "s.swf"
    write_schedule_swf(s, path)
    tr = read_swf(path)
    assert len(tr.jobs) == 7 and tr.jobs["processors"].tolist() == Q
    assert (tr.jobs["submit"] + tr.jobs["wait"]).tolist() == s.start.tolist()
    assert tr.jobs["req_time"].tolist() == (EXAMPLE.size + 1).tolist()


def test_gantt_chart_of_a_rigid_schedule(tmp_path):
    from coopsched.online.export import plot_gantt

    s = simulate(example(), get_policy("fifo"), backfill="easy")
    plot_gantt(s, tmp_path / "g.png")
    assert (tmp_path / "g.png").stat().st_size > 1000
    ptr, ids = s.allocation()
    assert [len(ids[ptr[j] : ptr[j + 1]]) for j in range(7)] == Q


# ------------------------------------------------------------- REF and the audit, rigid


@settings(max_examples=150, deadline=None)
@given(inst=rigid_instances(pins=True), rule=st.sampled_from(RULES))
def test_rigid_ref_equals_the_brute_force_definition(inst, rule):
    from reference import brute_ref_rigid

    from coopsched.online.ref.rigid import ref_rigid_schedule

    T = 14
    s, values = ref_rigid_schedule(inst, T, rule, coalition_runs=True)
    starts, brute = brute_ref_rigid(inst, T, rule)
    assert s.start.tolist() == starts
    assert values == [brute[C] for C in range(1 << inst.k)]


@settings(max_examples=25, deadline=None)
@given(inst=rigid_instances(), rule=st.sampled_from(RULES), recorded=st.sampled_from(NAMES[-3:]))
def test_rigid_audit_phi_is_the_brute_force_game(inst, rule, recorded):
    """phi of the audit = Shapley values of the game whose coalitions are worth their REF
    value (brute force) and whose grand coalition is worth the recorded total."""
    from fractions import Fraction

    from reference import brute_ref_rigid, shapley_eq2

    import coopsched

    T = 12
    rec = simulate(inst, get_policy(recorded), T, backfill=rule)
    inst.start = rec.start
    report = coopsched.audit(inst, horizon=T, backfill=rule, with_counterfactuals=False, points=0)
    _, brute = brute_ref_rigid(inst, T, rule)
    brute[(1 << inst.k) - 1] = sum(rec.psi(T))
    phi = shapley_eq2(brute, inst.k)
    got = [Fraction(o.phi_exact) for o in report.organizations]
    assert got == phi
    assert sum(got) == sum(o.psi for o in report.organizations)


def test_auditing_refs_own_rigid_schedule_gives_back_refs_psi_and_phi():
    import coopsched
    from coopsched.online.ref.rigid import ref_rigid_schedule
    from coopsched.online.shapley import shapley

    inst = example()
    T = 12
    ref, values = ref_rigid_schedule(inst, T, "easy")
    inst.start = ref.start
    report = coopsched.audit(inst, horizon=T, backfill="easy", points=0)
    assert [o.psi for o in report.organizations] == ref.psi(T)
    phi = shapley(values)
    from fractions import Fraction

    assert [Fraction(o.phi_exact) for o in report.organizations] == phi
    cf = {c.policy: c.unfairness for c in report.counterfactuals}
    assert cf["recorded"] == 0 and cf["ref"] == 0
    assert report.window.jobs == "rigid" and report.window.backfill == "easy"


@settings(max_examples=100, deadline=None)
@given(inst=rigid_instances(pins=True), rule=st.sampled_from(RULES))
def test_rigid_ref_coalitions_run_compiled_exactly(inst, rule):
    """Each coalition's REF schedule from the compiled rigid engine (keys linear in the
    subsets' value curves) equals the Python engine's."""
    from coopsched.online.ref.rigid import ref_rigid_schedule

    a, va = ref_rigid_schedule(inst, 16, rule, coalition_runs=True, engine="python")
    b, vb = ref_rigid_schedule(inst, 16, rule, coalition_runs=True, engine="compiled")
    assert b.info["coalition_engines"]["python"] == 0
    assert a.start.tolist() == b.start.tolist() and va == vb
    c, vc = ref_rigid_schedule(inst, 16, rule, coalition_runs=True)  # in lockstep
    # easy-queue: the lockstep kernel has no such rule yet; REF runs by coalition
    assert c.info["engine"] == ("coalitions" if rule in QUEUE_RULES else "lockstep")
    assert c.start.tolist() == a.start.tolist() and vc == va


def test_a_rigid_audit_beyond_the_exact_limit_says_it_was_sampled():
    """Exact rigid REF stops at MAX_K_RIGID organizations: with more (and fewer than
    exact_max) the auto audit samples, and its notes say why."""
    import coopsched
    from coopsched.online.ref.rigid import MAX_K_RIGID

    k = MAX_K_RIGID + 1
    base = make_instance([1] * k, [(u % k, 0, 3) for u in range(2 * k)])
    inst = rigid(base, 1 + base.org % 2, np.full(2 * k, 4))
    rec = simulate(inst, get_policy("fifo"), 12, backfill="easy")
    inst.start = rec.start
    report = coopsched.audit(
        inst,
        horizon=12,
        samples=4,
        with_counterfactuals=False,
        points=0,
        exact_upto=2,
        exact_max=k,
    )
    assert report.sampling is not None
    assert any(f"stops at {MAX_K_RIGID} organizations" in n for n in report.notes)
    two = rigid(make_instance([1, 1], [(0, 0, 3), (1, 0, 3)]), [1, 2], [4, 4])
    two.start = simulate(two, get_policy("fifo"), 12, backfill="easy").start
    small = coopsched.audit(two, horizon=12, with_counterfactuals=False, points=0)
    assert not any("stops at" in n for n in small.notes)


def _late_owner_of_half_the_machines(seed: int) -> tuple[Instance, int]:
    """Five organizations on 2000 machines for 6*10^7 s: the owner of half of them submits
    only late, among four busy peers, so its REF key ``L_c (phi - psi)`` passes 2^63 (the
    values themselves stay below 2^62)."""
    rng = np.random.default_rng(seed)
    jobs = [
        (int(rng.integers(1, 5)), int(rng.integers(0, 3 * 10**7)), int(rng.integers(5, 20) * 10**6))
        for _ in range(10)
    ]
    jobs += [
        (0, int(rng.integers(35, 45)) * 10**6, int(rng.integers(5, 10)) * 10**6) for _ in range(2)
    ]
    base = make_instance([1000, 250, 250, 250, 250], sorted(jobs, key=lambda j: j[1]))
    n = len(jobs)
    inst = rigid(base, rng.integers(300, 1500, size=n), base.size + rng.integers(0, 10**6, size=n))
    return inst, 6 * 10**7


@pytest.mark.parametrize("seed", [0, 2])
@pytest.mark.parametrize("rule", RULES)
def test_rigid_ref_coalitions_stay_compiled_when_keys_pass_int64(seed, rule):
    """REF's keys beyond 2^63 (10^3 machines for 6*10^7 s, L_5 = 60): the compiled rigid
    engine sums them modulo 2^64 beside float64 copies and ranks exactly; every coalition
    stays compiled (the former int64 bound refused them all) and the schedules and values
    equal the Python engine's exact integers. Comparing the wrapped keys directly (a plain
    ``<``) gives other schedules here."""
    from coopsched.online.compiled import int64_bounds
    from coopsched.online.ref.rigid import ref_rigid_schedule

    inst, T = _late_owner_of_half_the_machines(seed)
    M = inst.total_machines
    old = int64_bounds("rand", inst.release, inst.size, M, M, 1000, T, 2 * 60, rigid=True)
    assert old is not None  # the former bound (keys below 2^62) refused the grand coalition
    a, va = ref_rigid_schedule(inst, T, rule, coalition_runs=True, engine="python")
    b, vb = ref_rigid_schedule(inst, T, rule, coalition_runs=True, engine="compiled")
    assert b.info["coalition_engines"] == {"compiled": 31, "python": 0}
    assert 60 * max(va) > 2**64  # the keys' terms pass int64
    assert a.start.tolist() == b.start.tolist() and va == vb
    assert check_schedule(b) == []
    # in lockstep: Eq. (1)'s keys in two exact words, the float potential's bounds
    c, vc = ref_rigid_schedule(inst, T, rule, coalition_runs=True)
    assert c.info["engine"] == ("coalitions" if rule in QUEUE_RULES else "lockstep")
    assert c.start.tolist() == a.start.tolist() and vc == va


def test_ref_key_proof_refuses_values_beyond_2_62_and_accepts_a_large_platform():
    from coopsched.online.compiled import _ref_keys_wrap_safely

    rel = np.array([0, 5], dtype=np.int64)
    size = np.array([10**9, 10**9], dtype=np.int64)
    rand = {"coeff": np.array([[840, -840] * 127]), "n_samples": 840}
    own = np.array([105])
    # a 30-day window on 13,000 machines, 8 organizations: proven exact
    assert _ref_keys_wrap_safely(rel, size, 13_000, 30 * 86_400, rand, own) is None
    # psi_sp beyond 2^62 (10^4 machines for 10^8 s): refused, left to Python integers
    why = _ref_keys_wrap_safely(rel, size, 10**4, 10**8, rand, own)
    assert why is not None and "2^62" in why
    # event times with t (t + 1) beyond int64 (no horizon: the jobs end by 6 * 10^9 s)
    assert "t (t + 1)" in str(_ref_keys_wrap_safely(rel, 2 * size, 1, None, rand, own))


@settings(max_examples=40, deadline=None)
@given(
    inst=rigid_instances(pins=True),
    idle=st.lists(st.integers(1, 3), min_size=1, max_size=3),
    rule=st.sampled_from(RULES),
    T=st.integers(4, 16),
)
def test_rigid_ref_simulates_interchangeable_organizations_once(inst, idle, rule, T):
    """Organizations with no jobs and equal machines are twins: rigid REF runs one
    coalition per class of identical ones and gives exactly the schedule, the values
    and the checkpoint values of running every coalition (the count is
    2^(k - sum n_i) prod (n_i + 1) - 1 for twin groups of sizes n_i)."""
    from coopsched.online.ref.driver import twin_classes
    from coopsched.online.ref.rigid import ref_rigid_schedule
    from coopsched.workloads.instance import Organization

    orgs = list(inst.organizations) + [Organization(f"idle{j}", m) for j, m in enumerate(idle)]
    wide = Instance(
        orgs,
        inst.org,
        inst.release,
        inst.size,
        inst.width,
        requested=inst.requested,
        pinned=inst.pinned,
    )
    cps = [1, T // 2, T]
    a, va = ref_rigid_schedule(wide, T, rule, cps, coalition_runs=True)
    b, vb = ref_rigid_schedule(wide, T, rule, cps, coalition_runs=True, symmetry=False)
    assert a.start.tolist() == b.start.tolist()
    assert va == vb
    assert a.info["checkpoint_values"] == b.info["checkpoint_values"]
    groups = twin_classes(wide)
    assert a.info["twin_groups"] == groups
    twins = sum(len(g) for g in groups)
    expected = (1 << (wide.k - twins)) * int(np.prod([len(g) + 1 for g in groups])) - 1
    assert a.info["simulated_coalitions"] == expected
    assert b.info["simulated_coalitions"] == (1 << wide.k) - 1


@settings(max_examples=25, deadline=None)
@given(inst=rigid_instances(pins=True), rule=st.sampled_from(RULES), T=st.integers(4, 16))
def test_counterfactuals_of_one_processor_rigid_jobs_take_the_sequential_engines(inst, rule, T):
    """When every job has one processor the audit's counterfactuals run the sequential
    engines: every row equals running each policy on the rigid instance under the rule."""
    from coopsched.audit.counterfactuals import counterfactuals, policy_names
    from coopsched.online.fairness import fairness
    from coopsched.online.ref.rigid import ref_rigid_schedule

    one = rigid(inst, np.ones(inst.n, dtype=np.int64), inst.requested)
    assert (one.one_processor_sequential() is not None) == (inst.n > 0)
    assert rigid(inst, inst.width + 1, inst.requested).one_processor_sequential() is None
    rec = simulate(one, get_policy("fifo"), T, backfill=rule)
    ref, _ = ref_rigid_schedule(one, T, rule)
    rows = {r["policy"]: r for r in counterfactuals(one, T, rec, ref, backfill=rule)}
    for name in policy_names():
        if name == "ref":
            continue
        s = get_policy(name).run(one, T, backfill=rule)
        assert rows[name]["unfairness"] == fairness(s, ref, T).ratio, name
        assert rows[name]["utilization"] == s.utilization(T), name
