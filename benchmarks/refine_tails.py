"""Heavy tails in the sampled audit's refinement (issue 29, item 3): how often a refined sign
is called wrongly, by first look and interval.

    PYTHONPATH=src python benchmarks/refine_tails.py [--traces ../shared/traces]

The case: HPC2N, days 660-690, all 70 users (as ``benchmarks/audit_sampled.py``), user
``u5`` (3 jobs): adding it to a coalition mostly changes little but sometimes reshapes the
schedule of rigid jobs, so its marginal contributions are heavily skewed. The script draws
``--rounds`` rounds of the refinement for it (as
:func:`coopsched.audit.estimation.shapley_stratified` draws them: the first and last
positions exact, the middle sizes in 8 runs, one size and one coalition per run and round),
prints their mean, spread, skewness and kurtosis, then treats those rounds as the
population and replays the refinement's decision on ``--replays`` bootstrap resamples: the
looks of :func:`~coopsched.audit.estimation.refine_schedule` from a first look of 8 to 64
rounds up to 2,560, each at ``1 - 0.025 / looks`` (half of a 95 % audit's error
probability), with Student's t and with Hall's interval. Printed per setting: the share of
replays that decided the sign that the population's mean contradicts (its
surplus ``psi - phi`` on the other side), the share that decided the right one, and the looks
the wrong calls came at. Not a timing (valuing the rounds takes about a minute).
"""

from __future__ import annotations

import argparse
import tempfile
from collections import Counter
from pathlib import Path

import numpy as np


def rounds_of(v, k: int, u: int, n: int, seed: int) -> np.ndarray:
    """``n`` refinement rounds of player ``u`` in the game ``v`` (the values ``Z``)."""
    from coopsched.audit.estimation import position_bins

    G = (1 << k) - 1
    runs = position_bins(k, 8)
    exact = (v(1 << u) + v(G) - v(G ^ (1 << u))) / k
    others = np.array([w for w in range(k) if w != u])
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        z = exact
        for lo, hi in runs:
            s = int(rng.integers(lo, hi + 1))
            S = 0
            for w in rng.choice(others, size=s, replace=False):
                S |= 1 << int(w)
            z += (hi - lo + 1) / k * (v(S | 1 << u) - v(S))
        out.append(z)
    return np.array(out)


def replay(Z: np.ndarray, psi: float, first: int, interval: str, replays: int, seed: int):
    """Wrong calls, right calls and the looks of the wrong ones over bootstrap replays."""
    from coopsched.audit.estimation import pair_halfwidth, refine_schedule

    plan = refine_schedule(2560, first)
    level = 1 - 0.025 / len(plan)
    truth = psi > Z.mean()
    rng = np.random.default_rng(seed)
    wrong, right, at = 0, 0, Counter()
    for _ in range(replays):
        y = rng.choice(Z, size=plan[-1])
        for n in plan:
            m = y[:n].mean()
            h = float(pair_halfwidth(y[:n, None], level, interval)[0])
            if psi > m + h or psi < m - h:
                if (psi > m) == truth:
                    right += 1
                else:
                    wrong += 1
                    at[n] += 1
                break
    return wrong / replays, right / replays, sorted(at.items())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--user", default="u5")
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--replays", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=11)
    args = ap.parse_args()

    from audit_sampled import window

    from coopsched.audit.game import recorded_starts
    from coopsched.audit.sampling import coalition_values
    from coopsched.online.utilities import psi_sp
    from coopsched.workloads.swf import read_swf_recorded

    log = read_swf_recorded(Path(args.traces) / "HPC2N-2002-2.2-cln.swf.gz")
    with tempfile.TemporaryDirectory() as tmp:
        inst, T, rule = window(log, 660 * 86400, 690 * 86400, 71, Path(tmp))
    k, G = inst.k, (1 << inst.k) - 1
    psi = psi_sp(inst.org, recorded_starts(inst), inst.size, T, k, inst.processors)
    cache: dict[int, float] = {0: 0.0, G: float(sum(psi))}

    def v(mask: int) -> float:
        x = cache.get(mask)
        if x is None:
            x = cache[mask] = float(coalition_values(inst, T, [T], mask, "fairshare", 0, rule)[0])
        return x

    u = inst.names.index(args.user)
    Z = rounds_of(v, k, u, args.rounds, args.seed)
    c = Z - Z.mean()
    skew = float((c**3).mean() / (c**2).mean() ** 1.5)
    kurt = float((c**4).mean() / (c**2).mean() ** 2)
    jobs = int((inst.org == u).sum())
    print(
        f"HPC2N days 660-690, k={k}, {args.user} ({jobs} jobs), psi {psi[u]:.4e}: "
        f"{args.rounds} rounds, mean {Z.mean():.4e}, sd {Z.std(ddof=1):.4e}, "
        f"skewness {skew:.2f}, kurtosis {kurt:.1f}; the rounds' mean puts the surplus "
        f"{'above' if psi[u] > Z.mean() else 'below'} 0",
        flush=True,
    )
    for interval in ("t", "hall"):
        for first in (8, 16, 32, 64):
            wrong, right, at = replay(Z, float(psi[u]), first, interval, args.replays, 0)
            print(
                f"  {interval:>4}, first look at {first:2} rounds: wrong sign {wrong:.4f}, "
                f"right sign {right:.4f} of {args.replays} replays; wrong calls at "
                + (", ".join(f"{n} rounds: {c}" for n, c in at) or "none"),
                flush=True,
            )


if __name__ == "__main__":
    main()
