"""Coverage and width of the sampled audit's intervals (issue 29, item 2).

    python benchmarks/estimator.py [--traces ../shared/traces] [--runs 200]

On games with known exact Shapley values, at equal numbers of orders (so of coalition
evaluations: an antithetic pair values ``2(k - 1)`` proper coalitions, two plain orders as
many; the distinct coalitions valued are counted): the share of per-player intervals that
cover the exact value over ``--runs`` seeds, at 90 % confidence, for

* ``hoeffding``: plain permutation sampling with one Hoeffding half-width from the observed
  range of the marginal contributions (the former estimator,
  :func:`coopsched.online.shapley.shapley_monte_carlo`);
* ``antithetic``: :func:`coopsched.online.shapley.shapley_antithetic` without stopping (one
  look, Student t at 90 %);
* ``bernstein``: the same with the empirical Bernstein interval (observed range);
* ``adaptive``: the Student-t one with the audit's looks (20 orders, then doubling to the budget),
  each at ``1 - 0.1 / looks``, stopped when every player's interval excludes a target
  (the exact value plus an offset of 1 to 4 times the non-adaptive 40-order half-width).

Games: random additive + interaction games and airport games (k = 9), and the REF games of
two real LPC-EGEE windows (5e4 s, sequential jobs, users dealt to k = 10 and 12
organizations, valued exactly by one REF run). ``w anti``, ``w bern``: mean half-width
relative to the Hoeffding one at the same number of orders. Only counts and ratios: no timings.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

import numpy as np

from coopsched.online.shapley import shapley, shapley_antithetic, shapley_monte_carlo
from coopsched.testing import additive_interaction_game as additive_interaction
from coopsched.testing import airport_game

CONF = 0.9


def measure(name: str, v: list[int], k: int, runs: int, orders: int) -> None:
    exact = np.array([float(x) for x in shapley(v)])
    cov = {"hoeffding": 0, "antithetic": 0, "bernstein": 0, "adaptive": 0}
    width = {"hoeffding": 0.0, "antithetic": 0.0, "bernstein": 0.0, "adaptive": 0.0}
    used, evals_a, evals_h = [], 0, 0
    base = shapley_antithetic(lambda m: v[m], k, 40, seed=10_000, confidence=CONF)
    target = exact + np.linspace(1, 4, k) * base.halfwidth[:, 0] * np.where(np.arange(k) % 2, 1, -1)
    for seed in range(runs):
        sa: set[int] = set()
        sh: set[int] = set()

        def fa(m: int, s: set[int] = sa) -> int:
            s.add(m)
            return v[m]

        def fh(m: int, s: set[int] = sh) -> int:
            s.add(m)
            return v[m]

        h = shapley_monte_carlo(fh, k, orders, seed=seed, confidence=CONF)
        a = shapley_antithetic(fa, k, orders, seed=seed, confidence=CONF)
        b = shapley_antithetic(
            lambda m: v[m], k, orders, seed=seed, confidence=CONF, interval="bernstein"
        )
        evals_a += len(sa)
        evals_h += len(sh)

        def decide(phi: np.ndarray, hw: np.ndarray) -> np.ndarray:
            return (target < phi[:, 0] - hw[:, 0]) | (target > phi[:, 0] + hw[:, 0])

        d = shapley_antithetic(
            lambda m: v[m], k, 8 * orders, seed=seed, confidence=CONF, decide=decide
        )
        used.append(d.orders)
        for key, phi, hw in (
            ("hoeffding", h.phi, h.halfwidth),
            ("antithetic", a.phi[:, 0], a.halfwidth[:, 0]),
            ("bernstein", b.phi[:, 0], b.halfwidth[:, 0]),
            ("adaptive", d.phi[:, 0], d.halfwidth[:, 0]),
        ):
            cov[key] += int(np.sum(np.abs(phi - exact) <= hw))
            width[key] += float(np.mean(hw))
    n = runs * k
    low = CONF - 3 * math.sqrt(CONF * (1 - CONF) / runs)
    print(
        f"{name:>22} {k:3d} {orders:6d} {evals_a / runs:8.0f} {evals_h / runs:8.0f} "
        f"{cov['hoeffding'] / n:7.3f} {cov['antithetic'] / n:7.3f} {cov['bernstein'] / n:7.3f} "
        f"{cov['adaptive'] / n:7.3f} {low:6.3f} {width['antithetic'] / width['hoeffding']:7.3f} "
        f"{width['bernstein'] / width['hoeffding']:7.3f} "
        f"{np.median(used):7.0f}/{8 * orders}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    print(
        f"# {args.runs} seeded runs per game, {CONF:.0%} intervals; coverage = share of "
        "per-player intervals holding the exact value; floor = 0.9 - 3 binomial sd over runs"
    )
    print(
        f"{'game':>22} {'k':>3} {'orders':>6} {'evals a':>8} {'evals h':>8} {'hoeff':>7} "
        f"{'anti':>7} {'bern':>7} {'adapt':>7} {'floor':>6} {'w anti':>7} {'w bern':>7} "
        "adaptive orders (median)"
    )
    for g in range(3):
        measure(f"additive+interaction {g}", additive_interaction(9, g), 9, args.runs, 40)
        measure(f"airport {g}", airport_game(9, g)[0], 9, args.runs, 40)
    from coopsched.online.ref import ref_schedule
    from coopsched.workloads.prepare import trace_to_instance
    from coopsched.workloads.swf import read_swf

    tr = read_swf(Path(args.traces) / "LPC-EGEE-2004-1.2-cln.swf.gz")
    for k in (10, 12):
        for start in (11_050_000, 18_900_000):
            inst = trace_to_instance(tr, k=k, start=start, length=50_000, seed=1)
            _, vals = ref_schedule(inst, 50_000)
            measure(f"LPC-EGEE {start}", list(vals), k, args.runs // 2, 40)


if __name__ == "__main__":
    main()
