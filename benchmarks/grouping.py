"""Does FIFO's schedule depend on how the jobs are grouped into organizations? (issue 42,
item 3)

    python benchmarks/grouping.py [--traces ../shared/traces] [--backfill auto]

Each parallel log of the project (benchmarks/months_auditable.py lists them) is cut into
30-day windows as the audit cuts them (rigid jobs, records fitted to the log's size). Each
window runs FIFO under the backfilling rule ``--backfill`` with its users gathered into 1,
3 and 12 organizations (user ``i`` of the window's users, in the audit's order, into group
``i mod g``; machines summed) and with every user its own organization. Under an EASY rule
named explicitly (``easy``, ``easy-queue``), a window with a job without a requested time is
left out (EASY cannot run it; ``auto`` takes first-fit there) and counted beside the log. Prints per log the
median over its windows of FIFO's utilization in each grouping, and the largest spread
(highest minus lowest utilization of a window's four groupings) over its windows, in
points. No timing.
"""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import numpy as np
from months_auditable import PARALLEL, windows

from coopsched.audit.window import WindowError
from coopsched.online.policies import get_policy
from coopsched.online.rigid import EASY_RULES
from coopsched.workloads.instance import Instance, Organization

GROUPS = (1, 3, 12, 0)  # 0: every user its own organization


def regroup(inst: Instance, g: int) -> Instance:
    """``inst`` with organization ``u`` folded into group ``u mod g`` (machines summed)."""
    if g == 0 or g >= inst.k:
        return inst
    mach = np.bincount(np.arange(inst.k) % g, weights=inst.machines, minlength=g)
    orgs = [Organization(f"g{i}", int(m)) for i, m in enumerate(mach)]
    return dataclasses.replace(inst, organizations=orgs, org=inst.org % g)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--backfill", default="auto")
    args = ap.parse_args()
    fifo = get_policy("fifo")
    print(
        f"# FIFO + backfilling {args.backfill}: utilization by grouping, every 30-day window "
        "(median over a log's windows), and the largest spread of a window's four groupings"
    )
    print("| log | windows | 1 org | 3 orgs | 12 orgs | every user | largest spread (points) |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name in PARALLEL:
        path = Path(args.traces) / name
        if not path.exists():
            continue
        util: list[list[float]] = []
        skipped = 0  # windows with a job without a requested time, which EASY cannot run
        try:
            for _t, w in windows(path):
                if isinstance(w, WindowError):
                    continue
                inst, T = w.instance, w.horizon
                if args.backfill in EASY_RULES and (
                    inst.requested is None or (inst.requested < 1).any()
                ):
                    skipped += 1
                    continue
                util.append(
                    [
                        fifo.run(regroup(inst, g), T, backfill=args.backfill).utilization(T)
                        for g in GROUPS
                    ]
                )
        except ValueError:  # the reader refused the whole log
            pass
        label = name.split(".swf")[0]
        if skipped:
            label += f" ({skipped} windows without requested times left out)"
        if not util:
            print(f"| {label} | 0 | | | | | |")
            continue
        u = np.array(util)
        med = np.median(u, axis=0)
        spread = float((u.max(axis=1) - u.min(axis=1)).max()) * 100
        print(
            f"| {label} | {len(u)} | " + " | ".join(f"{x:.1%}" for x in med) + f" | {spread:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
