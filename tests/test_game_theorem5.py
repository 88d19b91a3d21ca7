"""Cohen, Cordeiro, Trystram, Theorem 5 (bags of tasks, priority to organizations):
price of anarchy <= 2 - 1/N, checked by enumerating every configuration and every pure
equilibrium of small instances; and their Fig. 2 (MOSP's local constraint costs 3/2).

Written against the public API (``game.schedule``/``costs``, ``equilibrium.strategies``
and ``best_response``), so that it holds for any "my jobs first" mechanism."""

import itertools

import numpy as np
import pytest

from coopsched.mosp.equilibrium import best_response, strategies
from coopsched.mosp.figures import figure3
from coopsched.mosp.game import Mechanism, costs
from coopsched.mosp.paper_instances import mosp


def configurations(inst, mech):
    per_agent = [list(strategies(inst, k, mech)) for k in range(inst.k)]
    for combo in itertools.product(*per_agent):
        cfg = np.zeros(inst.n, dtype=np.int64)
        for strategy in combo:
            for j, c in strategy.items():
                cfg[j] = c
        yield cfg


def price_of_anarchy(inst, mech):
    """(optimal makespan over configurations, worst equilibrium makespan, #equilibria,
    best equilibrium makespan)."""
    best, worst, count, best_ne = None, None, 0, None
    for cfg in configurations(inst, mech):
        c = costs(inst, cfg, mech)
        cmax = int(c.max())
        best = cmax if best is None else min(best, cmax)
        if all(best_response(inst, cfg, mech, k).cost >= c[k] for k in range(inst.k)):
            count += 1
            worst = cmax if worst is None else max(worst, cmax)
            best_ne = cmax if best_ne is None else min(best_ne, cmax)
    return best, worst, count, best_ne


@pytest.mark.parametrize("N,per_cluster", [(2, 1), (3, 1), (2, 2), (3, 2)])
def test_theorem5_upper_bound_by_exhaustive_equilibria(N, per_cluster):
    rng = np.random.default_rng(100 * N + per_cluster)
    checked = 0
    for _ in range(25):
        n = int(rng.integers(2, 6))
        jobs = [(int(rng.integers(0, N)), int(rng.integers(1, 5)), 1) for _ in range(n)]
        inst = mosp([per_cluster] * N, jobs)
        mech = Mechanism("organizations", "lpt")
        best, worst, count, _ = price_of_anarchy(inst, mech)
        if count == 0:
            continue  # Theorem 2 says one exists for one processor per organization
        checked += 1
        assert worst * N <= (2 * N - 1) * best, (jobs, best, worst)
    assert checked >= 15


def test_figure2_of_the_game_paper():
    """Optimal global makespan 2, optimal under the local constraints 3 (Fig. 2). In the
    game (priority to organizations) the configuration of makespan 2 exists but is no
    equilibrium: O1 takes its jobs home (cost 1 instead of 2). Every equilibrium has
    makespan 3, the constrained optimum, and keeps every organization within its local
    makespan."""
    inst = figure3()
    mech = Mechanism("organizations", "lpt")
    best, worst, count, best_ne = price_of_anarchy(inst, mech)
    assert best == 2
    assert count > 0 and best_ne == worst == 3
