"""Budgets of the sampled audit at thousands of organizations (issues 41 item 3, 43 item 2).

    PYTHONPATH=src python benchmarks/audit_budget.py [--quick]

Each case runs ``coopsched audit`` in a fresh process on a recorded JSON schedule of ``k``
organizations with one machine and two jobs each (recorded under FIFO, a four-hour window;
the schedule is written to a temporary folder first), as an operator would, with
``--no-counterfactuals --format json``, and reads its standard error as it comes. Printed
per case: the budget asked; the seconds to the first progress line (wall); the process's
CPU and wall seconds in all (reading, start-up and the report included); the sampling's own
spending as the report states it (``sampling.budget``), or the error; the orders used and
the signs left undecided. A budget holds when the sampling spent at most 1.1 times it.

Cases: 10,000 organizations with 30 CPU seconds (the error that says what the two
antithetic pairs of orders an estimate needs would take, as soon as it is measured) and
with 600 (an estimate); 2,000 organizations with 60 CPU seconds and with 60 wall-clock
seconds (estimates); and 2,000
organizations with the default options (no budget), stopped after its first two progress
lines: how soon an operator hears from it. ``--quick``: the 2,000-organization cases only.
Time only on an idle machine; the load average is printed before and after.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
T = 4 * 3600


def schedule(k: int, path: Path) -> None:
    """The recorded schedule of ``k`` organizations (one machine, two jobs each)."""
    import numpy as np

    import coopsched as cs
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy
    from coopsched.workloads.jsonio import instance_to_dict

    rng = np.random.default_rng(0)
    jobs = [
        (u, int(rng.integers(0, 3600)), int(rng.integers(60, 1800)))
        for u in range(k)
        for _ in range(2)
    ]
    inst = cs.make_instance([1] * k, jobs)
    inst = dataclasses.replace(inst, start=simulate(inst, get_policy("fifo"), T).start)
    path.write_text(json.dumps(instance_to_dict(inst)))


def run(path: Path, options: list[str], lines: int | None) -> dict:
    """One audit in a fresh process: seconds to its first progress line, its CPU and wall
    seconds, its report or error (``lines``: stop it after that many progress lines)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT / "src")}
    cmd = [sys.executable, "-c", "from coopsched.cli import run; run()", "audit", str(path)]
    cmd += ["--horizon", str(T), "--no-counterfactuals", "--format", "json", *options]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.PIPE, text=True, env=env)
        assert proc.stderr is not None
        first, said = None, []
        for line in proc.stderr:
            if first is None and line.startswith("audit: "):
                first = time.perf_counter() - start
            said.append(line.rstrip("\n"))
            if lines is not None and sum(s.startswith("audit: ") for s in said) >= lines:
                proc.terminate()
                break
        proc.wait()
        wall = time.perf_counter() - start
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        out.seek(0)
        text = out.read()
    report = json.loads(text) if proc.returncode == 0 and text.strip() else None
    error = next((s for s in said if s.startswith("error: ")), None)
    return {
        "first": first,
        "cpu": cpu,
        "wall": wall,
        "report": report,
        "error": error,
        "said": said,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="the 2,000-organization cases only")
    args = ap.parse_args()
    cases = [
        (10_000, ["--cpu-seconds", "30"], None),
        (10_000, ["--cpu-seconds", "600"], None),
        (2_000, ["--cpu-seconds", "60"], None),
        (2_000, ["--seconds", "60"], None),
        (2_000, [], 2),
    ]
    if args.quick:
        cases = [c for c in cases if c[0] == 2_000]
    print(f"load average before: {os.getloadavg()}")
    with tempfile.TemporaryDirectory() as tmp:
        for k in sorted({c[0] for c in cases}):
            schedule(k, Path(tmp) / f"k{k}.json")
        for k, options, lines in cases:
            r = run(Path(tmp) / f"k{k}.json", options, lines)
            asked = " ".join(options) or f"default options, stopped after {lines} progress lines"
            print(f"\nk = {k:,}, {asked}")
            first = "none" if r["first"] is None else f"{r['first']:.1f} s"
            print(f"  first progress line after {first} (wall)")
            print(f"  process: {r['cpu']:.1f} CPU s, {r['wall']:.1f} s wall")
            if r["report"] is not None:
                s = r["report"]["sampling"]
                b = s["budget"]
                limit = b["cpu_seconds"] if b["clock"] == "cpu" else b["wall_seconds"]
                spent = b["cpu_seconds_spent"] if b["clock"] == "cpu" else b["wall_seconds_spent"]
                print(
                    f"  sampling: {b['cpu_seconds_spent']:.1f} CPU s, {b['wall_seconds_spent']:.1f}"
                    f" s wall; spent / budget = {spent / limit:.3f} on the {b['clock']} clock; "
                    f"{s['samples']} orders, stop {s['stop']}, {len(s['undecided'])} of {k:,} "
                    "signs undecided"
                )
            elif r["error"] is not None:
                print(f"  {r['error']}")
            for line in r["said"][:3]:
                print(f"  | {line}")
    print(f"\nload average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
