"""The sampled audit's counterfactuals against the exact audit's (issue 43, item 4).

    PYTHONPATH=src python benchmarks/counterfactuals_sampled.py [--traces DIR] [--samples 400]

On windows small enough for the exact audit (k <= 16), each policy's unfairness three ways:

* ``exact REF``: the exact audit's, ``sum_u |psi_u(P) - psi_u(REF)| / p_tot(REF)`` against
  REF's own schedule of the grand coalition (paper Sec. 7.2);
* ``exact f``: what the sampled audit estimates, ``sum_u |psi_u(P) - f_u| / p_tot``, ``f``
  the fair utilities of the sampled game (its coalitions under FAIRSHARE, enumerated here,
  so ``f`` is exact) and ``p_tot`` the work of FAIRSHARE's schedule
  (:mod:`coopsched.audit.unfairness`);
* ``sampled``: the sampled audit's estimate, its 95 % interval and its rank.

Cases: three synthetic logs of :func:`tests.conftest.fifo_recorded` (8, 10 and 12
organizations, sequential jobs) and SDSC-SP2, January 2000 (the busiest month, rigid jobs,
EASY) by its 7 busiest users and ``other``. Printed per case: the rows, the share of the
policies whose interval covers ``exact f`` and ``exact REF``, and the rank correlation
(Kendall's tau) of ``exact REF`` with ``exact f``.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "tests"))


def kendall(a: list[float], b: list[float]) -> float:
    n, s, pairs = len(a), 0.0, 0
    for i in range(n):
        for j in range(i + 1, n):
            s += np.sign(a[i] - a[j]) * np.sign(b[i] - b[j])
            pairs += 1
    return s / pairs if pairs else float("nan")


def case(label: str, rec, T: int, rule, samples: int) -> None:
    from coopsched.audit import audit
    from coopsched.audit.sampling import coalition_values
    from coopsched.online.policies import get_policy
    from coopsched.online.shapley import shapley

    inst = dataclasses.replace(rec, start=None)
    G = (1 << inst.k) - 1
    table = [0] + [coalition_values(inst, T, [T], m, backfill=rule)[0] for m in range(1, G + 1)]
    f = np.array([float(x) for x in shapley(table)])
    stand = get_policy("fairshare")
    sched = stand.run(inst, T, backfill=rule) if inst.rigid else stand.run(inst, T)
    p_tot = float(sum(sched.work(T)))
    kw = {"backfill": rule} if inst.rigid else {}
    exact = audit(rec, horizon=T, points=2, **kw).to_dict()["counterfactuals"]
    sampled = audit(rec, horizon=T, points=2, method="sampled", samples=samples, **kw)
    rows = {c["policy"]: c for c in sampled.to_dict()["counterfactuals"]}
    psi_of = {}
    from coopsched.audit.counterfactuals import policy_names
    from coopsched.audit.game import recorded_schedule

    psi_of["recorded"] = recorded_schedule(rec, T).psi(T)
    for name in policy_names():
        if name in rows and name != "recorded":
            try:
                pol = get_policy(name, seed=0)
            except (TypeError, ValueError):
                pol = get_policy(name)
            s = pol.run(inst, T, backfill=rule) if inst.rigid else pol.run(inst, T)
            psi_of[name] = s.psi(T)
    print(f"== {label}: k {inst.k}, {inst.n:,} jobs, {samples} orders at most")
    print(
        f"   {'policy':15} {'exact REF':>10} {'exact f':>10} {'sampled':>10} {'interval':>21} rank"
    )
    ex_ref, ex_f, in_f, in_ref = [], [], 0, 0
    for c in exact:
        name = c["policy"]
        r = rows.get(name)
        if r is None or r["unfairness"] is None or c["unfairness"] is None or name not in psi_of:
            continue
        ef = float(np.abs(np.array(psi_of[name], float) - f).sum()) / p_tot
        lo, hi = r["unfairness_low"], r["unfairness_high"]
        ex_ref.append(c["unfairness"])
        ex_f.append(ef)
        in_f += lo <= ef <= hi
        in_ref += lo <= c["unfairness"] <= hi
        print(
            f"   {name:15} {c['unfairness']:10.3f} {ef:10.3f} {r['unfairness']:10.3f} "
            f"[{lo:8.3f}, {hi:8.3f}] {r['rank']}"
        )
    n = len(ex_ref)
    print(
        f"   intervals covering exact f: {in_f} of {n}; covering exact REF: {in_ref} of {n}; "
        f"Kendall tau (exact REF, exact f) {kendall(ex_ref, ex_f):.2f}",
        flush=True,
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--traces", type=Path, default=Path(os.environ.get("TRACES", "../shared/traces"))
    )
    ap.add_argument("--samples", type=int, default=400)
    args = ap.parse_args()
    from audit_sampled import window
    from busy_months import month_bounds, read
    from conftest import fifo_recorded

    for k, n, seed in ((8, 120, 3), (10, 200, 5), (12, 300, 7)):
        case(f"fifo_recorded({k}, {n}, {seed})", fifo_recorded(k, n, seed), 60, None, args.samples)
    log = read(args.traces, "SDSC-SP2-1998-4.2-cln.swf.gz")
    t0, t1 = month_bounds(log, "2000-01")
    with tempfile.TemporaryDirectory() as d:
        inst, T, rule = window(log, t0, t1, 8, Path(d))
    case("SDSC-SP2 2000-01, 7 busiest users + other", inst, T, rule, args.samples)


if __name__ == "__main__":
    main()
