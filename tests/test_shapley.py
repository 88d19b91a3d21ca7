from fractions import Fraction

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import shapley_eq1, shapley_eq2

from coopsched.audit.estimation import shapley_monte_carlo
from coopsched.online.shapley import (
    lcm_upto,
    shapley,
    shapley_potential,
    shapley_restricted,
    shapley_weights,
)


@settings(max_examples=80, deadline=None)
@given(k=st.integers(1, 5), data=st.data())
def test_exact_matches_permutation_definition(k, data):
    vals = [0] + data.draw(
        st.lists(st.integers(-1000, 10**12), min_size=(1 << k) - 1, max_size=(1 << k) - 1)
    )
    v = dict(enumerate(vals))
    assert shapley(vals) == shapley_eq2(v, k)
    # efficiency
    assert sum(shapley(vals)) == vals[-1]


@settings(max_examples=40, deadline=None)
@given(k=st.integers(2, 5), data=st.data())
def test_restricted_game_matches_eq1(k, data):
    vals = [0] + data.draw(
        st.lists(st.integers(0, 10**6), min_size=(1 << k) - 1, max_size=(1 << k) - 1)
    )
    C = data.draw(st.integers(1, (1 << k) - 1))
    v = dict(enumerate(vals))
    got = shapley_restricted(vals, C)
    for u, phi in got.items():
        assert phi == shapley_eq1(v, C, u)


def test_integer_weights():
    for k in range(1, 13):
        L, omega = shapley_weights(k)
        assert lcm_upto(k) == L
        for c in range(1, k + 1):
            # the weights of Eq. (1) sum to 1 over the subsets of C \ {u}
            from math import comb

            assert sum(Fraction(int(omega[c, s]) * comb(c - 1, s), L) for s in range(c)) == 1


def test_symmetry_dummy_additivity():
    # v(S) = |S|^2 for members 0,1 ; org 2 is a dummy
    k = 3
    v = [bin(S & 3).count("1") ** 2 for S in range(1 << k)]
    phi = shapley(v)
    assert phi[0] == phi[1] == 2 and phi[2] == 0
    w = [3 * bin(S).count("1") for S in range(1 << k)]
    both = [a + b for a, b in zip(v, w, strict=True)]
    assert shapley(both) == [a + b for a, b in zip(shapley(v), shapley(w), strict=True)]


def test_monte_carlo_converges_within_bound():
    k = 5
    rng = np.random.default_rng(0)
    vals = [0] + rng.integers(0, 1000, size=(1 << k) - 1).tolist()
    exact = np.array([float(x) for x in shapley(vals)])
    errs = []
    for n in (10, 100, 10000):
        est = shapley_monte_carlo(vals, k, n, seed=1, value_range=2000)
        errs.append(np.abs(est.phi - exact).max())
        assert np.all(np.abs(est.phi - exact) <= est.halfwidth + 1e-9)
    assert errs[-1] < errs[0]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(1, 5), data=st.data())
def test_potential_differences_are_restricted_shapley_values(k, data):
    """Hart--Mas-Colell: L phi_u(C) = L P(C) - L P(C - u) for every coalition and member,
    checked against Eq. (1) with Fractions, including values far beyond 2^63."""
    vals = [0] + data.draw(
        st.lists(st.integers(-(2**70), 2**100), min_size=(1 << k) - 1, max_size=(1 << k) - 1)
    )
    v = dict(enumerate(vals))
    q = shapley_potential(vals)
    L = lcm_upto(k)
    for C in range(1, 1 << k):
        for u in range(k):
            if C >> u & 1:
                assert Fraction(q[C] - q[C ^ (1 << u)], L) == shapley_eq1(v, C, u)
