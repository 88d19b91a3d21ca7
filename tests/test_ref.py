import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import brute_ref

from coopsched.online.checker import check_schedule
from coopsched.online.fairness import fairness
from coopsched.online.policies import get_policy
from coopsched.online.policies.ref import ref_schedule
from coopsched.online.shapley import shapley
from coopsched.workloads.instance import make_instance


@settings(max_examples=120, deadline=None)
@given(
    inst=small_instances(max_k=3, max_jobs=8, max_release=6, max_size=5),
    T=st.integers(1, 12),
    utility=st.sampled_from(["psi_sp", "work"]),
)
def test_ref_matches_brute_force_definition(inst, T, utility):
    """Every coalition, every time step, Eq. (1): same starts, machines and values."""
    s, values = ref_schedule(inst, T, utility=utility)
    bs, bm, bv = brute_ref(inst, T, utility)
    assert s.start.tolist() == bs
    assert s.machine.tolist() == bm
    assert values == [bv[C] for C in range(1 << inst.k)]


@settings(max_examples=40, deadline=None)
@given(inst=small_instances(max_k=4, max_jobs=12), T=st.integers(1, 30))
def test_python_integer_path_is_the_same_algorithm(inst, T):
    a, va = ref_schedule(inst, T)
    b, vb = ref_schedule(inst, T, exact_python=True)
    assert a.start.tolist() == b.start.tolist() and va == vb
    assert check_schedule(a) == []


def test_huge_values_switch_to_python_integers():
    # sizes and horizon so large that L * v_max overflows int64: exact path chosen
    big = 10**9
    inst = make_instance([1, 1, 1], [(0, 0, big), (1, 0, big), (1, 0, big), (2, 0, 3 * big)])
    s, v = ref_schedule(inst, 4 * big)
    assert s.info["python_integers"] is True
    assert check_schedule(s) == []
    T = 4 * big
    assert v[7] == sum(s.psi(T))


def test_ref_is_fair_to_itself_and_policies_measured():
    inst = make_instance([1, 1], [(0, 0, 4), (0, 0, 4), (1, 1, 2), (1, 1, 2)])
    ref = get_policy("ref").run(inst, 10)
    assert fairness(ref, ref, 10).ratio == 0
    f = fairness(get_policy("fifo").run(inst, 10), ref, 10)
    assert f.p_tot == sum(ref.work(10))
    assert f.dpsi == sum(abs(a - b) for a, b in zip(f.psi, f.psi_ref, strict=True))


def test_ref_grand_phi_equals_shapley_of_values():
    inst = make_instance([1, 2, 0], [(0, 0, 3), (1, 0, 5), (2, 0, 2), (2, 1, 2), (0, 2, 1)])
    s, values = ref_schedule(inst, 9)
    assert values[7] == sum(s.psi(9))
    phi = shapley(values)
    assert sum(phi) == values[7]


# ------------------------------------------------------------- Theorem 5.1 construction


def theorem_5_1_instance(xs: list[int], x: int):
    """Skowron & Rzadca, proof of Thm 5.1: contribution of `a` encodes SUBSETSUM."""
    k = len(xs)
    x_tot = sum(xs) + 2
    L = 4 * k * x_tot**2 * math.factorial(k + 2) + 1
    jobs = []
    for i, xi in enumerate(xs):
        jobs += [(i, 0, 1), (i, 0, 1), (i, 3, 2 * x_tot), (i, 4, 2 * xi)]
    a, b = k, k + 1
    jobs += [(b, 2, 2 * x + 2), (b, 2 * x + 3, L)]
    inst = make_instance([1] * (k + 2), jobs)
    return inst, L, a


def n_less(xs: list[int], x: int) -> int:
    k = len(xs)
    total = 0
    for r in range(k + 1):
        for sub in itertools.combinations(xs, r):
            if sum(sub) < x:
                total += math.factorial(r + 1) * math.factorial(k - r)
    return total


PROOF_GAP = (
    "Thm 5.1's proof assumes b is prioritized after t=2 in every coalition; with |S|=3, "
    "REF's lowest-index tie at t=0 delays one S-organization's unit jobs, and in O_S+b that "
    "organization wins the machine freed at 2x+4 (phi-psi 1.08 vs b's 0.75), so a's marginal "
    "there is 5L, not ~0 (docs/online.md, 'Theorem 5.1')"
)


@pytest.mark.parametrize(
    "xs, x",
    [
        ([1, 2], 2),
        ([2, 4], 3),
        ([1, 3], 2),
        ([3, 5], 5),
        pytest.param([1, 1, 3], 4, marks=pytest.mark.xfail(strict=True, reason=PROOF_GAP)),
        pytest.param([2, 3, 5], 4, marks=pytest.mark.xfail(strict=True, reason=PROOF_GAP)),
    ],
)
def test_theorem_5_1_contribution_recovers_subsetsum(xs, x):
    k = len(xs)
    counts = []
    for target in (x, x + 1):
        inst, L, a = theorem_5_1_instance(xs, target)
        T = 2 * target + 4 + L + 4 * (sum(xs) + 2) * (k + 1)
        _, values = ref_schedule(inst, T)
        phi_a = shapley(values)[a]
        counts.append(math.floor(Fraction(math.factorial(k + 2)) * phi_a / L))
        assert counts[-1] == n_less(xs, target)
    has_subset = any(sum(c) == x for r in range(k + 1) for c in itertools.combinations(xs, r))
    assert (counts[1] > counts[0]) == has_subset


def test_ref_event_driven_cost_not_horizon():
    # one long job: the number of event times does not grow with the horizon
    inst = make_instance([1, 1], [(0, 0, 10**6), (1, 0, 10**6), (1, 5, 10)])
    s, _ = ref_schedule(inst, 10**7)
    assert s.info["event_times"] < 10


@pytest.mark.parametrize("k", [2, 4, 6])
def test_ref_on_random_instances_is_valid(k):
    rng = np.random.default_rng(k)
    jobs = [
        (int(rng.integers(0, k)), int(rng.integers(0, 200)), int(rng.integers(1, 60)))
        for _ in range(150)
    ]
    inst = make_instance(rng.integers(1, 4, size=k).tolist(), jobs)
    s = get_policy("ref").run(inst, 300)
    assert check_schedule(s) == []
