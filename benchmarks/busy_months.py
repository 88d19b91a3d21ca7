"""The sampled audit on busy months (issue 43, item 1): signs decided within a CPU budget,
and the coverage of its intervals against exact values on the same months.

    PYTHONPATH=src python benchmarks/busy_months.py [--traces DIR] pick
    PYTHONPATH=src python benchmarks/busy_months.py [--traces DIR] budget [--k 50] [--cpu-seconds 300]
    PYTHONPATH=src python benchmarks/busy_months.py [--traces DIR] coverage [--k 10] [--runs 200]

``pick`` prints, for each of the three parallel traces, its four months with the highest
recorded utilization (processor-seconds the log's jobs ran within the calendar month, in
the log's time zone, over the machines times the month's seconds), how many users ran jobs
in it and how many jobs overlap it. The three busiest, one per trace, are :data:`MONTHS`
(measured on these logs: SDSC-SP2 January 2000 91.5 %, CTC-SP2 April 1997 89.9 %, RICC
September 2010 94.5 %).

``budget`` runs :func:`coopsched.audit.sampling.sampled_game` as the audit does on each
month (organizations: the ``k - 1`` busiest users of the month and ``other``; ``--k 0``:
every user; rigid jobs under the platform's backfilling rule; 25 curve times; 95 %
intervals; adaptive; at most 5,120 orders; the refinement; the control variate unless
``--no-control``) with ``negligible=0.05`` and a CPU-second budget (default 300 s, the
issue's five minutes of one core at k = 50; 900 s for every user). Printed per month:
CPU and wall seconds, orders, coalitions, signs decided, shown within 5 % of ``phi``, and
neither (undecided), then the refined organizations and the settling times.

``coverage`` measures the intervals against exact values: on each month at ``k``
organizations (at most 16) every coalition of the sampled game is valued (its grand
coalition at the recorded total, as the audit's), so its Shapley values are exact; then
``--runs`` seeded audits (the same options as ``budget``, the coalitions read from that
table) give each organization's interval, and the share of intervals covering the exact
value is printed (over all runs and organizations, its standard error over the runs, and
the lowest per organization) beside the nominal level.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit_sampled import describe, grid, refined_verdicts, settle_times, window  # noqa: E402

#: (trace, month): the busiest month (recorded utilization) of three parallel traces
MONTHS = [
    ("SDSC-SP2-1998-4.2-cln.swf.gz", "2000-01"),
    ("CTC-SP2-1996-3.1-cln.swf.gz", "1997-04"),
    ("RICC-2010-2.swf.gz", "2010-09"),
]
CONFIDENCE = 0.95


def month_bounds(log, month: str) -> tuple[int, int]:
    """``[t0, t1)`` of a calendar month (``YYYY-MM``) in the log's time, its time zone."""
    tz = ZoneInfo(log.timezone or "UTC")
    epoch = log.epoch or 0
    y, m = int(month[:4]), int(month[5:])
    ny, nm = (y + 1, 1) if m == 12 else (y, m + 1)
    t0 = int(datetime(y, m, 1, tzinfo=tz).timestamp()) - epoch
    t1 = int(datetime(ny, nm, 1, tzinfo=tz).timestamp()) - epoch
    return t0, t1


def read(traces: Path, name: str):
    from coopsched.workloads.swf import read_swf_recorded

    return read_swf_recorded(traces / name)


def pick(traces: Path) -> None:
    for name, _ in MONTHS:
        log = read(traces, name)
        j = log.jobs
        ran = j.start >= 0
        s, e, p = (j[c][ran].to_numpy() for c in ("start", "end", "processors"))
        tz = ZoneInfo(log.timezone or "UTC")
        epoch = log.epoch or 0
        lo = datetime.fromtimestamp(epoch + int(j.submit.min()), tz)
        hi = datetime.fromtimestamp(epoch + int(e.max()), tz)
        y, m, rows = lo.year, lo.month, []
        while (y, m) <= (hi.year, hi.month):
            month = f"{y}-{m:02d}"
            t0, t1 = month_bounds(log, month)
            busy = ((np.clip(e, t0, t1) - np.clip(s, t0, t1)) * p).sum()
            inwin = (j.submit < t1) & (j.end > t0)
            rows.append(
                (busy / (log.machines * (t1 - t0)), month, j.user[inwin].nunique(), inwin.sum())
            )
            y, m = (y + 1, 1) if m == 12 else (y, m + 1)
        rows.sort(reverse=True)
        print(f"{name} ({log.machines:,} processors, {log.timezone}):")
        for u, month, users, n in rows[:4]:
            print(f"  {month}: utilization {100 * u:.1f} %, {users} users, {n:,} jobs")


def instance(traces: Path, name: str, month: str, k: int, tmp: Path):
    log = read(traces, name)
    t0, t1 = month_bounds(log, month)
    if k <= 0:  # every user: as many organizations as users (no 'other')
        j = log.jobs
        k = int(j.user[(j.submit < t1) & (j.end > t0)].nunique())
    return window(log, t0, t1, k, tmp)


def chosen(args) -> list[tuple[str, str]]:
    """The months of :data:`MONTHS` whose trace names contain one of ``--only``'s words."""
    if not args.only:
        return MONTHS
    words = [w.lower() for w in args.only.split(",")]
    return [(n, m) for n, m in MONTHS if any(w in n.lower() for w in words)]


def budget(args) -> None:
    from coopsched.audit.sampling import sampled_game

    for name, month in chosen(args):
        with tempfile.TemporaryDirectory() as d:
            inst, T, rule = instance(args.traces, name, month, args.k, Path(d))
        c0, w0 = time.process_time(), time.perf_counter()
        sg = sampled_game(
            inst,
            T,
            grid(T),
            samples=5120,
            seed=args.seed,
            confidence=CONFIDENCE,
            backfill=rule,
            negligible=0.05,
            cpu_seconds=args.cpu_seconds,
            control_variate=not args.no_control,
        )
        cpu, wall = time.process_time() - c0, time.perf_counter() - w0
        print(
            f"{name} {month} k {inst.k} ({inst.n:,} jobs): cpu {cpu:.1f} s, wall {wall:.1f} s, "
            f"{describe(sg)}",
            flush=True,
        )
        print(refined_verdicts(sg, inst.names))
        print(settle_times(sg, inst.names), flush=True)


def coverage(args) -> None:
    from coopsched.audit import sampling
    from coopsched.audit.game import recorded_starts
    from coopsched.audit.sampling import sampled_game
    from coopsched.online.shapley import shapley
    from coopsched.online.utilities import psi_sp

    ORIGINAL = {n: getattr(sampling, n) for n in ("coalition_values", "CoalitionValuer")}
    if not 2 <= args.k <= 16:
        raise SystemExit("error: --k: 2 to 16 organizations for the exact values")
    for name, month in chosen(args):
        with tempfile.TemporaryDirectory() as d:
            inst, T, rule = instance(args.traces, name, month, args.k, Path(d))
        k, G = inst.k, (1 << inst.k) - 1
        w0 = time.perf_counter()
        value = ORIGINAL["coalition_values"]  # (each month valued by the engine, not a table)
        cache = None if args.cache is None else args.cache / f"{name}-{month}-k{k}.json"
        if cache is not None and cache.exists():
            fair = json.loads(cache.read_text())
        else:
            fair = [0] + [value(inst, T, [T], m, backfill=rule)[0] for m in range(1, G + 1)]
            if cache is not None:
                cache.write_text(json.dumps(fair))
        recorded = sum(psi_sp(inst.org, recorded_starts(inst), inst.size, T, k, inst.processors))
        exact = np.array([float(x) for x in shapley([*fair[:-1], recorded])])
        valued = time.perf_counter() - w0
        sampling.coalition_values = lambda i, h, g, m, *a, _f=fair: [_f[m]]  # type: ignore[assignment]
        sampling.CoalitionValuer = lambda *a, _f=fair: lambda mask, _f=_f: [_f[mask]]  # type: ignore[assignment,misc]
        shares, covered, refined = [], np.zeros(k), 0
        for seed in range(args.runs):
            sg = sampled_game(
                inst,
                T,
                [],
                samples=5120,
                seed=seed,
                confidence=CONFIDENCE,
                backfill=rule,
                negligible=0.05,
                control_variate=not args.no_control,
            )
            inside = np.abs(sg.phi - exact) <= sg.halfwidth
            shares.append(inside.mean())
            covered += inside
            refined += sg.refinement is not None
        for n, f in ORIGINAL.items():  # the engine again for the next month's table
            setattr(sampling, n, f)
        s = np.array(shares)
        print(
            f"{name} {month} k {k} ({inst.n:,} jobs; {G:,} coalitions valued in {valued:.0f} s): "
            f"coverage {s.mean():.3f} (standard error {s.std(ddof=1) / np.sqrt(len(s)):.3f}) "
            f"over {args.runs} audits x {k} organizations, nominal {CONFIDENCE}; lowest per "
            f"organization {covered.min() / args.runs:.3f}; refinement in {refined} audits",
            flush=True,
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--traces", type=Path, default=Path(os.environ.get("TRACES", "../shared/traces"))
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-control", action="store_true", help="without the control variate")
    ap.add_argument("--only", default="", help="traces whose names contain these words (a,b)")
    sub = ap.add_subparsers(dest="what", required=True)
    sub.add_parser("pick")
    b = sub.add_parser("budget")
    b.add_argument("--k", type=int, default=50, help="organizations (0: every user)")
    b.add_argument("--cpu-seconds", type=float, default=None)
    c = sub.add_parser("coverage")
    c.add_argument("--k", type=int, default=10)
    c.add_argument("--runs", type=int, default=200)
    c.add_argument("--cache", type=Path, default=None, help="keep each month's table here")
    ap.add_argument("--fit-from", type=int, default=None, help="the control's FIT_FROM")
    args = ap.parse_args()
    if args.fit_from is not None:
        from coopsched.audit.estimation import control

        control.FIT_FROM = args.fit_from
    if args.what == "pick":
        pick(args.traces)
    elif args.what == "budget":
        if args.cpu_seconds is None:
            args.cpu_seconds = 300.0 if 0 < args.k <= 50 else 900.0
        budget(args)
    else:
        coverage(args)


if __name__ == "__main__":
    main()
