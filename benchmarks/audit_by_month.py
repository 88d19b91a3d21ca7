"""Time and memory of a year audited month by month (issue 43, item 6).

    PYTHONPATH=src python benchmarks/audit_by_month.py [--traces DIR] [--by-user-cpu 30]

KTH-SP2's whole log (30 September 1996 to 29 August 1997: 12 calendar months, 28,476
jobs) with ``coopsched audit LOG --by-month``, each run in a fresh process (the command
line as a user types it, JSON output to a file), with ``--machines`` at the log's recorded
peak (the log states 100 processors and runs up to 104 at once):

1. by the 7 users with the most work over the log and ``other`` (a mapping file): exact
   audits, the counterfactuals included (the defaults);
2. by every user (up to 60 a month: sampled audits), ``--cpu-seconds`` per month
   (``--by-user-cpu``, default 30) and ``--no-counterfactuals``.

Printed per case: wall and CPU seconds (the child's), its peak resident memory (the
child's ``ru_maxrss``), months audited, exact or sampled, and who was short-changed
persistently.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

LOG = "KTH-SP2-1996-2.1-cln.swf.gz"


def run(args: list[str], out: Path) -> tuple[float, float, float]:
    """Wall seconds, CPU seconds and peak memory (MiB) of ``coopsched`` run with ``args``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    w0 = time.perf_counter()
    with out.open("w") as f:
        subprocess.run(
            [str(Path(sys.executable).with_name("coopsched")), *args],
            stdout=f,
            check=True,
            env=os.environ,
        )
    wall = time.perf_counter() - w0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return wall, cpu, after.ru_maxrss / 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--traces", type=Path, default=Path(os.environ.get("TRACES", "../shared/traces"))
    )
    ap.add_argument("--by-user-cpu", type=float, default=30.0)
    args = ap.parse_args()
    from coopsched.audit import load_log
    from coopsched.audit.window import recorded_peak

    path = args.traces / LOG
    log = load_log(path)
    j = log.jobs
    peak = recorded_peak(log, int(j["submit"].min()), int(j["end"].max()))
    work = (j["processors"] * (j["end"] - j["start"])).groupby(j["user"]).sum()
    top = work.sort_values(ascending=False).index[:7]
    with tempfile.TemporaryDirectory() as d:
        mapping = Path(d) / "top7.toml"
        mapping.write_text(
            "".join(f'[[organization]]\nname = "u{u}"\nusers = ["{u}"]\n' for u in top)
        )
        common = ["audit", str(path), "--by-month", "--machines", str(peak), "--format", "json"]
        cases = [
            (
                "7 busiest users + other, defaults",
                [*common, "--mapping", str(mapping), "--other", "other"],
            ),
            (
                f"every user, --cpu-seconds {args.by_user_cpu:g} a month, no counterfactuals",
                [
                    *common,
                    "--org-by",
                    "user",
                    "--cpu-seconds",
                    str(args.by_user_cpu),
                    "--no-counterfactuals",
                    "--quiet",
                ],
            ),
        ]
        for label, argv in cases:
            out = Path(d) / "out.json"
            wall, cpu, mib = run(argv, out)
            r = json.loads(out.read_text())
            months = [p for p in r["periods"] if "method" in p]
            kinds = sorted({p["method"] for p in months})
            ks = [p["organizations"] for p in months]
            print(
                f"{LOG} by month, {label}: wall {wall:.1f} s, cpu {cpu:.1f} s, peak memory "
                f"{mib:.0f} MiB; {len(months)} months audited ({'/'.join(kinds)}, "
                f"{min(ks)}-{max(ks)} organizations a month); short-changed persistently: "
                f"{', '.join(r['persistent']['short_changed']) or 'none'}",
                flush=True,
            )


if __name__ == "__main__":
    main()
