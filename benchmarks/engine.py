"""Engine throughput: the compiled and the Python engine on the whole LPC-EGEE trace and a RICC week.

    python benchmarks/engine.py [--traces ../shared/traces] [--repeat 3] [--python]

Prints CPU seconds of ``simulate`` (best of --repeat runs, one core, kernels already
loaded) and jobs per second, for FIFO, DIRECTCONTR, the other built-in baselines and
RAND (N = 15, its preparation included). Targets (issue 12): the whole LPC-EGEE trace
(70 machines, 5 organizations) and a RICC week under 50 ms for FIFO and DIRECTCONTR;
RAND at least 10 times faster than the Python engine (17,700 jobs/s before).
``--python`` also times the Python engine (slow: seconds per run) and checks that
both engines give the same schedule.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy
from coopsched.workloads.prepare import trace_to_instance
from coopsched.workloads.swf import read_swf

POLICIES = ("fifo", "directcontr", "roundrobin", "fairshare", "utfairshare", "currfairshare")


def run(inst, horizon, policy, compiled):
    pol = get_policy(policy)
    if policy == "rand":  # RAND schedules its sampled coalitions first
        pol.prepare(inst, horizon)
    return simulate(inst, pol, horizon, compiled=compiled)


def bench(inst, horizon, policy, compiled, repeat):
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        sched = run(inst, horizon, policy, compiled)
        best = min(best, time.process_time() - t0)
    return best, sched


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--python", action="store_true", help="also time the Python engine")
    args = ap.parse_args()
    d = Path(args.traces)
    lpc = read_swf(d / "LPC-EGEE-2004-1.2-cln.swf.gz")
    ricc = read_swf(d / "RICC-2010-2.swf.gz")
    cases = [
        ("LPC-EGEE, whole trace", trace_to_instance(lpc, k=5, seed=0), None),
        ("RICC, first week", trace_to_instance(ricc, k=5, length=7 * 86400, seed=0), 7 * 86400),
    ]
    run(cases[0][1], 1000, "fifo", True)  # load numba's cached kernels once
    run(cases[0][1], 1000, "rand", True)
    print(
        f"{'case':22} {'policy':13} {'jobs':>8} {'machines':>8} {'engine':>9} "
        f"{'CPU ms':>9} {'jobs/s':>12}"
    )
    for label, inst, horizon in cases:
        for policy in (*POLICIES, "rand"):
            sec, fast = bench(inst, horizon, policy, True, args.repeat)
            assert fast.info["engine"] == "compiled", fast.info
            rows = [("compiled", sec)]
            if args.python:
                psec, slow = bench(inst, horizon, policy, False, 1)
                same = (fast.start == slow.start).all() and (fast.machine == slow.machine).all()
                rows.append(("python", psec))
                if not same:
                    print(f"  !! {label} {policy}: the engines disagree")
            for engine, s in rows:
                print(
                    f"{label:22} {policy:13} {inst.n:8,} {inst.total_machines:8,} {engine:>9} "
                    f"{s * 1e3:9.1f} {inst.n / s:12,.0f}"
                )


if __name__ == "__main__":
    main()
