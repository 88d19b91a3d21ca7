import itertools
import json

import numpy as np
import pytest

from coopsched.cli import main
from coopsched.mosp.game import (
    Mechanism,
    best_response_dynamics,
    construct_equilibrium,
    costs,
    epsilon,
    local_makespans,
    rotation,
    schedule,
    selfishness_violations,
    strategies,
)
from coopsched.mosp.generators import mosp_instance
from coopsched.mosp.schedule import MospSchedule, check
from coopsched.workloads.instance import Instance, Organization


def instance(machines, jobs):
    """jobs: (owner, p, q)"""
    return Instance([Organization(f"O{i}", m) for i, m in enumerate(machines)], [j[0] for j in jobs],
                    [0] * len(jobs), [j[1] for j in jobs], processors=[j[2] for j in jobs])


# ----------------------------------------------------------------- Theorem 1 (Fig. 4)

D = 50  # the paper's 1 is D, its delta is 1: long jobs 1+2delta -> D+2


def theorem1():
    jobs = [(0, 1, 1), (1, 1, 1), (2, 1, 1), (3, D + 2, 1), (3, D + 2, 1)] + [(4, D + 2, 1)] * 4
    inst = instance([1] * 5, jobs)
    pr = np.zeros(9)
    # J2(5) = 1 (highest), J2(4) = 2, J3(5) = 3, J4(5) = 4; the others lower
    pr[6], pr[4], pr[7], pr[8] = 10, 9, 8, 7
    pr[3], pr[5], pr[0], pr[1], pr[2] = 6, 5, 3, 2, 1
    return inst, Mechanism("jobs", "lpt", job_priority=pr)


def test_theorem_1_no_pure_equilibrium_below_2_with_priority_to_jobs():
    inst, mech = theorem1()
    loc = local_makespans(inst, mech)
    C4 = list(itertools.product(range(5), repeat=2))
    C5 = list(itertools.product(range(5), repeat=4))
    c4 = np.zeros((len(C4), len(C5)))
    c5 = np.zeros((len(C4), len(C5)))
    ok = np.zeros((len(C4), len(C5)), dtype=bool)
    for a, s4 in enumerate(C4):
        for b, s5 in enumerate(C5):
            c = costs(inst, [0, 1, 2, *s4, *s5], mech)  # O1..O3 keep their tiny job home
            c4[a, b], c5[a, b], ok[a, b] = c[3], c[4], (c <= loc).all()
    eps = np.maximum(c4 / c4.min(axis=0)[None, :], c5 / c5.min(axis=1)[:, None])
    bound = (2 * D + 4) / (D + 3)  # (2 + 4 delta) / (1 + 3 delta) -> 2
    assert eps[ok].min() == pytest.approx(bound)
    assert eps.min() == pytest.approx(bound)
    assert bound > 1.96


def test_theorem_1_best_response_dynamics_cycles():
    inst, mech = theorem1()
    dyn = best_response_dynamics(inst, mech, max_rounds=20)
    assert not dyn.converged
    assert dyn.cycle is not None and len(dyn.cycle) >= 2


# ----------------------------------------------------------------- Theorem 2 (Sec. 7.1)

@pytest.mark.parametrize("sequential", [True, False])
def test_theorem_2_constructed_configurations_are_rho_approximate_equilibria(sequential):
    rng = np.random.default_rng(7 if sequential else 8)
    worst = 0.0
    for _ in range(120):
        N, m, n = int(rng.integers(2, 4)), int(rng.integers(1, 5)), int(rng.integers(1, 7))
        jobs = [(int(rng.integers(0, N)), int(rng.integers(1, 8)), 1 if sequential else int(rng.integers(1, m + 1))) for _ in range(n)]
        inst = instance([m] * N, jobs)
        mech = Mechanism("organizations", "lpt", org_order=rng.permutation(N).tolist())
        eq = construct_equilibrium(inst, mech)
        e, _ = epsilon(inst, eq.config, mech)
        worst = max(worst, e)
        assert (eq.schedule.org_makespans() <= eq.local).all()  # MOSP local constraint
        assert check(eq.schedule).valid
    # LPT with clusters free at different times: 3/2; any list scheduling of parallel jobs: 2
    assert worst <= (1.5 if sequential else 2.0) + 1e-12


def test_construction_keeps_jobs_home_on_ties_and_reports_gains():
    inst = instance([2, 2], [(0, 4, 1), (0, 4, 1), (1, 4, 1)])
    eq = construct_equilibrium(inst)
    assert eq.config.tolist() == [0, 0, 1]  # nothing to gain: everything stays home
    assert eq.gains.tolist() == [0.0, 0.0]
    busy = instance([1, 1], [(0, 3, 1), (0, 3, 1), (0, 3, 1), (1, 1, 1)])
    eq = construct_equilibrium(busy)
    assert eq.schedule.org_makespans()[0] < eq.local[0] and eq.gains[0] > 0


def test_my_jobs_first():
    # a foreign job never delays an owner's job, even with a higher job priority
    inst = instance([1, 1], [(0, 5, 1), (1, 2, 1)])
    s = schedule(inst, [0, 0], Mechanism("jobs", "spt"))
    assert s.start.tolist() == [0, 5]


# ----------------------------------------------------------------- Theorem 5 (Fig. 6)

def theorem5(K):
    jobs = []
    for i in range(K - 1):
        jobs += [(i, 1, 1)] * (2 * K + 1)
    jobs += [(K - 1, K + 1, 1), (K - 1, K, 1)]
    jobs += [(K + i, 1, 1) for i in range(K)]
    return instance([1] * (2 * K), jobs)


def test_theorem_5_price_of_anarchy_2K_over_K_plus_1():
    K = 2
    inst = theorem5(K)
    mech = Mechanism("organizations", "lpt")
    S = [list(strategies(inst, k, mech)) for k in range(inst.k)]
    table = {}
    for combo in itertools.product(*[range(len(s)) for s in S]):
        cfg = np.zeros(inst.n, dtype=np.int64)
        for k, i in enumerate(combo):
            for j, c in S[k][i].items():
                cfg[j] = c
        table[combo] = costs(inst, cfg, mech)
    opt = min(c.max() for c in table.values())
    worst_ne = 0
    for combo, c in table.items():
        if all(table[combo[:k] + (i,) + combo[k + 1:]][k] >= c[k] for k in range(inst.k) for i in range(len(S[k]))):
            worst_ne = max(worst_ne, c.max())
    assert opt == K + 1 and worst_ne == 2 * K
    assert worst_ne / opt == pytest.approx(2 * K / (K + 1))


# ----------------------------------------------------------------- Theorem 4 (Fig. 5)

def theorem4(x):
    n = 3 * x * (x - 1) // 2 + 2
    m = sum((n + 3 * i) * (x - i + 1) for i in range(x + 1))
    units = n + sum((n + 3 * (i - 1)) + (n + 3 * (i - 1) + 2) + 1 for i in range(1, x + 1))
    L = units - 1
    jobs = []
    k = 0
    for _ in range(n):
        jobs += [(k, L - 1, x + 1), (k, 1, m - x - 1)]
        k += 1
    for i in range(1, x + 1):
        jobs += [(k, L, m)] * i + [(k, 1, m)] * (n + 3 * (i - 1))
        k += 1
        jobs += [(k, L, m)] * i + [(k, 1, m - x + i - 1)] * (n + 3 * (i - 1) + 2)
        k += 1
        jobs += [(k, L, m)] * i + [(k, 1, m - x + i - 1)] + [(k, L - 1, x - i + 1)] * (n + 3 * i)
        k += 1
    return instance([m] * k, jobs), L


@pytest.mark.parametrize("x", [1, 2, 3])
def test_theorem_4_instance_has_optimum_L(x):
    inst, L = theorem4(x)
    N = inst.k
    p, q = inst.size, inst.processors
    cluster = np.zeros(inst.n, dtype=np.int64)
    start = np.zeros(inst.n, dtype=np.int64)
    big = [j for j in range(inst.n) if p[j] == L]
    assert len(big) == N - 2  # the proof's count
    for c, j in enumerate(big):
        cluster[j] = c
    longs = [j for j in range(inst.n) if p[j] == L - 1]
    units = [j for j in range(inst.n) if p[j] == 1]
    first_full = next(j for j in units if q[j] == inst.machines[0])
    cluster[first_full], start[first_full] = N - 2, 0
    for j in longs:
        cluster[j], start[j] = N - 2, 1
    rest = [j for j in units if j != first_full]
    assert len(rest) == L
    for t, j in enumerate(rest):
        cluster[j], start[j] = N - 1, t
    opt = MospSchedule(inst, cluster, start, "paper optimum")
    rep = check(opt)
    assert rep.valid and opt.makespan == L


def test_theorem_4_construction_at_x1_reaches_the_papers_equilibrium_cost():
    inst, L = theorem4(1)
    eq = construct_equilibrium(inst, Mechanism("organizations", "lpt"))
    assert eq.schedule.makespan == 2 * L - 1  # (x+1)L - 1: ratio x + (L-1)/L


# ----------------------------------------------------------------- checkers, rotation, CLI

def test_selfishness_checker():
    inst = instance([2, 2], [(0, 4, 2), (1, 1, 2)])
    bad = MospSchedule(inst, np.array([1, 0]), np.array([1, 0]), "hand")  # O1's job runs first on O0's cluster
    assert selfishness_violations(bad)
    good = MospSchedule(inst, np.array([0, 1]), np.array([0, 0]), "hand")
    assert selfishness_violations(good) == []


def test_rotation_gives_each_organization_the_top_priority_in_turn():
    batches = [mosp_instance("uni", 3, 12, 4, seed=s) for s in range(6)]
    eqs = rotation(batches)
    assert len(eqs) == 6
    for eq in eqs:
        assert check(eq.schedule).valid
        assert (eq.schedule.org_makespans() <= eq.local).all()
    # the same bag of tasks every batch: rotating priorities evens out the gains
    inst = instance([2, 2, 2], [(0, 5, 2), (0, 5, 2), (1, 5, 2), (1, 5, 2), (2, 1, 1)])
    fixed = [construct_equilibrium(inst, Mechanism("organizations", "lpt")) for _ in range(3)]
    rotated = rotation([inst] * 3)
    spread = lambda eqs: np.ptp(np.mean([e.gains[:2] for e in eqs], axis=0))  # noqa: E731
    assert spread(rotated) < spread(fixed)


def test_cli_game(capsys, tmp_path):
    assert main(["game", "--generate", "uni:3:6:4", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] <= 2.0 and len(out["config"]) == 6
    assert all(o["cost"] <= o["local"] for o in out["organizations"])
    assert main(["game", "--generate", "uni:2:4:2", "--action", "verify", "--config", "0,0,0,0"]) == 0
    assert "epsilon-approximate" in capsys.readouterr().out
    assert main(["game", "--action", "dynamics", "--priority", "jobs", "--generate", "uni:2:4:2"]) == 0
    assert main(["game", "--action", "fly"]) == 1
    assert main(["game", "--config", "0,1", "--action", "verify"]) == 1


def test_quick_game_grid(tmp_path):
    from coopsched.experiments.game_grid import reproduce_game

    df, md = reproduce_game(tmp_path / "g", quick=True, workers=2, quiet=True)
    assert len(df) == 4 * 3 * 4 * 2
    assert not df["grew"].any()
    assert (tmp_path / "g" / "fig7.png").exists() and (tmp_path / "g" / "fig8.png").exists()
    assert "42.8%" in md
