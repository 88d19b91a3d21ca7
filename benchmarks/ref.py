"""REF cost against the number of organizations (issue 3).

    python benchmarks/ref.py [--traces ../shared/traces] [--windows 5] [--max-k 12]

LPC-EGEE windows of 5e4 s, 70 machines split uniformly, k = 2..max-k organizations:
seconds per instance (mean and max over the windows, one core, compile time excluded),
with the number of event times and of coalition decisions that needed Shapley values.
Targets: under 1 s for k = 5 and under 60 s for k = 12.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from coopsched.online.policies.ref import ref_schedule
from coopsched.workloads.prepare import random_windows, trace_to_instance
from coopsched.workloads.swf import read_swf


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--max-k", type=int, default=12)
    ap.add_argument(
        "--busiest", action="store_true", help="use the most loaded of 200 random windows"
    )
    args = ap.parse_args()
    tr = read_swf(Path(args.traces) / "LPC-EGEE-2004-1.2-cln.swf.gz")
    L = 50_000
    if args.busiest:
        cand = random_windows(tr, L, 200, seed=7)
        work = [int(trace_to_instance(tr, k=1, start=s, length=L).size.sum()) for s in cand]
        starts = [cand[i] for i in np.argsort(work)[::-1][: args.windows]]
    else:
        starts = random_windows(tr, L, args.windows, seed=7)
    ref_schedule(trace_to_instance(tr, k=2, start=starts[0], length=L), L)  # compile
    print(
        f"{'k':>3} {'coalitions':>10} {'jobs':>7} {'mean s':>8} {'max s':>8} {'events':>8} {'decisions':>10}"
    )
    for k in range(2, args.max_k + 1):
        secs, jobs, ev, dec = [], [], [], []
        for st in starts:
            inst = trace_to_instance(tr, k=k, start=st, length=L, seed=1)
            t0 = time.perf_counter()
            s, _ = ref_schedule(inst, L)
            secs.append(time.perf_counter() - t0)
            jobs.append(inst.n)
            ev.append(s.info["event_times"])
            dec.append(s.info["decisions"])
        print(
            f"{k:3d} {2**k - 1:10,} {int(np.mean(jobs)):7,} {np.mean(secs):8.3f} {max(secs):8.3f} "
            f"{int(np.mean(ev)):8,} {int(np.mean(dec)):10,}"
        )


if __name__ == "__main__":
    main()
