import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from mutants import RandFixedOrder
from reference import marginal_sd

from coopsched.online.checker import check_schedule
from coopsched.online.policies import get_policy
from coopsched.online.policies.rand import Rand, samples_for
from coopsched.online.ref import ref_schedule
from coopsched.online.shapley import shapley
from coopsched.workloads.instance import make_instance


def unit_instance(seed: int, k: int = 4, n: int = 80):
    rng = np.random.default_rng(seed)
    jobs = [(int(rng.integers(0, k)), int(rng.integers(0, 30)), 1) for _ in range(n)]
    machines = rng.integers(0, 3, size=k)
    machines[0] = max(machines[0], 1)
    return make_instance(machines.tolist(), jobs)


def _estimates(pol: Rand, inst, T: int, n: int) -> np.ndarray:
    pol.prepare(inst, T)
    return np.array(pol.phi_times_n(T), dtype=float) / n


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_rand_shapley_estimates_converge_to_ref_on_unit_jobs(seed):
    """Thm 5.6 / Prop 5.4: with unit jobs the sampled contributions converge to REF's. RAND's
    estimate of ``phi_u`` is the mean of ``N`` marginal contributions over orderings drawn
    uniformly, so its error is about ``sd_u / sqrt(N)``, ``sd_u`` the spread of ``u``'s
    marginal contributions over all ``k!`` orderings (computed exactly here): every
    organization's error stays within ``5 sd_u / sqrt(N)`` (Chebyshev: a chance of at most
    1/25 per check for an unbiased estimator, far less near the normal limit)."""
    inst = unit_instance(seed)
    T = 25
    _, values = ref_schedule(inst, T)  # all greedy policies give these values (Prop 5.4)
    exact = np.array([float(x) for x in shapley(values)])
    sd = np.array(marginal_sd(values, inst.k))
    errors = {}
    for n in (3, 30, 3000):
        err = np.abs(_estimates(Rand(n_samples=n, seed=seed), inst, T, n) - exact)
        errors[n] = err.sum()
        if n > 3:
            assert (err <= 5 * sd / np.sqrt(n) + 1e-9 * values[-1]).all(), (n, err, sd)
    assert errors[3000] < errors[3]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_estimate_bound_catches_unshuffled_orderings(seed):
    """The check above has power: RAND with all its orderings in the canonical order (a
    biased estimate with the same sample count, tests/mutants.py) misses the bound."""
    inst = unit_instance(seed)
    T = 25
    _, values = ref_schedule(inst, T)
    exact = np.array([float(x) for x in shapley(values)])
    sd = np.array(marginal_sd(values, inst.k))
    err = np.abs(_estimates(RandFixedOrder(n_samples=3000), inst, T, 3000) - exact)
    assert (err > 5 * sd / np.sqrt(3000) + 1e-9 * values[-1]).any()


def test_rand_theorem_5_6_bound_on_utilities():
    """||psi_RAND - psi_REF||_M <= eps * v(C) with N from (eps, lambda), unit jobs. The
    instance is one where the bound separates: FIFO and ROUNDROBIN, blind to contributions,
    miss it (on ``unit_instance(0)`` FIFO itself is at distance 0, so that instance could not
    tell RAND from a policy that ignores the estimates)."""
    inst = unit_instance(1)
    T = 25
    eps, lam = 0.1, 0.9
    ref, values = ref_schedule(inst, T)

    def dist(s) -> int:
        return sum(abs(a - b) for a, b in zip(s.psi(T), ref.psi(T), strict=True))

    for blind in ("fifo", "roundrobin"):
        assert dist(get_policy(blind).run(inst, T)) > eps * values[-1]
    r = Rand(epsilon=eps, lam=lam, seed=1).run(inst, T)
    assert r.info["samples"] == samples_for(inst.k, eps, lam)
    assert dist(r) <= eps * values[-1]


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


@settings(max_examples=60, deadline=None)
@given(
    inst=small_instances(max_k=4, max_jobs=14, max_release=6, max_size=6),
    T=st.one_of(st.none(), st.integers(1, 25)),
    data=st.data(),
)
def test_kept_coalition_values_are_their_fifo_schedules_psi(inst, T, data):
    """Each kept coalition's value curve (merged running-count events) gives, at every t,
    the psi_sp of the coalition's FIFO schedule from the Python engine, pinned jobs
    (anywhere in submission order) first."""
    import dataclasses

    from coopsched.online.engine import simulate

    pinned = np.zeros(inst.n, dtype=bool)
    free_seen: set[int] = set()
    for j in inst.fifo_order():
        u = int(inst.org[j])
        if u not in free_seen and data.draw(st.booleans()):
            pinned[j] = True
        else:
            free_seen.add(u)
    inst = dataclasses.replace(inst, pinned=pinned)
    pol = Rand(n_samples=4, seed=data.draw(st.integers(0, 50)))
    pol.prepare(inst, T)
    for mask, curve in zip(pol._masks, pol._curves, strict=True):
        if curve is None:
            continue
        members = [u for u in range(inst.k) if mask >> u & 1]
        s = simulate(inst, get_policy("fifo"), T, members, compiled=False)
        for t in range(0, (T or 30) + 3):
            assert curve.psi(t) == sum(s.psi(t)), (mask, t)
            assert curve.work(t) == sum(s.work(t)), (mask, t)


@settings(max_examples=40, deadline=None)
@given(inst=small_instances(max_k=5, max_jobs=30), n=st.integers(1, 20), seed=st.integers(0, 99))
def test_memory_estimate_bounds_the_kept_events(inst, n, seed):
    """The audit's memory guard reads memory_estimate: it bounds what prepare keeps."""
    pol = Rand(n_samples=n, seed=seed)
    est = pol.memory_estimate(inst)
    pol.prepare(inst, None)
    assert pol._c_time.nbytes + pol._c_delta.nbytes <= est
    assert len(pol._c_time) <= 2 * sum(
        int(np.isin(inst.org, [u for u in range(inst.k) if m >> u & 1]).sum()) for m in pol._masks
    )


@pytest.mark.parametrize("n", [40, 1500])
def test_kept_coalitions_choose_the_engine_by_their_total_size(monkeypatch, n):
    """RAND's kept coalitions are one workload: their runs go through one
    :class:`~coopsched.online.engine.Backend` told their jobs in all, so when those pass
    ``COMPILE_MIN_JOBS`` every one runs compiled even though each coalition is small (a cold
    kernel used to leave every one of them in Python, 5 to 7 times slower), and below it
    each takes the engine ``engine="auto"`` takes for that total."""
    import dataclasses

    from coopsched.online import engine as engine_module
    from coopsched.online.policies import rand as rand_module

    rng = np.random.default_rng(n)
    jobs = [
        (int(rng.integers(0, 10)), int(rng.integers(0, 500)), int(rng.integers(1, 50)))
        for _ in range(n)
    ]
    inst = make_instance([4] * 10, jobs)
    inst = dataclasses.replace(inst, processors=rng.integers(1, 4, n), requested=inst.size + 10)
    seen = []
    real = rand_module.Backend.run

    def spy(self, policy, members=None):
        sched = real(self, policy, members)
        if self.workload is not None:  # a kept coalition's run (not the grand coalition's)
            seen.append((self.engine, self.workload, sched.info["engine"]))
        return sched

    monkeypatch.setattr(rand_module.Backend, "run", spy)
    sched = get_policy("rand", n_samples=15).run(inst, 600, backfill="easy")
    assert len(seen) > 100 and {e for e, _, _ in seen} == {"auto"}
    (workload,) = {w for _, w, _ in seen}
    assert (workload >= engine_module.COMPILE_MIN_JOBS) == (n == 1500)
    expected = "compiled" if engine_module._worth_compiling(workload) else "python"
    assert {ran for _, _, ran in seen} == {expected}
    assert sched.info["engine"] in ("compiled", "python")
