"""Why the sampled audit needs many orders on a real month (issue 29, items 2 and 3).

    PYTHONPATH=src python benchmarks/audit_variance.py [--traces ../shared/traces] [--k 50]

On RICC's 30-day window by user (the case of ``benchmarks/audit_sampled.py``: the ``N - 1``
busiest users and ``other``, rigid jobs, the platform's backfilling rule, coalitions valued
under FAIRSHARE at the window's end), it draws ``--orders`` uniform orders and records every
organization's marginal contribution and its position in each order. Printed per
organization, sorted by ``|surplus| / phi``:

* ``psi/phi`` (``phi`` estimated from these orders);
* ``sd/|phi|``: the spread of its marginal contributions relative to its Shapley value;
* ``within/sd``: the spread left once the mean of each fifth of the positions is taken out
  (what sampling stratified by coalition size could remove is ``1 - (within/sd)^2`` of the
  variance);
* the orders a Student-t 95 % interval needs to tell the sign of the surplus,
  ``(1.96 sd / |surplus|)^2``, plain and stratified (from ``within``);

then, over the organizations whose ``|surplus|`` is at least 5 % of ``phi``, the median and
largest number of orders needed. Figures from ``--orders`` orders are estimates: an
organization's ``sd`` from 60 orders is itself uncertain by about 10 %. Not a timing (the
CPU seconds it prints are for orientation only).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--orders", type=int, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--strata", type=int, default=5)
    args = ap.parse_args()

    from audit_sampled import ricc_month  # the benchmark's own window and organizations

    from coopsched.audit.sampling import coalition_values

    with tempfile.TemporaryDirectory() as d:
        inst, T, rule, psi = ricc_month(args.traces, args.k, Path(d))
    k, G = inst.k, (1 << inst.k) - 1
    values: dict[int, float] = {0: 0.0, G: float(psi.sum())}

    def v(mask: int) -> float:
        if mask not in values:
            values[mask] = float(coalition_values(inst, T, [T], mask, "fairshare", 0, rule)[0])
        return values[mask]

    rng = np.random.default_rng(args.seed)
    marg = np.zeros((k, args.orders))
    pos = np.zeros((k, args.orders), dtype=np.int64)
    cpu = time.process_time()
    for o in range(args.orders):
        mask, prev = 0, 0.0
        for p, i in enumerate(rng.permutation(k)):
            mask |= 1 << int(i)
            val = v(mask)
            marg[i, o], pos[i, o], prev = val - prev, p, val
    cpu = time.process_time() - cpu
    print(
        f"RICC days 30-60 by user, k={k}, {inst.n:,} jobs, {args.orders} uniform orders, "
        f"{len(values) - 2:,} coalitions valued (FAIRSHARE, rigid, {rule}; {cpu:.0f} s CPU)"
    )
    phi = marg.mean(axis=1)
    sd = marg.std(axis=1, ddof=1)
    within = np.empty(k)
    for i in range(k):
        stratum = pos[i] * args.strata // k
        r = marg[i].copy()
        for s in range(args.strata):
            sel = stratum == s
            if sel.any():
                r[sel] -= r[sel].mean()
        within[i] = r.std(ddof=1)
    surplus = np.abs(psi - phi)
    rel = surplus / np.abs(phi)
    need = (1.96 * sd / np.maximum(surplus, 1e-300)) ** 2
    need_s = (1.96 * within / np.maximum(surplus, 1e-300)) ** 2
    print(" org   psi/phi   sd/|phi|  within/sd  orders needed: plain  stratified")
    for i in np.argsort(-rel):
        print(
            f"{i:4d} {psi[i] / phi[i]:9.3f} {sd[i] / abs(phi[i]):10.3f} {within[i] / sd[i]:10.3f}"
            f" {need[i]:21,.0f} {need_s[i]:11,.0f}"
        )
    big = rel >= 0.05
    share = 1 - (within / sd) ** 2
    print(
        f"{int(big.sum())} of {k} organizations have |surplus| >= 5 % of phi; orders needed "
        f"to decide their signs: median {np.median(need[big]):,.0f}, largest "
        f"{need[big].max():,.0f} (stratified by size: {need_s[big].max():,.0f}); share of "
        f"the variance that stratifying by size removes: median {np.median(share):.2f}, "
        f"largest {share.max():.2f}"
    )


if __name__ == "__main__":
    main()
