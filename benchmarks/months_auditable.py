"""Months of each parallel trace an audit can read (issue 42, item 5: logs as they are).

    python benchmarks/months_auditable.py [--traces ../shared/traces] [--label NAME]

Each parallel log of the project (every trace but LPC-EGEE, whose jobs are serial, and the
synthetic Lublin log) is cut into consecutive 30-day windows from its first submit (the
last, shorter part is left out). A window is auditable when the audit builds its instance
(rigid jobs, organizations by user, the log's own size): the step that refused logs whose
records overlap the platform's size. Prints per log the windows auditable, and for the
others the first error; with today's code also how many windows had records fitted to the
platform (audit/overlap.py), the jobs moved and the largest move. Run it with an older
tree on ``PYTHONPATH`` for the "before" column (``--label``). No timing.
"""

from __future__ import annotations

import argparse
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

from coopsched.audit.organizations import by_column
from coopsched.audit.window import WindowError, WindowInstance, window_instance
from coopsched.workloads.swf import read_swf_recorded

#: The parallel logs of the project's trace folder (SUMMARY.md there lists them all).
PARALLEL = (
    "CEA-Curie-2011-2.1-cln.swf.gz",
    "CTC-SP2-1996-3.1-cln.swf.gz",
    "HPC2N-2002-2.2-cln.swf.gz",
    "KTH-SP2-1996-2.1-cln.swf.gz",
    "LANL-CM5-1994-4.1-cln.swf.gz",
    "LLNL-Atlas-2006-2.1-cln.swf.gz",
    "METACENTRUM-2009-2.swf.gz",
    "RICC-2010-2.swf.gz",
    "SDSC-DS-2004-2.1-cln.swf.gz",
    "SDSC-Par-1996-3.1-cln.swf.gz",
    "SDSC-SP2-1998-4.2-cln.swf.gz",
)
MONTH = 30 * 86400


def windows(path: Path, org_by: str = "user") -> Iterator[tuple[int, WindowInstance | WindowError]]:
    """Each 30-day window of the log from its first submit: its start and the audit's
    instance of it (rigid jobs, organizations by ``org_by``), or the error that refused it.
    A log the reader refuses raises its error."""
    log = read_swf_recorded(path)
    if not log.n:  # older code: a log without start times read as no job at all
        raise ValueError("no job with a start time: " + ", ".join(log.excluded))
    orgs = by_column(log.jobs, org_by, log.path)
    submit = log.jobs["submit"].to_numpy()
    t, last = int(submit.min()), int(submit.max())
    while t + MONTH <= last:
        try:
            yield t, window_instance(log, orgs, t, t + MONTH, jobs="rigid")
        except WindowError as exc:
            yield t, exc
        t += MONTH


def scan(path: Path) -> tuple[int, int, Counter, list[tuple[int, float, int]]]:
    """Windows, auditable ones, errors by kind, and (jobs moved, largest move in hours,
    cancelled records counted as never started) per window whose records were fitted."""
    n = ok = 0
    errors: Counter = Counter()
    fitted: list[tuple[int, float, int]] = []
    try:
        for _t, w in windows(path):
            n += 1
            if isinstance(w, WindowError):
                errors[_kind(str(w))] += 1
                continue
            ok += 1
            for note in getattr(w, "notes", []):
                m = re.search(r"([\d,]+) job\(s\) started later.*at most ([\d,.]+) h", note)
                c = re.search(r"([\d,]+) cancelled record", note)
                if m:
                    fitted.append(
                        (
                            int(m.group(1).replace(",", "")),
                            float(m.group(2).replace(",", "")),
                            int(c.group(1).replace(",", "")) if c else 0,
                        )
                    )
    except ValueError as exc:  # the whole log refused
        errors[_kind(str(exc))] += 1
    return n, ok, errors, fitted


def _kind(message: str) -> str:
    """An error without its numbers and path, to count windows refused for one reason."""
    text = re.sub(r"\S*/", "", message)
    return re.sub(r"\d[\d,.]*", "N", text)[:110]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--label", default="today")
    args = ap.parse_args()
    print(f"# 30-day windows an audit can read ({args.label}); organizations by user, rigid jobs")
    print(
        "| log | windows | auditable | fitted windows | jobs moved | largest move (h) "
        "| cancelled, never started |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|")
    notes = []
    for name in PARALLEL:
        path = Path(args.traces) / name
        if not path.exists():
            print(f"| {name} | absent | | | | | |")
            continue
        n, ok, errors, fitted = scan(path)
        moved = sum(f[0] for f in fitted)
        largest = max((f[1] for f in fitted), default=0.0)
        gone = sum(f[2] for f in fitted)
        print(
            f"| {name} | {n} | {ok} | {len(fitted)} | {moved:,} | {largest:,.1f} | {gone:,} |",
            flush=True,
        )
        notes += [f"- {name}: {c} x {kind}" for kind, c in errors.items()]
    if notes:
        print("\nrefused (count x first error, numbers as N):")
        print("\n".join(notes))


if __name__ == "__main__":
    main()
