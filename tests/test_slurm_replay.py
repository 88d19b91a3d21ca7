"""The replay on a real Slurm (docs/slurm.md): the driver's pure parts (scaling, job plan,
configuration, the map back to the log's clock), the validation on a committed capture, the
age factor of SLURM-CLASSIC, ``coopsched tune``; and one small replay on a loopback Slurm
(slow; skipped, saying why, where Slurm cannot run)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coopsched.cli import main
from coopsched.online.policies import get_policy
from coopsched.slurm.plan import (
    PlanError,
    ReplayPlan,
    Scheduling,
    duration,
    fit_widths,
    limit_minutes,
    map_capture,
    mapping_toml,
    minutes_string,
    operator_lines,
    sacctmgr_commands,
    sbatch_args,
    sleep_seconds,
    slurm_conf,
    slurm_name,
)
from coopsched.workloads.instance import Instance, Organization

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "docs" / "results" / "slurm"


def rigid(n: int = 12, seed: int = 1, machines=(4, 4)) -> Instance:
    rng = np.random.default_rng(seed)
    size = rng.integers(60, 1200, n)
    return Instance(
        [Organization(f"Org {i}", m) for i, m in enumerate(machines)],
        rng.integers(0, len(machines), n),
        np.sort(rng.integers(0, 900, n)),
        size,
        rng.integers(1, sum(machines) + 1, n),
        requested=size + rng.integers(0, 3000, n),
        meta={"horizon": 1800},
    )


# --- scaling and the plan ---------------------------------------------------------------


def test_durations_in_slurm_forms():
    assert duration(0) == "0-00:00:00"
    assert duration(90061) == "1-01:01:01"
    assert duration(59.2) == "0-00:01:00"  # rounded up to whole seconds
    assert minutes_string(3600) == "0-01:00:00"
    assert minutes_string(7 * 86400) == "7-00:00:00"
    assert minutes_string(1) == "0-00:01:00"  # at least a minute, rounded up
    with pytest.raises(PlanError):
        duration(-1)


def test_run_times_and_limits_round_as_slurm_keeps_them():
    assert sleep_seconds(30, 60) == 1  # at least one second
    assert sleep_seconds(89, 60) == 1 and sleep_seconds(91, 60) == 2
    assert limit_minutes(3600, 60) == 1  # one log hour at a log minute per second
    assert limit_minutes(3601, 60) == 2  # rounded up: never below the request
    assert limit_minutes(1, 120) == 1


@given(
    size=st.integers(1, 10**6),
    req=st.integers(1, 10**6),
    speed=st.sampled_from([1, 7.5, 60, 120, 600]),
)
def test_a_planned_job_never_outlives_its_limit(size, req, speed):
    inst = Instance(
        [Organization("a", 4)], [0], [0], [size], [1], requested=[req], meta={"horizon": 10}
    )
    job = ReplayPlan.build(inst, speed).jobs[0]
    assert job.limit >= 1 and job.sleep >= 1
    assert job.sleep <= job.limit * 60
    assert job.limit * 60 * speed >= req  # Slurm's limit is never below the log's request


def test_the_plan_submits_in_release_order_on_the_scaled_clock():
    inst = rigid()
    plan = ReplayPlan.build(inst, 60.0)
    subs = [j.submit for j in plan.jobs]
    assert subs == sorted(subs)
    assert [j.submit * 60 for j in plan.jobs] == sorted(inst.release.tolist())
    assert plan.accounts == ["org_0", "org_1"]
    assert plan.real_seconds == 30.0
    q = plan.quantized()
    assert (q.size % 60 == 0).all() and (q.requested % 3600 == 0).all()
    assert (q.requested >= inst.requested).all()
    np.testing.assert_array_equal(q.release, inst.release)
    # quantized: every run time within half a real second of the log's (or 1 s at least)
    assert (np.abs(q.size - inst.size) <= 30).all()


def test_bad_plans_are_refused():
    inst = rigid()
    with pytest.raises(PlanError, match="speed"):
        ReplayPlan.build(inst, 0)
    with pytest.raises(PlanError, match="requested time"):
        ReplayPlan.build(
            Instance(inst.organizations, inst.org, inst.release, inst.size, inst.processors), 60
        )
    with pytest.raises(PlanError, match="rigid"):
        ReplayPlan.build(Instance(inst.organizations, inst.org, inst.release, inst.size), 60)
    with pytest.raises(PlanError, match="shares"):
        ReplayPlan.build(inst, 60, scheduling=Scheduling(shares=(1.0,)))
    with pytest.raises(PlanError, match="fair share"):
        ReplayPlan.build(inst, 60, scheduling=Scheduling(fairshare=False, age_weight=5))


def test_slurm_names():
    assert slurm_name("Physics Dept") == "physics_dept"
    assert slurm_name("7") == "o_7"


def test_widths_fitted_to_a_smaller_platform():
    inst = rigid(machines=(2, 2))
    wide = Instance(
        inst.organizations,
        inst.org,
        inst.release,
        inst.size,
        inst.processors * 60,
        requested=inst.requested,
    )
    scaled = fit_widths(wide, 240, "scale")
    assert (scaled.width == np.maximum(1, np.floor(wide.width * 4 / 240 + 0.5))).all()
    assert scaled.width.max() <= 4
    dropped = fit_widths(wide, 240, "drop")
    assert dropped.n == int((wide.width <= 4).sum())
    assert dropped.meta["dropped_wide"] == wide.n - dropped.n
    assert fit_widths(inst, 4) is inst  # nothing to fit
    with pytest.raises(PlanError):
        fit_widths(wide, 240, "squash")


# --- configuration ------------------------------------------------------------------------


def test_the_configuration_states_the_scheduler_as_given():
    inst = rigid()
    ports = {"ctld": 1, "slurmd": [2, 5], "dbd": 3, "db": 4}
    plan = ReplayPlan.build(inst, 120.0, scheduling=Scheduling(half_life=86400, age_weight=10))
    conf = slurm_conf(plan, "/s", ports).splitlines()
    node = "NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=2"
    assert f"{node} CPUs={plan.machines} State=UNKNOWN" in conf  # one node: every CPU
    assert "SlurmdParameters=config_overrides" in conf  # more CPUs than the host has
    sched = next(x for x in conf if x.startswith("SchedulerParameters="))
    for part in (
        "bf_interval=1",
        "bf_resolution=1",
        "bf_job_part_count_reserve=1",
        "sched_interval=1",
    ):
        assert part in sched.split("=", 1)[1].split(",")
    # the half-life on the real clock: one log day at 120 log s per s is 12 minutes
    assert "PriorityDecayHalfLife=0-00:12:00" in conf
    assert "PriorityWeightAge=10" in conf and "PriorityFlags=NO_FAIR_TREE" in conf
    assert "PriorityMaxAge=0-01:24:00" in conf  # 7 days / 120
    assert all("127.0.0.1" in x or "localhost" in x for x in conf if "Host" in x or "Addr" in x)
    fifo = ReplayPlan.build(inst, 60.0, scheduling=Scheduling(fairshare=False))
    fconf = slurm_conf(fifo, "/s", ports)
    assert "PriorityType=priority/basic" in fconf and "PriorityWeight" not in fconf
    assert operator_lines(Scheduling(half_life=math.inf))[1] == "PriorityDecayHalfLife=0"
    two = ReplayPlan.build(inst, 60.0, scheduling=Scheduling(nodes=2))
    lines = slurm_conf(two, "/s", ports).splitlines()
    cpus = two.machines // 2
    assert [x for x in lines if x.startswith("NodeName=")] == [
        f"NodeName=n1 NodeHostname=localhost NodeAddr=127.0.0.1 Port=2 CPUs={cpus} State=UNKNOWN",
        f"NodeName=n2 NodeHostname=localhost NodeAddr=127.0.0.1 Port=5 CPUs={cpus} State=UNKNOWN",
    ]
    assert "PartitionName=batch Nodes=n1,n2 Default=YES MaxTime=INFINITE State=UP" in lines
    with pytest.raises(PlanError, match="equally"):
        ReplayPlan.build(inst, 60.0, scheduling=Scheduling(nodes=3))


def test_accounts_jobs_and_mapping_commands():
    inst = rigid(machines=(3, 5))
    plan = ReplayPlan.build(inst, 60.0, scheduling=Scheduling(shares=(1.0, 2.5)))
    cmds = sacctmgr_commands(plan)
    assert [
        "sacctmgr",
        "-i",
        "add",
        "account",
        "org_1",
        "Cluster=coopsched",
        "Fairshare=250",
    ] in cmds
    assert cmds[-1][:4] == ["sacctmgr", "-i", "add", "user"]
    args = sbatch_args(plan.jobs[0])
    assert args[args.index("-A") + 1] == plan.jobs[0].account
    assert args[args.index("-t") + 1] == str(plan.jobs[0].limit)
    assert args[-1] == f"exec sleep {plan.jobs[0].sleep}"
    toml = mapping_toml(plan)  # contributions stay the machines, whatever the shares
    assert 'accounts = ["org_1"]' in toml and "machines = 5" in toml


def test_the_capture_maps_back_to_the_log_clock():
    raw = (
        "JobID|JobName|Account|Submit|Start|End|AllocCPUS|State|Timelimit\n"
        "7|j0|a|1000|1002|1010|2|COMPLETED|00:01:00\n"
        "8|j1|b|1001|Unknown|Unknown|0|PENDING|00:02:00\n"
    )
    out = map_capture(raw, origin=1000, speed=60, base=5000).splitlines()
    assert out[1] == "7|j0|a|5000|5120|5600|2|COMPLETED|0-01:00:00"
    assert out[2] == "8|j1|b|5060|Unknown|Unknown|0|PENDING|0-02:00:00"


# --- the committed replays: read back, compared -------------------------------------------

REPLAYS = sorted(p for p in RESULTS.glob("*/replay.json"))


@pytest.mark.skipif(not REPLAYS, reason="no committed replay under docs/results/slurm")
def test_a_committed_capture_reads_back_with_slurms_starts():
    from coopsched.slurm.validate import replayed_instance

    out = REPLAYS[0].parent
    inst, T, meta = replayed_instance(out)
    assert inst.n == len(meta["jobs"])  # every planned job is in the capture
    started = inst.start >= 0
    assert started.any()
    # on the log's clock: Slurm's seconds times the speed, from the window's start
    speed = float(meta["speed"])
    assert (inst.start[started] % round(speed) == 0).all()
    # (a job not yet in sacct at the capture waits from its planned, unrounded submit time)
    on_ticks = int((inst.release % round(speed) == 0).sum())
    assert on_ticks >= inst.n - inst.meta["not_in_capture"]
    assert (inst.start[started] >= inst.release[started]).all()
    # the recorded schedule never runs more processors than the platform has
    ends = inst.start + inst.size
    for t in np.unique(inst.start[started]):
        busy = inst.width[started & (inst.start <= t) & (ends > t)].sum()
        assert busy <= inst.total_machines


@pytest.mark.skipif(not REPLAYS, reason="no committed replay under docs/results/slurm")
def test_the_validation_rows_match_their_definitions():
    from coopsched.slurm.validate import compare

    rows = compare(REPLAYS[0].parent)
    slurm = rows[0]
    assert slurm.schedule == "slurm" and slurm.agree == 1.0 and slurm.agree_exact == 1.0
    assert all(d == 0 for d in slurm.psi_diff if not math.isnan(d))
    for r in rows:
        assert 0 <= r.agree_exact <= r.agree <= 1
        assert r.unfairness >= 0 and 0 <= r.utilization <= 1


def test_whole_queue_lets_an_organizations_small_job_pass_its_wide_one():
    from coopsched.slurm.validate import model_policy

    # org a: a wide job that cannot start (org b holds 3 of 4 processors for long), then a
    # small one; org b's long job. EASY over each organization's oldest job keeps the small
    # job behind the wide one; EASY over the whole queue (easy-queue) backfills it, as Slurm
    orgs = [Organization("a", 2), Organization("b", 2)]
    inst = Instance(orgs, [1, 0, 0], [0, 1, 2], [100, 10, 10], [3, 4, 1], requested=[100, 10, 10])
    heads = get_policy("fifo").run(inst, 50, backfill="easy")
    assert heads.start.tolist() == [0, -1, -1]  # the small job waits behind the wide one
    whole = get_policy("fifo").run(inst, 50, backfill="easy-queue")
    assert whole.start.tolist() == [0, -1, 2]  # ends by 12, before the reservation at 100
    meta = {"scheduling": {"half_life": 3600, "calc_period": 5}, "speed": 60}
    for shares in (None, [1, 3]):
        meta["scheduling"]["shares"] = shares
        classic = model_policy("slurm-classic-whole-queue", meta)
        assert classic.run(inst, 50, backfill="easy-queue").start.tolist() == [0, -1, 2]


# --- the model: SLURM-CLASSIC's age factor --------------------------------------------------


def test_a_calc_period_reads_usage_at_the_last_tick():
    # org a runs [0, 100); org b [0, 10). At t = 50 with ticks every 1000 s, nobody has usage
    # yet (F = 1 for both: the oldest waiting job goes first); without ticks, b has less
    orgs = [Organization("a", 1), Organization("b", 1)]
    inst = Instance(
        orgs, [0, 1, 0, 1], [0, 0, 50, 51], [100, 10, 5, 5], [1, 1, 2, 2], requested=[100] * 4
    )
    exact = get_policy("slurm-classic").run(inst, 400, backfill="none")
    ticked = get_policy("slurm-classic", calc_period=1000).run(inst, 400, backfill="none")
    assert exact.start.tolist() == [0, 0, 105, 100]  # b's job first: less usage
    assert ticked.start.tolist() == [0, 0, 100, 105]  # no tick yet: the older job first
    # a tick at 60 (phase 60) sees the usage of [0, 60): b goes first again
    phased = get_policy("slurm-classic", calc_period=1000, calc_phase=60).run(
        inst, 400, backfill="none"
    )
    assert phased.start.tolist() == [0, 0, 105, 100]
    with pytest.raises(ValueError, match="calc_period"):
        get_policy("slurm-classic", calc_period=-1)


def test_slurm_charges_only_the_processors_busy_at_a_tick():
    # a runs 2 processors over [1, 99), between the ticks at 0 and 100: Slurm 22.05 never
    # charges it (the time after the last tick a job was seen running is lost); b runs
    # [50, 150): charged 50 at the tick at 100, and read only from the tick at 200 (the
    # ranking reads the usage before that tick's charge). At 250 a has less usage for
    # Slurm (0 against 50) and more for the exact reading (196 against 100)
    from coopsched.slurm.charged import SlurmCharged

    orgs = [Organization("a", 2), Organization("b", 1)]
    inst = Instance(
        orgs, [0, 1, 0, 1], [1, 50, 250, 250], [98, 100, 10, 10], [2, 1, 3, 3],
        requested=[100, 100, 10, 10],
    )  # fmt: skip
    kw = {"half_life": math.inf, "shares": (1, 1), "calc_period": 100}
    exact = get_policy("slurm-classic", **kw).run(inst, 400, backfill="easy")
    assert exact.start.tolist() == [1, 50, 260, 250]  # b's job first
    charged = SlurmCharged(**kw).run(inst, 400, backfill="easy")
    assert charged.start.tolist() == [1, 50, 250, 260]  # a's job first
    for bad in ({"calc_period": 0}, {"calc_period": 100, "half_life": 0}):
        with pytest.raises(ValueError, match="Slurm charges"):
            SlurmCharged(**bad)


@pytest.mark.skipif(
    not (RESULTS / "charge-demo" / "sacct.txt").is_file(), reason="no committed demo"
)
def test_slurm_ignored_a_job_that_ran_between_two_ticks_on_the_demo():
    # the committed four-job replay (coopsched.slurm.source.charge_demo): a's 2-processor
    # job ran between two ticks and was never charged, so Slurm ran a's wide job before
    # b's older one; the charged model does, the exact usage at the ticks does not
    from coopsched.slurm.validate import compare, factor_agreement, replayed_instance

    inst, _T, _ = replayed_instance(RESULTS / "charge-demo")
    assert inst.start.tolist() == [300, 1800, 8700, 8100]  # b's 3-wide job after a's
    rows = {r.schedule: r for r in compare(RESULTS / "charge-demo")}
    assert rows["slurm-classic-charged-whole-queue"].agree_exact == 1.0
    assert rows["slurm-classic-whole-queue"].agree_exact == 0.5
    got = factor_agreement(RESULTS / "charge-demo", "slurm-classic-charged-whole-queue")
    assert got == (4, 4)  # and the factors at submission


@pytest.mark.skipif(not REPLAYS, reason="no committed replay under docs/results/slurm")
def test_the_charged_model_gives_slurms_own_fair_share_factors():
    # fed Slurm's own schedule, the model's factor at each submission against the priority
    # slurmctld logged for the job (InitPrio / PriorityWeightFairshare), on every committed
    # fair-share replay: usage charged at the ticks reproduces it, the exact usage does not
    from coopsched.slurm.validate import factor_agreement

    checked = 0
    for path in REPLAYS:
        good, n = factor_agreement(path.parent, "slurm-classic-charged-whole-queue")
        if not n:
            continue
        old, _ = factor_agreement(path.parent, "slurm-classic")
        assert good >= 0.9 * n and good > old, path.parent.name
        checked += 1
    assert checked >= 1


def test_the_tick_phase_is_read_from_slurmctlds_log(tmp_path):
    from coopsched.slurm.validate import tick_phase

    meta = {"origin": 1_000_020, "speed": 120.0, "scheduling": {"calc_period": 1}}
    assert tick_phase(tmp_path, {**meta, "calc_phase": 0}) == 0  # no log: the plan's phase
    # 1_000_021 is 1970-01-12T13:47:01 UTC: one real second after the origin, 120 log s
    (tmp_path / "slurmctld.log").write_text(
        "[1970-01-12T13:46:59.100] slurmctld version 22.05.8 started\n"
        "[1970-01-12T13:47:01.779] priority/multifactor: _read_last_decay_ran: No last decay\n"
    )
    assert tick_phase(tmp_path, meta) == 120


def test_slurms_start_estimate_takes_running_jobs_in_batches():
    from coopsched.slurm.backfill import easy_shadow, willrun_start

    # a job of 3 with 1 processor free; 2 end at 120, 1 at 140 (Unix seconds): EASY's
    # shadow is 120 (nothing extra); Slurm's first batch runs to 120 rounded up to the next
    # multiple of 30, plus 30 (180), so it takes both and estimates 140, with 4 free
    assert easy_shadow([(120, 2), (140, 1)], 1, 3) == (120, 0)
    assert willrun_start([(140, 1), (120, 2)], 1, 3) == (140, 4)
    # the second end beyond the batch (260 > 180): the estimate is EASY's
    assert willrun_start([(120, 2), (260, 1)], 1, 3) == (120, 3)
    # 101 rounds up to 120: the first batch ends at 150; the window then doubles to 60
    # (to 180), enough for 170 but not 181; then to 120 (to 240)
    ends = [(101, 1), (149, 1), (170, 1), (181, 1)]
    assert willrun_start(ends, 0, 2) == (149, 2)
    assert willrun_start(ends, 0, 3) == (170, 3)
    assert willrun_start(ends, 0, 4) == (181, 4)
    assert willrun_start(ends, 0, 5) is None and easy_shadow(ends, 0, 5) is None
    assert willrun_start(ends, 2, 2) is None  # it fits now: no estimate


@given(
    st.lists(st.tuples(st.integers(0, 600), st.integers(1, 4)), min_size=1, max_size=12),
    st.integers(0, 4),
    st.integers(1, 20),
)
def test_slurms_estimate_is_never_earlier_than_easys(ends, free, need):
    # a batch ends at one of its jobs' ends, after every end before it: never before EASY's
    # shadow, and with at least as many processors free
    from coopsched.slurm.backfill import easy_shadow, willrun_start

    easy, slurm = easy_shadow(ends, free, need), willrun_start(ends, free, need)
    if need <= free:
        assert slurm is None
        return
    assert (easy is None) == (slurm is None)
    if slurm is not None and easy is not None:
        assert slurm[0] >= easy[0] and slurm[1] - need >= easy[1]
        assert slurm[0] in {e for e, _ in ends}


@pytest.mark.skipif(
    not (RESULTS / "ctc-a-fifo" / "slurmctld.log").is_file(), reason="no committed capture"
)
def test_the_traced_backfills_are_slurms_estimate():
    # docs/slurm.md, sixth departure: the two traced cases. ctc-a (FIFO): job 80 breaks
    # EASY's rule and only Slurm's estimate allows it; 81, after it, no longer delays the
    # shadow time. ctc-check: o2's job 92 fits in EASY's one extra processor (two jobs end
    # at the shadow time), o1's job 91 then breaks EASY's rule, o0's job 93 after it not
    from coopsched.slurm.backfill import backfill_starts

    fifo = backfill_starts(RESULTS / "ctc-a-fifo")
    assert (fifo[80], fifo[81]) == ("willrun", "easy") and 79 not in fifo
    fs = backfill_starts(RESULTS / "ctc-check-fs")
    assert (fs[92], fs[91], fs[93]) == ("easy", "willrun", "easy") and 84 not in fs


@pytest.mark.parametrize(
    "name, far", [("backfill-demo", None), ("willrun-demo", False), ("willrun-demo-far", True),
                  ("charge-demo", None)],
)  # fmt: skip
def test_the_demos_are_their_committed_instance_files(name, far):
    # the replays of the demos read these files (coopsched replay FILE.json); the functions
    # are what benchmarks/slurm_validation.py replays
    from coopsched.slurm import source
    from coopsched.workloads.jsonio import read_instance

    path = RESULTS / f"{name}.json"
    if not path.is_file():
        pytest.skip(f"{path.name} not committed")
    made = getattr(source, name.split("-demo")[0] + "_demo")
    inst = made() if far is None else made(far)
    got = read_instance(path)
    for key in ("org", "release", "size", "width", "requested"):
        np.testing.assert_array_equal(getattr(inst, key), getattr(got, key))
    assert inst.meta["horizon"] == got.meta["horizon"]
    assert [o.machines for o in inst.organizations] == [o.machines for o in got.organizations]


@pytest.mark.skipif(
    not (RESULTS / "willrun-demo-far" / "sacct.txt").is_file(), reason="no committed demo"
)
def test_slurms_estimate_backfills_a_job_easy_keeps_waiting_on_the_demo():
    # the two committed four-job replays (coopsched.slurm.source.willrun_demo): with B's
    # expected end in the batch of A's, Slurm started C at once and W only when C ended;
    # with B's beyond it, Slurm ran EASY's schedule
    from coopsched.slurm.backfill import backfill_starts
    from coopsched.slurm.source import willrun_demo
    from coopsched.slurm.validate import replayed_instance

    for tag, far in (("willrun-demo", False), ("willrun-demo-far", True)):
        inst, T, _ = replayed_instance(RESULTS / tag)
        planned = willrun_demo(far)
        np.testing.assert_array_equal(inst.width, planned.width)
        easy = get_policy("fifo").run(inst, T, backfill="easy-queue").start.tolist()
        assert easy == [0, 1200, 6600, 7800]  # A, B, W at A's end, C at B's end
        slurm = inst.start.tolist()
        if far:
            assert slurm == easy
        else:
            assert slurm == [0, 1200, 7200, 4200]  # C at its submission, W after it
            assert backfill_starts(RESULTS / tag)[4] == "willrun"  # Slurm's job id of C


@given(st.integers(0, 2**31))
def test_a_calc_period_of_one_second_is_the_exact_model(seed):
    inst = rigid(n=20, seed=seed % 1000)
    a = get_policy("slurm-classic", half_life=3600).run(inst, 1800, backfill="easy")
    b = get_policy("slurm-classic", half_life=3600, calc_period=1).run(inst, 1800, backfill="easy")
    np.testing.assert_array_equal(a.start, b.start)


def test_age_weight_zero_is_the_fair_share_order():
    inst = rigid(n=30, seed=3)
    a = get_policy("slurm-classic").run(inst, 1800, backfill="easy")
    b = get_policy("slurm-classic", fs_weight=1000, age_weight=0).run(inst, 1800, backfill="easy")
    np.testing.assert_array_equal(a.start, b.start)


def test_a_large_age_weight_serves_the_oldest_job_first():
    # org 0 has used the machine; org 1 has not, but org 0's waiting job is older: with age
    # dominating, org 0 goes first (fair share alone would pick org 1)
    orgs = [Organization("a", 1), Organization("b", 1)]
    inst = Instance(orgs, [0, 0, 1], [0, 1, 5], [10, 5, 5], [2, 2, 2], requested=[10, 5, 5])
    fs = get_policy("slurm-classic").run(inst, 100, backfill="easy")
    assert fs.start.tolist() == [0, 15, 10]
    aged = get_policy("slurm-classic", fs_weight=1, age_weight=1000, max_age=1000).run(
        inst, 100, backfill="easy"
    )
    assert aged.start.tolist() == [0, 10, 15]
    with pytest.raises(ValueError, match="max_age"):
        get_policy("slurm-classic", max_age=0)


# --- tune --------------------------------------------------------------------------------------


def test_tune_never_advises_worse_than_current_on_what_it_searched():
    from coopsched.slurm.tune import tune

    windows = [(rigid(n=25, seed=s, machines=(2, 6)), 1800) for s in range(4)]
    r = tune(windows[:1], windows[1:2], progress=None)
    assert r.train[1].unfairness <= r.train[0].unfairness
    d = r.to_dict()
    assert d["slurm_conf"][0] == "PriorityType=priority/multifactor"
    assert d["sacctmgr"][0].startswith("sacctmgr -i modify account org_0 set fairshare=")
    assert r.check is not None and len(r.check) == 3
    # held out: the advice is one of the steps' settings, chosen on the held-out windows
    r3 = tune(windows[:3], windows[3:], holdout=1)
    assert any(t.startswith("held out:") for t in r3.trail)


def test_tune_refuses_windows_of_other_organizations():
    from coopsched.slurm.tune import tune

    with pytest.raises(ValueError, match="same organizations"):
        tune([(rigid(machines=(2, 6)), 1800)], [(rigid(machines=(4, 4)), 1800)])


def test_users_keep_their_organization_across_windows():
    from conftest import trace_path

    from coopsched.slurm.source import replay_source
    from coopsched.workloads.swf import read_swf

    path = trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    tr = read_swf(path)
    user = tr.columns["user"]
    submit = tr.columns["submit"]
    first = int(submit.min())
    seen: dict[int, int] = {}
    for start in (0, 86400, 2 * 86400):
        inst, _base = replay_source(path, start=start, length=86400, machines=64)
        idx = np.flatnonzero((submit >= first + start) & (submit < first + start + 86400))
        for u, o in zip(user[idx].tolist(), inst.org.tolist(), strict=True):
            assert seen.setdefault(u, o) == o


def test_tune_cli_prints_what_to_apply(capsys):
    from conftest import trace_path

    path = trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    code = main(["tune", str(path), "--start", "6868800", "--length", "43200", "--format", "json"])
    assert code == 0
    d = json.loads(capsys.readouterr().out)
    assert d["check"] is not None and len(d["sacctmgr"]) == 4
    assert any(line.startswith("PriorityDecayHalfLife=") for line in d["slurm_conf"])


def test_replay_without_slurm_says_why(tmp_path, monkeypatch, capsys):
    from conftest import trace_path

    monkeypatch.setenv("COOPSCHED_SLURM_SCRIPT", str(tmp_path / "missing.sh"))
    path = trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    code = main(
        [
            "replay",
            str(path),
            "--start",
            "6868800",
            "--length",
            "3600",
            "--out",
            str(tmp_path / "o"),
        ]
    )
    assert code != 0
    assert "Slurm cannot run here" in capsys.readouterr().err


# --- a real replay (slow) -------------------------------------------------------------------


@pytest.mark.slow
def test_a_small_replay_on_a_loopback_slurm(tmp_path):
    """Three jobs under priority/multifactor with fair share, 40 s of replay (about two
    minutes with the daemons' start, the wait for a decay tick, and the stop): the capture
    reads back, Slurm's backfill is not EASY's (docs/slurm.md), and no daemon is left."""
    import subprocess

    from coopsched.slurm.replay import replay, unavailable
    from coopsched.slurm.source import backfill_demo
    from coopsched.slurm.validate import compare, replayed_instance

    why = unavailable()
    if why is not None:
        pytest.skip(f"Slurm cannot run here: {why}")
    plan = ReplayPlan.build(backfill_demo(), 60.0, 2400, Scheduling())
    r = replay(plan, tmp_path / "out")
    assert not r.failed and r.wall_seconds < 180
    meta = json.loads((tmp_path / "out" / "replay.json").read_text())
    assert (meta["origin"] - meta["slurmctld_boot"]) % 60 == 0  # started on a decay tick
    inst, T, _ = replayed_instance(tmp_path / "out")
    a, b, c = inst.start.tolist()
    assert a == 0 and b >= 1200  # B after A (Slurm's seconds x 60, on the log's clock)
    assert c >= b  # C waited for B's reservation: no "extra" processors on a shared node
    easy = get_policy("fifo").run(inst, T, backfill="easy")
    assert easy.start[2] == inst.release[2]  # the model's EASY starts C at once
    rows = compare(tmp_path / "out")
    from coopsched.slurm.validate import MODELS

    assert [r.schedule for r in rows] == ["slurm", *MODELS]
    assert r.state is not None and not r.state.exists()  # stopped, its folder removed
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    assert str(r.state) not in ps  # no daemon of this cluster is left
