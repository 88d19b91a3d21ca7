"""Rigid jobs with backfilling: the compiled engine on whole logs, and how its cost grows.

    python benchmarks/rigid.py [--traces ../shared/traces] [--repeat 3] [--backfill RULE]
        [--logs SDSC-SP2,CEA-Curie] [--out FILE]

For SDSC-SP2 (128 processors) and CEA-Curie (93,312 processors, 295,540 runnable jobs) as
rigid jobs (one job per log record, its processors at once, its requested time; 5
organizations, users dealt in turn, machines split uniformly, seed 1), prints the CPU
seconds of ``simulate`` (best of ``--repeat``, one core, kernels loaded) under FIFO + EASY and
DIRECTCONTR + EASY, on the first 10 %, 25 %, 50 % and 100 % of each log (the growth), with
utilization, mean wait and mean bounded slowdown of the whole-log runs, and the machine and
its load. Targets (issue 24): whole CEA-Curie under 10 s of CPU. ``--backfill easy-queue``
measures EASY over the whole queue instead (issue 42: long queues).
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from pathlib import Path

import numpy as np

from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy
from coopsched.workloads.prepare import trace_to_instance
from coopsched.workloads.swf import read_swf

LOGS = {
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "CEA-Curie": "CEA-Curie-2011-2.1-cln.swf.gz",
}
POLICIES = ("fifo", "directcontr")
FRACTIONS = (0.1, 0.25, 0.5, 1.0)


def prefix(inst, fraction: float):
    """The first ``fraction`` of the jobs in submission order (same machines)."""
    from coopsched.workloads.instance import Instance

    n = max(1, int(round(inst.n * fraction)))
    keep = np.sort(inst.fifo_order()[:n])
    return Instance(
        inst.organizations,
        inst.org[keep],
        inst.release[keep],
        inst.size[keep],
        inst.processors[keep],
        requested=inst.requested[keep],
    )


def best_cpu(inst, policy: str, repeat: int, rule: str = "easy"):
    best, sched = float("inf"), None
    for _ in range(repeat):
        t0 = time.process_time()
        sched = simulate(inst, get_policy(policy), backfill=rule, engine="compiled")
        best = min(best, time.process_time() - t0)
    assert sched is not None and sched.info["engine"] == "compiled"
    return best, sched


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--out", default=None, help="also write the lines to this file")
    ap.add_argument("--backfill", default="easy", help="the rule (easy, easy-queue)")
    ap.add_argument("--logs", default=",".join(LOGS), help="which logs, by name")
    args = ap.parse_args()
    lines = [
        f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"load average before {os.getloadavg()[0]:.2f}"
    ]
    warm = trace_to_instance(read_swf(Path(args.traces) / LOGS["SDSC-SP2"]), k=5, jobs="rigid")
    for p in POLICIES:  # compile (or load) the kernels before timing
        simulate(prefix(warm, 0.01), get_policy(p), backfill=args.backfill, engine="compiled")
    lines.append("log        policy       jobs     processors   CPU s   jobs/s")
    for name in args.logs.split(","):
        if name not in LOGS:
            raise SystemExit(f"error: --logs: {name!r}; choose from {', '.join(LOGS)}")
        file = LOGS[name]
        inst = trace_to_instance(read_swf(Path(args.traces) / file), k=5, jobs="rigid", seed=1)
        for policy in POLICIES:
            for f in FRACTIONS:
                part = prefix(inst, f)
                cpu, sched = best_cpu(part, policy, args.repeat, args.backfill)
                lines.append(
                    f"{name:10s} {policy:12s} {part.n:8,d} {part.total_machines:8,d}  "
                    f"{cpu:8.3f} {part.n / cpu:10,.0f}"
                )
            w = sched.waits()
            ran = w >= 0
            lines.append(
                f"  whole log: utilization {sched.utilization():.3f}, mean wait "
                f"{w[ran].mean():,.0f} s, mean bounded slowdown "
                f"{np.nanmean(sched.bounded_slowdown()):.2f}, filled requested times "
                f"{inst.meta['requested_filled']['jobs']}"
            )
    lines.append(f"load average after {os.getloadavg()[0]:.2f}")
    text = "\n".join(lines)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
