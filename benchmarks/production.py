"""Throughput of the production fair-share policies next to FAIRSHARE (the same engine).

    python benchmarks/production.py [--traces ../shared/traces] [--repeat 3] [--small]

Prints jobs per second (best of --repeat runs, one core) on the whole LPC-EGEE trace and
a RICC week (``--small``: one day of each, to check that the script runs). The
production policies do O(k) work per event to keep decayed usage exact, so they should
stay within a small factor of FAIRSHARE.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from coopsched.online.policies import get_policy
from coopsched.workloads.prepare import trace_to_instance
from coopsched.workloads.swf import read_swf

POLICIES = ("fairshare", "slurmclassic", "slurmfairtree", "maui", "htcondor")


def bench(inst, horizon, policy, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        get_policy(policy).run(inst, horizon)
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--small", action="store_true", help="one day of each trace")
    args = ap.parse_args()
    d = Path(args.traces)
    lpc = read_swf(d / "LPC-EGEE-2004-1.2-cln.swf.gz")
    ricc = read_swf(d / "RICC-2010-2.swf.gz")
    day = 86400
    cases = [
        (
            "LPC-EGEE, " + ("one day" if args.small else "whole trace"),
            trace_to_instance(lpc, k=5, seed=0, length=day if args.small else None),
            day if args.small else None,
        ),
        (
            "RICC, first " + ("day" if args.small else "week"),
            trace_to_instance(ricc, k=5, length=day if args.small else 7 * day, seed=0),
            day if args.small else 7 * day,
        ),
    ]
    print(f"{'case':24} {'policy':14} {'jobs':>9} {'machines':>8} {'seconds':>8} {'jobs/s':>10}")
    for label, inst, horizon in cases:
        for policy in POLICIES:
            sec = bench(inst, horizon, policy, args.repeat)
            print(
                f"{label:24} {policy:14} {inst.n:9,} {inst.total_machines:8,} {sec:8.2f} "
                f"{inst.n / sec:10,.0f}"
            )


if __name__ == "__main__":
    main()
