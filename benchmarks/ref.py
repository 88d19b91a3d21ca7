"""REF's cost against the number of organizations, and on long windows (issue 12).

    python benchmarks/ref.py [--traces ../shared/traces] [--ks 5,8,10,12,16,18,20]
                             [--windows 5] [--busiest 2] [--skip-long]

* LPC-EGEE windows of 5e4 s (70 machines split uniformly; ``--windows`` random ones,
  seed 7, plus the ``--busiest`` windows with the most jobs among 200 random ones):
  per k, CPU seconds per instance (mean and worst), the peak resident memory of the
  process that ran them, event times, decisions, how many event times used the direct
  Shapley sums or the potential, and the cost growth per added organization
  ``(mean_k / mean_prev) ^ (1 / (k - prev))`` (2x is the floor when every coalition is
  simulated, since the coalitions double; ``simulated`` is the mean number of coalitions
  the kernel simulated: interchangeable idle organizations are simulated once, which can
  bring the growth below 2x);
* the whole LPC-EGEE log at k = 5 (no horizon) and a 30-day RICC window at k = 8.

Every measurement runs in its own process (one core; peak memory per row; compile time
excluded: a tiny instance runs first), timed with ``time.process_time``. Targets
(issue 12): whole LPC-EGEE at k = 5 under 5 s; 30-day RICC at k = 8 under 60 s;
windows at k = 10 under 2 s, k = 16 under 60 s, k = 20 under 10 minutes and 4 GB.
"""

from __future__ import annotations

import argparse
import multiprocessing as mp
import resource
import time
from pathlib import Path

import numpy as np

from coopsched.online.ref import ref_schedule
from coopsched.workloads.instance import make_instance
from coopsched.workloads.prepare import random_windows, trace_to_instance
from coopsched.workloads.swf import read_swf

WINDOW = 50_000
RICC_WINDOW = 30 * 86_400


def _measure(instances, horizons) -> dict:
    """Run REF on each instance (in this process); CPU seconds and statistics."""
    ref_schedule(make_instance([1, 1], [(0, 0, 2), (1, 0, 1), (0, 1, 1)]), 5)  # compile/load
    secs, info = [], []
    for inst, T in zip(instances, horizons, strict=True):
        t0 = time.process_time()
        s, _ = ref_schedule(inst, T)
        secs.append(time.process_time() - t0)
        info.append(s.info)
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"secs": secs, "info": info, "peak_mb": peak_mb}


def measure(instances, horizons) -> dict:
    """:func:`_measure` in a fresh process, so that the peak memory is this row's."""
    ctx = mp.get_context("spawn")
    with ctx.Pool(1) as pool:
        return pool.apply(_measure, (instances, horizons))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--ks", default="5,8,10,12,16,18,20", help="comma-separated k values")
    ap.add_argument("--windows", type=int, default=5, help="random LPC-EGEE windows")
    ap.add_argument("--busiest", type=int, default=2, help="windows with the most jobs")
    ap.add_argument("--skip-long", action="store_true", help="skip whole LPC-EGEE and RICC")
    args = ap.parse_args()
    ks = [int(x) for x in args.ks.split(",") if x]
    tr = read_swf(Path(args.traces) / "LPC-EGEE-2004-1.2-cln.swf.gz")
    starts = random_windows(tr, WINDOW, args.windows, seed=7) if args.windows else []
    if args.busiest:
        cand = random_windows(tr, WINDOW, 200, seed=7)
        jobs = [trace_to_instance(tr, k=1, start=s, length=WINDOW).n for s in cand]
        starts += [cand[i] for i in np.argsort(jobs)[::-1][: args.busiest]]
    print(
        f"LPC-EGEE, {len(starts)} windows of {WINDOW} s ({args.windows} random, "
        f"{args.busiest} busiest); CPU seconds per instance, one process per row",
        flush=True,
    )
    print(
        f"{'k':>3} {'coalitions':>10} {'simulated':>10} {'jobs':>6} {'mean s':>9} {'worst s':>9} "
        f"{'peak MB':>8} {'events':>7} {'decisions':>10} {'direct':>7} {'potential':>9} "
        f"{'x/org':>6}",
        flush=True,
    )
    prev = None
    for k in ks:
        insts = [trace_to_instance(tr, k=k, start=s, length=WINDOW, seed=1) for s in starts]
        r = measure(insts, [WINDOW] * len(insts))
        mean, worst = float(np.mean(r["secs"])), max(r["secs"])
        growth = ""
        if prev is not None and prev[1] > 0:
            growth = f"{(mean / prev[1]) ** (1 / (k - prev[0])):6.2f}"
        prev = (k, mean)
        info = r["info"]
        print(
            f"{k:3d} {2**k - 1:10,} {int(np.mean([x['simulated_coalitions'] for x in info])):10,} "
            f"{int(np.mean([i.n for i in insts])):6,} {mean:9.3f} "
            f"{worst:9.3f} {r['peak_mb']:8.0f} "
            f"{int(np.mean([x['event_times'] for x in info])):7,} "
            f"{int(np.mean([x['decisions'] for x in info])):10,} "
            f"{int(np.mean([x['direct_events'] for x in info])):7,} "
            f"{int(np.mean([x['potential_events'] for x in info])):9,} {growth:>6}",
            flush=True,
        )
    if args.skip_long:
        return
    print("\nlong runs (CPU seconds, one process each)", flush=True)
    whole = trace_to_instance(tr, k=5, seed=1)
    r = measure([whole], [None])
    print(
        f"whole LPC-EGEE, k=5, {whole.n:,} jobs, no horizon: {r['secs'][0]:.2f} s, "
        f"peak {r['peak_mb']:.0f} MB, python integers: {r['info'][0]['python_integers']}",
        flush=True,
    )
    ricc = read_swf(Path(args.traces) / "RICC-2010-2.swf.gz")
    st = random_windows(ricc, RICC_WINDOW, 1, seed=7)[0]
    inst = trace_to_instance(ricc, k=8, start=st, length=RICC_WINDOW, seed=1)
    r = measure([inst], [RICC_WINDOW])
    print(
        f"RICC 30-day window at +{st} s, k=8, {inst.n:,} jobs, {inst.total_machines} machines: "
        f"{r['secs'][0]:.2f} s, peak {r['peak_mb']:.0f} MB, "
        f"python integers: {r['info'][0]['python_integers']}",
        flush=True,
    )


if __name__ == "__main__":
    main()
