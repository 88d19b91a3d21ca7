"""Pascual, Rzadca, Trystram: Lemmas 1 and 2, the examples of Figs. 1, 2, 3, 5, and the
all-high algorithm of Sec. 4.4; Cohen et al.'s Fig. 2 (= Fig. 3 here)."""

import itertools

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.mosp.algorithms import ilba, local, molba
from coopsched.mosp.figures import (
    all_high,
    figure1,
    figure2,
    figure3,
    figure5,
    utilization_zones,
)
from coopsched.mosp.generators import mosp_instance
from coopsched.mosp.schedule import lower_bounds, mosp_arrays


def exact(inst, H, limits=None):
    """Smallest makespan over every placement (cluster, integer start < H) of every job,
    with organization makespans at most ``limits`` (time-indexed brute force)."""
    p, q, owner, m = mosp_arrays(inst)
    choices = [
        [(c, s) for c in range(inst.k) if q[j] <= m[c] for s in range(H - p[j] + 1)]
        for j in range(inst.n)
    ]
    best = None
    for combo in itertools.product(*choices):
        use = np.zeros((inst.k, H), dtype=int)
        ok = True
        for j, (c, s) in enumerate(combo):
            use[c, s : s + p[j]] += q[j]
            if (use[c] > m[c]).any():
                ok = False
                break
        if not ok:
            continue
        ends = [s + p[j] for j, (_, s) in enumerate(combo)]
        if limits is not None and any(
            max(e for e, o in zip(ends, owner, strict=True) if o == u) > limits[u]
            for u in set(owner.tolist())
        ):
            continue
        best = max(ends) if best is None else min(best, max(ends))
    return best


def test_figure1_local_is_N_times_the_optimum():
    for N in (2, 3, 4):
        inst = figure1(N)
        assert local(inst).makespan == N
        assert exact(inst, N + 1) == 1
        assert ilba(local(inst)).makespan == 1  # MOLBA leaves it (below 2 Wbar + pmax)


def test_figure2_both_organizations_gain():
    inst = figure2()
    loc = local(inst).org_makespans().tolist()
    assert loc == [2, 4]
    # a schedule in which both makespans strictly drop exists ...
    assert exact(inst, 5, limits=[loc[0] - 1, loc[1] - 1]) == 3
    # ... and none in which either drops further with the other still gaining
    assert exact(inst, 5, limits=[loc[0] - 1, loc[1] - 2]) is None


def test_figure3_constraint_costs_three_halves():
    inst = figure3()
    loc = local(inst).org_makespans().tolist()
    assert loc == [1, 4]
    assert exact(inst, 5) == 2  # global optimum (O1's makespan 2 > 1)
    assert exact(inst, 5, limits=[1, 2]) is None  # no optimum keeps O1 at 1
    assert exact(inst, 5, limits=loc) == 3  # best meeting the local constraints: 3/2 OPT


def test_figure5_molba_then_ilba():
    inst = figure5()
    wbar, pmax = lower_bounds(inst)
    base = local(inst)
    lm = base.org_makespans()
    assert [k for k in range(5) if lm[k] >= 2 * wbar + pmax] == [0]
    s = molba(inst, 2.0, base=base)
    assert sorted(set(s.cluster[s.migrated()].tolist())) == [2, 4]  # to M3 and M5
    assert set(inst.org[s.migrated()].tolist()) == {0}  # only O1's jobs move
    assert (s.org_makespans() <= lm).all() and s.makespan < base.makespan
    assert s.makespan <= 4 * max(wbar, pmax)
    i = ilba(s)
    better = [k for k in range(5) if i.org_makespans()[k] < s.org_makespans()[k]]
    assert better == [0, 1, 3] and i.makespan < s.makespan  # O1, O2, O4


def _instances():
    rng = np.random.default_rng(7)
    for i in range(60):
        yield mosp_instance(
            ["uni", "swf"][i % 2],
            int(rng.choice([2, 3, 5])),
            int(rng.integers(2, 40)),
            int(rng.choice([4, 8, 16])),
            seed=int(rng.integers(1 << 30)),
        )


def test_lemma1_low_zone_at_most_pmax():
    """Lemma 1: on every cluster of a MOLBA(alpha) schedule, t_L_end - t_L_start <= pmax."""
    for inst in _instances():
        _, pmax = lower_bounds(inst)
        for alpha in (2.0, 3.0):
            zones = utilization_zones(molba(inst, alpha))
            assert all(e - s <= pmax for s, e in zones), (inst.meta, alpha, zones)


def test_lemma2_some_cluster_low_by_2_wbar():
    """Lemma 2: after MOLBA(alpha) some cluster has t_L_start <= 2 Wbar."""
    for inst in _instances():
        wbar, _ = lower_bounds(inst)
        for alpha in (2.0, 3.0):
            zones = utilization_zones(molba(inst, alpha))
            assert min(s for s, _ in zones) <= 2 * wbar


@settings(max_examples=80, deadline=None)
@given(data=st.data())
def test_all_high_list_bound_and_no_makespan_grows(data):
    N = data.draw(st.integers(1, 5))
    m = data.draw(st.integers(1, 6))
    n = data.draw(st.integers(1, 14))
    jobs = [
        (
            data.draw(st.integers(0, N - 1)),
            data.draw(st.integers(1, 9)),
            data.draw(st.integers(m // 2 + 1, m)),
        )
        for _ in range(n)
    ]
    from coopsched.mosp.figures import _mosp

    inst = _mosp([m] * N, jobs)
    s = all_high(inst)
    p = np.array([j[1] for j in jobs])
    assert s.makespan * N <= p.sum() + (N - 1) * p.max()  # list scheduling on N machines
    assert (s.org_makespans() <= local(inst).org_makespans()).all()
    # one job at a time per cluster
    for c in range(N):
        iv = sorted((int(s.start[j]), int(s.end[j])) for j in np.flatnonzero(s.cluster == c))
        assert all(a[1] <= b[0] for a, b in itertools.pairwise(iv))


def test_welch_p_value():
    from coopsched.experiments.mosp_grid import welch_p

    rng = np.random.default_rng(0)
    a, b = rng.normal(0, 1, 4000), rng.normal(0, 1, 4000)
    assert 0.01 < welch_p(a, b) <= 1
    assert welch_p(a, b + 0.5) < 1e-10
    # t = 1.96 gives p = 0.05: two samples with known means and variances
    x = np.array([0.0, 2.0] * 500)  # mean 1, var ~1.001
    y = x - 1.96 * np.sqrt(x.var(ddof=1) / len(x) * 2)
    assert abs(welch_p(x, y) - 0.05) < 1e-3
