import numpy as np
import pytest

from coopsched.online.checker import check_schedule
from coopsched.online.policies import get_policy
from coopsched.online.policies.rand import Rand, samples_for
from coopsched.online.policies.ref import ref_schedule
from coopsched.online.shapley import shapley
from coopsched.workloads.instance import make_instance


def unit_instance(seed: int, k: int = 4, n: int = 80):
    rng = np.random.default_rng(seed)
    jobs = [(int(rng.integers(0, k)), int(rng.integers(0, 30)), 1) for _ in range(n)]
    machines = rng.integers(0, 3, size=k)
    machines[0] = max(machines[0], 1)
    return make_instance(machines.tolist(), jobs)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rand_shapley_estimates_converge_to_ref_on_unit_jobs(seed):
    """Thm 5.6 / Prop 5.4: with unit jobs the sampled contributions converge to REF's."""
    inst = unit_instance(seed)
    T = 25
    _, values = ref_schedule(inst, T)  # all greedy policies give these values (Prop 5.4)
    exact = np.array([float(x) for x in shapley(values)])
    errors = []
    for n in (3, 30, 3000):
        pol = Rand(n_samples=n, seed=seed)
        pol.prepare(inst, T)
        est = np.array(pol.phi_times_n(T), dtype=float) / n
        errors.append(np.abs(est - exact).sum())
    assert errors[2] < errors[0]
    assert errors[2] <= 0.05 * values[-1]


@pytest.mark.parametrize("seed", [0, 1])
def test_rand_theorem_5_6_bound_on_utilities(seed):
    """||psi_RAND - psi_REF||_M <= eps * v(C) with N from (eps, lambda), unit jobs."""
    inst = unit_instance(seed)
    T = 25
    eps, lam = 0.1, 0.9
    ref, values = ref_schedule(inst, T)
    r = Rand(epsilon=eps, lam=lam, seed=seed).run(inst, T)
    assert r.info["samples"] == samples_for(inst.k, eps, lam)
    dist = sum(abs(a - b) for a, b in zip(r.psi(T), ref.psi(T), strict=True))
    assert dist <= eps * values[-1]


def test_samples_formula():
    assert samples_for(5, 0.5, 0.9) == int(np.ceil(25 / 0.25 * np.log(5 / 0.1)))
    with pytest.raises(ValueError):
        samples_for(5, 0.0, 0.5)
    with pytest.raises(ValueError):
        Rand(epsilon=0.1)


def test_rand_seeded_and_valid():
    rng = np.random.default_rng(3)
    jobs = [
        (int(rng.integers(0, 5)), int(rng.integers(0, 100)), int(rng.integers(1, 40)))
        for _ in range(200)
    ]
    inst = make_instance([2, 1, 3, 1, 1], jobs)
    a = get_policy("rand", seed=4).run(inst, 150)
    b = get_policy("rand", seed=4).run(inst, 150)
    assert a.start.tolist() == b.start.tolist()
    assert check_schedule(a) == []
    assert a.info["samples"] == 15
