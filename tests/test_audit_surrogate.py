"""The sampled audit's control variate (:mod:`coopsched.audit.surrogate`): the game of the
jobs that fit, and its exact Shapley values against enumeration."""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.audit.surrogate import FitGame, fit_game_shapley, release_value
from coopsched.online.shapley import shapley
from coopsched.workloads.instance import make_instance


def _brute(machines, owner, width, value):
    k = len(machines)
    table = []
    for mask in range(1 << k):
        M = sum(machines[u] for u in range(k) if mask >> u & 1)
        table.append(
            sum(v for o, q, v in zip(owner, width, value, strict=True) if mask >> o & 1 and q <= M)
        )
    return np.array([float(x) for x in shapley(table)])


@settings(max_examples=200, deadline=None)
@given(data=st.data())
def test_exact_shapley_values_equal_enumeration(data):
    k = data.draw(st.integers(1, 7))
    machines = data.draw(st.lists(st.integers(0, 4), min_size=k, max_size=k))
    M = sum(machines)
    n = data.draw(st.integers(0, 12))
    owner = data.draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    width = data.draw(st.lists(st.integers(1, max(1, M + 1)), min_size=n, max_size=n))
    value = data.draw(st.lists(st.integers(0, 1000), min_size=n, max_size=n))
    got = fit_game_shapley(
        np.array(machines), np.array(owner, dtype=np.int64), np.array(width), np.array(value)
    )
    want = _brute(machines, owner, width, value)
    assert got is not None
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9 * max(1.0, sum(value)))


def test_the_game_values_the_jobs_that_fit_at_their_release():
    inst = make_instance([2, 0, 3], [(0, 0, 4), (1, 2, 5), (2, 1, 3), (1, 0, 2)])
    inst = dataclasses.replace(inst, processors=np.array([1, 4, 3, 2]))
    T = 6
    value = release_value(inst, T)
    # a job of p = 4 released at 0 on 1 processor: sum_{tau=1..6} min(4, tau) = 1+2+3+4+4+4
    assert value[0] == 18
    assert value[1] == 4 * (1 + 2 + 3 + 4)  # released at 2, 4 s left of its 5
    g = FitGame.of(inst, T)
    assert g(0b001) == value[0]  # 2 machines: org 0's job fits
    assert g(0b010) == 0  # no machines: nothing fits
    assert g(0b011) == value[0] + value[3]  # 2 machines: org 1's 2-wide job fits, not its 4
    assert g(0b110) == value[2] + value[3]  # 3 machines: not org 1's 4-wide job
    assert g(0b111) == value.sum()
    assert np.isclose(g.shapley().sum(), value.sum())
    assert fit_game_shapley(inst.machines, inst.org, inst.width, value, work=1) is None


def test_prefixes_of_an_order_are_its_coalitions_values():
    rng = np.random.default_rng(2)
    jobs = [
        (int(rng.integers(0, 6)), int(rng.integers(0, 30)), int(rng.integers(1, 9)))
        for _ in range(40)
    ]
    inst = make_instance([0, 2, 1, 0, 3, 1], jobs)
    inst = dataclasses.replace(inst, processors=rng.integers(1, 8, size=inst.n))
    g = FitGame.of(inst, 40)
    for _ in range(20):
        order = rng.permutation(inst.k).tolist()
        acc, want = 0, [0.0]
        for u in order:
            acc |= 1 << u
            want.append(g(acc))
        np.testing.assert_allclose(g.prefixes(order), want)
