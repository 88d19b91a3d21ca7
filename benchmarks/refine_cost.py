"""The refinement's optimum allocation (issue 29, item 3): what a coalition's valuation
costs, and what allocating draws across runs of positions gains.

    PYTHONPATH=src python benchmarks/refine_cost.py [--traces ../shared/traces]

The months of ``benchmarks/audit_sampled.py`` by user (HPC2N days 660-690 with 70 users,
KTH-SP2 days 180-210 with 84, RICC days 30-60 at N = 50), coalitions valued as the sampled
audit values them (FAIRSHARE, rigid jobs, the platform's backfilling, 25 curve times).

1. **Cost.** ``--coalitions`` random coalitions per month (size uniform, members uniform),
   each valued once after two warm-up valuations (the first call compiles); printed: the
   least-squares line of seconds against the coalition's jobs, its correlation, and its
   fixed part in jobs and in mean organizations' jobs: the model of
   :func:`coopsched.audit.sampling.coalition_cost` (jobs plus two organizations' worth).
2. **Gain.** For the organizations the sampled audit left open (``--user`` per month),
   ``--rounds`` rounds of the refinement as it draws them before its allocation (one draw per
   run), valued at the horizon; printed per run: the weighted spread ``(n_b / k) sd_b`` of
   the marginal contributions and the mean measured cost of a draw; then the variance of one
   round (one draw per run) divided by the variance of the optimum allocation at the same
   measured cost (Cochran's formula, ``(sum_b w_b sd_b sqrt(c_b))**2 / sum_b c_b``): how
   many times more rounds of one draw per run the same precision would take.

A few minutes in all; the times in part 1 are single measurements, run on an otherwise idle
machine.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

MONTHS = {
    "hpc2n": ("HPC2N-2002-2.2-cln.swf.gz", 660, 71, ("u5", "u160")),
    "kth": ("KTH-SP2-1996-2.1-cln.swf.gz", 180, 85, ("u97",)),
    "ricc": ("RICC-2010-2.swf.gz", 30, 50, ()),
}


def month(name: str, args: argparse.Namespace) -> None:
    """Parts 1 and 2 (module doc) on one month."""
    from audit_sampled import grid, window

    from coopsched.audit.estimation import position_bins
    from coopsched.audit.sampling import coalition_values
    from coopsched.workloads.swf import read_swf_recorded

    file, day, n, users = MONTHS[name]
    log = read_swf_recorded(Path(args.traces) / file)
    with tempfile.TemporaryDirectory() as tmp:
        inst, T, rule = window(log, day * 86400, (day + 30) * 86400, n, Path(tmp))
    k, G = inst.k, (1 << inst.k) - 1
    times = grid(T)
    jobs = np.bincount(inst.org, minlength=k)
    seconds: dict[int, float] = {}
    values: dict[int, float] = {}

    def value(mask: int) -> float:
        if mask not in values:
            t = time.perf_counter()
            got = coalition_values(inst, T, times, mask, "fairshare", 0, rule)
            seconds[mask] = time.perf_counter() - t
            values[mask] = float(got[-1])
        return values[mask]

    value(G ^ 1), value(3)  # warm-up: compiles
    rng = np.random.default_rng(0)
    x, y = [], []
    for _ in range(args.coalitions):
        members = rng.choice(k, int(rng.integers(1, k)), replace=False)
        mask = sum(1 << int(w) for w in members)
        if mask in seconds:
            continue
        value(mask)
        x.append(float(jobs[members].sum()))
        y.append(seconds[mask])
    X, Y = np.array(x), np.array(y)
    slope, fixed = np.polyfit(X, Y, 1)
    r = float(np.corrcoef(X, Y)[0, 1])
    print(
        f"{name}: k={k}, jobs={len(inst.org):,} ({len(inst.org) / k:.0f} per organization); "
        f"{len(X)} coalitions: seconds = {fixed * 1e3:.2f} ms + {slope * 1e6:.2f} us per job "
        f"(correlation {r:.2f}); fixed part {fixed / slope:.0f} jobs = "
        f"{fixed / slope / (len(inst.org) / k):.1f} organizations' mean",
        flush=True,
    )
    runs = position_bins(k, 8)
    w = np.array([(hi - lo + 1) / k for lo, hi in runs])
    for user in users:
        u = inst.names.index(user)
        others = np.array([o for o in range(k) if o != u])
        D = np.zeros((args.rounds, len(runs)))
        C = np.zeros((args.rounds, len(runs)))
        for i in range(args.rounds):
            for b, (lo, hi) in enumerate(runs):
                S = 0
                for o in rng.choice(others, int(rng.integers(lo, hi + 1)), replace=False):
                    S |= 1 << int(o)
                D[i, b] = value(S | 1 << u) - value(S)
                C[i, b] = seconds.get(S, 0.0) + seconds.get(S | 1 << u, 0.0)
        sd, c = D.std(axis=0, ddof=1), C.mean(axis=0)
        one = float((w**2 * sd**2).sum())
        best = float((w * sd * np.sqrt(c)).sum() ** 2 / c.sum())
        print(
            f"  {user} ({int(jobs[u])} jobs), {args.rounds} rounds: weighted spread per run "
            + " ".join(f"{s:.2e}" for s in w * sd)
            + "; ms per draw "
            + " ".join(f"{1e3 * s:.1f}" for s in c)
            + f"; one draw per run needs {one / best:.2f} times the rounds of the optimum "
            f"allocation at equal cost ({one / ((w * sd).sum() ** 2 / len(runs)):.2f} at "
            "equal draws)",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--coalitions", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=300)
    ap.add_argument("--only", action="append", choices=sorted(MONTHS))
    args = ap.parse_args()

    for name in args.only or list(MONTHS):
        month(name, args)


if __name__ == "__main__":
    main()
