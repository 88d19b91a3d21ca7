"""Exact REF for rigid jobs under EASY, and RAND, on windows of parallel logs (issue 25).

    python benchmarks/ref_rigid.py [--traces ../shared/traces] [--ks 8,12,16] [--windows 3]
                                   [--rand-k 50] [--backfill easy] [--out FILE]

For SDSC-SP2, CTC-SP2, KTH-SP2 and CEA-Curie as rigid jobs (each job its processors at
once, its requested time; users dealt to ``k`` organizations in turn, machines split
uniformly, seed 1), ``--windows`` windows of 5e4 s per log starting at random jobs (seed 7): per log and
``k``, the CPU seconds of ``ref_rigid_schedule`` under ``--backfill`` (default ``easy``; the
rule must read requested times or not as the logs allow) (mean and worst),
the peak resident memory of the process that ran the row, the mean number of jobs, of
coalitions simulated (interchangeable idle organizations run once) and of coalitions
that fell back to the Python engine (``-`` for the lockstep kernel, which has none). Then
RAND (N = 15 sampled orders, EASY) on the same windows at ``--rand-k`` organizations.
Each row runs in a fresh process (one core; compile time excluded: a tiny instance runs
first), timed with ``time.process_time``.

Exact rigid REF (``engine="auto"``) simulates the ``2^k - 1`` coalitions in lockstep
(``coopsched.online.ref.rigid_kernel``): at each event time it ranks members from the
float Hart and Mas-Colell potential of every coalition (``k 2^k`` operations, proven or
else Eq. (1) on exact values), so its cost grows like ``2^k`` times the events, up to
``MAX_K_RIGID`` = 16 organizations (issue 25's target: k = 16 under 60 s a window).
``--engine compiled`` measures the former coalition-by-coalition path instead (about
``3^k``, up to 12 organizations).
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import os
import platform
import resource
import time
from pathlib import Path

import numpy as np

LOGS = {
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz",
    "CEA-Curie": "CEA-Curie-2011-2.1-cln.swf.gz",
}
WINDOW = 50_000


def _instances(path: str, k: int, windows: int):
    from coopsched.workloads.prepare import random_windows, trace_to_instance
    from coopsched.workloads.swf import read_swf

    tr = read_swf(path)
    starts = random_windows(tr, WINDOW, windows, seed=7, by="job")
    return [
        trace_to_instance(tr, k=k, start=s, length=WINDOW, jobs="rigid", seed=1) for s in starts
    ]


def _row(
    path: str, k: int, windows: int, what: str, engine: str = "auto", rule: str = "easy"
) -> dict:
    """One row, in this (fresh) process: CPU seconds per window and statistics."""
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy
    from coopsched.online.ref.rigid import ref_rigid_schedule
    from coopsched.workloads.instance import Instance, make_instance

    base = make_instance([1, 1], [(0, 0, 2), (1, 0, 1), (0, 1, 1)])
    tiny = Instance(
        base.organizations, base.org, base.release, base.size, [2, 1, 1], requested=[2, 1, 1]
    )
    ref_rigid_schedule(tiny, 5, "easy", coalition_runs=True)  # compile or load the kernels
    simulate(tiny, get_policy("rand", n_samples=3), 5, backfill="easy")
    for name in ("fifo", "rand"):  # the compiled rigid engine, which large RAND runs use
        simulate(tiny, get_policy(name), 5, backfill="easy", engine="compiled")
    insts = _instances(path, k, windows)
    secs, sim, py, jobs = [], [], [], []
    for inst in insts:
        t0 = time.process_time()
        if what == "ref":
            s, _ = ref_rigid_schedule(inst, WINDOW, rule, coalition_runs=True, engine=engine)
            sim.append(s.info["simulated_coalitions"])
            if "python" in s.info["coalition_engines"]:
                py.append(s.info["coalition_engines"]["python"])
        else:
            simulate(inst, get_policy("rand", n_samples=15), WINDOW, backfill=rule)
        secs.append(time.process_time() - t0)
        jobs.append(inst.n)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"secs": secs, "sim": sim, "py": py, "jobs": jobs, "peak_mb": peak}


def row(
    path: str, k: int, windows: int, what: str, engine: str = "auto", rule: str = "easy"
) -> dict:
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(_row, (path, k, windows, what, engine, rule))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--ks", default="8,12,16", help="comma-separated k for exact REF")
    ap.add_argument(
        "--engine",
        default="auto",
        choices=["auto", "compiled"],
        help="exact REF in lockstep (auto) or coalition by coalition (compiled, k <= 12)",
    )
    ap.add_argument("--windows", type=int, default=3, help="random windows per log")
    ap.add_argument("--rand-k", type=int, default=50, help="organizations for RAND (0: skip)")
    ap.add_argument(
        "--backfill", default="easy", help="the backfilling rule (easy-queue: the audit's)"
    )
    ap.add_argument("--out", default=None, help="also write the lines to this file")
    args = ap.parse_args()
    ks = [int(x) for x in args.ks.split(",") if x]
    lines = [
        f"# machine: {platform.processor() or platform.machine()}, {os.cpu_count()} cores; "
        f"load average before {os.getloadavg()[0]:.2f}",
        f"# {args.windows} windows of {WINDOW} s per log starting at random jobs (seed 7), rigid jobs, {args.backfill}; "
        f"CPU seconds per window, one process per row; exact REF engine {args.engine}",
        "log        what   k    jobs   mean s   worst s  peak MB  simulated  python",
    ]
    print("\n".join(lines), flush=True)
    for name, file in LOGS.items():
        path = str(Path(args.traces) / file)
        todo = [("ref", k) for k in ks] + ([("rand", args.rand_k)] if args.rand_k else [])
        for what, k in todo:
            r = row(path, k, args.windows, what, args.engine, args.backfill)
            sim = f"{np.mean(r['sim']):9,.0f}" if r["sim"] else f"{'-':>9s}"
            py = f"{sum(r['py']):6d}" if r["py"] else f"{'-':>6s}"
            line = (
                f"{name:10s} {what:5s} {k:3d} {np.mean(r['jobs']):7,.0f} "
                f"{np.mean(r['secs']):8.3f} {max(r['secs']):9.3f} {r['peak_mb']:8.0f} {sim} {py}"
            )
            lines.append(line)
            print(line, flush=True)
    lines.append(f"# load average after {os.getloadavg()[0]:.2f}")
    print(lines[-1])
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
