"""The production fair-share policies (Slurm classic, Fair Tree, Maui, HTCondor): the
formulas on hand-computed cases, the checker invariants, and the half-life limits.

Limits, stated exactly (each asserted below):

* half-life ``inf``: SLURM-CLASSIC's usage is the processed work, so it *is* FAIRSHARE
  (identical schedules). A huge finite half-life always picks one of FAIRSHARE's
  minimizers; it may break FAIRSHARE's ties differently (more recent usage loses).
  It is not UTFAIRSHARE: decayed usage tends to processed work, not to ``psi_sp``.
* half-life ``0``: usage becomes the number of jobs running during the interval just
  before the event. That is CURRFAIRSHARE's measure except that (a) jobs completing at
  the event still count and (b) jobs started at the same event do not count yet, so
  one organization may take several machines at one event. At every decision where
  neither happens, the pick is one of CURRFAIRSHARE's minimizers.
* HTCONDOR: RUP starts at 0.5 and never goes below, and is a moving average of
  resources held, so half-life ``0`` ranks by ``max(0.5, running before t) / share``
  and half-life ``inf`` is a static priority (largest share first).
"""

import math

import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.checker import check_schedule
from coopsched.online.decay import DecayedUsage, check_half_life
from coopsched.online.engine import Policy, SimView, simulate
from coopsched.online.policies import get_policy, names
from coopsched.online.policies._registry import normalize
from coopsched.online.policies.fairshare import argmin_ratio
from coopsched.online.policies.htcondor import HTCondor
from coopsched.online.policies.maui import Maui
from coopsched.online.policies.slurm_classic import SlurmClassic
from coopsched.online.policies.slurm_fairtree import SlurmFairTree
from coopsched.workloads.instance import make_instance

PRODUCTION = ["slurmclassic", "slurmfairtree", "maui", "htcondor"]


def view_of(machines, t=0):
    k = len(machines)
    owner = [u for u in range(k) for _ in range(machines[u])]
    v = SimView(k, tuple(range(k)), list(machines), owner)
    v.t = t
    return v


def drive(policy, machines, intervals, t, waiting):
    """Feed ``policy`` start/complete events of ``intervals`` (org, start, end), then
    ask it to select at ``t`` among the organizations in ``waiting``."""
    view = view_of(machines)
    policy.reset(view)
    events = sorted(
        [(s, 1, u) for u, s, e in intervals] + [(e, 0, u) for u, s, e in intervals if e <= t]
    )
    for time, kind, u in events:
        view.t = time
        if kind:
            view.running[u] += 1
            policy.on_start(view, u, 0)
        else:
            view.running[u] -= 1
            policy.on_complete(view, u, 0, 0)
    view.t = t
    for u in waiting:
        view.waiting[u] = 1
    return policy.select(view), view


# ----------------------------------------------------------------------------- registry


def test_registered_with_parameters_and_names():
    registered = {normalize(n) for n in names()}  # names() runs the discovery first
    for name in PRODUCTION:
        assert name in registered
    assert get_policy("slurm-classic", half_life=3600).half_life == 3600
    assert get_policy("slurm_fairtree").params()["half_life"] == 7 * 86400
    assert get_policy("htcondor").params()["half_life"] == 86400
    assert get_policy("maui").params() == {
        "interval": 43200,
        "depth": 8,
        "decay": 1.0,
        "targets": None,
        "seed": 0,
    }
    assert repr(get_policy("htcondor", half_life=1)).startswith("HTCondor(half_life=1.0")


@pytest.mark.parametrize(
    "make",
    [
        lambda: SlurmClassic(half_life=-1),
        lambda: SlurmClassic(half_life="soon"),
        lambda: HTCondor(half_life=float("nan")),
        lambda: Maui(interval=0),
        lambda: Maui(depth=0),
        lambda: Maui(decay=1.5),
    ],
)
def test_bad_parameters_are_clear_errors(make):
    with pytest.raises(ValueError):
        make()


def test_bad_shares_are_clear_errors():
    inst = make_instance([1, 1], [(0, 0, 1)])
    with pytest.raises(ValueError, match="one value per organization"):
        SlurmClassic(shares=[1]).run(inst)
    with pytest.raises(ValueError, match="out of range"):
        SlurmFairTree(accounts="0,5").run(inst)


# ----------------------------------------------------------------------------- invariants


@settings(max_examples=40, deadline=None)
@given(
    inst=small_instances(),
    policy=st.sampled_from(
        [
            SlurmClassic(),
            SlurmClassic(half_life=0),
            SlurmClassic(half_life=3),
            SlurmClassic(half_life=math.inf),
            SlurmFairTree(half_life=5, accounts="0,1;2"),
            Maui(interval=4, depth=2, decay=0.5),
            Maui(interval=1, depth=1),
            HTCondor(half_life=0),
            HTCondor(half_life=2),
            HTCondor(half_life=math.inf),
            HTCondor(half_life=7, factors=[1, 2, 3, 4]),
        ]
    ),
    horizon=st.one_of(st.none(), st.integers(1, 30)),
)
def test_parameter_variants_give_valid_schedules(inst, policy, horizon):
    """Valid, greedy, FIFO per organization, nothing lost, for non-default parameters
    (the defaults go through tests/test_engine.py with every other policy)."""
    if getattr(policy, "factors", None) is not None and len(policy.factors) != inst.k:
        policy = HTCondor(half_life=7, factors=list(range(1, inst.k + 1)))
    if isinstance(policy, SlurmFairTree) and inst.k < 3:
        policy = SlurmFairTree(half_life=5, accounts="0" if inst.k == 1 else "0,1")
    sched = policy.run(inst, horizon)
    assert check_schedule(sched) == []
    sub = policy.run(inst, 40, members=[0])
    assert check_schedule(sub) == []


# ----------------------------------------------------------------------------- decay


def test_decayed_usage_halves_after_one_half_life():
    h = 3600
    d = DecayedUsage(1, h)
    d.running[0] = 1
    d.advance(1000)
    used = d.decayed_seconds(0)
    lam = math.log(2) / h
    assert used == pytest.approx((1 - math.exp(-lam * 1000)) / lam, rel=1e-12)
    d.running[0] = 0
    d.advance(1000 + h)
    assert d.decayed_seconds(0) == pytest.approx(used / 2, rel=1e-12)
    d.advance(1000 + 3 * h)
    assert d.decayed_seconds(0) == pytest.approx(used / 8, rel=1e-12)


def test_decayed_usage_is_the_integral_whatever_the_event_times():
    """The closed form per interval equals the integral of e^{-lam(t - tau)} r(tau):
    splitting an interval into more events changes nothing."""
    h = 50.0
    one, many = DecayedUsage(1, h), DecayedUsage(1, h)
    one.running[0] = many.running[0] = 2
    one.advance(300)
    for t in range(7, 300, 7):
        many.advance(t)
    many.advance(300)
    lam = math.log(2) / h
    assert one.decayed_seconds(0) == pytest.approx(2 * (1 - math.exp(-lam * 300)) / lam)
    assert many.decayed_seconds(0) == pytest.approx(one.decayed_seconds(0), rel=1e-12)


def test_infinite_half_life_is_processed_work_exactly():
    d = DecayedUsage(2, math.inf)
    d.running[:] = [3, 0]
    d.advance(10)
    d.running[:] = [1, 2]
    d.advance(15)
    assert d.level == [35, 10] and all(isinstance(x, int) for x in d.level)
    assert check_half_life("inf") == math.inf and check_half_life(0) == 0


# ----------------------------------------------------------------------------- Slurm classic


def test_slurm_decay_can_reverse_fairshare():
    """Half-life 10 s: org 0 ran [0, 10), org 1 ran [20, 25). At t = 30 org 0 has more
    work (10 > 5) but its use is older: D0 = e^{-20 lam}(1 - e^{-10 lam})/lam = 1/(8 lam),
    D1 = e^{-5 lam}(1 - e^{-5 lam})/lam = (2^{-1/2} - 1/2)/lam > D0, so org 0 wins;
    an infinite half-life (FAIRSHARE, see below) picks org 1."""
    intervals = [(0, 0, 10), (1, 20, 25)]
    pick, view = drive(SlurmClassic(half_life=10), [1, 1], intervals, 30, [0, 1])
    assert pick == 0
    lam = math.log(2) / 10
    pol = SlurmClassic(half_life=10)
    drive(pol, [1, 1], intervals, 30, [0, 1])
    assert pol._usage.decayed_seconds(0) == pytest.approx(1 / (8 * lam), rel=1e-12)
    assert pol._usage.decayed_seconds(1) == pytest.approx((2**-0.5 - 0.5) / lam, rel=1e-12)
    u0, u1 = 1 / 8, 2**-0.5 - 0.5  # normalized usage shares, equal NormShares 1/2
    assert pol.factor(view, 0) == pytest.approx(2 ** (-(u0 / (u0 + u1)) / 0.5), rel=1e-12)
    assert drive(SlurmClassic(half_life=math.inf), [1, 1], intervals, 30, [0, 1])[0] == 1


@pytest.mark.parametrize(
    "policy",
    [SlurmClassic(), SlurmFairTree(), Maui(), HTCondor(), SlurmClassic(half_life=5)],
    ids=repr,
)
def test_equal_usage_larger_share_wins(policy):
    """Both organizations ran the same job at the same time; org 1 contributes 2 of the
    3 machines, so it goes first (the lower index would win a tie)."""
    intervals = [(0, 0, 10), (1, 0, 10)]
    assert drive(policy, [1, 2], intervals, 20, [0, 1])[0] == 1


def test_no_usage_ties_go_to_lowest_index_except_maui_and_htcondor():
    """Nobody has used anything: Slurm's factors are all 1 (a tie: lowest index); Maui's
    priority is target% - 0, so the larger target wins; HTCondor's RUPs are all 0.5,
    so the smaller priority factor (larger share) wins."""
    assert drive(SlurmClassic(), [1, 2], [], 0, [0, 1])[0] == 0
    assert drive(SlurmFairTree(), [1, 2], [], 0, [0, 1])[0] == 0
    assert drive(Maui(), [1, 2], [], 0, [0, 1])[0] == 1
    assert drive(HTCondor(), [1, 2], [], 0, [0, 1])[0] == 1


def test_shares_override_machines():
    intervals = [(0, 0, 10), (1, 0, 10)]
    assert drive(SlurmClassic(shares=[3, 1]), [1, 2], intervals, 20, [0, 1])[0] == 0
    assert drive(HTCondor(factors=[1, 5]), [1, 2], intervals, 20, [0, 1])[0] == 0
    assert drive(Maui(targets=[90, 10]), [1, 2], intervals, 20, [0, 1])[0] == 0


def test_usage_accrues_only_with_time_jobs_started_now_do_not_count():
    """Like Slurm: at one event, starting a job does not change usage, so the same
    organization takes both free machines; CURRFAIRSHARE alternates."""
    inst = make_instance([1, 1], [(0, 0, 5), (0, 0, 5), (1, 0, 5), (1, 0, 5)])
    s = SlurmClassic().run(inst)
    assert s.start.tolist() == [0, 0, 5, 5]
    c = get_policy("currfairshare").run(inst)
    assert c.start.tolist() == [0, 5, 0, 5]


# ----------------------------------------------------------------------------- Fair Tree


def test_fairtree_two_level_tree_ranks_accounts_first():
    """Usage (seconds, no decay): org 0 10, org 1 0, org 2 4; equal machines. Flat:
    org 1 has no usage (LevelFS infinite) and goes first. With accounts {0, 1} and {2}:
    account A has S = 2/3, U = 10/14 (LevelFS 0.93), account B S = 1/3, U = 4/14 (1.17),
    so B ranks first and org 2 goes before org 1."""
    intervals = [(0, 0, 10), (2, 0, 4)]
    flat = SlurmFairTree(half_life=math.inf)
    assert drive(flat, [1, 1, 1], intervals, 20, [0, 1, 2])[0] == 1
    tree = SlurmFairTree(half_life=math.inf, accounts="0,1;2")
    pick, view = drive(tree, [1, 1, 1], intervals, 20, [0, 1, 2])
    assert pick == 2
    assert tree.level_fs(view, 0) == pytest.approx((1 / 2) / (10 / 10))
    assert tree.level_fs(view, 1) == math.inf
    # within account A, org 1 (no usage) beats org 0
    assert drive(tree, [1, 1, 1], intervals, 20, [0, 1])[0] == 1


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(), h=st.sampled_from([0.0, 2.0, 30.0, math.inf]))
def test_flat_fairtree_is_classic_when_every_share_is_positive(inst, h):
    if min(inst.machines) == 0:
        inst = make_instance([max(1, m) for m in inst.machines], _jobs(inst))
    a = SlurmClassic(half_life=h).run(inst, 40)
    b = SlurmFairTree(half_life=h).run(inst, 40)
    assert a.start.tolist() == b.start.tolist()


def _jobs(inst):
    return list(zip(inst.org.tolist(), inst.release.tolist(), inst.size.tolist(), strict=True))


# ----------------------------------------------------------------------------- Maui


def test_maui_window_roll_over():
    """interval 10, depth 2, decay 0.5. Org 0 ran [0, 10) (window 0), org 1 ran [12, 15)
    (window 1). At t = 15: org 0 0.5*10 = 5, org 1 3: org 1 is further below its
    (equal) target. At t = 20 (window 2) window 0 is forgotten: org 0 0, org 1
    0.5*3 = 1.5: org 0 goes first."""
    intervals = [(0, 0, 10), (1, 12, 15)]
    pol = Maui(interval=10, depth=2, decay=0.5)
    pick, view = drive(pol, [1, 1], intervals, 15, [0, 1])
    assert pick == 1 and pol.usage(view) == [5.0, 3.0]
    assert pol.priority(view, 1) == pytest.approx(100 * (0.5 - 3 / 8))
    pick, view = drive(pol, [1, 1], intervals, 20, [0, 1])
    assert pick == 0 and pol.usage(view) == [0, 1.5]
    # a job running across a boundary is split between the windows
    pol = Maui(interval=10, depth=3)
    _, view = drive(pol, [1, 1], [(0, 5, 25)], 25, [0])
    assert pol._windows == {0: [5, 0], 1: [10, 0], 2: [5, 0]}


def test_maui_difference_not_ratio():
    """Maui ranks by target% - usage%, Slurm by usage/share. Targets 60/30/10 %, usage
    40/15/45 %: Maui's priorities are 20, 15, -35 (org 0 first), Slurm's ratios
    0.67, 0.5, 4.5 (org 1 first). (With two organizations the two orders coincide.)"""
    iv = [(0, 0, 40), (1, 0, 15), (2, 0, 45)]
    assert drive(Maui(), [6, 3, 1], iv, 100, [0, 1, 2])[0] == 0
    assert drive(SlurmClassic(half_life=math.inf), [6, 3, 1], iv, 100, [0, 1, 2])[0] == 1
    pol = Maui()
    _, view = drive(pol, [6, 3, 1], iv, 100, [0, 1, 2])
    assert [pol.priority(view, u) for u in range(3)] == pytest.approx([20, 15, -35])


# ----------------------------------------------------------------------------- HTCondor


def test_htcondor_real_priority_follows_resources_held():
    """RUP starts at 0.5; one job held for one half-life: 0.5*0.5 + 0.5*1 = 0.75; idle
    for one more half-life: 0.375, floored at 0.5. EUP = RUP x (M / m)."""
    h = 100
    pol = HTCondor(half_life=h)
    _, view = drive(pol, [1, 3], [(0, 0, 100)], 100, [0])
    assert pol.real_priority(view, 0) == pytest.approx(0.75, rel=1e-12)
    assert pol.real_priority(view, 1) == 0.5
    assert pol.effective_priority(view, 0) == pytest.approx(0.75 * 4, rel=1e-12)
    view.t = 150
    assert pol.real_priority(view, 0) == pytest.approx(0.75 * 2**-0.5, rel=1e-12)
    view.t = 200
    assert pol.real_priority(view, 0) == 0.5  # 0.375 floored


# ----------------------------------------------------------------------------- limits


class _Prev(Policy):
    """Reference for half-life 0: rank by ``f(running count over the interval just
    before t) / machines``, ties to the lowest index."""

    wants_events = True

    def __init__(self, floor=None):
        super().__init__()
        self.floor = floor

    def reset(self, view):
        self.run = [0] * view.k
        self.snap = [0] * view.k
        self.t = view.t

    def _tick(self, view):
        if view.t != self.t:
            self.snap, self.t = list(self.run), view.t

    def on_start(self, view, org, machine):
        self._tick(view)
        self.run[org] += 1

    def on_complete(self, view, org, machine, size):
        self._tick(view)
        self.run[org] -= 1

    def select(self, view):
        self._tick(view)
        if self.floor is None:
            return argmin_ratio(view, self.snap.__getitem__)
        f = [max(2 * self.floor, 2 * r) for r in self.snap]  # doubled: integers
        return argmin_ratio(view, f.__getitem__)


class _Watch(SlurmClassic):
    """SLURM-CLASSIC that records, at each decision, whether it agrees with a measure."""

    def __init__(self, measure_name, **kw):
        super().__init__(**kw)
        self.measure_name = measure_name
        self.checked = self.skipped = 0

    def reset(self, view):
        super().reset(view)
        self._events_t, self._clean = -1, True

    def _note(self, view, clean):
        if view.t != self._events_t:
            self._events_t, self._clean = view.t, True
        if not clean:
            self._clean = False

    def on_start(self, view, org, machine):
        self._note(view, False)
        super().on_start(view, org, machine)

    def on_complete(self, view, org, machine, size):
        self._note(view, False)
        super().on_complete(view, org, machine, size)

    def select(self, view):
        self._note(view, True)
        u = super().select(view)
        if self.measure_name == "running" and not self._clean:
            self.skipped += 1
            return u
        measure = view.running.__getitem__ if self.measure_name == "running" else view.work
        m = view.machines
        ratios = [(measure(v) * _prod(m, v, view), v) for v in view.candidates() if m[v] > 0]
        if m[u] > 0:
            best = min(r for r, _ in ratios)
            assert measure(u) * _prod(m, u, view) == best, (view.t, u)
        else:
            assert not ratios  # a machineless org only wins when no other waits
        self.checked += 1
        return u


def _prod(m, u, view):
    """Product of every other member's machines: ``x/m[u]`` compared as integers."""
    out = 1
    for v in view.members:
        if v != u and m[v] > 0:
            out *= m[v]
    return out


@settings(max_examples=80, deadline=None)
@given(inst=small_instances(), horizon=st.one_of(st.none(), st.integers(1, 30)))
def test_infinite_half_life_is_fairshare(inst, horizon):
    a = SlurmClassic(half_life=math.inf).run(inst, horizon)
    b = get_policy("fairshare").run(inst, horizon)
    assert a.start.tolist() == b.start.tolist() and a.machine.tolist() == b.machine.tolist()
    c = SlurmFairTree(half_life=math.inf, shares=[max(1, m) for m in inst.machines])
    d = SlurmClassic(half_life=math.inf, shares=[max(1, m) for m in inst.machines])
    assert c.run(inst, horizon).start.tolist() == d.run(inst, horizon).start.tolist()


@settings(max_examples=80, deadline=None)
@given(inst=small_instances())
def test_huge_half_life_picks_a_fairshare_minimizer(inst):
    """Half-life 1e9 s on instances shorter than 200 s: every pick minimizes FAIRSHARE's
    work/share (ties may be broken by recency instead of index)."""
    _Watch("work", half_life=1e9).run(inst)


@settings(max_examples=80, deadline=None)
@given(inst=small_instances(), horizon=st.one_of(st.none(), st.integers(1, 30)))
def test_zero_half_life_is_running_count_before_the_event(inst, horizon):
    for h in (0, 1e-6):  # 2^(-1/1e-6) underflows to 0: the limit is reached exactly
        a = SlurmClassic(half_life=h).run(inst, horizon)
        assert a.start.tolist() == _Prev().run(inst, horizon).start.tolist()
    b = HTCondor(half_life=0).run(inst, horizon)
    assert b.start.tolist() == _Prev(floor=0.5).run(inst, horizon).start.tolist()


@settings(max_examples=80, deadline=None)
@given(inst=small_instances())
def test_zero_half_life_agrees_with_currfairshare_where_they_coincide(inst):
    """At every decision with no completion and no earlier start at the same event, the
    pick of half-life 0 minimizes CURRFAIRSHARE's running/share."""
    w = _Watch("running", half_life=0)
    w.run(inst)


def test_zero_half_life_differs_from_currfairshare_on_completions():
    """One machine each. Org 1's job completes at t = 3 while org 0 and org 1 wait and
    org 0's first job keeps running: CURRFAIRSHARE sees 1 running against 0 and gives
    the machine to org 1; the half-life-0 limit still counts org 1's job over [0, 3),
    sees a tie (1 and 1) and gives it to org 0."""
    inst = make_instance([1, 1], [(0, 0, 10), (1, 0, 3), (0, 1, 2), (1, 2, 2)])
    c = get_policy("currfairshare").run(inst)
    s = SlurmClassic(half_life=0).run(inst)
    assert c.start.tolist() == [0, 0, 5, 3]
    assert s.start.tolist() == [0, 0, 3, 5]


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(), horizon=st.one_of(st.none(), st.integers(1, 30)))
def test_htcondor_infinite_half_life_is_static_priority_by_share(inst, horizon):
    class Static(Policy):
        def select(self, view):
            c = view.candidates()
            return max(c, key=lambda u: (view.machines[u], -view.rank_position(u)))

    a = HTCondor(half_life=math.inf).run(inst, horizon)
    assert a.start.tolist() == Static().run(inst, horizon).start.tolist()


# ----------------------------------------------------------------------------- the study


@pytest.mark.slow
def test_production_study_quick_runs_resumes_and_respects_the_limits(tmp_path):
    from conftest import TRACES

    if not (TRACES / "KTH-SP2-1996-2.1-cln.swf.gz").exists():
        pytest.skip("traces not available")
    import pandas as pd

    from coopsched.experiments.studies import run_study

    out = tmp_path / "production"
    _, md = run_study("production", out, quick=True, traces=TRACES, workers=1, quiet=True)
    df = pd.read_csv(out / "results.csv")
    assert len(df) == 2 * 2 * 2  # traces x lengths x splits, one window each
    assert (df.filter(like="ratio_") >= 0).all().all()
    assert (df.filter(like="util_") <= 1).all().all()
    # the limits on real windows: no decay is FAIRSHARE; flat Fair Tree is classic
    assert (df["ratio_slurmclassic@inf"] == df["ratio_fairshare"]).all()
    assert (df["ratio_slurmfairtree"] == df["ratio_slurmclassic@604800"]).all()
    for f in ("summary.md", "summary.csv", "unfairness.png", "halflife.png"):
        assert (out / f).stat().st_size > 500
    assert "| SLURM-CLASSIC |" in md and "half-life" in md
    lines = (out / "rows.jsonl").read_text().splitlines()
    run_study("production", out, quick=True, traces=TRACES, workers=1, quiet=True)
    assert (out / "rows.jsonl").read_text().splitlines() == lines  # resumed


def test_fairtree_reads_the_tree_from_the_instance():
    """One machine each, no decay. Org 0 takes two machines at t = 0 (no usage yet: a
    tie), org 2 the third; org 0 also takes the machine org 2 frees at 4. At t = 10 a
    machine frees and every organization waits; usage is 26, 0, 4. Flat: org 1 (no
    usage) goes first. With accounts {0, 1} and {2} from the instance's meta, account
    {0, 1} has LevelFS (2/3)/(26/30) = 0.77 and {2} (1/3)/(4/30) = 2.5, so org 2 goes
    first. An explicit ``accounts`` parameter wins over the meta."""
    jobs = [(0, 0, 10), (0, 0, 30), (2, 0, 4), (0, 1, 30), (0, 5, 5), (1, 5, 5), (2, 5, 5)]
    inst = make_instance([1, 1, 1], jobs)
    flat = SlurmFairTree(half_life=math.inf).run(inst, 40)
    assert flat.start.tolist() == [0, 0, 0, 4, 20, 10, 15]
    inst.meta["accounts"] = "0,1;2"
    tree = SlurmFairTree(half_life=math.inf).run(inst, 40)
    assert tree.start.tolist() == [0, 0, 0, 4, 20, 15, 10]
    assert check_schedule(flat) == [] and check_schedule(tree) == []
    explicit = SlurmFairTree(half_life=math.inf, accounts="0;1;2").run(inst, 40)
    assert explicit.start.tolist() == flat.start.tolist()


class _MauiNoReuse(Maui):
    """MAUI recomputing the windowed usage at every call (the reference for the reuse)."""

    def usage(self, view):
        self._usage_at = None
        return super().usage(view)


class _HTCondorAlwaysClamp(HTCondor):
    """HTCondor advancing and clamping at every call, and ranking through argbest (the
    reference for the early exit and the written-out loop)."""

    def select(self, view):
        from coopsched.online.decay import argbest

        self._advance(view.t)
        rup, m = self._usage.level, self._machines
        if self._factors is not None:
            return super().select(view)

        def less(u, v):
            if not m[u] or not m[v]:
                return bool(m[u]) and not m[v]
            return rup[u] * m[v] < rup[v] * m[u]

        return argbest(view.candidates(), less)

    def _advance(self, t):
        if self._frozen:
            return super()._advance(t)
        self._usage.advance(t)
        lvl = self._usage.level
        for u, x in enumerate(lvl):
            if x < 0.5:
                lvl[u] = 0.5


@settings(max_examples=60, deadline=None)
@given(
    inst=small_instances(max_k=4, max_jobs=30, max_release=8, max_size=6),
    interval=st.integers(1, 6),
    half_life=st.sampled_from([0.0, 2.0, 50.0]),
)
def test_per_event_reuse_gives_the_same_schedules(inst, interval, half_life):
    """MAUI's usage computed once per event time and HTCondor's skipped no-op advances
    change no start (many picks share one time here)."""
    for fast, slow in (
        (Maui(interval=interval, depth=3), _MauiNoReuse(interval=interval, depth=3)),
        (HTCondor(half_life=half_life), _HTCondorAlwaysClamp(half_life=half_life)),
    ):
        a = simulate(inst, fast, compiled=False)
        b = simulate(inst, slow, compiled=False)
        assert a.start.tolist() == b.start.tolist()
        assert a.machine.tolist() == b.machine.tolist()


@settings(max_examples=300, deadline=None)
@given(
    usage=st.lists(st.sampled_from([0, 0.0, 1, 2.5, 3, 1e-300, 7.0]), min_size=1, max_size=6),
    data=st.data(),
    zero_ties=st.booleans(),
)
def test_argmin_usage_per_share_is_argbest_of_the_ratio_order(usage, data, zero_ties):
    """The written-out loop picks what argbest picks under _ratio_less."""
    from coopsched.online.decay import _ratio_less, argbest, argmin_usage_per_share

    k = len(usage)
    share = data.draw(st.lists(st.sampled_from([0, 0.0, 1, 2, 0.5]), min_size=k, max_size=k))
    cands = sorted(data.draw(st.sets(st.integers(0, k - 1), min_size=1)))
    expect = argbest(cands, _ratio_less(usage, share, zero_ties))
    assert argmin_usage_per_share(cands, usage, share, zero_ties) == expect
