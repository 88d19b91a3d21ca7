"""Coverage and width of the sampled audit's intervals (issue 29, item 2).

    python benchmarks/estimator.py [--traces ../shared/traces] [--runs 200]

The same ``--runs`` seeds for every game.

On games with known exact Shapley values, at equal numbers of orders (so of coalition
evaluations: an antithetic pair values ``2(k - 1)`` proper coalitions, two plain orders as
many; the distinct coalitions valued are counted): the share of per-player intervals that
cover the exact value over ``--runs`` seeds, at 90 % confidence, for

* ``hoeffding``: plain permutation sampling with one Hoeffding half-width from the observed
  range of the marginal contributions (the former estimator,
  :func:`coopsched.audit.estimation.shapley_monte_carlo`);
* ``t``: :func:`coopsched.audit.estimation.shapley_antithetic` without stopping (one look),
  Student t at 90 %;
* ``hall``: the same with Hall's skewness-corrected t (the one-look default);
* ``bern``: the same with the empirical Bernstein interval (observed range);
* ``ad t``, ``ad hl``: the t and Hall intervals with the audit's looks (20 orders, then
  doubling to the budget, 8 times the one-look orders), each at ``1 - 0.1 / looks``, stopped
  when every player's interval excludes a target (the exact value plus an offset of 1 to 4
  times the one-look 40-order t half-width); the median number of orders they used.

Games: random additive + interaction games and airport games (k = 9), and the REF games of
two real LPC-EGEE windows (5e4 s, sequential jobs, users dealt to k = 10 and 12
organizations, valued exactly by one REF run). ``width``: mean half-width relative to the
Hoeffding one at the same number of orders. ``evals``: distinct coalitions valued per run
(antithetic t, Hoeffding). Only counts and ratios: no timings.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from coopsched.audit.estimation import shapley_antithetic, shapley_monte_carlo
from coopsched.online.shapley import shapley
from coopsched.testing import additive_interaction_game as additive_interaction
from coopsched.testing import airport_game

CONF = 0.9
#: the columns: (key, interval, adaptive)
KINDS = (
    ("t", "t", False),
    ("hall", "hall", False),
    ("bern", "bernstein", False),
    ("adapt t", "t", True),
    ("adapt hall", "hall", True),
)


def measure(name: str, v: list[int], k: int, runs: int, orders: int) -> None:
    exact = np.array([float(x) for x in shapley(v)])
    cov = {key: 0 for key in ("hoeff", *(kd[0] for kd in KINDS))}
    width = dict.fromkeys(cov, 0.0)
    used: dict[str, list[int]] = {"adapt t": [], "adapt hall": []}
    evals_a = evals_h = 0
    base = shapley_antithetic(lambda m: v[m], k, 40, seed=10_000, confidence=CONF, interval="t")
    target = exact + np.linspace(1, 4, k) * base.halfwidth[:, 0] * np.where(np.arange(k) % 2, 1, -1)

    def decide(phi: np.ndarray, hw: np.ndarray) -> np.ndarray:
        return (target < phi[:, 0] - hw[:, 0]) | (target > phi[:, 0] + hw[:, 0])

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
        cov["hoeff"] += int(np.sum(np.abs(h.phi - exact) <= h.halfwidth))
        width["hoeff"] += float(np.mean(h.halfwidth))
        evals_h += len(sh)
        for key, interval, adaptive in KINDS:
            f = fa if key == "t" else v.__getitem__
            if adaptive:
                est = shapley_antithetic(
                    f, k, 8 * orders, seed=seed, confidence=CONF, decide=decide, interval=interval
                )
                used[key].append(est.orders)
            else:
                est = shapley_antithetic(
                    f, k, orders, seed=seed, confidence=CONF, interval=interval
                )
            phi, hw = est.phi[:, 0], est.halfwidth[:, 0]
            cov[key] += int(np.sum(np.abs(phi - exact) <= hw))
            width[key] += float(np.mean(hw))
        evals_a += len(sa)
    n = runs * k
    covs = " ".join(f"{cov[key] / n:6.3f}" for key in cov)
    widths = " ".join(f"{width[key] / width['hoeff']:6.3f}" for key in ("t", "hall", "bern"))
    print(
        f"{name:>22} {k:3d} {orders:6d} {evals_a / runs:7.0f} {evals_h / runs:7.0f} {covs} "
        f"{widths} {np.median(used['adapt t']):5.0f} {np.median(used['adapt hall']):5.0f} "
        f"/{8 * orders}"
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--runs", type=int, default=200)
    args = ap.parse_args()
    print(
        f"# {args.runs} seeded runs per game, {CONF:.0%} intervals; coverage = share of "
        "per-player intervals holding the exact value; width = mean half-width / Hoeffding's"
    )
    print(
        f"{'':>22} {'':>3} {'':>6} {'evals':>15} {'coverage':>48} {'width':>20} "
        "adaptive orders (median)"
    )
    print(
        f"{'game':>22} {'k':>3} {'orders':>6} {'anti':>7} {'hoeff':>7} {'hoeff':>6} {'t':>6} "
        f"{'hall':>6} {'bern':>6} {'ad t':>6} {'ad hl':>6} {'t':>6} {'hall':>6} {'bern':>6} "
        f"{'t':>5} {'hall':>5}"
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
            measure(f"LPC-EGEE {start}", list(vals), k, args.runs, 40)


if __name__ == "__main__":
    main()
