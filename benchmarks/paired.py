"""Run one benchmark script against an earlier version of the package and this one, paired.

    python benchmarks/paired.py [--before REV] [--rounds N] [--grep TEXT] -- SCRIPT [ARGS...]

The package of git revision ``--before`` (default 109e707) is extracted to a temporary
folder (``git archive``); ``SCRIPT ARGS`` then runs ``--rounds`` times with each version on
its ``PYTHONPATH``, the two taking turns, so that a change of the machine's pace hits both
alike. Only the script's lines containing ``--grep`` (default: every line) are printed,
each under the version and round that printed it. Useful where a benchmark file was rerun
on another machine: the pair says what the code changed and what the machine did.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def package_of(rev: str, into: Path) -> Path:
    """The ``src`` folder of git revision ``rev`` of this repository, extracted into
    ``into`` (``git archive``); a clear exit if the revision is unknown."""
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", "--format=tar", rev, "src"], capture_output=True
    )
    if archive.returncode:
        raise SystemExit(f"--before {rev}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into / "src"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", default="109e707", help="the earlier git revision")
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--grep", action="append", default=[], help="print lines with this text")
    ap.add_argument("script", nargs=argparse.REMAINDER, help="-- SCRIPT [ARGS...]")
    args = ap.parse_args()
    script = [a for a in args.script if a != "--"]
    if not script:
        raise SystemExit("give the benchmark to run after --")
    with tempfile.TemporaryDirectory() as d:
        before = package_of(args.before, Path(d))
        versions = {f"before ({args.before})": before, "after (this checkout)": ROOT / "src"}
        print(f"command: {' '.join(script)}; {args.rounds} rounds, the versions taking turns")
        for r in range(1, args.rounds + 1):
            for name, src in versions.items():
                env = {**os.environ, "PYTHONPATH": str(src)}
                out = subprocess.run(
                    [sys.executable, *script], cwd=ROOT, env=env, capture_output=True, text=True
                )
                if out.returncode:
                    raise SystemExit(f"{name}: {out.stderr.strip().splitlines()[-1]}")
                print(f"{name}, round {r}:", flush=True)
                for line in out.stdout.splitlines():
                    if not args.grep or any(g in line for g in args.grep):
                        print(f"  {line}", flush=True)


if __name__ == "__main__":
    main()
