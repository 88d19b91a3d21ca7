"""Speed of ``coopsched audit`` (issue 14): exact audits of real logs on one core.

    python benchmarks/audit.py [--traces ../shared/traces] [--days 30] [--points 24]

Cases (targets: each under a minute on one core):

* RICC, a 30-day window (days 30-60 of the log) with 8 organizations: its 7 busiest
  groups in the window and everything else as ``other``, from a mapping file written to a
  temporary directory; under the audit's default rule (the platform's: EASY backfilling
  from the whole queue) and again under the papers' per-organization EASY
  (``backfill="easy"``), since the rule decides the cost on such a busy month;
* LPC-EGEE, the whole log with its groups as organizations (``--machines 142``: the log
  runs 142 jobs at once at one moment, 2 more than its 140 processors).

Prints, per case, the seconds (wall and CPU) of reading the log, of the exact audit
(REF over all coalitions, with the curves' checkpoints) and of the counterfactuals; with
``--phases``, the CPU seconds of every phase the audit reports (window building, REF, each
counterfactual policy, the report's curves).
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path


def timed(fn):
    w, c = time.perf_counter(), time.process_time()
    out = fn()
    return out, time.perf_counter() - w, time.process_time() - c


def ricc_mapping(log, t0: int, t1: int, path: Path) -> None:
    """The 7 busiest groups of the window (processor-seconds), one organization each."""
    j = log.jobs
    inwin = (j["submit"] < t1) & (j["end"] > t0)
    work = (j["processors"] * (j["end"] - j["start"]))[inwin].groupby(j["group"][inwin]).sum()
    top = work.sort_values(ascending=False).index[:7]
    path.write_text("".join(f'[[organization]]\nname = "g{g}"\ngroups = ["{g}"]\n' for g in top))


def run_case(label, log, points, counterfactuals, phases=False, **kw):
    from coopsched.audit import audit

    steps = {}
    marks: list[tuple[str, float]] = [("start", time.process_time())]

    def prog(msg):
        steps.setdefault(msg.split(":")[0], time.perf_counter())
        marks.append((msg, time.process_time()))

    r, wall, cpu = timed(
        lambda: audit(log, points=points, with_counterfactuals=counterfactuals, progress=prog, **kw)
    )
    k = len(r.organizations)
    jobs = sum(o.jobs for o in r.organizations)
    t_cf = steps.get("counterfactual")
    t_ref = next((v for m, v in steps.items() if m.startswith("REF")), None)
    game = (t_cf - t_ref) if (t_cf and t_ref) else None
    print(
        f"{label:34} k={k:2} jobs={jobs:>8,} audit wall {wall:7.1f} s, CPU {cpu:7.1f} s"
        + (f" (exact game + curves {game:.1f} s wall)" if game is not None else "")
    )
    if phases:
        marks.append(("report (curves, rows)", time.process_time()))
        for (msg, a), (_, b) in zip(marks, marks[1:], strict=False):
            print(f"    {b - a:7.1f} s CPU  {msg}")
    return r


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--points", type=int, default=24)
    ap.add_argument("--no-counterfactuals", action="store_true")
    ap.add_argument("--only", choices=["ricc", "lpc"], default=None)
    ap.add_argument("--phases", action="store_true", help="CPU seconds of every audit phase")

    args = ap.parse_args()
    from coopsched.audit.window import recorded_peak
    from coopsched.workloads.swf import read_swf_recorded

    d = Path(args.traces)
    cf = not args.no_counterfactuals
    from coopsched.online.ref import ref_schedule
    from coopsched.workloads.instance import make_instance

    ref_schedule(make_instance([1, 1], [(0, 0, 1), (1, 0, 1)]), 3, checkpoints=[1])  # JIT
    if args.only in (None, "ricc"):
        ricc, w, c = timed(lambda: read_swf_recorded(d / "RICC-2010-2.swf.gz"))
        print(f"read RICC in {w:.1f} s wall, {c:.1f} s CPU")
        t0 = 30 * 86400
        t1 = t0 + args.days * 86400
        with tempfile.TemporaryDirectory() as tmp:
            m = Path(tmp) / "ricc.toml"
            ricc_mapping(ricc, t0, t1, m)
            for label, rule in (("", None), (", per-org EASY", "easy")):
                run_case(
                    f"RICC {args.days} days, 7 groups + other{label}",
                    ricc,
                    args.points,
                    cf,
                    args.phases,
                    mapping=m,
                    other="other",
                    t_from=t0,
                    t_to=t1,
                    # RICC's log runs more processors at once than its MaxProcs (8192)
                    machines=max(8192, recorded_peak(ricc, t0, t1)),
                    backfill=rule,
                )
    if args.only in (None, "lpc"):
        lpc, w, c = timed(lambda: read_swf_recorded(d / "LPC-EGEE-2004-1.2-cln.swf.gz"))
        print(f"read LPC-EGEE in {w:.1f} s wall, {c:.1f} s CPU")
        run_case(
            "LPC-EGEE whole log, groups",
            lpc,
            args.points,
            cf,
            args.phases,
            org_by="group",
            machines=142,
        )


if __name__ == "__main__":
    main()
