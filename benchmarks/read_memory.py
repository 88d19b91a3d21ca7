"""Peak memory per byte of log of each reader (issue 41, item 2): memory, not time.

Each case reads one file in a fresh process and prints the peak resident memory
(``ru_maxrss``) after the reader returned, the resident memory once the reader's modules
were imported (the baseline), and their difference divided by the log's bytes (the bytes of
text the reader parses: a ``.gz`` counts its decompressed size):

* ``swf-gz``: ``read_swf`` on the compressed traces given (default: RICC and CEA-Curie,
  the largest of the project's, from ``--traces``);
* ``swf``: ``read_swf`` on the RICC trace decompressed into ``--dir``;
* ``sacct``: ``read_sacct`` on a synthetic ``sacct -P`` log of ``--text-size`` bytes
  (``benchmarks/read_large.py``'s copies of the real capture);
* ``sacct-json``: ``read_sacct_json`` on a synthetic ``sacct --json`` export of
  ``--json-jobs`` jobs (copies of the real capture ``tests/fixtures/slurm-tree/
  sacct_json.json``, laid out as sacct prints it, job ids and times shifted).

Memory is what is measured, so it may run on a loaded machine; the synthetic files are
written to ``--dir`` and removed unless ``--keep``. With ``benchmarks/paired.py --before
REV -- benchmarks/read_memory.py ...`` the same cases run with an earlier version too.

    python benchmarks/read_memory.py                        # all cases: about 5 minutes
    python benchmarks/read_memory.py --cases sacct-json --json-jobs 1000000
"""

from __future__ import annotations

import argparse
import copy
import gzip
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CAPTURE_JSON = ROOT / "tests" / "fixtures" / "slurm-tree" / "sacct_json.json"
CASES = ("swf-gz", "swf", "sacct", "sacct-json")

#: Run in a fresh process: import, take the baseline, read, take the peak.
CHILD = """
import json, resource, sys, time
kind, path = sys.argv[1], sys.argv[2]
if kind == "swf":
    from coopsched.workloads.swf import read_swf as read
elif kind == "sacct":
    from coopsched.workloads.sacct import read_sacct
    def read(p): return read_sacct(p, timezone="UTC")
else:
    from coopsched.workloads.sacct_json import read_sacct_json
    def read(p): return read_sacct_json(p, timezone="UTC")
import numpy, pandas  # every reader's modules loaded before the baseline
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t0 = time.perf_counter()
out = read(path)
wall = time.perf_counter() - t0
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"jobs": int(out.n), "base_kb": base, "peak_kb": peak, "wall": wall}))
"""


def measure(kind: str, path: Path, text_bytes: int, label: str) -> None:
    run = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(path)], capture_output=True, text=True
    )
    if run.returncode:
        print(f"{label}: failed: {run.stderr.strip().splitlines()[-1]}", flush=True)
        return
    r = json.loads(run.stdout.strip().splitlines()[-1])
    grown = (r["peak_kb"] - r["base_kb"]) * 1024
    disk = path.stat().st_size
    size = f"{disk / 1e6:,.1f} MB" + (
        f" ({text_bytes / 1e6:,.1f} MB decompressed)" if text_bytes != disk else ""
    )
    print(
        f"{label}: {size}, {r['jobs']:,} jobs; peak RSS {r['peak_kb'] / 1024:,.0f} MB, "
        f"baseline {r['base_kb'] / 1024:,.0f} MB: {grown / text_bytes:.2f} bytes of memory per "
        f"byte of log ({r['wall']:.1f} s)",
        flush=True,
    )


def gz_size(path: Path) -> int:
    n = 0
    with gzip.open(path, "rb") as fh:
        while chunk := fh.read(1 << 22):
            n += len(chunk)
    return n


def sacct_json_export(path: Path, jobs: int) -> int:
    """Write ``jobs`` jobs: copies of the capture's jobs, ids + 1000 per copy, times + 10
    minutes per copy, indented as sacct prints them. Returns the file's size."""
    doc = json.loads(CAPTURE_JSON.read_text())
    base = doc["jobs"]
    head = json.dumps({"meta": doc["meta"], "errors": []}, indent=2)[:-2]
    with path.open("w") as fh:
        fh.write(head + ',\n  "jobs": [\n')
        for i in range(jobs):
            c, job = divmod(i, len(base))
            j = copy.deepcopy(base[job])
            j["job_id"] += 1000 * c
            for key in ("array", "het"):
                if j[key]["job_id"]:
                    j[key]["job_id"] += 1000 * c
            for key in ("submission", "start", "end", "eligible"):
                if j["time"].get(key):
                    j["time"][key] += 600 * c
            fh.write(("" if i == 0 else ",\n") + json.dumps(j, indent=2))
        fh.write("\n  ]\n}\n")
    return path.stat().st_size


def _traces() -> Path:
    """The nearest ``shared/traces`` above this checkout (a worktree may be nested)."""
    for parent in ROOT.parents:
        if (parent / "shared" / "traces").is_dir():
            return parent / "shared" / "traces"
    return ROOT.parent / "shared" / "traces"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--traces", default=str(_traces()), help="folder of the SWF traces")
    ap.add_argument("--gz", default="RICC-2010-2.swf.gz,CEA-Curie-2011-2.1-cln.swf.gz")
    ap.add_argument("--text-size", default="200M", help="sacct text log size (M or G)")
    ap.add_argument("--json-jobs", type=int, default=1_000_000)
    ap.add_argument("--dir", default="/tmp")
    ap.add_argument("--keep", action="store_true")
    args = ap.parse_args()
    cases = [c for c in args.cases.split(",") if c]
    unknown = sorted(set(cases) - set(CASES))
    if unknown:
        raise SystemExit(f"--cases: unknown {', '.join(unknown)}; choose from {', '.join(CASES)}")
    traces, tmp = Path(args.traces), Path(args.dir)
    made: list[Path] = []
    print(f"{os.cpu_count()} cores, load average {os.getloadavg()[0]:.2f}", flush=True)
    try:
        if "swf-gz" in cases:
            for name in args.gz.split(","):
                p = traces / name
                measure("swf", p, gz_size(p), f"swf-gz {name}")
        if "swf" in cases:
            src = traces / "RICC-2010-2.swf.gz"
            p = tmp / "coopsched-RICC-2010-2.swf"
            with gzip.open(src, "rb") as fi, p.open("wb") as fo:
                shutil.copyfileobj(fi, fo)
            made.append(p)
            measure("swf", p, p.stat().st_size, "swf RICC-2010-2.swf (plain)")
        if "sacct" in cases:
            sys.path.insert(0, str(ROOT / "benchmarks"))
            from read_large import CAPTURE, synthetic_log

            unit = {"M": 10**6, "G": 10**9}[args.text_size[-1].upper()]
            target = int(float(args.text_size[:-1]) * unit)
            copies = max(1, target // CAPTURE.stat().st_size)
            p = tmp / "coopsched-sacct-memory.txt"
            made.append(p)
            size = synthetic_log(p, copies)
            measure("sacct", p, size, f"sacct text, {copies:,} copies of the capture")
        if "sacct-json" in cases:
            p = tmp / "coopsched-sacct-memory.json"
            made.append(p)
            size = sacct_json_export(p, args.json_jobs)
            measure("sacct-json", p, size, f"sacct --json, {args.json_jobs:,} jobs")
    finally:
        if not args.keep:
            for p in made:
                p.unlink(missing_ok=True)
    print(f"load average after {os.getloadavg()[0]:.2f}", flush=True)


if __name__ == "__main__":
    main()
