"""Every README command and every trace under a 4 GiB address-space limit (issue 41, item 2).

Runs each command in a fresh process under ``prlimit --as=LIMIT`` (default 4 GiB: the
virtual memory a process may reserve, not only what it touches) and prints its exit status,
its wall time and the peak resident memory of the process and its children. The README's
commands (and the tour's, ``docs/tour.md``) run as written, the studies with ``--quick``; every SWF trace of ``--traces`` is
read (``trace-info``), simulated on its first day (``simulate --window-length 86400``) and,
for the ``--audit`` ones, audited on its first day. ``$COOPSCHED_TRACES`` points at
``--traces`` so that ``--trace NAME`` needs no download. A command that fails prints the
last line of its error. The outputs go to a temporary folder.

    python benchmarks/address_limit.py                # about 15 minutes on 2 cores
    python benchmarks/address_limit.py --only traces  # the traces only
"""

from __future__ import annotations

import argparse
import os
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

#: The commands of the README and of docs/tour.md (paths from the repository's root;
#: outputs into the current folder, a temporary one); the studies with --quick.
README = [
    "demo",
    "reproduce list",
    "audit {root}/tests/fixtures/slurm/sacct_X_utc.txt --org-by account --timezone UTC "
    "--machines 4 --html report.html",
    "compare --trace LPC-EGEE --window-start 7806393 --window-length 50000 --split zipf --seed 53",
    "simulate {root}/docs/example.json --policy ref --horizon 6",
    "simulate {root}/docs/example.json --policy directcontr --horizon 6 --format csv",
    "simulate --trace LPC-EGEE --window-start 7806393 --window-length 50000 --policy fairshare "
    "--gantt gantt.png --batsim-out out_jobs.csv --swf-out schedule.swf",
    "simulate --trace SDSC-SP2 --window-start 30000000 --window-length 100000 --jobs rigid "
    "--backfill easy --policy fifo",
    "compare --trace SDSC-SP2 --window-start 30000000 --window-length 100000 --jobs rigid "
    "--backfill easy --policies ref,directcontr,fairshare,fifo",
    "mosp --generate uni:5:100:128 --algorithm meta",
    "game --generate theorem4:2 --action verify --config paper",
    "migration {root}/docs/example-migration.json --policy fcfs-fastest",
    *(
        f"reproduce {s} --quick --workers 1 --out study-{s}"
        for s in (
            "table1",
            "table2",
            "fig10",
            "sensitivity",
            "production",
            "mosp",
            "game",
            "game-readings",
            "poa",
            "migration",
            "rigid",
        )
    ),
]


def run(command: str, limit: int, env: dict[str, str], cwd: Path) -> None:
    argv = ["prlimit", f"--as={limit}", sys.executable, "-c", CHILD, *shlex.split(command)]
    t0 = time.perf_counter()
    out = subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    lines = out.stderr.strip().splitlines()
    rss = [ln for ln in lines if ln.startswith("__rss__ ")]
    lines = [ln for ln in lines if not ln.startswith("__rss__ ")]
    own, kids = (int(x) / 1024 for x in rss[-1].split()[1:]) if rss else (0.0, 0.0)
    peak = f"{own:,.0f} MB" + (f" (a child {kids:,.0f} MB)" if kids > own else "")
    status = "ok" if out.returncode == 0 else f"exit {out.returncode}"
    line = f"{status:8} {wall:7.1f} s  peak RSS {peak:>8}  coopsched {command}"
    if out.returncode:
        line += f"\n         -> {(lines or ['(no message)'])[-1][:300]}"
    print(line, flush=True)


#: The command line in this process, then its peak resident memory (``VmHWM``: this
#: program's own, whereas ``ru_maxrss`` keeps the high-water mark of the process that
#: started it) and the largest of its child processes' (workers) on standard error.
CHILD = """
import atexit, resource, sys
def peak():
    with open("/proc/self/status") as fh:
        own = next(int(ln.split()[1]) for ln in fh if ln.startswith("VmHWM:"))
    kids = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    print(f"__rss__ {own} {kids}", file=sys.stderr)
atexit.register(peak)
from coopsched.cli import run
run()
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limit", type=int, default=4 * 1024**3, help="bytes (prlimit --as)")
    ap.add_argument("--traces", default=str(_traces()))
    ap.add_argument("--only", choices=("readme", "traces"), default=None)
    ap.add_argument(
        "--audit",
        default="KTH-SP2-1996-2.1-cln.swf.gz,RICC-2010-2.swf.gz",
        help="traces also audited on their first day",
    )
    args = ap.parse_args()
    traces = Path(args.traces)
    env = {**os.environ, "COOPSCHED_TRACES": str(traces), "OPENBLAS_NUM_THREADS": "1"}
    print(
        f"limit {args.limit:,} bytes of address space (prlimit --as); {os.cpu_count()} cores, "
        f"load average {os.getloadavg()[0]:.2f}",
        flush=True,
    )
    with tempfile.TemporaryDirectory() as d:
        cwd = Path(d)
        if args.only != "traces":
            for command in README:
                run(command.format(root=ROOT), args.limit, env, cwd)
        if args.only != "readme":
            audit = set(args.audit.split(","))
            for p in sorted(traces.glob("*.swf*")):
                run(f"trace-info {p}", args.limit, env, cwd)
                header, first = _head(p)
                size = "" if "MaxProcs" in header else " --machines 256"
                run(f"simulate {p} --window-length 86400 --policy fifo{size}", args.limit, env, cwd)
                if p.name in audit:
                    run(
                        f"audit {p} --org-by user --from {first} --horizon 86400 "
                        "--no-counterfactuals --seconds 20",
                        args.limit,
                        env,
                        cwd,
                    )
    print(f"load average after {os.getloadavg()[0]:.2f}", flush=True)


def _head(path: Path) -> tuple[str, int]:
    """A trace's header comments and its first job's submit time, read here without the
    reader (this process must stay small: see ``CHILD``)."""
    import gzip

    opener = gzip.open if path.read_bytes()[:2] == b"\x1f\x8b" else open
    header = []
    with opener(path, "rt", errors="replace") as fh:
        for line in fh:
            if line.lstrip().startswith(";"):
                header.append(line)
            elif line.strip():
                return "".join(header), int(float(line.split()[1]))
    return "".join(header), 0


def _traces() -> Path:
    """The nearest ``shared/traces`` above this checkout (a worktree may be nested)."""
    for parent in ROOT.parents:
        if (parent / "shared" / "traces").is_dir():
            return parent / "shared" / "traces"
    return ROOT.parent / "shared" / "traces"


if __name__ == "__main__":
    main()
