"""The sampled audit's speed-ups give the same numbers (issue 29 item 3): coalition values by
one ValueCurve instead of psi_sp at every time, and coalitions valued in batches (on a dask
cluster) giving the same estimate as one process for the same seed."""

import dataclasses
import json

import numpy as np
import pytest
from conftest import fifo_recorded, small_instances, trace_path
from hypothesis import given, settings
from hypothesis import strategies as st
from test_rigid import RULES, rigid_instances

from coopsched import make_instance
from coopsched.audit.estimation import shapley_antithetic
from coopsched.audit.game import recorded_starts
from coopsched.audit.sampling import (
    CoalitionValuer,
    coalition_values,
    curve_values,
    sampled_game,
    sign_decided,
    small_surplus,
)
from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy
from coopsched.online.ref import ref_schedule
from coopsched.online.utilities import psi_sp


def old_values(sched, grid):
    """The former valuation: psi_sp over every job at every time, summed."""
    return [sum(sched.psi(t)) for t in grid]


@settings(max_examples=150, deadline=None)
@given(
    inst=small_instances(max_k=4, max_jobs=9, max_release=6, max_size=5),
    data=st.data(),
    rigid=st.booleans(),
)
def test_curve_values_equal_psi_sp_summed_at_every_time(inst, data, rigid):
    start = np.array(
        [data.draw(st.one_of(st.just(-1), st.integers(0, 20))) for _ in range(inst.n)],
        dtype=np.int64,
    ).reshape(-1)
    if rigid:
        inst = dataclasses.replace(
            inst, processors=np.array([data.draw(st.integers(1, 3)) for _ in range(inst.n)])
        )
    grid = sorted(set(data.draw(st.lists(st.integers(-3, 40), min_size=1, max_size=6))))
    old = [sum(psi_sp(inst.org, start, inst.size, t, inst.k, inst.processors)) for t in grid]
    assert curve_values(inst, start, grid) == old


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(max_k=4, max_jobs=8, max_release=6, max_size=5), data=st.data())
def test_coalition_values_equal_the_former_valuation(inst, data):
    T = 25
    grid = [3, 10, 17, T]
    mask = data.draw(st.integers(1, (1 << inst.k) - 1))
    members = [u for u in range(inst.k) if mask >> u & 1]
    for pol in ("fairshare", "fifo"):
        sched = get_policy(pol).run(inst, T, members=members)
        assert coalition_values(inst, T, grid, mask, pol) == old_values(sched, grid)
    ref, _ = ref_schedule(inst.restrict(members), T)
    assert coalition_values(inst, T, grid, mask, exact_upto=inst.k) == old_values(ref, grid)


@settings(max_examples=120, deadline=None)
@given(inst=rigid_instances(pins=True), data=st.data())
def test_the_valuers_backend_gives_simulates_values(inst, data):
    """:class:`CoalitionValuer` runs every coalition through one backend of the engines'
    door, the instance's compiled inputs prepared once: every coalition's values are those
    of the Python engine's schedule, whatever the coalitions valued before on the same
    inputs."""
    from unittest import mock

    from coopsched.online import engine

    T = data.draw(st.integers(1, 30))
    grid = sorted({3, 11, T})
    rule = data.draw(st.sampled_from(RULES))
    pol = data.draw(st.sampled_from(["fifo", "fairshare", "utfairshare", "currfairshare"]))
    value = CoalitionValuer(inst, T, grid, pol, backfill=rule)
    prepared = None
    for mask in data.draw(st.lists(st.integers(1, (1 << inst.k) - 1), min_size=1, max_size=4)):
        members = [u for u in range(inst.k) if mask >> u & 1]
        sched = simulate(inst, get_policy(pol), T, members, backfill=rule, engine="python")
        with mock.patch.object(engine, "COMPILE_MIN_JOBS", 0):  # the compiled engine
            assert value(mask) == old_values(sched, grid)
        assert prepared is None or value.backend.prepared() is prepared
        prepared = value.backend.prepared()


def test_a_backend_weighs_all_its_runs_when_it_chooses_the_engine(monkeypatch):
    """``engine="auto"`` on a backend without a stated workload counts the jobs of its runs:
    small runs stay in Python until their sum passes COMPILE_MIN_JOBS."""
    from coopsched.online import engine

    monkeypatch.setattr(engine, "numba_warm", lambda: False)
    monkeypatch.setattr(engine, "COMPILE_MIN_JOBS", 5)
    inst = make_instance([1, 1], [(0, 0, 3), (1, 1, 2), (0, 2, 2)])
    backend = engine.Backend(inst, 20)
    runs = [backend.run(get_policy("fifo"), [0]).info["engine"] for _ in range(3)]
    assert runs == ["python", "python", "compiled"]  # 2, 4, then 6 jobs
    assert engine.Backend(inst, 20, workload=5).run(get_policy("fifo")).info["engine"] == (
        "compiled"
    )


def top_users_window(path, t0, t1, top, tmp, jobs="rigid"):
    """The window ``[t0, t1)`` of a log with its ``top`` busiest users (processor-seconds in
    the window) as organizations and everyone else as 'other': ``(instance, horizon, rule)``
    as the audit builds them."""
    from coopsched.audit import load_log
    from coopsched.audit.organizations import assign_unmatched, by_mapping
    from coopsched.audit.window import recorded_peak, window_instance
    from coopsched.online.rigid import PLATFORM_BACKFILL, resolve_backfill

    log = load_log(path)
    j = log.jobs
    inwin = (j["submit"] < t1) & (j["end"] > t0)
    work = (j["processors"] * (j["end"] - j["start"]))[inwin].groupby(j["user"][inwin]).sum()
    names = work.sort_values(ascending=False).index[:top]
    m = tmp / "top.toml"
    m.write_text("".join(f'[[organization]]\nname = "u{u}"\nusers = ["{u}"]\n' for u in names))
    orgs = by_mapping(j, m)
    assign_unmatched(orgs, j, "other")
    machines = max(int(log.machines or 0), recorded_peak(log, t0, t1))  # RICC runs > MaxProcs
    win = window_instance(log, orgs, t0, t1, machines, jobs=jobs)
    rule = resolve_backfill(win.instance, PLATFORM_BACKFILL) if win.instance.rigid else None
    return win.instance, win.horizon, rule


def test_real_window_coalition_values_equal_the_former_valuation(tmp_path):
    path = trace_path("RICC-2010-2.swf.gz")
    inst, T, rule = top_users_window(path, 30 * 86400, 31 * 86400, 11, tmp_path)
    assert inst.rigid and inst.k == 12 and inst.n >= 2_000
    grid = sorted({int(x) for x in np.linspace(0, T, 9)[1:]})
    rng = np.random.default_rng(3)
    for mask in [1, (1 << inst.k) - 2, *rng.integers(2, (1 << inst.k) - 2, size=3).tolist()]:
        members = [u for u in range(inst.k) if mask >> u & 1]
        # the former path in the Python engine
        sched = simulate(inst, get_policy("fairshare"), T, members, backfill=rule, engine="python")
        want = old_values(sched, grid)
        assert want[-1] > 0
        assert coalition_values(inst, T, grid, int(mask), backfill=rule) == want


def _game(k=5, seed=0):
    rng = np.random.default_rng(seed)
    w = rng.integers(1, 50, size=k)
    pair = rng.integers(0, 9, size=(k, k))

    def value(mask):
        m = [u for u in range(k) if mask >> u & 1]
        return np.array([sum(w[m]) + sum(pair[a, b] for a in m for b in m if a < b), len(m)])

    return value


@pytest.mark.parametrize("seconds", [None, 1e9])
def test_batch_valuation_gives_the_same_estimate(seconds):
    value = _game()
    calls = []

    def values(masks):
        calls.append(len(masks))
        return [value(m) for m in masks]

    kw = dict(seed=4, first_orders=4, seconds=seconds, decide=lambda p, h: h < 0)
    a = shapley_antithetic(value, 5, 40, **kw)
    b = shapley_antithetic(value, 5, 40, values=values, **kw)
    one = list(calls)
    assert one
    # at least 20 coalitions a call where a look has that many left to value: fewer calls
    calls.clear()
    c = shapley_antithetic(value, 5, 40, values=values, batch=20, **kw)
    assert len(calls) < len(one) and sum(calls) == sum(one)
    for x in (b, c):
        assert (a.orders, a.evaluations, a.looks, a.stop) == (
            x.orders,
            x.evaluations,
            x.looks,
            x.stop,
        )
        np.testing.assert_array_equal(a.phi, x.phi)
        np.testing.assert_array_equal(a.halfwidth, x.halfwidth)
    with pytest.raises(ValueError, match="batch"):
        shapley_antithetic(value, 5, 40, batch=0, **kw)


def _recorded(k=7, n=70, seed=5):
    return fifo_recorded(k, n, seed)


def test_sampled_game_equals_the_former_valuation_for_the_same_seed():
    rec = _recorded()
    T, grid = 60, [20, 40, 60]
    G = (1 << rec.k) - 1
    total = sum(psi_sp(rec.org, recorded_starts(rec), rec.size, T, rec.k))
    sg = sampled_game(rec, T, [20, 40], samples=40, seed=9, adaptive=False, estimator="plain")

    def old(mask):  # the former vec, at the horizon
        if mask == 0:
            return 0.0
        if mask == G:
            return float(total)
        m = [u for u in range(rec.k) if mask >> u & 1]
        return float(sum(get_policy("fairshare").run(rec, T, members=m).psi(T)))

    order = rec.canonical_order().tolist()
    est = shapley_antithetic(old, rec.k, 40, seed=9, order=order)
    assert grid[-1] == T and sg.samples == 40
    np.testing.assert_array_equal(sg.estimate.phi[:, -1], est.phi[:, 0])


def test_dask_cluster_of_two_workers_gives_the_single_process_estimate():
    distributed = pytest.importorskip("distributed")
    rec = _recorded()
    kw = dict(samples=24, seed=3, first_orders=8, exact_upto=2)
    one = sampled_game(rec, 60, [30], **kw)
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        two = sampled_game(rec, 60, [30], scheduler=client, **kw)
        assert two.samples == one.samples and two.coalitions == one.coalitions
        np.testing.assert_array_equal(two.estimate.phi, one.estimate.phi)
        np.testing.assert_array_equal(two.estimate.halfwidth, one.estimate.halfwidth)
        np.testing.assert_array_equal(two.phi, one.phi)
        # a scheduler address works too (its client is closed afterwards)
        three = sampled_game(rec, 60, [30], scheduler=cluster.scheduler_address, **kw)
        np.testing.assert_array_equal(three.estimate.phi, one.estimate.phi)
        # the refinement of the organizations the orders leave open, on the cluster too
        kw = {**kw, "samples": 12}
        one = sampled_game(rec, 60, [30], **kw)
        two = sampled_game(rec, 60, [30], scheduler=client, **kw)
        assert one.refinement is not None and one.refinement.players == two.refinement.players
        assert two.coalitions == one.coalitions
        np.testing.assert_array_equal(two.refinement.phi, one.refinement.phi)
        np.testing.assert_array_equal(two.phi, one.phi)
        np.testing.assert_array_equal(two.halfwidth, one.halfwidth)


def test_cli_scheduler_gives_the_single_process_report(tmp_path, capsys):
    distributed = pytest.importorskip("distributed")
    from coopsched.cli import main
    from coopsched.workloads.jsonio import instance_to_dict

    p = tmp_path / "s.json"
    p.write_text(json.dumps(instance_to_dict(_recorded())))
    args = ["audit", str(p), "--horizon", "60", "--method", "sampled", "--samples", "24"]
    args += ["--points", "2", "--no-counterfactuals", "--format", "json"]
    assert main(args) == 0
    one = json.loads(capsys.readouterr().out)
    with distributed.LocalCluster(
        n_workers=2, threads_per_worker=1, processes=False, dashboard_address=None
    ) as cluster:
        assert main([*args, "--scheduler", cluster.scheduler_address]) == 0
    two = json.loads(capsys.readouterr().out)
    assert two["organizations"] == one["organizations"]
    assert two["sampling"]["coalitions_valued"] == one["sampling"]["coalitions_valued"] > 0


def test_small_surplus_needs_the_whole_interval_within_the_share():
    psi = np.array([100.0, 100.0, 100.0, 100.0, 0.0, 100.0])
    phi = np.array([100.0, 100.0, 100.0, 120.0, 0.0, 96.0])
    hw = np.array([4.0, 4.7, 4.8, 1.0, 0.0, 0.5])
    # 100/1.05 = 95.24, 100/0.95 = 105.26
    assert small_surplus(psi, phi, hw, 0.05).tolist() == [True, True, False, False, False, True]


def test_negligible_surpluses_stop_the_sampling_sooner_on_the_same_orders():
    rec = _recorded(k=6, n=80, seed=11)
    kw = dict(samples=160, seed=2, first_orders=8, refine=False)
    full = sampled_game(rec, 60, [], **kw)
    soon = sampled_game(rec, 60, [], negligible=0.2, **kw)
    assert soon.samples < full.samples and not soon.sign_decided.all()
    assert soon.estimate.stop == "decided"
    plain = sampled_game(rec, 60, [], adaptive=False, **{**kw, "samples": soon.samples})
    np.testing.assert_array_equal(soon.estimate.phi, plain.estimate.phi)
    with pytest.raises(ValueError, match="negligible"):
        sampled_game(rec, 60, [], negligible=1.0, **kw)


@pytest.mark.parametrize("rigid", [False, True])
def test_ref_runs_value_their_subcoalitions_once_with_the_same_estimate(rigid, monkeypatch):
    import coopsched.audit.sampling as sampling
    import coopsched.online.ref.rigid as ref_rigid

    rec = _recorded(k=6, n=40, seed=3)
    if rigid:
        rec = dataclasses.replace(rec, processors=1 + rec.size % 2, requested=rec.size + 1)
    T, times, upto = 60, [20, 40], 4
    G = (1 << rec.k) - 1
    grid = [20, 40, 60]
    total = [
        sum(psi_sp(rec.org, recorded_starts(rec), rec.size, t, rec.k, rec.processors)) for t in grid
    ]
    rule = "easy" if rigid else None
    former = 0

    def old(mask):  # the former vec: REF run on every coalition of at most `upto` members
        nonlocal former
        if mask == 0:
            return np.zeros(3)
        if mask == G:
            return np.array(total, dtype=float)
        m = [u for u in range(rec.k) if mask >> u & 1]
        if len(m) <= upto:
            former += 1
            if rigid:
                sched = get_policy("ref").run(rec, T, members=m, backfill=rule)
            else:
                sched, _ = ref_schedule(rec.restrict(m), T)
        else:
            sched = get_policy("fairshare").run(rec, T, members=m, backfill=rule)
        return np.array([float(sum(sched.psi(t))) for t in grid])

    runs = 0
    real = ref_rigid.ref_rigid_schedule if rigid else sampling.ref_schedule

    def counted(*a, **kw):
        nonlocal runs
        runs += 1
        return real(*a, **kw)

    monkeypatch.setattr(
        ref_rigid if rigid else sampling,
        ("ref_rigid_schedule" if rigid else "ref_schedule"),
        counted,
    )
    sg = sampled_game(
        rec,
        T,
        times,
        samples=40,
        seed=5,
        exact_upto=upto,
        adaptive=False,
        backfill=rule,
        estimator="plain",
        control_variate=False,  # the orders as the former valuation's, draw for draw
    )
    ref_runs = runs
    est = shapley_antithetic(old, rec.k, 40, seed=5, order=rec.canonical_order().tolist())
    np.testing.assert_array_equal(sg.estimate.phi, est.phi)
    np.testing.assert_array_equal(sg.estimate.halfwidth, est.halfwidth)
    assert sg.coalitions == est.evaluations
    assert 0 < ref_runs < former / 2


@pytest.fixture(scope="module")
def ricc_day(tmp_path_factory):
    """RICC, one day, the 7 busiest users and 'other' (rigid jobs, the platform's rule), every coalition of
    the sampled game valued: ``(inst, T, rule, table, fair_grand, exact)``, ``table`` with the
    grand coalition at the recorded total, ``exact`` its Shapley values."""
    from coopsched.online.shapley import shapley

    path = trace_path("RICC-2010-2.swf.gz")
    tmp = tmp_path_factory.mktemp("ricc-day")
    inst, T, rule = top_users_window(path, 30 * 86400, 31 * 86400, 7, tmp)
    k, G = inst.k, (1 << inst.k) - 1
    recorded = sum(psi_sp(inst.org, recorded_starts(inst), inst.size, T, k, inst.processors))
    table = [0] + [coalition_values(inst, T, [T], m, backfill=rule)[0] for m in range(1, G)]
    fair_grand = coalition_values(inst, T, [T], G, backfill=rule)[0]
    table.append(recorded)
    exact = np.array([float(x) for x in shapley(table)])
    return inst, T, rule, table, fair_grand, exact


@pytest.mark.parametrize("first", [32, 2])
def test_refined_audit_covers_the_sampled_games_exact_value(ricc_day, monkeypatch, first):
    """The whole two-phase estimate (orders, then the organizations they leave open refined
    by stratified sampling) on the real game of :func:`ricc_day`, its coalitions read from
    the table: over seeded runs, the final intervals cover the exact values in the stated
    share, the refinement ran and decided organizations the orders had left open, and its
    values are those of :func:`shapley_stratified` on the table for the same seed. At most 8
    orders, so at most 4 rounds: with the audit's first look (32 rounds) the refinement has
    one look; with a first look at 2 rounds, two looks, the organizations open after the
    first with their own allocation of draws (``allocate=True``; off by default)."""
    from test_shapley_antithetic import CONF, upper_bound

    from coopsched.audit import sampling
    from coopsched.audit.estimation import shapley_stratified

    inst, T, rule, table, fair_grand, exact = ricc_day
    fair = [*table[:-1], fair_grand]
    monkeypatch.setattr(sampling, "coalition_values", lambda i, h, g, m, *a: [fair[m]])
    monkeypatch.setattr(sampling, "CoalitionValuer", lambda *a: lambda m: [fair[m]])
    monkeypatch.setattr(sampling, "REFINE_FIRST", first)
    samples = 8
    shares, refined, settled, allocated, last = [], 0, 0, 0, None
    for seed in range(150):
        sg = sampled_game(
            inst,
            T,
            [],
            samples=samples,
            seed=seed,
            confidence=CONF,
            backfill=rule,
            allocate=first < 4,
        )
        shares.append(np.mean(np.abs(sg.phi - exact) <= sg.halfwidth))
        r = sg.refinement
        if r is not None:
            refined += 1
            settled += int(r.decided.sum())
            allocated += sum(a is not None for a in r.allocation or [])
            assert sg.estimate.stop in ("orders", "handoff") and sg.stop == r.stop
            assert sg.refining
            assert sorted(r.players) == np.flatnonzero(~sg.estimate.decided).tolist()
            np.testing.assert_array_equal(sg.phi[r.players], r.phi[:, 0])
            last = seed, sg
    assert refined >= 20 and settled > 0, (refined, settled)
    assert (allocated > 0) == (first < 4), allocated
    assert upper_bound(shares) >= CONF, np.mean(shares)
    # the refinement is shapley_stratified on the same table with the audit's seed stream
    seed, sg = last
    r = sg.refinement
    psi = np.asarray(sg.psi, dtype=np.float64)
    again = shapley_stratified(
        table.__getitem__,
        inst.k,
        r.players,
        samples // 2,  # the audit's cap: half its orders
        seed=np.random.SeedSequence(seed).spawn(1)[0],
        confidence=1 - (1 - CONF) / 2,
        decide=lambda who, p, h: sign_decided(psi[who], p[:, 0], h[:, 0]),
        interval="hall",  # the audit's refinement with the default interval
        order=inst.canonical_order().tolist(),
        first_rounds=first,
        allocate=sampling.REFINE_ALLOCATE if first < 4 else 0,
        cost=sampling.coalition_cost(inst),
        surrogate=sampling.fit_control(inst, T, True)[0],  # the audit's control variate
    )
    np.testing.assert_array_equal(again.phi, r.phi)
    np.testing.assert_array_equal(again.halfwidth, r.halfwidth)
    off = sampled_game(inst, T, [], samples=samples, seed=seed, confidence=CONF, refine=False)
    assert off.refinement is None and not off.refining
    assert off.estimate.level == CONF < sg.estimate.level == 1 - (1 - CONF) / 2
    assert r.level == 1 - (1 - CONF) / 2 / r.planned_looks


def test_split_estimator_on_a_real_window_covers_the_sampled_games_exact_value(ricc_day):
    """RICC, one day, the 7 busiest users and 'other' (rigid jobs, EASY): every coalition of
    the sampled game valued (its grand coalition at the recorded total), so its Shapley values
    are exact. The default estimator (``split``: the grand coalition valued under FAIRSHARE
    and the recorded total's difference shared equally) gives the same estimate as the
    unanimity control on that table for the same seed; its intervals cover the exact values
    in the stated share of seeded runs (one-sided test of tests/test_shapley_antithetic.py)
    and are narrower than the plain estimator's at the same orders."""
    from test_shapley_antithetic import CONF, upper_bound

    from coopsched.audit.estimation import unanimity_control

    inst, T, rule, table, fair_grand, exact = ricc_day
    k = inst.k
    assert k == 8
    recorded = table[-1]
    order = inst.canonical_order().tolist()
    g, phi_g = unanimity_control(k, recorded - fair_grand)

    # (without the control variate of the jobs that fit, tested on this game below)
    sg = sampled_game(
        inst, T, [], samples=20, seed=4, adaptive=False, backfill=rule, control_variate=False
    )
    assert sg.estimator == "split" and sg.grand_policy_at == []
    est = shapley_antithetic(
        table.__getitem__, k, 20, seed=4, order=order, control=g, control_phi=phi_g
    )
    np.testing.assert_allclose(sg.estimate.phi[:, 0], est.phi[:, 0], rtol=1e-12)
    np.testing.assert_allclose(sg.estimate.halfwidth[:, 0], est.halfwidth[:, 0], rtol=1e-9)
    assert sum(sg.phi) == pytest.approx(recorded, rel=1e-12)
    plain = sampled_game(
        inst, T, [], samples=20, seed=4, adaptive=False, backfill=rule, estimator="plain"
    )
    assert plain.estimator == "plain" and plain.grand_policy_at is None

    shares, split_w, plain_w = [], [], []
    for seed in range(300):
        kw = dict(seed=seed, confidence=CONF, order=order)
        a = shapley_antithetic(table.__getitem__, k, 40, control=g, control_phi=phi_g, **kw)
        shares.append(np.mean(np.abs(a.phi[:, 0] - exact) <= a.halfwidth[:, 0]))
        split_w.append(a.halfwidth[:, 0])
        if seed < 40:
            plain_w.append(shapley_antithetic(table.__getitem__, k, 40, **kw).halfwidth[:, 0])
    assert upper_bound(shares) >= CONF, np.mean(shares)
    ratio = np.mean(split_w, axis=0) / np.mean(plain_w, axis=0)
    assert np.median(ratio) < 0.5, ratio
    # ends: the first and last positions exact (the recorded total at the last)
    se = sampled_game(
        inst, T, [], samples=20, seed=4, adaptive=False, backfill=rule, estimator="ends"
    )
    est = shapley_antithetic(table.__getitem__, k, 20, seed=4, order=order, ends=True)
    assert se.estimator == "ends" and se.estimate.ends
    np.testing.assert_allclose(se.estimate.phi[:, 0], est.phi[:, 0], rtol=1e-12)
    np.testing.assert_allclose(se.estimate.halfwidth[:, 0], est.halfwidth[:, 0], rtol=1e-9)
    shares = []
    for seed in range(300):
        a = shapley_antithetic(
            table.__getitem__, k, 40, seed=seed, confidence=CONF, order=order, ends=True
        )
        shares.append(np.mean(np.abs(a.phi[:, 0] - exact) <= a.halfwidth[:, 0]))
    assert upper_bound(shares) >= CONF, np.mean(shares)
    with pytest.raises(ValueError, match="estimator: 'z'; choose split, ends, plain"):
        sampled_game(inst, T, [], samples=4, estimator="z")


def test_the_control_variate_on_a_real_window_covers_and_is_narrower(ricc_day):
    """The same real game with the default control variate, the game of the jobs that fit
    (:mod:`coopsched.audit.surrogate`, exact Shapley values): the sampled audit's orders are
    ``shapley_antithetic`` with the unanimity control and that surrogate for the same seed;
    over seeded runs its intervals cover the exact values in the stated share, and they are
    not wider than the split estimator's alone at the same orders (on this light day few
    jobs are too wide for a coalition: little to follow)."""
    from test_shapley_antithetic import CONF, upper_bound

    from coopsched.audit import sampling
    from coopsched.audit.estimation import unanimity_control

    inst, T, rule, table, fair_grand, exact = ricc_day
    k = inst.k
    order = inst.canonical_order().tolist()
    g, phi_g = unanimity_control(k, table[-1] - fair_grand)
    surrogate, said = sampling.fit_control(inst, T, True)
    assert surrogate is not None and said is not None and said["used"]
    sg = sampled_game(inst, T, [], samples=20, seed=4, adaptive=False, backfill=rule)
    kw = dict(order=order, control=g, control_phi=phi_g)
    est = shapley_antithetic(table.__getitem__, k, 20, seed=4, surrogate=surrogate, **kw)
    np.testing.assert_allclose(sg.estimate.phi[:, 0], est.phi[:, 0], rtol=1e-12)
    np.testing.assert_allclose(sg.estimate.halfwidth[:, 0], est.halfwidth[:, 0], rtol=1e-9)
    assert sg.control_variate == said
    shares, with_w, without_w = [], [], []
    for seed in range(300):
        a = shapley_antithetic(
            table.__getitem__, k, 40, seed=seed, confidence=CONF, surrogate=surrogate, **kw
        )
        shares.append(np.mean(np.abs(a.phi[:, 0] - exact) <= a.halfwidth[:, 0]))
        with_w.append(a.halfwidth[:, 0])
        if seed < 40:
            b = shapley_antithetic(table.__getitem__, k, 40, seed=seed, confidence=CONF, **kw)
            without_w.append(b.halfwidth[:, 0])
    assert upper_bound(shares) >= CONF, np.mean(shares)
    assert np.mean(shares) >= CONF - 0.02
    assert np.mean(with_w) <= 1.05 * np.mean(without_w)


def test_the_handoff_prices_the_refinement_against_the_orders():
    """k = 50, 8 runs of positions: the refinement's first look costs open * 2 * 8 * 32
    coalitions, the orders' next look (next - pairs) * 2 * 49; one coalition per second."""
    from coopsched.audit.sampling import REFINE_FIRST, handoff_rule

    assert REFINE_FIRST == 32
    rule = dict(k=50, runs=8, pairs=20, next_pairs=40, spent=980.0, coalitions=980)
    inf = float("inf")
    assert handoff_rule(open_=3, remaining=inf, **rule)  # 1,536 <= 1,960
    assert not handoff_rule(open_=4, remaining=inf, **rule)  # 2,048 > 1,960
    assert not handoff_rule(open_=0, remaining=inf, **rule)
    # the rounds must fit in the time left
    assert handoff_rule(open_=3, remaining=1_536.0, **rule)
    assert not handoff_rule(open_=3, remaining=1_500.0, **rule)


def test_the_report_names_the_refined_organizations(capsys):
    """A sampled audit whose orders leave organizations open: the report says which were
    refined, how, and why sampling stopped; ``--no-refine`` keeps the orders alone."""
    from coopsched.audit import audit

    rec = _recorded(k=7, n=70, seed=5)
    kw = dict(horizon=60, method="sampled", samples=12, seed=3, points=0)
    r = audit(rec, with_counterfactuals=False, **kw).to_dict()
    ref = r["sampling"]["refinement"]
    assert ref["organizations"] and len(ref["rounds"]) == len(ref["organizations"])
    assert ref["orders_stop"] == "orders" and r["sampling"]["stop"] == ref["stop"]
    assert "stratified by position" in ref["method"]
    assert "half of 1 - confidence kept for the refinement" in r["sampling"]["interval"]
    assert any("estimated again by stratified sampling" in n for n in r["notes"])
    off = audit(rec, with_counterfactuals=False, refine=False, **kw).to_dict()
    assert "refinement" not in off["sampling"]
    assert "kept for the refinement" not in off["sampling"]["interval"]
