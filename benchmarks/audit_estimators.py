"""Lower-variance estimators for the sampled audit, measured on a real month (issue 29, item 3).

    PYTHONPATH=src python benchmarks/audit_estimators.py [--traces ../shared/traces] [--k 50]
        [--pairs 200] [--pool pool.npz]

On RICC's 30-day window by user (the case of ``benchmarks/audit_sampled.py`` and
``benchmarks/audit_variance.py``: the ``N - 1`` busiest users and ``other``, rigid jobs, the
platform's backfilling rule, coalitions valued under FAIRSHARE at the window's end), it draws
a pool of ``--pairs`` antithetic pairs of uniform orders and values every coalition they
need once (``--pool FILE`` keeps the values, so that a second run re-simulates nothing),
plus every organization's singleton ``{u}`` and complement ``N - u`` and the grand coalition
under FAIRSHARE. Then, without simulating again, it compares per organization three
estimators of the same game (the audit's: ``v(N)`` the recorded total) at equal numbers of
orders:

* ``plain``: the audit's estimator until now, the mean of the pairs' marginal contributions
  (:func:`coopsched.audit.estimation.shapley_antithetic`);
* ``split``: the game written as ``v' + (v(N) - v'(N)) u_N``, where ``v'`` values the grand
  coalition like every other one (FAIRSHARE) and ``u_N`` is the unanimity game of the grand
  coalition (Shapley value ``1/N`` for everyone): ``phi = phi(v') + (v(N) - v'(N)) / N``
  exactly, ``phi(v')`` sampled (one more simulation);
* ``ends``: the same estimate stratified by position: the marginal contributions at the
  first position (``v({u})``) and at the last (``v(N) - v(N - u)``) are valued exactly for
  every organization (``2 N`` coalitions before the first order), and only the ``N - 2``
  middle positions sampled (the pairs in which ``u`` is first or last do not count for it):
  ``phi_u = (v({u}) + v(N) - v(N - u)) / N + (N - 2) / N * E[middle]``
  (``estimator="ends"`` of :func:`~coopsched.audit.estimation.shapley_antithetic`).

Printed: per organization (sorted by ``|surplus| / |phi|``, ``phi`` from the whole pool
under ``ends``), each estimator's variance per pair (``ends``: ``(N - 2) / N`` times the
variance of the middle pair means, what one pair adds at equal orders) and the orders a
95 % interval needs to decide the sign; then the ratios of the variances (quartiles over the
organizations) and, for 50, 100 and 200 orders, the mean number of decided signs over
``--resamples`` subsets of the pool's pairs drawn without replacement (95 % Student t
intervals, one look), with how many of those signs differ from the one the pool's other
pairs give (under ``ends``) and the share of the intervals that hold those pairs' ``phi``
(an estimate too, so this share is a little below the true coverage); last, the audit's
adaptive sampling replayed on the pool (the orders at which it stops, at most the pool's
or 400, :func:`replay`). ``benchmarks/run_all.py`` runs it at N = 50 (200 pairs) and at
N = 100 (``--k 100 --pairs 100``). Not a timing (the CPU seconds are for orientation; the
machine may be loaded, see the header).
"""

from __future__ import annotations

import argparse
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))


def build(args):
    """``(k, psi, grand_fs, values, perms, cpu)``: the pool (loaded from ``--pool`` when it
    exists and matches, else sampled and saved there)."""
    from audit_sampled import ricc_month

    from coopsched.audit.sampling import coalition_values

    with tempfile.TemporaryDirectory() as d:
        inst, T, rule, psi = ricc_month(args.traces, args.k, Path(d))
    k, G = inst.k, (1 << inst.k) - 1
    values: dict[int, float] = {0: 0.0, G: float(psi.sum())}
    perms: list[np.ndarray] = []
    pool = Path(args.pool) if args.pool else None
    if pool is not None and pool.exists():
        z = np.load(pool)
        if int(z["k"]) == k and np.array_equal(z["psi"], psi):
            masks = z["masks"]  # hexadecimal strings (k > 63), or integers
            keys = [int(x, 16) for x in masks] if masks.dtype.kind == "U" else masks.tolist()
            values.update(zip(keys, z["vals"].tolist(), strict=True))
            perms = list(z["perms"])
    cpu = time.process_time()

    def v(mask: int) -> float:
        if mask not in values:
            values[mask] = float(coalition_values(inst, T, [T], mask, "fairshare", 0, rule)[0])
        return values[mask]

    grand_fs = float(coalition_values(inst, T, [T], G, "fairshare", 0, rule)[0])
    for u in range(k):
        v(1 << u)
        v(G ^ (1 << u))
    rng = np.random.default_rng(args.seed)
    for _ in perms:  # the pool's orders were drawn from the same seed
        rng.permutation(k)

    def save() -> None:
        if pool is not None:
            np.savez(
                pool,
                masks=np.array([format(m, "x") for m in values]),
                vals=np.array(list(values.values())),
                perms=np.array(perms, dtype=np.int64).reshape(-1, k),
                psi=psi,
                k=k,
            )

    while len(perms) < args.pairs:
        perm = rng.permutation(k)
        acc = 0
        for u in perm:
            acc |= 1 << int(u)
            v(acc)
            v(G ^ acc)
        perms.append(perm)
        if len(perms) % 10 == 0:
            save()
    save()
    cpu = time.process_time() - cpu
    return inst, k, psi, grand_fs, values, np.array(perms[: args.pairs]), cpu


def pair_means(k, values, perms, grand_fs=None):
    """Per pair and organization: the mean of its two marginal contributions (the order and
    its reverse), and whether it is first or last in them (``end``). With ``grand_fs``, the
    grand coalition is valued at it (the game ``v'``)."""
    G = (1 << k) - 1
    val = dict(values)
    if grand_fs is not None:
        val[G] = grand_fs
    Y = np.zeros((len(perms), k))
    end = np.zeros((len(perms), k), dtype=bool)
    for p, perm in enumerate(perms):
        acc = 0
        for u in perm:
            u = int(u)
            nxt = acc | 1 << u
            Y[p, u] = ((val[nxt] - val[acc]) + (val[G ^ acc] - val[G ^ nxt])) / 2
            acc = nxt
        end[p, perm[0]] = end[p, perm[-1]] = True
    return Y, end


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--k", type=int, default=50)
    ap.add_argument("--pairs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=12345)
    ap.add_argument("--pool", help="npz file keeping the pool's coalition values")
    ap.add_argument("--resamples", type=int, default=400)
    ap.add_argument("--replays", type=int, default=20)
    args = ap.parse_args()

    from coopsched.audit.estimation import t_quantile

    inst, k, psi, grand_fs, values, perms, cpu = build(args)
    G = (1 << k) - 1
    P = len(perms)
    rec = values[G]
    gap = rec - grand_fs
    print(
        f"RICC days 30-60 by user, k={k}, {inst.n:,} jobs, {P} antithetic pairs ({2 * P} "
        f"orders), {len(values) - 2:,} coalitions valued (FAIRSHARE, rigid, EASY; {cpu:.0f} s "
        "CPU for those not in --pool)"
    )
    print(
        f"grand coalition: recorded {rec:.4e}, under FAIRSHARE {grand_fs:.4e}; "
        f"v(N) - v'(N) = {gap:.4e}, {gap / k:.4e} per organization"
    )
    seen: set[int] = set()
    for perm in perms:
        acc = 0
        for u in perm[:-1]:
            acc |= 1 << int(u)
            seen.update((acc, G ^ acc))
    print(
        f"the pairs visit {2 * (k - 1) * P:,} proper coalitions, {len(seen):,} distinct "
        f"(caching saves {1 - len(seen) / (2 * (k - 1) * P):.1%} of the simulations)"
    )
    Y, end = pair_means(k, values, perms)
    Ys, _ = pair_means(k, values, perms, grand_fs)
    ends = np.array([(values[1 << u] + rec - values[G ^ (1 << u)]) / k for u in range(k)])
    w = (k - 2) / k
    mid = ~end
    # estimates from the whole pool
    phi = {
        "plain": Y.mean(0),
        "split": Ys.mean(0) + gap / k,
        "ends": ends + w * np.array([Ys[mid[:, u], u].mean() for u in range(k)]),
    }
    var = {
        "plain": Y.var(0, ddof=1),
        "split": Ys.var(0, ddof=1),
        "ends": w * np.array([Ys[mid[:, u], u].var(ddof=1) for u in range(k)]),
    }
    truth = phi["ends"]
    surplus = np.abs(psi - truth)
    rel = surplus / np.abs(truth)
    big = rel >= 0.05
    need = {m: 2 * (1.96 * np.sqrt(var[m]) / np.maximum(surplus, 1e-300)) ** 2 for m in var}
    print(
        " org  machines   psi/phi   sd/|phi|: plain    split     ends"
        "   orders needed: plain   split    ends"
    )
    for u in np.argsort(-rel):
        sd = [math.sqrt(var[m][u]) / abs(truth[u]) for m in var]
        print(
            f"{u:4d} {int(inst.machines[u]):9d} {psi[u] / truth[u]:9.3f} "
            f"{sd[0]:16.3f} {sd[1]:8.3f} {sd[2]:8.3f} "
            f"{need['plain'][u]:22,.0f} {need['split'][u]:7,.0f} {need['ends'][u]:7,.0f}"
        )
    spread = {m: phi[m] - truth for m in phi}
    print(
        "estimates from the whole pool, largest |phi - phi_ends| / |phi_ends|: "
        + ", ".join(f"{m} {np.max(np.abs(spread[m]) / np.abs(truth)):.3f}" for m in phi)
    )
    for m in ("split", "ends"):
        r = var[m] / var["plain"]
        q1, q2, q3 = np.percentile(r, [25, 50, 75])
        print(
            f"variance per pair, {m} / plain, over the {k} organizations: quartiles "
            f"{q1:.4f} {q2:.4f} {q3:.4f}, largest {r.max():.4f} (median reduction "
            f"x{1 / q2:,.0f})"
        )
    r = var["ends"] / var["split"]
    print(
        "variance per pair, ends / split: quartiles "
        + " ".join(f"{x:.3f}" for x in np.percentile(r, [25, 50, 75]))
        + f", largest {r.max():.3f}"
    )
    print(
        f"{int(big.sum())} of {k} organizations have |surplus| >= 5 % of phi; orders needed to "
        "decide their signs (95 %): "
        + "; ".join(
            f"{m} median {np.median(need[m][big]):,.0f}, largest {need[m][big].max():,.0f}"
            for m in need
        )
    )
    rng = np.random.default_rng(0)
    for orders in (50, 100, 200):
        n = orders // 2
        if 2 * n > P:  # the other pairs: at least as many
            break
        q = t_quantile(0.975, n - 1)
        # an exact interval holds an independent estimate from P - n pairs with probability
        # P(|Z| <= 1.96 / sqrt(1 + n / (P - n))) (normal approximation)
        expect = math.erf(1.96 / math.sqrt(1 + n / (P - n)) / math.sqrt(2))
        got = {m: [] for m in phi}
        for _ in range(args.resamples):
            sel = rng.choice(P, size=n, replace=False)
            y, ys, md = Y[sel], Ys[sel], mid[sel]
            est = {
                "plain": (y.mean(0), q * y.std(0, ddof=1) / math.sqrt(n)),
                "split": (ys.mean(0) + gap / k, q * ys.std(0, ddof=1) / math.sqrt(n)),
            }
            e_phi, e_hw = np.empty(k), np.empty(k)
            for u in range(k):
                x = ys[md[:, u], u]
                nu = len(x)
                e_phi[u] = ends[u] + w * x.mean()
                e_hw[u] = w * t_quantile(0.975, nu - 1) * x.std(ddof=1) / math.sqrt(nu)
            est["ends"] = (e_phi, e_hw)
            # the reference: the pairs left out, under ends (independent of the subset)
            rest = np.ones(P, dtype=bool)
            rest[sel] = False
            ref = np.array([ends[u] + w * Ys[rest & mid[:, u], u].mean() for u in range(k)])
            for m, (p_, h_) in est.items():
                dec = (psi < p_ - h_) | (psi > p_ + h_)
                wrong = dec & (np.sign(psi - p_) != np.sign(psi - ref))
                cover = np.mean(np.abs(p_ - ref) <= h_)
                got[m].append((dec[big].sum(), dec.sum(), wrong.sum(), cover))
        print(
            f"{orders} orders: signs decided, mean over {args.resamples} subsets (of the "
            f"{int(big.sum())} with |surplus| >= 5 % / of all {k} / of them against the "
            "sign from the pool's other pairs), and the share of intervals holding phi from "
            f"the other pairs (an exact 95 % interval: about {expect:.3f}, those pairs' "
            "estimate having its own error): "
            + "; ".join(
                f"{m} "
                + " / ".join(f"{x:.1f}" for x in np.mean(g, axis=0)[:3])
                + f", {np.mean(g, axis=0)[3]:.3f}"
                for m, g in got.items()
            )
        )
    replay(args, k, psi, values, perms, gap, truth, big)


def replay(args, k, psi, values, perms, gap, truth, big) -> None:
    """The audit's adaptive sampling replayed on the pool: ``--replays`` times, the pool's
    pairs in a random order feed :func:`~coopsched.audit.estimation.shapley_antithetic`
    (``draw``), looks at 20 orders then doubling with Bonferroni's split, 95 %, stopping
    once every organization's sign is decided or its surplus shown below 5 % of ``phi``
    (``negligible=0.05``, as ``benchmarks/audit_sampled.py``), or when the pool is spent."""
    from coopsched.audit.estimation import shapley_antithetic, unanimity_control
    from coopsched.audit.sampling import sign_decided, small_surplus

    state = {"big": False, "first": None}

    def decide(phi, hw):
        p, h = phi[:, 0], hw[:, 0]
        d = sign_decided(psi, p, h)
        state["big"] = bool(d[big].all())
        return d | small_surplus(psi, p, h, 0.05)

    def on_look(look, orders, coalitions, undecided):
        if state["big"] and state["first"] is None:
            state["first"] = orders

    rng = np.random.default_rng(1)
    top = min(2 * len(perms), 400)  # as benchmarks/audit_sampled.py's --samples
    for name in ("plain", "split", "ends"):
        kw: dict = {}
        if name == "split":
            g, phi_g = unanimity_control(k, gap)
            kw = {"control": g, "control_phi": phi_g}
        if name == "ends":
            kw = {"ends": True}
        used, dec, stops, first = [], [], [], []
        for _ in range(args.replays):
            state["first"] = None
            feed = iter(perms[rng.permutation(len(perms))].tolist())
            est = shapley_antithetic(
                values.__getitem__,
                k,
                top,
                decide=decide,
                draw=lambda r, feed=feed: next(feed),
                on_look=on_look,
                **kw,
            )
            used.append(est.orders)
            p, h = est.phi[:, 0], est.halfwidth[:, 0]
            d = sign_decided(psi, p, h)
            wrong = d & (np.sign(psi - p) != np.sign(psi - truth))
            dec.append((int(d[big].sum()), int(wrong.sum())))
            stops.append(est.stop)
            first.append(state["first"])
        reached = [x for x in first if x is not None]
        print(
            f"adaptive replay, {name}: {args.replays} replays of the pool's pairs, "
            f"orders at the stop: median {np.median(used):.0f}, largest {max(used)} "
            f"(stopped by the rule in {stops.count('decided')}, all {top} orders spent in "
            f"{stops.count('orders')}); signs decided of the {int(big.sum())} with |surplus| "
            f">= 5 %: median {np.median([a for a, _ in dec]):.0f}, fewest "
            f"{min(a for a, _ in dec)}; against the pool's sign: {sum(b for _, b in dec)} in all; "
            f"all {int(big.sum())} decided at a look in {len(reached)} replays"
            + (
                f", at orders: median {np.median(reached):.0f}, largest {max(reached)}"
                if reached
                else ""
            )
        )


if __name__ == "__main__":
    main()
