"""Start-up time of the command line (issue 12, item 5; issue 26, item 6): ``coopsched
--help``, ``coopsched simulate docs/example.json`` and ``coopsched simulate`` on a 5,000-job
SWF log (generated into a temporary folder), each run ``--runs`` times in fresh processes.

Prints the median and the minimum wall time, and the median CPU time (user + system, of
the child process), next to two baselines: an empty Python and ``import numpy`` (which
``simulate`` cannot avoid). The targets, on an idle machine: a median wall time under
0.3 s for both ``simulate`` commands (issue 12), and under 0.25 s for the SWF one (issue
26); on a loaded machine, compare CPU times.

    python benchmarks/startup.py [--runs 20]
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "example.json"


def coopsched() -> list[str]:
    """The installed console script next to this interpreter, else the entry point."""
    script = Path(sys.executable).with_name("coopsched")
    if script.exists():
        return [str(script)]
    found = shutil.which("coopsched")
    if found:
        return [found]
    return [sys.executable, "-c", "from coopsched.cli import run; run()"]


def measure(argv: list[str], runs: int) -> tuple[float, float, float]:
    """Median wall, minimum wall and median CPU seconds of ``argv`` over ``runs`` runs."""
    walls, cpus = [], []
    for _ in range(runs):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, cwd=ROOT)
        walls.append(time.perf_counter() - t0)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(
            after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
        )
    return statistics.median(walls), min(walls), statistics.median(cpus)


def write_swf(path: Path, n: int = 5000, seed: int = 0, gap: int = 120) -> None:
    """An SWF log of ``n`` jobs on 64 processors (seeded; submits less than ``gap`` seconds
    apart: about 4 days of them by default), written without numpy or pandas (the start-up
    test writes its log with it too)."""
    import random

    rnd = random.Random(seed)
    lines = ["; MaxProcs: 64", "; UnixStartTime: 0"]
    submit = 0
    for i in range(1, n + 1):
        submit += rnd.randrange(gap)
        fields = [i, submit, rnd.randrange(600), rnd.randrange(1, 3600), rnd.randrange(1, 9)]
        fields += [-1, -1, -1, 3600, -1, 1, rnd.randrange(1, 30), rnd.randrange(1, 5)]
        fields += [-1, 1, 1, -1, -1]
        lines.append(" ".join(map(str, fields)))
    path.write_text("\n".join(lines) + "\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="fresh processes per command")
    args = parser.parse_args()
    cmd = coopsched()
    tmp = Path(tempfile.mkdtemp(prefix="coopsched-startup-"))
    swf = tmp / "jobs5000.swf"
    write_swf(swf)
    cases = [
        ("python -c pass (baseline)", [sys.executable, "-c", "pass"]),
        ("python -c 'import numpy' (baseline)", [sys.executable, "-c", "import numpy"]),
        ("coopsched --help", [*cmd, "--help"]),
        ("coopsched simulate docs/example.json", [*cmd, "simulate", str(EXAMPLE)]),
        ("coopsched simulate (5,000-job SWF)", [*cmd, "simulate", str(swf)]),
    ]
    env_note = f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}"
    print(f"start-up, {args.runs} fresh processes each ({env_note})")
    print(f"{'command':40s} {'median wall':>12s} {'min wall':>10s} {'median CPU':>11s}")
    for name, argv in cases:
        med, low, cpu = measure(argv, args.runs)
        print(f"{name:40s} {med:11.3f}s {low:9.3f}s {cpu:10.3f}s")
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
