"""The control variate with a fitted coefficient (:mod:`coopsched.audit.estimation.control`,
issue 43 item 1): a surrogate game with exact Shapley values subtracted from the orders' pair
means and from the refinement's rounds, each player its own coefficient. Coverage is checked
as in tests/test_shapley_antithetic.py, on games whose exact values are enumerated: the
game of the jobs that fit (:mod:`coopsched.audit.surrogate`) scaled, plus a game of
independent noise per coalition (what rigid schedules' reshaping looks like to the
estimator: it follows no structure), and on a real RICC day."""

from __future__ import annotations

import numpy as np
import pytest
from test_shapley_antithetic import CONF, upper_bound

from coopsched.audit.estimation import shapley_antithetic, shapley_stratified
from coopsched.audit.estimation.control import FIT_FROM, Surrogate, adjusted, fit, widen
from coopsched.audit.surrogate import fit_game_shapley

RUNS = 300


def float_shapley(v: np.ndarray, k: int) -> np.ndarray:
    """Shapley values of a table of floats, by the definition (Eq. 1)."""
    from math import comb

    size = np.array([bin(m).count("1") for m in range(1 << k)])
    phi = np.zeros(k)
    for u in range(k):
        without = np.array([m for m in range(1 << k) if not m >> u & 1])
        s = size[without]
        w = 1.0 / (k * np.array([comb(k - 1, int(x)) for x in s]))
        phi[u] = float((w * (v[without | (1 << u)] - v[without])).sum())
    return phi


def fit_and_noise_game(k=9, seed=0, scale=0.65, noise=0.05):
    """``v = scale * g + e``: ``g`` the game of the jobs that fit of a random platform, ``e``
    independent noise per coalition (a spread of ``noise`` times the typical value). Returns
    ``(table of v, exact phi(v), Surrogate of g)``."""
    rng = np.random.default_rng(seed)
    machines = rng.integers(0, 5, size=k)
    machines[0] = max(machines[0], 1)
    M = int(machines.sum())
    n = 6 * k
    owner = rng.integers(0, k, size=n)
    width = rng.integers(1, M + 1, size=n)
    value = rng.gamma(1.0, 100.0, size=n)
    g = np.zeros(1 << k)
    for mask in range(1 << k):
        mm = sum(int(machines[u]) for u in range(k) if mask >> u & 1)
        g[mask] = sum(
            v for o, q, v in zip(owner, width, value, strict=True) if mask >> int(o) & 1 and q <= mm
        )
    e = rng.normal(0.0, noise * value.sum() / k, size=1 << k)
    e[0] = 0.0
    v = scale * g + e
    exact = float_shapley(v, k)
    phi_g = fit_game_shapley(machines, owner, width, value)
    assert phi_g is not None
    np.testing.assert_allclose(phi_g, float_shapley(g, k), rtol=1e-9)
    return v, exact, Surrogate(g.__getitem__, phi_g)


def test_the_fitted_coefficient_is_the_regression_slope():
    rng = np.random.default_rng(1)
    z = rng.normal(size=(50, 3))
    y = 2.0 * z + rng.normal(scale=0.1, size=(50, 3))
    b = fit(y, z)
    np.testing.assert_allclose(b, 2.0, atol=0.1)
    assert fit(y[:3], z[:3]).tolist() == [0, 0, 0]  # below FIT_FROM draws: no fit
    assert FIT_FROM == 4
    adj, b2 = adjusted(y, z, np.zeros(3))
    assert adj.std(axis=0).max() < 0.2 < y.std(axis=0).min()
    np.testing.assert_array_equal(b, b2)
    assert fit(y, np.ones((50, 3))).tolist() == [0, 0, 0]  # a surrogate that never varies
    hw = np.array([1.0, 1.0])
    wide = widen(hw, 10, 0.95, np.array([True, False]))
    assert wide[0] > 1.0 and wide[1] == 1.0


@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_orders_with_the_surrogate_cover_and_are_narrower(seed):
    """Adaptive orders (40 at most, looks at 8 then doubling), the default t interval: with
    the surrogate the intervals cover the exact values in the stated share over seeded runs
    and are narrower on average than without it, at the same orders."""
    k = 9
    v, exact, sur = fit_and_noise_game(k, seed)
    shares, with_w, without_w = [], [], []
    for run in range(RUNS):
        kw = dict(seed=run, confidence=CONF, first_orders=8)
        a = shapley_antithetic(v.__getitem__, k, 40, surrogate=sur, **kw)
        b = shapley_antithetic(v.__getitem__, k, 40, **kw)
        shares.append(np.mean(np.abs(a.phi[:, 0] - exact) <= a.halfwidth[:, 0]))
        with_w.append(a.halfwidth[:, 0].mean())
        without_w.append(b.halfwidth[:, 0].mean())
        assert a.coefficients is not None and a.pairs is not None
    assert upper_bound(shares) >= CONF, np.mean(shares)
    assert np.mean(shares) >= CONF - 0.02
    assert np.mean(with_w) < 0.9 * np.mean(without_w), (np.mean(with_w), np.mean(without_w))


@pytest.mark.slow
@pytest.mark.parametrize("seed", [0, 1])
def test_stratified_rounds_with_the_surrogate_cover_and_are_narrower(seed):
    """The refinement (one look at 24 rounds, Hall's interval) of three players, with and
    without the surrogate."""
    k = 9
    v, exact, sur = fit_and_noise_game(k, seed)
    players = [1, 4, 7]
    shares, with_w, without_w = [], [], []
    for run in range(RUNS):
        kw = dict(seed=run, confidence=CONF, bins=4, interval="hall")
        a = shapley_stratified(v.__getitem__, k, players, 24, surrogate=sur, **kw)
        b = shapley_stratified(v.__getitem__, k, players, 24, **kw)
        shares.append(np.mean(np.abs(a.phi[:, 0] - exact[players]) <= a.halfwidth[:, 0]))
        with_w.append(a.halfwidth[:, 0].mean())
        without_w.append(b.halfwidth[:, 0].mean())
    assert upper_bound(shares) >= CONF, np.mean(shares)
    assert np.mean(shares) >= CONF - 0.02
    assert np.mean(with_w) < 0.9 * np.mean(without_w), (np.mean(with_w), np.mean(without_w))


def test_a_surrogate_that_does_not_follow_keeps_the_coverage():
    """A surrogate unrelated to the game (another random platform's jobs that fit): the
    fitted coefficients are near 0 and the intervals still cover."""
    k = 9
    v, exact, _ = fit_and_noise_game(k, 0)
    _, _, other = fit_and_noise_game(k, 5)
    shares = []
    for run in range(RUNS):
        a = shapley_antithetic(
            v.__getitem__, k, 40, surrogate=other, seed=run, confidence=CONF, first_orders=8
        )
        shares.append(np.mean(np.abs(a.phi[:, 0] - exact) <= a.halfwidth[:, 0]))
    assert upper_bound(shares) >= CONF, np.mean(shares)


def test_a_stratified_estimate_with_the_surrogate_is_the_regression_on_its_rounds():
    """The refinement's estimate of one player with the surrogate, on a few rounds, equals
    the mean of its rounds less the fitted coefficient times the surrogate's rounds' mean
    less its exact value, both sets of rounds rebuilt from the same draws."""
    k = 7
    v, _, sur = fit_and_noise_game(k, 3)
    est = shapley_stratified(v.__getitem__, k, [2], 12, seed=4, bins=3, surrogate=sur)
    plain = shapley_stratified(v.__getitem__, k, [2], 12, seed=4, bins=3)
    g = np.array([sur.value(m) for m in range(1 << k)])
    again = shapley_stratified(g.__getitem__, k, [2], 12, seed=4, bins=3)
    assert est.rounds.tolist() == plain.rounds.tolist() == [12]
    # the rounds themselves: the same draws give v's and g's rounds, whose means are these
    y_mean, z_mean = plain.phi[0, 0], again.phi[0, 0]
    b = (est.phi[0, 0] - y_mean) / (sur.phi[2] - z_mean)
    assert np.isfinite(b) and 0 < b < 2  # the fitted slope (the game is 0.65 g + noise)
    assert est.halfwidth[0, 0] < plain.halfwidth[0, 0]


def test_a_fit_through_every_draw_is_not_trusted():
    """Draws on two values of the surrogate, exactly linear in it: the fitted residuals are
    all 0 (an interval of one point), so the player keeps its draws alone; with enough
    distinct values the spread is the leave-one-out residuals', at least the fitted ones'."""
    z = np.array([[0.0], [1.0]] * 10)
    y = 3.0 * z + 1.0
    rows, b = adjusted(y, z, np.array([0.5]))
    assert b.tolist() == [0.0] and np.array_equal(rows, y)
    rng = np.random.default_rng(0)
    z = rng.normal(size=(40, 2))
    y = 2.0 * z + rng.normal(size=(40, 2))
    rows, b = adjusted(y, z, np.zeros(2))
    assert np.all(b != 0)
    fitted = y - b * z
    np.testing.assert_allclose(rows.mean(axis=0), fitted.mean(axis=0))
    assert np.all(rows.std(axis=0) > fitted.std(axis=0))
