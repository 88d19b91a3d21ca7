"""The sampled audit's estimator (issue 29, item 2): antithetic orders, per-player intervals
(one look: Student t with Hall's skewness correction; adaptive looks: Student t), adaptive
stopping. Coverage is checked on games whose exact Shapley values are known: random
additive + interaction games, airport games (closed form: Littlechild & Owen 1973) and REF
games of real LPC-EGEE windows at k = 10 and 12, by a one-sided test over seeded runs that
rejects an interval shown to cover less than the stated share (:func:`upper_bound`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from conftest import trace_path

from coopsched.audit.estimation import (
    look_schedule,
    shapley_antithetic,
    shapley_monte_carlo,
    t_quantile,
)
from coopsched.audit.estimation.budget import Budget, BudgetError
from coopsched.online.shapley import shapley
from coopsched.testing import additive_interaction_game as additive_interaction
from coopsched.testing import airport_game as airport

CONF = 0.9
RUNS = 400
Z99 = 2.3263478740408408  # the standard normal's 0.99 quantile


def upper_bound(shares) -> float:
    """One-sided 99 % upper confidence bound on the coverage from the shares of covering
    intervals in independent runs: their mean plus ``z_0.99`` standard errors, the standard
    deviation estimated over the runs (the players of one run are not independent, so the
    runs, not the intervals, are the sample; a normal approximation over hundreds of runs).

    A method is accepted when this bound reaches the nominal share, rejected when its
    coverage is shown to be below it. At nominal coverage it is rejected with probability
    about 1 %; one that truly covers 0.88 (2 points short) with 9 players and 400 runs
    (standard error 0.005 for independent players) is rejected with probability about 95 %
    (:func:`test_the_coverage_test_rejects_two_points_short`)."""
    x = np.asarray(shares, dtype=np.float64)
    return float(x.mean() + Z99 * x.std(ddof=1) / math.sqrt(len(x)))


def test_t_quantiles_match_the_tables():
    # Abramowitz & Stegun, Table 26.10
    assert t_quantile(0.975, 1) == pytest.approx(12.706, abs=1e-3)
    assert t_quantile(0.975, 10) == pytest.approx(2.228, abs=1e-3)
    assert t_quantile(0.995, 30) == pytest.approx(2.750, abs=1e-3)
    assert t_quantile(0.9995, 4) == pytest.approx(8.610, abs=1e-3)
    assert t_quantile(0.975, 1000) == pytest.approx(1.962, abs=1e-3)


def test_airport_closed_form_is_the_exact_value():
    v, phi = airport(7, 3)
    assert np.allclose([float(x) for x in shapley(v)], phi)


def test_looks_are_planned_and_doubling():
    assert look_schedule(200, 20) == [10, 20, 40, 80, 100]
    assert look_schedule(20, 20) == [10]
    with pytest.raises(ValueError, match="at least 4 orders"):
        look_schedule(3, 20)


def _coverage(v, exact, k, orders, runs=RUNS, **kw):
    """Per run, the share of the ``k`` intervals holding the exact value; the mean half-width."""
    shares, widths = [], []
    for seed in range(runs):
        est = shapley_antithetic(lambda m: v[m], k, orders, seed=seed, confidence=CONF, **kw)
        phi, hw = est.phi[:, 0], est.halfwidth[:, 0]
        shares.append(np.mean(np.abs(phi - exact) <= hw))
        widths.append(hw.mean())
    return np.array(shares), float(np.mean(widths))


def test_the_coverage_test_rejects_two_points_short():
    """The acceptance rule of the coverage tests on simulated runs of 9 independent
    intervals: true coverage 0.88 is rejected, 0.90 (nominal) accepted, in each of 20
    seeded repetitions for 0.86 and at least 17 of 20 (power about 95 %) for 0.88."""
    rng = np.random.default_rng(29)
    rejected = {0.86: 0, 0.88: 0, 0.90: 0}
    for p in rejected:
        for _ in range(20):
            shares = (rng.random((RUNS, 9)) < p).mean(axis=1)
            rejected[p] += upper_bound(shares) < CONF
    assert rejected[0.86] == 20 and rejected[0.88] >= 17 and rejected[0.90] <= 1, rejected


def _game(game, k, g):
    if game == "additive":
        v = additive_interaction(k, g)
        return v, np.array([float(x) for x in shapley(v)])
    return airport(k, g)


@pytest.mark.parametrize("game", ["additive", "airport"])
def test_intervals_cover_the_exact_value_in_the_stated_share(game):
    """One look at 40 orders (the default interval there: Hall's skewness-corrected t)."""
    k = 9
    for g in range(3):
        v, exact = _game(game, k, g)
        shares, _ = _coverage(v, exact, k, 40)
        assert upper_bound(shares) >= CONF, (game, g, shares.mean())
        assert shapley_antithetic(v.__getitem__, k, 40).interval == "hall"


@pytest.mark.slow
def test_one_look_t_falls_short_on_skewed_games():
    """What the plain t interval does with one look on the airport games, whose small
    players' contributions are skewed: its coverage is shown to be below nominal (hence
    Hall's as the one-look default); with the same orders Hall's is at most 1.3 times as
    wide."""
    k = 9
    t_shares = []
    for g in range(3):
        v, exact = airport(k, g)
        shares, t_width = _coverage(v, exact, k, 40, interval="t")
        t_shares.extend(shares)
        _, hall_width = _coverage(v, exact, k, 40, interval="hall")
        assert t_width < hall_width <= 1.3 * t_width
    assert upper_bound(t_shares) < CONF


def counted(v, seen: set[int]):
    """``v`` as a function that records the coalitions it is asked for."""

    def f(m: int):
        seen.add(m)
        return v[m]

    return f


def test_narrower_than_hoeffding_at_equal_coalition_evaluations():
    """Same number of orders; the antithetic pairs value at most as many distinct coalitions
    (checked), and their per-player intervals are narrower than the shared Hoeffding one."""
    k = 9
    for v, exact in [
        (additive_interaction(k, 5), None),
        airport(k, 5),
    ]:
        if exact is None:
            exact = np.array([float(x) for x in shapley(v)])
        for seed in range(5):
            seen_a: set[int] = set()
            seen_h: set[int] = set()
            a = shapley_antithetic(counted(v, seen_a), k, 60, seed=seed)
            h = shapley_monte_carlo(counted(v, seen_h), k, 60, seed=seed)
            assert len(seen_a) <= len(seen_h) * 1.05
            assert a.halfwidth[:, 0].max() < h.halfwidth.min()
            assert a.orders == h.samples == 60


def test_sums_to_the_grand_value_and_stops_when_signs_are_decided():
    k = 8
    v, exact = airport(k, 1)
    far = exact + np.where(np.arange(k) % 2, 1, -1) * 50  # every psi far from phi
    seen: list[int] = []

    def decide(phi, hw):
        return (far < phi[:, 0] - hw[:, 0]) | (far > phi[:, 0] + hw[:, 0])

    est = shapley_antithetic(
        lambda m: v[m], k, 400, seed=0, decide=decide, on_look=lambda *a: seen.append(a[1])
    )
    assert est.stop == "decided" and est.decided.all()
    assert est.orders == 20 and est.looks == 1 and est.planned_looks == 6
    assert seen == [20]
    assert est.phi.sum() == pytest.approx(v[-1])

    # one psi equal to its exact phi: never decided; all orders used, that player named
    near = far.copy()
    near[3] = exact[3]

    def decide_near(phi, hw):
        return (near < phi[:, 0] - hw[:, 0]) | (near > phi[:, 0] + hw[:, 0])

    est = shapley_antithetic(lambda m: v[m], k, 400, seed=0, decide=decide_near)
    assert est.stop == "orders" and est.orders == 400 and est.looks == 6
    assert est.decided.tolist() == [u != 3 for u in range(k)]


def counting_clock():
    """A clock that advances one second per coalition valued (``value``'s wrapper)."""
    now = [0.0]

    def wrap(v):
        def value(mask):
            now[0] += 1.0
            return v[mask]

        return value

    return (lambda: now[0], lambda: now[0]), now, wrap


def test_a_budget_is_read_before_every_chunk_and_stops_between_coalitions():
    """The budget is read before each chunk of coalitions, not after each pair of orders
    (at thousands of players a pair is tens of thousands of coalitions): it holds to the
    coalition, and the orders whose coalitions were all valued make the estimate."""
    k = 8
    v, _ = airport(k, 2)
    clocks, now, wrap = counting_clock()
    budget = Budget(wall_seconds=100, clocks=clocks)
    est = shapley_antithetic(
        wrap(v), k, 10_000, seed=0, budget=budget, decide=lambda p, h: np.zeros(k, bool)
    )
    assert est.stop == "seconds" and now[0] <= 100 and est.evaluations == now[0]
    assert est.orders >= 4 and est.looks >= 1
    same = shapley_antithetic(v.__getitem__, k, est.orders, seed=0)
    np.testing.assert_allclose(est.phi, same.phi)


def test_a_budget_too_small_for_two_pairs_says_what_they_would_take():
    k = 8
    v, _ = airport(k, 2)
    clocks, now, wrap = counting_clock()
    with pytest.raises(BudgetError, match=r"bought 0 of the 2 antithetic pairs .* 2 x 7 "):
        shapley_antithetic(wrap(v), k, 100, budget=Budget(cpu_seconds=5, clocks=clocks))
    assert now[0] <= 5
    # a budget gone before one coalition is valued says so (it once said "0 s each")
    with pytest.raises(BudgetError, match="ran out before the first coalition was valued"):
        shapley_antithetic(v.__getitem__, k, 10_000, seed=0, seconds=1e-9)


def test_adaptive_intervals_keep_their_coverage():
    """Stopping at the first look where the signs are decided would bias a single nominal
    interval; the looks' Bonferroni split keeps the coverage (targets near phi, so that
    the look where sampling stops varies from run to run)."""
    k = 9
    v = additive_interaction(k, 11)
    exact = np.array([float(x) for x in shapley(v)])
    offset = np.array([100, 150, 200, 250, 300, 350, 400, 450, 500])
    target = exact + offset * np.where(np.arange(k) % 2, 1, -1)
    stops = set()
    shares = []

    def decide(phi, hw):
        return (target < phi[:, 0] - hw[:, 0]) | (target > phi[:, 0] + hw[:, 0])

    for seed in range(200):
        est = shapley_antithetic(lambda m: v[m], k, 640, seed=seed, confidence=CONF, decide=decide)
        stops.add(est.looks)
        shares.append(np.mean(np.abs(est.phi[:, 0] - exact) <= est.halfwidth[:, 0]))
    assert est.interval == "t"  # the default with looks
    assert len(stops) > 1  # the stopping really varies
    assert upper_bound(shares) >= CONF


@pytest.mark.slow
@pytest.mark.parametrize("k", [10, 12])
def test_real_window_ref_game_coverage(k):
    """REF games of real LPC-EGEE windows (5e4 s, sequential jobs, users dealt to k
    organizations), valued exactly by one REF run: the sampled intervals cover the exact
    Shapley values in the stated share of seeded runs (not shown to fall short), one look,
    Hall's interval."""
    from coopsched.online.ref import ref_schedule
    from coopsched.workloads.prepare import trace_to_instance
    from coopsched.workloads.swf import read_swf

    tr = read_swf(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
    runs = RUNS
    for start in (11_050_000, 18_900_000):
        inst = trace_to_instance(tr, k=k, start=start, length=50_000, seed=1)
        _, vals = ref_schedule(inst, 50_000)
        exact = np.array([float(x) for x in shapley(vals)])
        shares, width = _coverage(vals, exact, k, 40, runs=runs)
        assert upper_bound(shares) >= CONF, (start, shares.mean())
        h = shapley_monte_carlo(vals, k, 40, seed=0, confidence=CONF)
        assert width < h.halfwidth[0]


def test_empirical_bernstein_covers_without_slack_and_is_narrower_than_hoeffding():
    """The empirical Bernstein interval (observed range) has no normal approximation: on the
    airport games, whose small players' contributions are skewed (the t interval falls a
    little short there at few orders), it covers in at least the stated share with no slack,
    and stays narrower than Hoeffding's at the same orders."""
    k = 9
    hits = total = 0
    for g in range(3):
        v, exact = airport(k, g)
        for seed in range(60):
            a = shapley_antithetic(
                v.__getitem__, k, 40, seed=seed, confidence=CONF, interval="bernstein"
            )
            h = shapley_monte_carlo(v, k, 40, seed=seed, confidence=CONF)
            hits += int(np.sum(np.abs(a.phi[:, 0] - exact) <= a.halfwidth[:, 0]))
            total += k
            assert a.halfwidth[:, 0].mean() < h.halfwidth[0]
    assert hits / total >= CONF
    with pytest.raises(ValueError, match="interval: 'z'; choose auto, hall, t, bernstein"):
        shapley_antithetic(lambda m: 0, 3, 8, interval="z")


def test_the_stated_game_gap_is_the_measured_one():
    """The sampled audit's stated bound (``MEASURED_GAP``) and the docs' table are the
    summary lines of benchmarks/results-game-gap.txt."""
    from pathlib import Path

    from coopsched.audit.sampling import MEASURED_GAP

    root = Path(__file__).resolve().parents[1]
    lines = (root / "benchmarks" / "results-game-gap.txt").read_text().splitlines()
    summary = lines[lines.index(next(x for x in lines if x.startswith("largest relative"))) + 1 :]
    docs = (root / "docs" / "audit.md").read_text()
    assert len(summary) == len(MEASURED_GAP) == 6
    for line in summary:
        name, rest = line.split(":")
        gap, _, phi_all, _, _mix = rest.split()
        name = name.strip()
        assert MEASURED_GAP[name] == (float(gap), float(phi_all))
        row = next(x for x in docs.splitlines() if x.startswith(f"| {name} "))
        assert f"| {float(gap):.1e} |".replace("e-0", "e-") in row, name
        assert f"| {float(phi_all):.1e} /".replace("e-0", "e-") in row, name


# -- control variates (issue 29, item 3): a surrogate game with exact Shapley values ------


def _recorded_grand(v, share: float):
    """The audit's structure on a game with exact values: the grand coalition's value moved
    by ``share`` of itself (the recorded total against the coalitions' policy), exact values
    of the moved game, and the offset ``v(N) - v'(N)``."""
    w = list(v)
    offset = round(share * w[-1])
    w[-1] += offset
    return w, np.array([float(x) for x in shapley(w)]), offset


def test_unanimity_control_is_exact_when_the_residual_is_additive():
    """``additive + c u_N`` (the sampled audit's game when the coalitions do not interact):
    the residual game is additive, so every pair mean is the same and the interval has zero
    width, at the exact value; the plain estimator's interval does not."""
    from coopsched.audit.estimation import unanimity_control

    k = 7
    rng = np.random.default_rng(3)
    a = rng.integers(1, 100, k)
    v = [int(sum(a[u] for u in range(k) if S >> u & 1)) for S in range(1 << k)]
    v[-1] -= 500
    exact = np.array([float(x) for x in shapley(v)])
    g, phi_g = unanimity_control(k, -500)
    assert np.allclose(phi_g[:, 0], -500 / k)
    for seed in range(5):
        est = shapley_antithetic(v.__getitem__, k, 20, seed=seed, control=g, control_phi=phi_g)
        assert est.control and np.all(est.halfwidth == 0)
        assert np.allclose(est.phi[:, 0], exact)
        plain = shapley_antithetic(v.__getitem__, k, 20, seed=seed)
        assert not plain.control and plain.halfwidth.min() > 0


def test_a_pairwise_game_is_exact_for_antithetic_pairs():
    """Why an additive-plus-pairwise surrogate would gain nothing (docstring of
    :func:`shapley_antithetic`): on such a game the pair means already equal the Shapley
    value ``a_u + sum_w b_uw / 2``."""
    k = 8
    rng = np.random.default_rng(5)
    a, b = rng.integers(0, 50, k), rng.integers(-20, 20, (k, k))
    v = [
        int(
            sum(a[u] for u in range(k) if S >> u & 1)
            + sum(b[u, w] for u in range(k) for w in range(u + 1, k) if S >> u & 1 and S >> w & 1)
        )
        for S in range(1 << k)
    ]
    est = shapley_antithetic(v.__getitem__, k, 8, seed=1)
    assert np.all(est.halfwidth == 0)
    assert np.allclose(est.phi[:, 0], [float(x) for x in shapley(v)])


@pytest.mark.slow
@pytest.mark.parametrize(("game", "share"), [("additive", -0.5), ("airport", 0.5)])
def test_unanimity_control_covers_and_is_narrower(game, share):
    """Games whose grand coalition is valued apart (``v(N)`` moved by half of itself, as the
    audit's recorded total differs from its coalitions' schedules): with the unanimity
    control the intervals cover the exact values in the stated share of seeded runs (one look
    at 40 orders, Hall's interval, as the plain estimator's test), and are narrower than the
    plain estimator's at the same orders, for every game. The airport game's move is upwards:
    a player first in an order contributes its whole cost, and last in the reverse (same
    pair) the grand coalition's jump, so a jump downwards would partly cancel in the pair and
    the plain estimator would gain from it (measured: the control's intervals 0.7 to 1.7
    times as wide at -20 % and -50 %); on the real month the jump falls on small users whose
    first contribution is small too (``benchmarks/audit_estimators.py``)."""
    from coopsched.audit.estimation import unanimity_control

    k = 9
    for gseed in range(3):
        v, exact, offset = _recorded_grand(_game(game, k, gseed)[0], share)
        g, phi_g = unanimity_control(k, offset)
        shares, width = _coverage(v, exact, k, 40, control=g, control_phi=phi_g)
        assert upper_bound(shares) >= CONF, (game, gseed, shares.mean())
        _, plain_width = _coverage(v, exact, k, 40, runs=40)
        assert width < plain_width, (game, gseed)


def test_a_control_that_does_not_fit_keeps_the_coverage():
    """Unbiased whatever the surrogate: a random game as control (its exact values from the
    table) widens nothing it should not and keeps the coverage."""
    k = 8
    v = additive_interaction(k, 2)
    exact = np.array([float(x) for x in shapley(v)])
    rng = np.random.default_rng(11)
    h = [0] + rng.integers(-300, 300, (1 << k) - 1).tolist()
    phi_h = np.array([float(x) for x in shapley(h)])
    shares, _ = _coverage(v, exact, k, 40, runs=300, control=h.__getitem__, control_phi=phi_h)
    assert upper_bound(shares) >= CONF, shares.mean()
    with pytest.raises(ValueError, match="control and control_phi go together"):
        shapley_antithetic(v.__getitem__, k, 8, control=h.__getitem__)
    with pytest.raises(ValueError, match="empty coalition"):
        shapley_antithetic(v.__getitem__, k, 8, control=lambda m: 1, control_phi=np.zeros(k))


@pytest.mark.slow
@pytest.mark.parametrize("k", [10, 12])
def test_real_window_ref_game_with_a_recorded_grand_value(k):
    """The REF games of real LPC-EGEE windows (as :func:`test_real_window_ref_game_coverage`)
    with the grand coalition's value replaced by 85 % of it (a recorded schedule worse than
    REF): with the unanimity control the intervals cover the exact values of that game in the
    stated share, and are narrower than the plain estimator's."""
    from coopsched.audit.estimation import unanimity_control
    from coopsched.online.ref import ref_schedule
    from coopsched.workloads.prepare import trace_to_instance
    from coopsched.workloads.swf import read_swf

    tr = read_swf(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
    for start in (11_050_000, 18_900_000):
        inst = trace_to_instance(tr, k=k, start=start, length=50_000, seed=1)
        _, vals = ref_schedule(inst, 50_000)
        v, exact, offset = _recorded_grand(vals, -0.15)
        g, phi_g = unanimity_control(k, offset)
        shares, width = _coverage(v, exact, k, 40, control=g, control_phi=phi_g)
        assert upper_bound(shares) >= CONF, (start, shares.mean())
        _, plain_width = _coverage(v, exact, k, 40, runs=40)
        assert width < plain_width / 2, (start, width, plain_width)


# -- stratification by position: first and last positions exact ---------------------------


def test_ends_is_exact_when_only_the_grand_value_breaks_additivity():
    """``ends=True`` values every player's first and last positions exactly; the middle
    marginal contributions of an additive game with any ``v(N)`` are constant, so the
    interval has zero width at the exact value; with 1 or 2 players nothing is sampled."""
    rng = np.random.default_rng(4)
    for k in (1, 2, 6):
        a = rng.integers(1, 100, k)
        v = [int(sum(a[u] for u in range(k) if S >> u & 1)) for S in range(1 << k)]
        v[-1] += 777
        exact = np.array([float(x) for x in shapley(v)])
        est = shapley_antithetic(v.__getitem__, k, 12, seed=k, ends=True)
        assert est.ends and np.all(est.halfwidth == 0), k
        assert np.allclose(est.phi[:, 0], exact)


@pytest.mark.slow
@pytest.mark.parametrize(
    ("game", "share"), [("additive", -0.5), ("airport", 0.5), ("airport", -0.2)]
)
def test_ends_covers_and_is_narrower_than_plain(game, share):
    """On the games with the grand coalition valued apart: the intervals of ``ends`` cover
    the exact values in the stated share (one look at 80 orders, Hall's interval) and are
    narrower than the plain estimator's, including the airport game moved downwards, where
    the unanimity control is not (:func:`test_unanimity_control_covers_and_is_narrower`).
    At 40 orders they fall short on the airport games (measured: 0.85 to 0.86 against the
    nominal 0.90; plain and ``split`` 0.95 to 0.97): a player is in the middle in about
    ``(k - 2) / k`` of the pairs only, 15 of 20 here, and its middle contributions are the
    skewed ones (a player contributes only when it comes before every larger one)."""
    k = 9
    for gseed in range(3):
        v, exact, _ = _recorded_grand(_game(game, k, gseed)[0], share)
        shares, width = _coverage(v, exact, k, 80, ends=True)
        assert upper_bound(shares) >= CONF, (game, gseed, shares.mean())
        _, plain_width = _coverage(v, exact, k, 80, runs=40)
        assert width < plain_width, (game, gseed)


def test_ends_adaptive_looks_keep_their_coverage_and_value_the_ends_once():
    k = 9
    v = additive_interaction(k, 11)
    exact = np.array([float(x) for x in shapley(v)])
    target = exact + np.array([100, 150, 200, 250, 300, 350, 400, 450, 500]) * np.where(
        np.arange(k) % 2, 1, -1
    )

    def decide(phi, hw):
        return (target < phi[:, 0] - hw[:, 0]) | (target > phi[:, 0] + hw[:, 0])

    shares, stops = [], set()
    for seed in range(200):
        seen: set[int] = set()
        est = shapley_antithetic(
            counted(v, seen), k, 640, seed=seed, confidence=CONF, decide=decide, ends=True
        )
        assert all(1 << u in seen and ((1 << k) - 1) ^ (1 << u) in seen for u in range(k))
        assert est.evaluations == len(seen)
        stops.add(est.looks)
        shares.append(np.mean(np.abs(est.phi[:, 0] - exact) <= est.halfwidth[:, 0]))
    assert len(stops) > 1
    assert upper_bound(shares) >= CONF


def test_ends_refuses_a_control():
    from coopsched.audit.estimation import unanimity_control

    v = additive_interaction(5, 1)
    g, phi_g = unanimity_control(5, 1)
    with pytest.raises(ValueError, match="ends: not with control"):
        shapley_antithetic(v.__getitem__, 5, 8, ends=True, control=g, control_phi=phi_g)


@pytest.mark.slow
@pytest.mark.parametrize("k", [10, 12])
def test_real_window_ref_game_ends(k):
    """The REF games of real LPC-EGEE windows with a recorded-like grand value (as
    :func:`test_real_window_ref_game_with_a_recorded_grand_value`): ``ends`` covers the exact
    values in the stated share and is narrower than the plain estimator."""
    from coopsched.online.ref import ref_schedule
    from coopsched.workloads.prepare import trace_to_instance
    from coopsched.workloads.swf import read_swf

    tr = read_swf(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
    for start in (11_050_000, 18_900_000):
        inst = trace_to_instance(tr, k=k, start=start, length=50_000, seed=1)
        _, vals = ref_schedule(inst, 50_000)
        v, exact, _ = _recorded_grand(vals, -0.15)
        shares, width = _coverage(v, exact, k, 40, ends=True)
        assert upper_bound(shares) >= CONF, (start, shares.mean())
        _, plain_width = _coverage(v, exact, k, 40, runs=40)
        assert width < plain_width / 2, (start, width, plain_width)
