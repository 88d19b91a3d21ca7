"""Exact best responses in the MOSP game (issue 5): cost against the instance.

    python benchmarks/game.py

For the instances of Theorems 4 and 5 (Cohen, Cordeiro, Trystram): seconds for epsilon
of the proof's equilibrium (one exact best response per agent), the largest agent's
number of strategies (what enumerating them would cost: clusters ** jobs, and with equal
jobs merged) and the dynamic program's steps. Then random games with all-distinct jobs,
where best responses are NP-hard and the program grows as 3 ** jobs.
"""

from __future__ import annotations

import math
import time

import numpy as np

from coopsched.mosp.equilibrium import agent_types, epsilon
from coopsched.mosp.game import Mechanism
from coopsched.mosp.generators import mosp_instance
from coopsched.mosp.paper_instances import theorem4, theorem5


def sizes(inst, mech) -> tuple[int, float, float, float]:
    """Largest agent: jobs, clusters ** jobs, strategies with equal jobs merged, DP steps."""
    best = (0, 0.0, 0.0, 0.0)
    for k in range(inst.k):
        n = [len(g) for g in agent_types(inst, k, mech)]
        raw = float(inst.k) ** sum(n)
        merged = math.prod(math.comb(x + inst.k - 1, inst.k - 1) for x in n)
        dp = math.prod((x + 1) * (x + 2) // 2 for x in n) * (inst.k - 1)
        best = max(best, (sum(n), raw, float(merged), float(dp)))
    return best


def row(name, inst, mech, config) -> None:
    t = time.perf_counter()
    eps, _ = epsilon(inst, config, mech)
    dt = time.perf_counter() - t
    jobs, raw, merged, dp = sizes(inst, mech)
    print(
        f"{name:<22} {inst.k:>4} {inst.n:>5} {jobs:>5} {raw:>10.2e} {merged:>10.2e} {dp:>10.2e} {eps:>7.3f} {dt:>8.3f}"
    )


def main() -> None:
    mech = Mechanism("organizations", "lpt")
    print(
        f"{'instance':<22} {'orgs':>4} {'jobs':>5} {'max_k':>5} {'N^n_k':>10} {'merged':>10} {'dp steps':>10} {'epsilon':>7} {'seconds':>8}"
    )
    for x in (1, 2, 3, 4, 5):
        T = theorem4(x)
        row(f"theorem4 x={x}", T.instance, mech, T.worst_config)
    for K in (2, 4, 8, 12):
        T = theorem5(K)
        row(f"theorem5 K={K}", T.instance, mech, T.optimum_config)
    for n in (8, 12, 16, 20):
        inst = mosp_instance("uni", 3, n, 8, seed=n)
        row(f"uni N=3 n={n} m=8", inst, mech, inst.org.copy())
    print(f"(numpy {np.__version__}; one core; epsilon = one exact best response per agent)")


if __name__ == "__main__":
    main()
