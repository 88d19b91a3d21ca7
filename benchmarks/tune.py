"""How long `coopsched tune` takes on a month of a project trace (issue 44, item 3).

    PYTHONPATH=src python benchmarks/tune.py [--traces ../shared/traces] [--out FILE]

A month (60 windows of 12 hours) of HPC2N and of CTC-SP2 on 64 processors, 4 accounts
(Zipf split, widths scaled), searched as `coopsched tune LOG --windows 60` searches it (a
third of the windows held out), checked on the next window. Printed per month: the jobs, the
time to compute the 60 REF schedules (after one warm-up window), the settings evaluated,
the whole search's wall time (REF included), and the result. Single runs; the `uptime` load is printed beside them (the machine is
shared: rerun on an idle machine for figures to quote).
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path

MONTHS = {  # log, first window (s after the first submit)
    "HPC2N": ("HPC2N-2002-2.2-cln.swf.gz", 9331200),
    "CTC-SP2": ("CTC-SP2-1996-3.1-cln.swf.gz", 7776000),
}
LENGTH, WINDOWS, MACHINES = 43200, 60, 64


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default=None)
    ap.add_argument("--out", default=None)
    a = ap.parse_args()
    from coopsched.slurm.source import replay_source
    from coopsched.slurm.tune import _Windows, tune
    from coopsched.workloads.archive import trace_path

    lines = [f"load (uptime 1/5/15 min) at start: {os.getloadavg()}"]
    for name, (log, first) in MONTHS.items():
        path = trace_path(log, folder=a.traces) if a.traces else trace_path(log)
        insts = [
            replay_source(path, start=first + i * LENGTH, length=LENGTH, machines=MACHINES)[0]
            for i in range(WINDOWS + 1)
        ]
        train = [(w, LENGTH) for w in insts[:WINDOWS] if w.n]
        _Windows(train[:1])  # compiles the kernels once (not counted)
        t = time.perf_counter()
        _Windows(train)
        ref_s = time.perf_counter() - t
        r = tune(train, [(insts[-1], LENGTH)])  # its own REF schedules included
        jobs = sum(w.n for w, _ in train)
        lines += [
            f"{name}: {WINDOWS} windows of {LENGTH} s ({len(train)} with jobs), {jobs} jobs, "
            f"{MACHINES} processors",
            f"  REF of the windows: {ref_s:.1f} s; search: {r.evaluations} settings, "
            f"{r.seconds:.1f} s in all",
            f"  trail: {'; '.join(r.trail)}",
            f"  training mean unfairness {r.train[0].unfairness:.1f} -> {r.train[1].unfairness:.1f}",
            f"  next window {r.check[0].unfairness:.1f} -> {r.check[1].unfairness:.1f}"
            f" (searched: {r.check[2].unfairness:.1f})"
            if r.check
            else "",
            f"  load after: {os.getloadavg()}",
        ]
        print("\n".join(lines[-6:]), flush=True)
    if a.out:
        Path(a.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
