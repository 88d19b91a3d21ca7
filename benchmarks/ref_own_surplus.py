"""The audit of REF's own schedule: how far REF's surplus is from 0 (issue 45 item 1, first
part).

    python benchmarks/ref_own_surplus.py [--traces ../shared/traces] [--k 5] [--windows 5]
                                         [--length 86400] [--out FILE]

REF ranks the members of a coalition once per event time and its winner keeps receiving
machines (docs/conventions.md, "Ties and anonymity"). When keys tie, the winner takes
every free machine, and the audit of REF's own schedule (``coopsched.audit`` on REF's
starts: ``phi`` the Shapley values of the game whose coalitions are worth their REF values
and whose grand coalition is worth the recorded total) finds a surplus ``psi - phi`` that
is not 0, although REF is the reference. This script measures it, nothing timed:

* on the tie test's toy (two organizations with two machines each, jobs A, B, A, B, A of
  size 5 at 0, horizon 10);
* on ``--windows`` windows of ``--length`` seconds starting at random jobs (seed 11) at
  ``k`` organizations (users dealt in turn, machines split uniformly, seed 1): LPC-EGEE as
  sequential jobs (the paper's model), and SDSC-SP2, CTC-SP2, KTH-SP2 and HPC2N as rigid
  jobs under EASY.

Per case: the organizations whose surplus is not 0, the largest ``|psi_u - phi_u| /
phi_u``, ``sum_u |psi_u - phi_u| / p_tot`` (REF's distance to its own ``phi``, in the units
of the paper's fairness measure, Sec. 7.2: seconds per unit of work) and, for scale, FIFO's
unfairness against REF on the same window.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
from ref_between_events import log_windows, ref_rigid_moments, say
from run_all import machine

LOGS = {
    "LPC-EGEE": ("LPC-EGEE-2004-1.2-cln.swf.gz", "sequential", None),
    "SDSC-SP2": ("SDSC-SP2-1998-4.2-cln.swf.gz", "rigid", "easy"),
    "CTC-SP2": ("CTC-SP2-1996-3.1-cln.swf.gz", "rigid", "easy"),
    "KTH-SP2": ("KTH-SP2-1996-2.1-cln.swf.gz", "rigid", "easy"),
    "HPC2N": ("HPC2N-2002-2.2-cln.swf.gz", "rigid", "easy"),
}


def own_surplus(inst, T: int, backfill: str | None) -> dict:
    """REF's schedule of ``inst`` at ``T``, audited: per organization ``psi``, ``phi``
    (exact) and the figures of the module docstring."""
    import coopsched
    from coopsched.online.engine import simulate
    from coopsched.online.fairness import fairness
    from coopsched.online.policies import get_policy

    ref = simulate(inst, get_policy("ref"), T, backfill=backfill)
    recorded = dataclasses.replace(inst, start=ref.start)
    report = coopsched.audit(
        recorded, horizon=T, backfill=backfill, with_counterfactuals=False, points=0
    )
    psi = [o.psi for o in report.organizations]
    phi = [Fraction(o.phi_exact) for o in report.organizations]
    if psi != list(ref.psi(T)):
        raise AssertionError("the audit's psi is not REF's")
    surplus = [p - f for p, f in zip(psi, phi, strict=True)]
    p_tot = sum(ref.work(T))
    ties: list[tuple[int, int]] = []
    starts, _ = ref_rigid_moments(inst, T, backfill or "first-fit", False, ties=ties)
    if starts != ref.start.tolist():
        raise AssertionError("benchmarks/ref_between_events.py's REF is not the package's")
    fifo = simulate(inst, get_policy("fifo"), T, backfill=backfill)
    return {
        "jobs": inst.n,
        "psi": psi,
        "phi": phi,
        "off": sum(s != 0 for s in surplus),
        "ties": len(ties),
        "tied_jobs": sum(x for _, x in ties),
        "rel": float(max((abs(s) / f for s, f in zip(surplus, phi, strict=True) if f), default=0)),
        "dist": float(sum(abs(s) for s in surplus) / p_tot) if p_tot else 0.0,
        "fifo": fairness(fifo, ref, T).ratio,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default=str(Path(__file__).resolve().parents[2] / "shared/traces"))
    ap.add_argument("--k", type=int, default=5)
    ap.add_argument("--windows", type=int, default=5)
    ap.add_argument("--length", type=int, default=86_400)
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    from coopsched.workloads.instance import make_instance

    lines = [
        f"# benchmarks/ref_own_surplus.py --k {args.k} --windows {args.windows} "
        f"--length {args.length}",
        *machine(),
        "# nothing timed",
        "# off = organizations whose surplus psi - phi in the audit of REF's own schedule is not 0;",
        "# rel = max_u |psi_u - phi_u| / phi_u; dist = sum_u |psi_u - phi_u| / p_tot (s per unit"
        " of work, the units of the fairness measure);",
        "# fifo = FIFO's unfairness against REF on the same window, for scale; ties = event times"
        " at which the grand coalition's best key",
        "# is shared by two members or more with a waiting job and the winner starts two jobs or"
        " more; tjobs = the jobs it starts then",
        "",
    ]
    print("\n".join(lines), flush=True)
    toy = make_instance([2, 2], [(0, 0, 5), (1, 0, 5), (0, 0, 5), (1, 0, 5), (0, 0, 5)])
    row = own_surplus(toy, 10, None)
    line = (
        f"toy (T = 10): psi = {tuple(row['psi'])}, phi = {tuple(str(f) for f in row['phi'])}, "
        f"rel {row['rel']:.3f}, dist {row['dist']:.3f} s, FIFO's unfairness {row['fifo']:.3f} s, "
        f"tied instants {row['ties']} ({row['tied_jobs']} jobs)"
    )
    lines += [line, ""]
    print(line + "\n", flush=True)
    head = (
        f"{'log':<10} {'jobs':<10} {'window':>9} {'n':>5} {'off':>4} {'rel':>9} "
        f"{'dist':>10} {'fifo':>10} {'ties':>5} {'tjobs':>5}"
    )
    say(lines, head)
    rows: dict[str, list[dict]] = {}
    logs = {name: (file, jobs) for name, (file, jobs, _) in LOGS.items()}
    for name, jobs, _, w0, inst in log_windows(
        args.traces, logs, args.length, args.windows, [args.k]
    ):
        rule = LOGS[name][2]
        row = own_surplus(inst, args.length, rule)
        rows.setdefault(jobs, []).append(row)
        say(
            lines,
            f"{name:<10} {jobs + ('/' + rule if rule else ''):<10} {w0:>9} {row['jobs']:>5} "
            f"{row['off']:>4} {row['rel']:>9.2e} {row['dist']:>10.3e} {row['fifo']:>10.3e} "
            f"{row['ties']:>5} {row['tied_jobs']:>5}",
        )
    lines.append("")
    for jobs, got in rows.items():
        busy = [x for x in got if x["fifo"] > 0]
        line = (
            f"# {jobs}: {sum(x['off'] > 0 for x in got)} of {len(got)} windows with a surplus "
            f"not 0; worst rel {max(x['rel'] for x in got):.4f}; dist mean "
            f"{np.mean([x['dist'] for x in got]):.2f} s, worst {max(x['dist'] for x in got):.2f} s;"
            f" FIFO's unfairness mean {np.mean([x['fifo'] for x in got]):.1f} s; dist / FIFO's at"
            f" most {max((x['dist'] / x['fifo'] for x in busy), default=0.0):.4f}; windows with a"
            f" tied instant {sum(x['ties'] > 0 for x in got)}, {sum(x['ties'] for x in got)} tied"
            f" instants, {sum(x['tied_jobs'] for x in got)} jobs; windows where FIFO is REF"
            f" {len(got) - len(busy)}, their worst rel "
            f"{max((x['rel'] for x in got if x['fifo'] == 0), default=0.0):.4f}"
        )
        say(lines, line)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
