"""A sampled audit's cost per coalition, before and after a change, in paired runs.

    PYTHONPATH=src python benchmarks/valuation_paired.py [--before REV]

The sampled audit spends nearly all its time valuing coalitions (one simulation of the
coalition alone under FAIRSHARE with the platform's backfilling rule, then its total
``psi_sp`` at the 25 curve times). This script builds the months of
``benchmarks/audit_sampled.py`` (HPC2N days 660-690 with its 70 users, KTH-SP2 days 180-210
with its 84 users, and the RICC month at N = 50), draws ``--coalitions`` random proper
coalitions of each (uniform size, then uniform members; seed 0), and times valuing all of
them through the audit's own valuation in two versions of the package: ``--before``, a git
revision of this repository whose ``src`` is extracted to a temporary folder (default
109e707, the last commit before the rigid engine's pick was inlined and the sampled audit's
valuer ran it directly), and this checkout's ``src``. Each measurement is a fresh process (numba kernels loaded from the cache and one
coalition valued before timing), in CPU seconds; the two checkouts alternate, ``--rounds``
times each, so a change of the machine's pace hits both alike. Printed per month: the
median ms per coalition of each checkout, their ratio, and whether both gave the same
values (a checksum of every coalition's values).
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent

#: the child process: values the coalitions with the checkout on its PYTHONPATH
CHILD = """
import json, pickle, sys, time
import numpy as np
from coopsched.audit import sampling
inst, T, rule, grid, masks = pickle.load(open(sys.argv[1], "rb"))
if hasattr(sampling, "CoalitionValuer"):
    value = sampling.CoalitionValuer(inst, T, grid, "fairshare", 0, rule)
else:
    def value(m):
        return sampling.coalition_values(inst, T, grid, m, "fairshare", 0, rule)
value(masks[0])
c = time.process_time()
vals = [value(m) for m in masks]
spent = time.process_time() - c
check = sum(sum(int(x) for x in v) * (i + 1) for i, v in enumerate(vals)) % (2**61 - 1)
print(json.dumps({"ms": 1000 * spent / len(masks), "check": check}))
"""


def cases(traces: Path, tmp: Path):
    """``(name, instance, horizon, rule)`` of the three months."""
    sys.path.insert(0, str(HERE))
    from audit_sampled import CASES, window

    from coopsched.workloads.swf import read_swf_recorded

    for name, k in (("hpc2n", 71), ("kth", 85), ("ricc", 50)):
        log_name, day, _ = CASES[name]
        log = read_swf_recorded(traces / log_name)
        inst, T, rule = window(log, day * 86400, (day + 30) * 86400, k, tmp)
        yield name, inst, T, rule


def measure(src: Path, data: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(src)}
    out = subprocess.run(
        [sys.executable, "-c", CHILD, str(data)], env=env, capture_output=True, text=True
    )
    if out.returncode != 0:
        raise SystemExit(f"{src}: {out.stderr.strip().splitlines()[-1]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    sys.path.insert(0, str(HERE))
    from audit_sampled import grid

    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--before", default="109e707", help="the earlier git revision")
    ap.add_argument("--coalitions", type=int, default=100)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    from paired import package_of

    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        before, after = package_of(args.before, tmp), HERE.parent / "src"
        print(f"before: revision {args.before}; after: this checkout ({after})")
        print(f"{args.coalitions} random coalitions per month, {args.rounds} paired rounds, CPU ms")
        for name, inst, T, rule in cases(Path(args.traces), tmp):
            rng = np.random.default_rng(0)
            masks = []
            for _ in range(args.coalitions):
                size = int(rng.integers(1, inst.k))
                masks.append(sum(1 << int(u) for u in rng.choice(inst.k, size, replace=False)))
            data = tmp / f"{name}.pkl"
            data.write_bytes(pickle.dumps((inst, T, rule, grid(T), masks)))
            got: dict[str, list[dict]] = {"before": [], "after": []}
            for _ in range(args.rounds):
                got["before"].append(measure(before, data))
                got["after"].append(measure(after, data))
            b = statistics.median(r["ms"] for r in got["before"])
            a = statistics.median(r["ms"] for r in got["after"])
            same = len({r["check"] for rs in got.values() for r in rs}) == 1
            runs = " ".join(f"{r['ms']:.2f}" for r in got["before"])
            runs_a = " ".join(f"{r['ms']:.2f}" for r in got["after"])
            print(
                f"{name} k={inst.k} jobs={inst.n:,}: before {b:.2f} ms ({runs}), after "
                f"{a:.2f} ms ({runs_a}) per coalition: x{b / a:.2f}; "
                f"{'same values' if same else 'VALUES DIFFER'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
