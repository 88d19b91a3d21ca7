"""The stratified reference of ``benchmarks/audit_sampled.py --reference`` (issue 29, item
3): the Shapley values of a few organizations, stratified by position, on games with exact
values."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from coopsched.online.shapley import shapley
from coopsched.testing import additive_interaction_game as additive_interaction
from coopsched.testing import airport_game as airport

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from audit_sampled import stratified  # noqa: E402


def _moved(v, share: float):
    """The grand coalition's value moved by ``share`` of itself (the recorded total against
    the coalitions' policy) and the moved game's exact values."""
    w = list(v)
    w[-1] += round(share * w[-1])
    return w, np.array([float(x) for x in shapley(w)])


def test_exact_when_the_middle_positions_do_not_vary():
    """An additive game with a moved grand value: every middle contribution is the
    player's own weight, so the estimate is exact and its interval of width zero."""
    k = 7
    rng = np.random.default_rng(3)
    a = rng.integers(1, 50, k)
    v = [int(sum(a[u] for u in range(k) if m >> u & 1)) for m in range(1 << k)]
    w, exact = _moved(v, -0.4)
    phi, hw, _ = stratified(lambda m: w[m], k, list(range(k)), w[-1], 0, 0, rounds=3)
    assert np.allclose([phi[u] for u in range(k)], exact)
    assert all(hw[u] == 0 for u in range(k))


@pytest.mark.slow
def test_intervals_cover_the_exact_value():
    """95 % intervals from 20 draws per position, over 200 seeds, on an additive and
    interaction game and on an airport game (skewed), each with a moved grand value: the
    share of intervals holding the exact value is at least 0.92 (binomial sd about 0.005
    over the 200 x k intervals at the nominal 0.95)."""
    k = 9
    for v, share in ((additive_interaction(k, 4), 0.3), (airport(k, 2)[0], -0.5)):
        w, exact = _moved(v, share)
        held = []
        for seed in range(200):
            phi, hw, _ = stratified(w.__getitem__, k, list(range(k)), w[-1], 0, seed, rounds=20)
            held += [abs(phi[u] - exact[u]) <= hw[u] for u in range(k)]
        assert np.mean(held) >= 0.92, np.mean(held)


def test_only_the_targets_are_estimated():
    k = 8
    w, exact = _moved(airport(k, 5)[0], 0.2)
    phi, hw, rounds = stratified(lambda m: w[m], k, [2, 5], w[-1], 0, 1, rounds=400)
    assert sorted(phi) == [2, 5] and rounds == 400
    for u in (2, 5):
        assert abs(phi[u] - exact[u]) <= max(hw[u], 1e-9) * 2
