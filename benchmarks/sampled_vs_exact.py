"""The sampled audit against the exact one on a real window (issue 29, item 2).

    python benchmarks/sampled_vs_exact.py [--traces ../shared/traces]

LPC-EGEE, 20 December 2004 (one day, Paris time), organizations by user (13 users ran
jobs), sequential jobs: the exact audit (REF over all ``2^13 - 1`` coalitions) and the
sampled one with its defaults (one game under fairshare, antithetic orders, Student-t
intervals at 95 %, adaptive) with at most 320 orders. Per organization: whether the
sampled interval holds the exact ``phi`` (of the REF game, so this also carries the
fairshare stand-in's difference), the error in half-widths, whether the sign was decided,
and whether a decided sign is the exact one. Counts only: no timings.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import coopsched


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--samples", type=int, default=320)
    args = ap.parse_args()
    kw = {
        "org_by": "user",
        "t_from": "2004-12-20",
        "t_to": "2004-12-21",
        "jobs": "sequential",
        "with_counterfactuals": False,
        "points": 0,
    }
    log = Path(args.traces) / "LPC-EGEE-2004-1.2-cln.swf.gz"
    exact = coopsched.audit(log, method="exact", **kw).to_dict()
    sampled = coopsched.audit(log, method="sampled", samples=args.samples, **kw).to_dict()
    s = sampled["sampling"]
    print(
        f"LPC-EGEE 2004-12-20, by user, k = {len(exact['organizations'])}: sampled with "
        f"{s['samples']} of at most {s['max_orders']} orders, {s['looks']} looks, "
        f"stop: {s['stop']}, {s['coalitions_valued']:,} coalitions valued"
    )
    print(
        f"{'org':>5} {'exact surplus/|phi|':>20} {'covered':>8} {'error/hw':>9} "
        f"{'decided':>8} {'sign right':>10}"
    )
    ex = {o["name"]: o for o in exact["organizations"]}
    covered = right = decided = 0
    for o in sampled["organizations"]:
        x = ex[o["name"]]
        hw = (o["phi_high"] - o["phi_low"]) / 2
        cov = o["phi_low"] <= x["phi"] <= o["phi_high"]
        same = (x["psi"] > x["phi"]) == (o["psi"] > o["phi"])
        covered += cov
        decided += o["sign_decided"]
        right += o["sign_decided"] and same
        print(
            f"{o['name']:>5} {(x['psi'] - x['phi']) / abs(x['phi']):20.4f} {cov!s:>8} "
            f"{(o['phi'] - x['phi']) / hw if hw else 0.0:9.2f} {o['sign_decided']!s:>8} "
            f"{(same if o['sign_decided'] else '-')!s:>10}"
        )
    n = len(sampled["organizations"])
    print(f"covered {covered} of {n}; decided {decided} of {n}, of which right {right}")


if __name__ == "__main__":
    main()
