import itertools
import json

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.cli import main
from coopsched.experiments.poa import theorem1_epsilons
from coopsched.mosp.construction import construct_equilibrium, rotation
from coopsched.mosp.equilibrium import (
    best_response,
    best_response_dynamics,
    epsilon,
    search_equilibria,
    strategies,
)
from coopsched.mosp.game import (
    Mechanism,
    costs,
    local_makespans,
    schedule,
    selfishness_violations,
)
from coopsched.mosp.generators import mosp_instance
from coopsched.mosp.paper_instances import mosp, theorem1, theorem4, theorem5
from coopsched.mosp.schedule import MospSchedule, check


def instance(machines, jobs):
    """jobs: (owner, p, q)"""
    return mosp(machines, jobs)


@st.composite
def games(
    draw,
    max_orgs=3,
    max_m=3,
    max_jobs=6,
    max_p=4,
    sequential=False,
    mechanisms=("organizations", "jobs"),
):
    """Small MOSP games: clusters, jobs (few distinct lengths, so many ties) and a mechanism."""
    N = draw(st.integers(1, max_orgs))
    machines = draw(st.lists(st.integers(1, max_m), min_size=N, max_size=N))
    jobs = []
    for _ in range(draw(st.integers(1, max_jobs))):
        o = draw(st.integers(0, N - 1))
        q = 1 if sequential else draw(st.integers(1, machines[o]))
        jobs.append((o, draw(st.integers(1, max_p)), q))
    kind = draw(st.sampled_from(mechanisms))
    order = draw(st.sampled_from(["lpt", "spt", "hf", "list"]))
    org_order = draw(st.permutations(range(N))) if kind == "organizations" else None
    return instance(machines, jobs), Mechanism(kind, order, org_order=org_order)


def brute_force_best_response(inst, config, mech, k):
    """Agent k's best cost over every assignment of each of its jobs (no symmetry used)."""
    mine = [j for j in range(inst.n) if inst.org[j] == k]
    best = None
    for combo in itertools.product(range(inst.k), repeat=len(mine)):
        if any(inst.processors[j] > inst.machines[c] for j, c in zip(mine, combo, strict=True)):
            continue
        cfg = list(config)
        for j, c in zip(mine, combo, strict=True):
            cfg[j] = c
        cost = int(costs(inst, cfg, mech)[k])
        best = cost if best is None else min(best, cost)
    return best or 0


# ----------------------------------------------------------------- exact best responses


@settings(max_examples=150, deadline=None)
@given(game=games(), data=st.data())
def test_exact_best_response_matches_brute_force(game, data):
    inst, mech = game
    q, m = inst.processors, inst.machines
    config = [
        data.draw(st.sampled_from([c for c in range(inst.k) if m[c] >= q[j]]))
        for j in range(inst.n)
    ]
    for k in range(inst.k):
        br = best_response(inst, config, mech, k)
        assert br.cost == brute_force_best_response(inst, config, mech, k)
        assert int(costs(inst, br.config, mech)[k]) == br.cost
        others = [j for j in range(inst.n) if inst.org[j] != k]
        assert (br.config[others] == np.asarray(config)[others]).all()  # only k's jobs move


@settings(max_examples=150, deadline=None)
@given(game=games(max_orgs=4, max_m=4, max_jobs=9, max_p=6), data=st.data())
def test_every_configuration_gives_a_valid_my_jobs_first_schedule(game, data):
    inst, mech = game
    q, m, owner = inst.processors, inst.machines, inst.org
    config = np.array(
        [
            data.draw(st.sampled_from([c for c in range(inst.k) if m[c] >= q[j]]))
            for j in range(inst.n)
        ]
    )
    sched = schedule(inst, config, mech)
    # every job placed once, never more than m processors busy (the local constraint aside)
    assert check(MospSchedule(inst, sched.cluster, sched.start, "any configuration")).valid
    assert (sched.cluster == config).all() and (sched.start >= 0).all()
    pr = mech.priorities(inst)
    for c in range(inst.k):
        on = np.flatnonzero(config == c)
        own = on[owner[on] == c]
        # my jobs first: the owner's jobs run exactly as if the foreign ones did not exist
        alone = schedule(restrict_jobs(inst, own), config[own], mech)
        assert (alone.start == sched.start[own]).all()
        # a foreign job never delays a job of higher priority: removing it changes nothing before it
        for f in on[owner[on] != c]:
            keep = np.setdiff1d(np.arange(inst.n), [f])
            rest = schedule(restrict_jobs(inst, keep), config[keep], mech)
            before = [
                i for i, j in enumerate(keep) if config[j] == c and (owner[j] == c or pr[j] > pr[f])
            ]
            assert (rest.start[before] == sched.start[keep[before]]).all()


def restrict_jobs(inst, jobs):
    """The same organizations with only the given jobs (in the same order)."""
    jobs = np.asarray(jobs, dtype=np.int64)
    return mosp(
        inst.machines.tolist(),
        [(int(inst.org[j]), int(inst.size[j]), int(inst.processors[j])) for j in jobs],
    )


def test_best_response_keeps_a_maximal_set_of_jobs_at_home():
    inst = instance([1, 1], [(0, 2, 1), (0, 2, 1), (1, 4, 1)])
    # O0 alone: 4 at home or 2 + 2 when one job moves; O1's job is first on its cluster
    br = best_response(inst, [0, 0, 1], Mechanism(), 0)
    assert br.cost == 4 and br.home == 2 and br.config.tolist() == [0, 0, 1]


# ----------------------------------------------------------------- Theorem 1 (Fig. 4)

D = 50  # the paper's 1 is D, its delta is 1: long jobs 1+2delta -> D+2


@pytest.mark.slow
def test_theorem_1_no_pure_equilibrium_below_2_with_priority_to_jobs():
    eps, ok = theorem1_epsilons(D)  # every configuration of O4 and O5, O1..O3 at home
    bound = (2 * D + 4) / (D + 3)  # (2 + 4 delta) / (1 + 3 delta) -> 2
    assert eps[ok].min() == pytest.approx(bound)
    assert eps.min() == pytest.approx(bound)
    assert bound > 1.96
    # the same through the exact best responses (which also let O1..O3 move), from the
    # Pareto-efficient configuration of Fig. 4b
    inst, mech = theorem1(D)
    assert epsilon(inst, [0, 1, 2, 3, 4, 4, 3, 4, 4], mech)[0] >= bound - 1e-12


def test_theorem_1_best_response_dynamics_cycles():
    inst, mech = theorem1(D)
    dyn = best_response_dynamics(inst, mech, max_rounds=20)
    assert not dyn.converged
    assert dyn.cycle is not None and len(dyn.cycle) >= 2


# ----------------------------------------------------------------- Theorem 2 (Sec. 7.1)
# The proof is for organizations with one processor each ("the algorithm can be extended
# for the case where organizations have more than one processor ... reapply the algorithm
# until no agent can improve"): its bounds are tested there; beyond, the extension is.

RHO = {
    "lpt": 1.5,
    "spt": 2.0,
    "hf": 2.0,
    "list": 2.0,
}  # LPT, machines free at different times: 3/2 (Lee)


@pytest.mark.slow
@settings(max_examples=200, deadline=None)
@given(
    game=games(
        max_orgs=5, max_m=1, max_jobs=8, max_p=9, sequential=True, mechanisms=("organizations",)
    )
)
def test_theorem_2_rho_approximate_equilibria_with_one_processor_per_organization(game):
    inst, mech = game
    eq = construct_equilibrium(inst, mech)
    assert epsilon(inst, eq.config, mech)[0] <= RHO[mech.order] + 1e-12
    assert (eq.schedule.org_makespans() <= eq.local).all()  # MOSP local constraint
    assert check(eq.schedule).valid
    exact = construct_equilibrium(inst, mech, rebalance="exact")  # Corollary 3
    assert epsilon(inst, exact.config, mech)[0] == 1.0


@settings(max_examples=120, deadline=None)
@given(
    game=games(max_orgs=4, max_m=4, max_jobs=7, max_p=8, mechanisms=("organizations",)),
    rebalance=st.sampled_from(["list", "exact"]),
)
def test_stabilized_construction_is_a_pure_equilibrium_when_it_converges(game, rebalance):
    inst, mech = game
    eq = construct_equilibrium(inst, mech, rebalance=rebalance, stabilize=True)
    if eq.info["converged"]:
        assert epsilon(inst, eq.config, mech)[0] == 1.0
    else:
        assert eq.info["kept"] in ("visited", "home")
    assert check(eq.schedule).valid


def test_one_pass_construction_has_no_guarantee_beyond_one_processor():
    """Clusters [2, 5], plain list order. O0, rebalanced first, sends its job (6,1) into the
    free processor of O1's cluster at 0. O1, rebalanced after it, sends (7,2) to O0's
    cluster and re-lists its own jobs at home, which pushes O0's job from 0 to 18: O0 ends
    at 24 against 8 alone (epsilon 24/7, and the local constraint broken)."""
    inst = instance(
        [2, 5],
        [
            (1, 6, 1),
            (0, 2, 1),
            (0, 1, 1),
            (0, 6, 1),
            (0, 1, 2),
            (1, 5, 3),
            (1, 7, 2),
            (1, 9, 5),
            (1, 4, 4),
        ],
    )
    mech = Mechanism("organizations", "list")
    eq = construct_equilibrium(inst, mech)
    assert eq.config.tolist() == [1, 0, 0, 1, 0, 1, 0, 1, 1]
    assert eq.schedule.org_makespans().tolist() == [24, 18] and eq.local.tolist() == [8, 25]
    assert eq.schedule.start[3] == 18
    assert epsilon(inst, eq.config, mech)[0] == pytest.approx(24 / 7)
    # reapplying best responses repairs it here
    stable = construct_equilibrium(inst, mech, stabilize=True)
    assert stable.info["converged"] and epsilon(inst, stable.config, mech)[0] == 1.0


def test_priority_to_organizations_can_lack_a_pure_equilibrium_beyond_one_processor():
    """Corollary 3 does not extend to clusters of several processors and parallel jobs:
    every one of this instance's 32 configurations leaves an agent a better response."""
    inst = instance([2, 2], [(0, 1, 2), (0, 4, 1), (1, 3, 2), (1, 5, 2), (1, 7, 1)])
    mech = Mechanism("organizations", "lpt")
    best = min(epsilon(inst, cfg, mech)[0] for cfg in itertools.product(range(2), repeat=5))
    assert best == pytest.approx(9 / 8)
    eq = construct_equilibrium(inst, mech, rebalance="exact", stabilize=True)
    assert not eq.info["converged"] and eq.info["cycle"]


def test_construction_keeps_jobs_home_on_ties_and_reports_gains():
    inst = instance([2, 2], [(0, 4, 1), (0, 4, 1), (1, 4, 1)])
    for rebalance in ("list", "exact"):
        eq = construct_equilibrium(inst, rebalance=rebalance)
        assert eq.config.tolist() == [0, 0, 1]  # nothing to gain: everything stays home
        assert eq.gains.tolist() == [0.0, 0.0]
    busy = instance([1, 1], [(0, 3, 1), (0, 3, 1), (0, 3, 1), (1, 1, 1)])
    eq = construct_equilibrium(busy)
    assert eq.schedule.org_makespans()[0] < eq.local[0] and eq.gains[0] > 0


@settings(max_examples=150, deadline=None)
@given(game=games(max_orgs=3, max_m=4, max_jobs=8, max_p=6), data=st.data())
def test_my_jobs_first_list_schedules_like_mosp_local(game, data):
    """ "My jobs first" list-schedules the owner's jobs (CONVENTIONS 2): with every job at
    home, each cluster runs exactly what ``coopsched mosp --algorithm local`` runs."""
    from coopsched.mosp.algorithms import local

    inst, mech = game
    loc = local(inst, order=mech.order)
    at_home = schedule(inst, inst.org, mech)
    assert (at_home.start == loc.start).all()
    assert (local_makespans(inst, mech) == loc.org_makespans()).all()


def test_my_jobs_first_is_list_scheduling_not_insertion():
    """LPT on 2 processors, jobs (p, q) = (2,1), (2,2), (2,1), (3,1); list (3,1), (2,1),
    (2,2), (2,1). List scheduling starts the last narrow job at 2, in the hole the wide one
    cannot use, and the wide one at 4: makespan 6. Inserting each job at its earliest start
    that delays nothing before it gives the wide one [3,5) and the narrow one [5,7): 7."""
    inst = instance([2], [(0, 2, 1), (0, 2, 2), (0, 2, 1), (0, 3, 1)])
    mech = Mechanism("organizations", "lpt")
    s = schedule(inst, [0, 0, 0, 0], mech)
    assert s.start.tolist() == [0, 4, 2, 0]
    assert local_makespans(inst, mech).tolist() == [6]
    # as a foreign job the narrow one is inserted: it never delays the wide one before it
    two = instance([2, 2], [(1, 2, 1), (1, 2, 2), (1, 2, 1), (1, 3, 1)])
    s = schedule(two, [0, 0, 0, 0], mech)
    assert s.start.tolist() == [0, 3, 5, 0]


def test_my_jobs_first():
    # a foreign job never delays an owner's job, even with a higher job priority
    inst = instance([1, 1], [(0, 5, 1), (1, 2, 1)])
    s = schedule(inst, [0, 0], Mechanism("jobs", "spt"))
    assert s.start.tolist() == [0, 5]


# ----------------------------------------------------------------- Theorem 5 (Fig. 6)


@pytest.mark.slow
def test_theorem_5_price_of_anarchy_2K_over_K_plus_1():
    K = 2
    T = theorem5(K)
    inst = T.instance
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
        if all(
            table[combo[:k] + (i,) + combo[k + 1 :]][k] >= c[k]
            for k in range(inst.k)
            for i in range(len(S[k]))
        ):
            worst_ne = max(worst_ne, c.max())
    assert opt == K + 1 and worst_ne == 2 * K
    assert worst_ne / opt == pytest.approx(2 * K / (K + 1))
    # the proof's two configurations
    assert schedule(inst, T.optimum_config, mech).makespan == K + 1
    assert schedule(inst, T.fig6c_config, mech).makespan == 2 * K
    assert epsilon(inst, T.fig6c_config, mech)[0] == 1.0


@pytest.mark.parametrize("K", [3, 4])
def test_theorem_5_family_beyond_K2(K):
    T = theorem5(K)
    inst, mech = T.instance, Mechanism("organizations", "lpt")
    assert schedule(inst, T.optimum_config, mech).makespan == K + 1  # = total work / 2K: optimal
    # Fig. 6c as described is no equilibrium: the first organization spreads its jobs
    assert costs(inst, T.fig6c_config, mech)[0] == K + 1
    assert best_response(inst, T.fig6c_config, mech, 0).cost == 3
    # but equilibria of makespan 2K exist: the ratio 2K/(K+1) of the theorem
    found = search_equilibria(inst, mech, starts=10, seed=0)
    assert found and found[0].makespan == 2 * K
    assert epsilon(inst, found[0].config, mech)[0] == 1.0


# ----------------------------------------------------------------- Theorem 4 (Fig. 5)


@pytest.mark.parametrize("x", [1, 2, 3])
def test_theorem_4_instance_has_optimum_L(x):
    T = theorem4(x)
    assert int((T.instance.size == T.L).sum()) == T.instance.k - 2  # the proof's count of big jobs
    rep = check(T.optimum)
    assert rep.valid and T.optimum.makespan == T.L == T.instance.size.max()  # p_max: optimal


def test_theorem_4_price_of_anarchy_grows_with_x():
    mech = Mechanism("organizations", "lpt")
    ratios = []
    for x in (1, 2, 3):
        T = theorem4(x)
        sched = schedule(T.instance, T.worst_config, mech)
        assert sched.makespan == (x + 1) * T.L - 1  # the proof's equilibrium cost
        assert (
            epsilon(T.instance, T.worst_config, mech)[0] == 1.0
        )  # a pure Nash equilibrium, exactly
        assert (
            sched.org_makespans() <= local_makespans(T.instance, mech)
        ).all()  # local constraint kept
        ratios.append(sched.makespan / T.L)
    assert ratios == sorted(ratios) and ratios[0] > 1.8 and ratios[-1] > 3.9  # x + (L-1)/L


def test_theorem_4_equilibrium_at_x1_checked_exhaustively():
    """The exact best responses agree with enumerating every strategy of every agent."""
    T = theorem4(1)
    mech = Mechanism("organizations", "lpt")
    cur = costs(T.instance, T.worst_config, mech)
    for k in range(T.instance.k):
        best = cur[k]
        for assign in strategies(T.instance, k, mech):
            cfg = T.worst_config.copy()
            cfg[list(assign)] = list(assign.values())
            best = min(best, costs(T.instance, cfg, mech)[k])
        assert best == cur[k] == best_response(T.instance, T.worst_config, mech, k).cost


def test_theorem_4_construction_finds_better_equilibria():
    """Sec. 7.1's algorithm lands on far better equilibria than the worst one."""
    mech = Mechanism("organizations", "lpt")
    for x in (1, 2):
        T = theorem4(x)
        for rebalance in ("list", "exact"):
            eq = construct_equilibrium(T.instance, mech, rebalance=rebalance)
            assert epsilon(T.instance, eq.config, mech)[0] == 1.0
            assert eq.schedule.makespan <= 2 * T.L < (x + 1) * T.L - 1 or x == 1


# ----------------------------------------------------------------- checkers, rotation, CLI


def test_selfishness_checker():
    inst = instance([2, 2], [(0, 4, 2), (1, 1, 2)])
    bad = MospSchedule(
        inst, np.array([1, 0]), np.array([1, 0]), "hand"
    )  # O1's job runs first on O0's cluster
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
    assert (
        main(["game", "--generate", "uni:2:4:2", "--action", "verify", "--config", "0,0,0,0"]) == 0
    )
    assert "epsilon-approximate" in capsys.readouterr().out
    assert (
        main(["game", "--action", "dynamics", "--priority", "jobs", "--generate", "uni:2:4:2"]) == 0
    )
    assert main(["game", "--action", "fly"]) == 1
    capsys.readouterr()
    assert (
        main(
            [
                "game",
                "--generate",
                "theorem4:2",
                "--action",
                "verify",
                "--config",
                "paper",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["epsilon"] == 1.0 and out["makespan"] == 3 * 36 - 1
    assert (
        main(
            [
                "game",
                "--generate",
                "theorem5:3",
                "--action",
                "search",
                "--starts",
                "10",
                "--format",
                "json",
            ]
        )
        == 0
    )
    assert json.loads(capsys.readouterr().out)["makespan"] == 6
    assert (
        main(
            [
                "game",
                "--generate",
                "uni:2:5:2",
                "--rebalance",
                "exact",
                "--stabilize",
                "--format",
                "json",
            ]
        )
        == 0
    )
    out = json.loads(capsys.readouterr().out)
    assert out["converged"] is False or out["epsilon"] == 1.0
    assert main(["game", "--generate", "theorem1", "--config", "paper"]) == 1
    assert main(["game", "--generate", "theorem4:0"]) == 1
    assert main(["game", "--config", "0,1", "--action", "verify"]) == 1


@pytest.mark.parametrize(
    "spec, organizations, jobs",
    [
        ("theorem4:100000", "15,000,150,002", "4,500,045,000,600,004"),
        ("theorem5:1000", "2,000", "2,000,001"),
        ("theorem4:9", "137", "3,703"),
        ("uni:20:1000000:512", "20", "1,000,000"),
    ],
)
def test_cli_game_refuses_games_beyond_the_limit_at_once(capsys, spec, organizations, jobs):
    """Issue 27 item 9: these ran out of memory or ran for hours; now one line, before any
    instance is built, with the size and the estimate."""
    from coopsched.mosp.reports import MAX_GAME_STEPS

    assert main(["game", "--generate", spec]) == 1
    err = capsys.readouterr().err
    assert f"--generate {spec}: {organizations} organizations and {jobs} jobs" in err
    assert f"limit is {MAX_GAME_STEPS:,} steps" in err and "Traceback" not in err


def test_paper_instance_sizes_in_closed_form_and_the_guard_boundary():
    from coopsched.mosp.paper_instances import theorem4_size, theorem5_size
    from coopsched.mosp.reports import MAX_GAME_STEPS, check_game_size
    from coopsched.workloads.limits import LimitError

    for x in range(1, 7):
        t = theorem4(x).instance
        assert theorem4_size(x) == (t.k, t.n)
    for K in range(2, 12):
        t = theorem5(K).instance
        assert theorem5_size(K) == (t.k, t.n)
    # the largest paper instances the command accepts (docs/game.md states them)
    assert 110**2 * 2644 == 31_992_400 <= MAX_GAME_STEPS < 137**2 * 3703
    assert theorem5_size(49)[0] ** 2 * theorem5_size(49)[1] <= MAX_GAME_STEPS
    assert theorem5_size(50)[0] ** 2 * theorem5_size(50)[1] > MAX_GAME_STEPS
    check_game_size(110, 2644, "x")
    with pytest.raises(ValueError, match="limit"):
        check_game_size(137, 3703, "x")
    with pytest.raises(LimitError, match="more than the limit"):  # the library, not only the CLI
        theorem4(100_000)
    with pytest.raises(LimitError, match="more than the limit"):
        theorem5(10_000)


@pytest.mark.slow
def test_quick_game_grid(tmp_path):
    from coopsched.experiments.studies import run_study

    df, md = run_study("game", tmp_path / "g", quick=True, workers=2, quiet=True)
    assert len(df) == 4 * 3 * 4 * 2
    # the one-pass construction does not enforce the local constraint beyond one processor
    # (test_one_pass_construction_has_no_guarantee_beyond_one_processor): count, not assume
    grew = int(df.groupby(["N", "m", "n", "instance"])["grew"].first().sum())
    assert f"makespan grew | {grew} |" in md
    eps = df[df.n == 10]["epsilon"]
    assert eps.notna().all() and (eps >= 1.0).all() and (df[df.n > 10]["epsilon"].isna()).all()
    assert (tmp_path / "g" / "fig7.png").exists() and (tmp_path / "g" / "fig8.png").exists()
    assert "42.8%" in md


@pytest.mark.slow
def test_quick_poa_reproduction(tmp_path):
    from coopsched.experiments.studies import run_study

    df, md = run_study("poa", tmp_path / "p", quick=True, workers=2, quiet=True)
    t4 = df[df["task.what"] == "theorem4"].sort_values("task.x")
    assert (t4.worst == t4.paper_worst).all() and (t4.worst_epsilon == 1.0).all()
    t5 = df[df["task.what"] == "theorem5"]
    assert (t5.worst_found == t5.paper).all()
    assert (tmp_path / "p" / "poa.png").exists() and "Theorem 4" in md


def test_game_grid_readings_building_blocks():
    """The readings of Sec. 8 that `reproduce game-readings` compares (docs/reproduction.md)."""
    from coopsched.experiments.game_grid import (
        evaluate_cell,
        grid_instance,
        priority_order,
        readings,
        zipf_counts,
    )

    assert priority_order("index", 4, 0) == [0, 1, 2, 3]
    assert priority_order("reverse", 4, 0) == [3, 2, 1, 0]
    r = priority_order("random", 6, 5)
    assert sorted(r) == list(range(6)) and r == priority_order("random", 6, 5)
    with pytest.raises(ValueError, match="priority"):
        priority_order("alphabetical", 3, 0)
    c = zipf_counts(100, 5)
    w = 1 / np.arange(1, 6) ** 1.4267
    assert c.sum() == 100 and (np.abs(c - 100 * w / w.sum()) < 1).all()
    assert list(c) == sorted(c, reverse=True)
    jobs = grid_instance(5, 100, 32, seed=3)
    counts = grid_instance(5, 100, 32, seed=3, owners="counts")
    assert (jobs.size == counts.size).all() and (jobs.processors == counts.processors).all()
    assert np.bincount(counts.org, minlength=5).tolist() == c.tolist()
    # the same instance under two priority orders: the rows differ only through the order
    task = {"N": 5, "m": 32, "n": 50, "instances": 2, "seed": 0, "epsilon": False}
    a = evaluate_cell({**task, "priority": "index"})
    b = evaluate_cell({**task, "priority": "reverse"})
    assert a["org_jobs"] == b["org_jobs"] and a["org_ratio"] != b["org_ratio"]
    import pandas as pd

    org = pd.DataFrame(
        {"N": [2, 2, 2], "ratio": [0.5, 1.0, 1.0], "jobs": [8, 1, 1], "after_lb": [0.9, 1.0, 1.2]}
    )
    inst = pd.DataFrame({"N": [2, 2], "global_ratio": [0.6, 0.8]})
    t = readings(inst, org, ["N"]).iloc[0]
    assert t.org_mean == pytest.approx(2.5 / 3) and t.job_weighted == pytest.approx(6 / 10)
    assert t.below_lb == pytest.approx(1 / 3) and t.below_lb_2plus == 1.0
    assert t.below_lb_jobs == pytest.approx(0.8) and t.glob == pytest.approx(0.7)


def _has_pure_equilibrium(inst, mech) -> bool:
    """Some configuration is an exact pure equilibrium (exhaustive, stops at the first)."""
    return any(
        epsilon(inst, list(c), mech)[0] == 1.0
        for c in itertools.product(range(inst.k), repeat=inst.n)
    )


def test_sequential_jobs_on_small_clusters_have_a_pure_equilibrium():
    """docs/game.md: with sequential jobs, a seeded search of 200 random games (2-3
    organizations, clusters of 2-3 processors, 3-6 jobs of length 1-6, LPT, priority to
    organizations) finds none without a pure equilibrium -- unlike the parallel-job game
    below, which the same search rejects."""
    mech = Mechanism("organizations", "lpt")
    rng = np.random.default_rng(0)
    for _ in range(200):
        k = int(rng.integers(2, 4))
        machines = [int(x) for x in rng.integers(2, 4, size=k)]
        n = int(rng.integers(3, 7))
        jobs = [(int(rng.integers(0, k)), int(rng.integers(1, 7)), 1) for _ in range(n)]
        inst = instance(machines, jobs)
        assert _has_pure_equilibrium(inst, mech), (machines, jobs)
    parallel = instance([2, 2], [(0, 1, 2), (0, 4, 1), (1, 3, 2), (1, 5, 2), (1, 7, 1)])
    assert not _has_pure_equilibrium(parallel, mech)


def test_dynamics_that_cycle_return_a_configuration_within_the_local_constraint():
    """Found by hypothesis: O0 (2 processors) and O1 (3); the exact best responses cycle, and
    the configuration they stop at ends O0 at 4 against 3 alone. The construction returns a
    visited configuration in which nobody ends later than alone, or every job at home."""
    inst = instance([2, 3], [(0, 2, 1), (1, 2, 2), (1, 2, 3), (0, 1, 2)])
    mech = Mechanism("organizations", "lpt")
    eq = construct_equilibrium(inst, mech, rebalance="exact", stabilize=True)
    assert not eq.info["converged"] and eq.info["cycle"]
    assert check(eq.schedule).valid
    assert (eq.schedule.org_makespans() <= eq.local).all()
