"""Engine throughput: DIRECTCONTR and FIFO on the whole LPC-EGEE trace and a RICC week.

    python benchmarks/engine.py [--traces ../shared/traces] [--repeat 3]

Prints jobs per second (best of --repeat runs, one core). Target (issue 2): the whole
LPC-EGEE trace (70 machines, 5 organizations) in under 2 s per policy.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from coopsched.online.policies import get_policy
from coopsched.workloads.prepare import trace_to_instance
from coopsched.workloads.swf import read_swf


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
    args = ap.parse_args()
    d = Path(args.traces)
    t0 = time.perf_counter()
    lpc = read_swf(d / "LPC-EGEE-2004-1.2-cln.swf.gz")
    t_lpc = time.perf_counter() - t0
    t0 = time.perf_counter()
    ricc = read_swf(d / "RICC-2010-2.swf.gz")
    t_ricc = time.perf_counter() - t0
    print(f"read LPC-EGEE in {t_lpc:.2f} s, RICC ({ricc.lines:,} lines) in {t_ricc:.2f} s")
    cases = [
        ("LPC-EGEE, whole trace", trace_to_instance(lpc, k=5, seed=0), None),
        ("RICC, first week", trace_to_instance(ricc, k=5, length=7 * 86400, seed=0), 7 * 86400),
    ]
    print(f"{'case':24} {'policy':12} {'jobs':>9} {'machines':>8} {'seconds':>8} {'jobs/s':>10}")
    for label, inst, horizon in cases:
        for policy in ("directcontr", "fifo"):
            sec = bench(inst, horizon, policy, args.repeat)
            print(
                f"{label:24} {policy:12} {inst.n:9,} {inst.total_machines:8,} {sec:8.2f} {inst.n / sec:10,.0f}"
            )


if __name__ == "__main__":
    main()
