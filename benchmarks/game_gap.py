"""How far the greedy policies' coalition values are from REF's (issue 29, item 1).

    python benchmarks/game_gap.py [--traces ../shared/traces] [--k 12,14]
                                  [--starts 9900000,11050000,18900000,17246023]

The sampled audit needs ``v(C)`` for the coalitions its orders visit. Skowron & Rzadca's
Definition 3.2 values every proper coalition by REF, the exact Shapley-fair schedule of that
coalition alone; REF of a coalition of ``c`` members simulates its ``2^c`` subcoalitions, so
a sampled audit at k = 20 to 100 cannot afford it for large coalitions, and a cheaper greedy
policy (FIFO, the fair shares, DIRECTCONTR, ROUNDROBIN) is the candidate stand-in. This
benchmark measures what the stand-in changes, on windows where the exact game is
affordable: LPC-EGEE windows of 5e4 s (starts relative to the log's first submit, the windows
of ``benchmarks/ref_windows.py``: two of median size and the two costliest for REF),
sequential jobs, users dealt in turn to ``k`` organizations with 70 machines split uniformly
(``trace_to_instance``, seed 1), each window at each ``k``.

For every nonempty coalition ``C``: ``v_REF(C)`` (one REF run gives all ``2^k - 1``) and
``v_p(C)``, the ``psi_sp`` total at the horizon of ``C``'s members scheduled alone by ``p``
on their machines. Printed per window and policy: the share of coalitions with the same
value, the relative gap ``|v_p - v_REF| / v_REF`` (median, 99th percentile, largest), its
sign (how many coalitions ``p`` values above REF), and what it does to the Shapley values:
``phi`` of the game with every proper coalition valued by ``p`` (``all``), and of the
sampled audit's former mix (REF up to 8 members, ``p`` above: ``mix8``), against ``phi`` of
the REF game, as the largest ``|delta phi_u| / |phi_REF_u|`` over organizations. The grand
coalition's value is the same in all three games (in the audit, the recorded total), so the
differences do not depend on it; here it is REF's.
"""

from __future__ import annotations

import argparse
import math
import os
from pathlib import Path

import numpy as np

from coopsched.online.policies import get_policy
from coopsched.online.ref import ref_schedule
from coopsched.online.shapley import popcounts
from coopsched.workloads.prepare import trace_to_instance
from coopsched.workloads.swf import read_swf

WINDOW = 50_000
POLICIES = ("fifo", "fairshare", "utfairshare", "currfairshare", "directcontr", "roundrobin")


def shapley_float(v: np.ndarray, k: int) -> np.ndarray:
    """Exact Shapley values (Skowron & Rzadca, Eq. 1) of a float table, vectorized."""
    pc = popcounts(k)
    w = np.array([1.0 / (k * math.comb(k - 1, s)) for s in range(k)])
    idx = np.arange(1 << k)
    out = np.zeros(k)
    for u in range(k):
        S = idx[(idx >> u & 1) == 0]
        out[u] = float(np.sum(w[pc[S]] * (v[S | (1 << u)] - v[S])))
    return out


def policy_table(inst, policy: str, k: int) -> np.ndarray:
    pol = get_policy(policy)
    v = np.zeros(1 << k)
    for m in range(1, 1 << k):
        members = [u for u in range(k) if m >> u & 1]
        v[m] = float(sum(pol.run(inst, WINDOW, members=members).psi(WINDOW)))
    return v


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--k", default="12,14")
    ap.add_argument("--starts", default="9900000,11050000,18900000,17246023")
    ap.add_argument("--exact-upto", type=int, default=8)
    args = ap.parse_args()
    tr = read_swf(Path(args.traces) / "LPC-EGEE-2004-1.2-cln.swf.gz")
    print(f"# load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(
        f"{'window':>9} {'k':>3} {'jobs':>5} {'policy':>13} {'same':>6} {'median':>8} "
        f"{'p99':>8} {'max':>8} {'above':>6} {'phi all':>8} {'phi mix8':>8}"
    )
    worst: dict[str, float] = {}
    worst_phi: dict[str, tuple[float, float]] = {}
    for k in (int(x) for x in args.k.split(",")):
        pc = popcounts(k)
        G = (1 << k) - 1
        for st in (int(x) for x in args.starts.split(",")):
            inst = trace_to_instance(tr, k=k, start=st, length=WINDOW, seed=1)
            _, vals = ref_schedule(inst, WINDOW)
            ref = np.array([float(x) for x in vals])
            phi_ref = shapley_float(ref, k)
            proper = np.arange(1, G)
            for p in POLICIES:
                v = policy_table(inst, p, k)
                r, g = ref[proper], v[proper]
                ok = r > 0
                rel = np.abs(g[ok] - r[ok]) / r[ok]
                v_all = v.copy()
                v_all[G] = ref[G]
                v_mix = np.where(pc <= args.exact_upto, ref, v)
                v_mix[G] = ref[G]
                scale = np.maximum(np.abs(phi_ref), 1e-300)
                d_all = float(np.max(np.abs(shapley_float(v_all, k) - phi_ref) / scale))
                d_mix = float(np.max(np.abs(shapley_float(v_mix, k) - phi_ref) / scale))
                worst[p] = max(worst.get(p, 0.0), float(rel.max(initial=0.0)))
                a, b = worst_phi.get(p, (0.0, 0.0))
                worst_phi[p] = (max(a, d_all), max(b, d_mix))
                print(
                    f"{st:9d} {k:3d} {inst.n:5d} {p:>13} {np.mean(g == r):6.1%} "
                    f"{np.median(rel):8.2e} {np.quantile(rel, 0.99):8.2e} "
                    f"{rel.max(initial=0.0):8.2e} {np.mean(g > r):6.1%} "
                    f"{d_all:8.2e} {d_mix:8.2e}",
                    flush=True,
                )
    print("largest relative coalition gap, and largest relative phi change (all / mix8):")
    for p in POLICIES:
        print(f"  {p:>13}: {worst[p]:.2e}   phi {worst_phi[p][0]:.2e} / {worst_phi[p][1]:.2e}")


if __name__ == "__main__":
    main()
