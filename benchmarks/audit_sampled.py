"""Speed of the sampled audit (issue 29, item 3): time to a decided sign on real months.

    PYTHONPATH=src python benchmarks/audit_sampled.py [--traces ../shared/traces] [--workers 2]

Cases (organizations are **users**: the ``N - 1`` busiest users of the window, by
processor-seconds, each one organization, everyone else gathered in ``other``, from a
mapping file written to a temporary directory; rigid jobs, the platform's backfilling rule,
coalitions valued under FAIRSHARE as the audit does by default):

* RICC, days 30-60 of the log (the window of ``benchmarks/audit.py``; 109 users run jobs
  in it), with N = 20, 50 and 100 organizations;
* HPC2N, days 660-690 (the 30-day window, starting at a multiple of 30 days, with the most
  users: 70), N = 71 (all its users, no ``other``);
* KTH-SP2, days 180-210 (likewise: 84 users), N = 85.

Each case runs :func:`coopsched.audit.sampling.sampled_game` as the audit does (25 curve
times, 95 % intervals, adaptive, the organizations the orders leave open refined by
stratified sampling unless ``--no-refine``, with its optimum allocation after the
first look if ``--allocate``, at most ``--samples`` orders, default 5120, so
that the time budget is what stops) with ``negligible=0.05``:
sampling stops once every organization's sign is decided *or* its surplus is shown below
5 % of its ``phi`` (the issue's target: a decided sign for every organization whose
``|surplus|`` is at least 5 % of its ``phi``), or when the case's time budget is spent:
by default the issue's targets, 5 minutes of sampling up to N = 50 organizations and 10
minutes above (``--seconds S`` for one budget for all, ``--seconds 0`` for none). Printed
per case, in one process: wall and CPU seconds, orders used (and when they handed over to
the refinement, how many organizations it took and its most rounds), coalitions valued,
the stop reason, organizations with a decided sign, those shown within 5 %, those neither
(undecided); then each refined organization with its verdict and rounds.

The dask comparison (``--dask-k``: the RICC cases compared, default 50; ``--no-dask`` to
skip it) runs one case with at most ``--dask-orders`` orders and no time budget, once in
one process and once on a local cluster of ``--workers`` processes (CPU of this process
plus the workers'), with the speed-up in wall time and whether both gave the same
estimate, refinement included (they must: same seed, same orders and rounds, same values).

``--budget-on-dask`` runs the budgeted cases themselves on that cluster (the issue allows
"one machine" for the 10-minute budget): wall time within the budget, CPU of all processes.

``--valuation`` first times one coalition's valuation on the RICC month (k = 20): the
schedule's simulation, the former ``sum(psi(t))`` at each curve time over every job, and
the ValueCurve of :func:`~coopsched.audit.sampling.curve_values` (same integers, checked).

``--reference SECONDS`` (``benchmarks/results-audit-reference.txt``): after each budgeted
case, :func:`stratified` estimates, for that many seconds and with ``--reference-seed``,
only the organizations the case left undecided or only within 5 %, and the
``--reference-closest`` decided ones whose intervals came closest to ``psi``; printed per
organization: the budgeted and the reference estimates, intervals and surplus shares, and
whether the reference decides the sign, shows ``|surplus|`` below 5 % of ``phi`` or leaves
it open (and any decided sign it contradicts). ``--estimator`` picks the sampled audit's
estimator (``split``, ``ends`` or ``plain``). ``--samples`` also sets the looks the
intervals are planned for (and the refinement's cap, half as many rounds).

``--quick``: RICC at N = 20 over 3 days only, at most 40 orders (a check that it runs,
about 30 s).

Duration: at most the sum of the budgets (40 minutes for the five cases; with the
refinement about half) plus the dask comparison (80 orders at N = 50 and their refinement,
twice, a few minutes) and reading the logs.
"""

from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import numpy as np

CASES = {
    "ricc": ("RICC-2010-2.swf.gz", 30, (20, 50, 100)),
    "hpc2n": ("HPC2N-2002-2.2-cln.swf.gz", 660, (71,)),
    "kth": ("KTH-SP2-1996-2.1-cln.swf.gz", 180, (85,)),
}


def window(log, t0: int, t1: int, k: int, tmp: Path):
    """``(instance, horizon, backfill rule)`` of ``[t0, t1)`` with the ``k - 1`` busiest
    users as organizations and the others as ``other`` (all users if they are fewer)."""
    from coopsched.audit.organizations import assign_unmatched, by_mapping
    from coopsched.audit.window import recorded_peak, window_instance
    from coopsched.online.rigid import PLATFORM_BACKFILL, resolve_backfill

    j = log.jobs
    inwin = (j["submit"] < t1) & (j["end"] > t0)
    work = (j["processors"] * (j["end"] - j["start"]))[inwin].groupby(j["user"][inwin]).sum()
    users = work.sort_values(ascending=False).index
    top = users if len(users) <= k else users[: k - 1]
    m = tmp / "users.toml"
    m.write_text("".join(f'[[organization]]\nname = "u{u}"\nusers = ["{u}"]\n' for u in top))
    orgs = by_mapping(j, m)
    assign_unmatched(orgs, j, "other")  # jobs outside the window, or of the other users
    machines = max(int(log.machines or 0), recorded_peak(log, t0, t1))  # RICC overruns 8192
    win = window_instance(log, orgs, t0, t1, machines, jobs="rigid")
    inst = win.instance
    return inst, win.horizon, resolve_backfill(inst, PLATFORM_BACKFILL)


def ricc_month(traces: str | Path, k: int, tmp: Path):
    """The RICC month (days 30-60) of :func:`window` at ``k`` organizations, with each
    organization's recorded ``psi`` as floats: ``(instance, horizon, rule, psi)``."""
    from coopsched.audit.game import recorded_starts
    from coopsched.online.utilities import psi_sp
    from coopsched.workloads.swf import read_swf_recorded

    log = read_swf_recorded(Path(traces) / "RICC-2010-2.swf.gz")
    inst, T, rule = window(log, 30 * 86400, 60 * 86400, k, tmp)
    got = psi_sp(inst.org, recorded_starts(inst), inst.size, T, inst.k, inst.processors)
    return inst, T, rule, np.array([float(x) for x in got])


def grid(T: int, points: int = 24) -> list[int]:
    return sorted({int(x) for x in np.linspace(0, T, points + 1)[1:]} | {int(T)})


def worker_cpu(client) -> float:
    return sum(client.run(time.process_time).values()) if client is not None else 0.0


def budget(k: int, args) -> float | None:
    """The case's sampling budget in seconds: the issue's target unless ``--seconds``."""
    if args.seconds is not None:
        return args.seconds or None
    return 300.0 if k <= 50 else 600.0


def run(inst, T, rule, args, client, samples=None, seconds=None) -> tuple[object, float, float]:
    from coopsched.audit.sampling import sampled_game

    cpu0, c0, w0 = time.process_time(), worker_cpu(client), time.perf_counter()
    sg = sampled_game(
        inst,
        T,
        grid(T),
        samples=samples or args.samples,
        seed=args.seed,
        backfill=rule,
        negligible=0.05,
        seconds=seconds,
        scheduler=client,
        estimator=args.estimator,
        refine=not args.no_refine,
        allocate=args.allocate,
    )
    wall = time.perf_counter() - w0
    cpu = time.process_time() - cpu0 + worker_cpu(client) - c0
    return sg, wall, cpu


def verdicts(sg) -> tuple[np.ndarray, np.ndarray]:
    """Per organization: shown within 5 % of its ``phi`` (sign undecided), and neither
    decided nor within (undecided)."""
    from coopsched.audit.sampling import small_surplus

    psi = np.asarray(sg.psi, dtype=np.float64)
    small = small_surplus(psi, sg.phi, sg.halfwidth, 0.05) & ~sg.sign_decided
    return small, ~(sg.sign_decided | small)


def describe(sg) -> str:
    small, neither = verdicts(sg)
    r = sg.refinement
    refined = (
        ""
        if r is None
        else f", then {len(r.players)} refined, up to {int(r.rounds.max())} rounds (stop: {r.stop})"
    )
    return (
        f"orders {sg.samples:4} (stop: {sg.estimate.stop}){refined}, coalitions "
        f"{sg.coalitions:6,}; signs decided {int(sg.sign_decided.sum())}, within 5 % "
        f"{int(small.sum())}, undecided {int(neither.sum())}"
    )


def refined_verdicts(sg, names) -> str:
    """Each refined organization with its verdict: ``+``/``-`` (sign decided), ``~5 %``
    (shown within 5 %) or ``?`` (neither), and the rounds it used (after the first look,
    its draws per run of positions, the optimum allocation)."""
    r = sg.refinement
    if r is None:
        return "  nothing refined"
    small, _ = verdicts(sg)
    psi = np.asarray(sg.psi, dtype=np.float64)
    out = []
    alloc = r.allocation or [None] * len(r.players)
    for u, n, a in zip(r.players, r.rounds, alloc, strict=True):
        mark = (
            ("+" if psi[u] > sg.phi[u] else "-")
            if sg.sign_decided[u]
            else "~5 %"
            if small[u]
            else "?"
        )
        draws = "" if a is None else ", draws " + "/".join(str(x) for x in a)
        out.append(f"{names[u]} {mark} ({int(n)}{draws})")
    return "  refined (verdict, rounds): " + ", ".join(out)


def settle_times(sg, names) -> str:
    """When the organizations were settled (sign decided or shown within 5 %; recorded at
    the looks, so to a look's precision), and for each one left open the projection of
    what settling it would take at its observed spread."""
    at = np.asarray(sg.settled_at, dtype=np.float64)
    done = np.sort(at[~np.isnan(at)])
    if len(done) == 0:
        line = "  settled: none"
    else:
        q = {p: done[min(len(done) - 1, int(np.ceil(p * len(done))) - 1)] for p in (0.5, 0.9)}
        line = (
            f"  settled: {len(done)} of {len(at)}; half by {q[0.5]:.0f} s, 90 % by "
            f"{q[0.9]:.0f} s, the last at {done[-1]:.0f} s"
        )
    for u, p in sorted((sg.projection or {}).items(), key=lambda kv: kv[1].seconds):
        line += (
            f"\n  open {names[u]}: after {p.done} {p.unit}, projected {p.samples:,.0f} more "
            f"({p.coalitions:,.0f} coalitions, {p.seconds / 3600:,.1f} h at this run's pace)"
        )
    return line


def stratified(
    v, k: int, targets: list[int], grand: float, seconds: float, seed: int, rounds: int = 0
) -> tuple[dict[int, float], dict[int, float], int]:
    """The Shapley values of the players ``targets`` only, stratified by position: for each
    target ``u``, its marginal contributions at the first position (``v({u})``) and at the
    last (``grand - v(N - u)``) valued exactly, and in each middle position ``s`` (``1`` to
    ``k - 2``) one coalition ``S`` of ``s`` other players drawn uniformly per round,
    ``v(S + u) - v(S)``; rounds over all targets until ``seconds`` are spent (at least 2, or
    exactly ``rounds`` if given). ``phi_u`` is the mean over the ``k`` positions of the
    positions' means; its 95 % half-width ``1.96 sqrt(sum_s var_s / n_s) / k`` (central
    limit theorem over the strata). Costs 2 coalitions per draw, whatever ``k``: far more
    draws per target than full orders give in the same time when the targets are few.
    Returns ``(phi, halfwidth, rounds)``."""
    rng = np.random.default_rng(seed)
    first = {u: v(1 << u) for u in targets}
    G = (1 << k) - 1
    last = {u: grand - v(G ^ (1 << u)) for u in targets}
    draws: dict[int, list[list[float]]] = {u: [[] for _ in range(k)] for u in targets}
    t0 = time.perf_counter()
    done = 0
    while True:
        for u in targets:
            others = np.array([w for w in range(k) if w != u])
            for s in range(1, k - 1):
                m = 0
                for w in rng.choice(others, size=s, replace=False):
                    m |= 1 << int(w)
                draws[u][s].append(v(m | 1 << u) - v(m))
        done += 1
        if rounds:
            if done >= rounds:
                break
        elif done >= 2 and time.perf_counter() - t0 > seconds:
            break
    phi, hw = {}, {}
    for u in targets:
        mid = [np.asarray(draws[u][s]) for s in range(1, k - 1)]
        phi[u] = (first[u] + last[u] + sum(float(x.mean()) for x in mid)) / k
        var = sum(float(x.var(ddof=1)) / len(x) for x in mid) / k**2
        hw[u] = 1.96 * var**0.5
    return phi, hw, done


def reference(inst, T, rule, sg, args) -> None:
    """A reference for the budgeted run ``sg``: for each organization it left undecided or
    only within 5 %, and the ``--reference-closest`` decided ones whose interval came
    closest to ``psi``, a long stratified estimate (:func:`stratified`, seed
    ``--reference-seed``, ``--reference`` seconds) of the same game (coalitions under
    FAIRSHARE with the platform's rule, the grand coalition at the recorded total); printed
    per organization with the budgeted run's estimate and the reference's verdict."""
    from coopsched.audit.sampling import coalition_values, sign_decided, small_surplus

    k = inst.k
    psi = np.asarray(sg.psi, dtype=np.float64)
    small, neither = verdicts(sg)
    margin = np.abs(psi - sg.phi) / np.where(sg.halfwidth > 0, sg.halfwidth, np.inf)
    decided = [int(u) for u in np.argsort(margin) if sg.sign_decided[u]]
    open_ = [int(u) for u in np.flatnonzero(neither | small)]
    targets = open_ + decided[: args.reference_closest]
    if not targets:
        print("  reference: nothing to settle", flush=True)
        return
    cache: dict[int, float] = {0: 0.0, (1 << k) - 1: float(psi.sum())}

    def v(mask: int) -> float:
        x = cache.get(mask)
        if x is None:
            x = cache[mask] = float(coalition_values(inst, T, [T], mask, "fairshare", 0, rule)[0])
        return x

    cpu0, w0 = time.process_time(), time.perf_counter()
    phi, hw, rounds = stratified(
        v, k, targets, float(psi.sum()), args.reference, args.reference_seed
    )
    wall, cpu = time.perf_counter() - w0, time.process_time() - cpu0
    print(
        f"  reference (stratified by position, seed {args.reference_seed}): {len(targets)} "
        f"organizations, {rounds} draws per middle position each ({rounds * (k - 2):,} per "
        f"organization; the budgeted run: {sg.samples} orders), {len(cache) - 2:,} coalitions "
        f"valued; wall {wall:.1f} s CPU {cpu:.1f} s",
        flush=True,
    )
    names = inst.names
    counts = {"decided": 0, "within": 0, "open": 0, "contradicts": 0}
    for u in targets:
        p, w = np.array([phi[u]]), np.array([hw[u]])
        was = (
            "undecided"
            if neither[u]
            else "within 5 %"
            if small[u]
            else f"decided {'+' if psi[u] > sg.phi[u] else '-'}"
        )
        if sign_decided(psi[u : u + 1], p, w)[0]:
            sign = "+" if psi[u] > phi[u] else "-"
            now = f"sign decided {sign}"
            if was.startswith("decided") and was[-1] != sign:
                now += " CONTRADICTS THE BUDGETED RUN"
                counts["contradicts"] += 1
            counts["decided"] += 1
        elif small_surplus(psi[u : u + 1], p, w, 0.05)[0]:
            now = "|surplus| < 5 % of phi"
            counts["within"] += 1
        else:
            now = "open"
            counts["open"] += 1
        lo, hi = (psi[u] - (phi[u] + hw[u])) / phi[u], (psi[u] - (phi[u] - hw[u])) / phi[u]
        blo = (psi[u] - (sg.phi[u] + sg.halfwidth[u])) / sg.phi[u]
        bhi = (psi[u] - (sg.phi[u] - sg.halfwidth[u])) / sg.phi[u]
        print(
            f"  {names[u]:>8} psi {psi[u]:.4e}; budgeted ({was}): phi {sg.phi[u]:.4e} "
            f"+- {sg.halfwidth[u]:.2e}, surplus/phi {blo:+.3f} to {bhi:+.3f}; reference: "
            f"phi {phi[u]:.4e} +- {hw[u]:.2e}, surplus/phi {lo:+.3f} to {hi:+.3f}: {now}",
            flush=True,
        )
    print(
        f"  reference verdicts: {counts['decided']} signs decided, {counts['within']} "
        f"|surplus| < 5 % of phi, {counts['open']} open; {counts['contradicts']} contradict "
        "the budgeted run",
        flush=True,
    )


def valuation(log, tmp: Path) -> None:
    from coopsched.audit.sampling import curve_values
    from coopsched.online.policies import get_policy

    t0 = 30 * 86400
    inst, T, rule = window(log, t0, t0 + 30 * 86400, 20, tmp)
    times = grid(T)
    rng = np.random.default_rng(0)
    sim = old = new = 0.0
    for _ in range(5):
        members = sorted(rng.choice(inst.k, size=inst.k // 2, replace=False).tolist())
        c = time.process_time()
        sched = get_policy("fairshare").run(inst, T, members=members, backfill=rule)
        sim += time.process_time() - c
        c = time.process_time()
        a = [sum(sched.psi(t)) for t in times]
        old += time.process_time() - c
        c = time.process_time()
        b = curve_values(inst, sched.start, times)
        new += time.process_time() - c
        assert a == b
    print(
        f"valuation, RICC month k=20, {inst.n:,} jobs, 5 coalitions of 10, {len(times)} "
        f"times: simulation {sim / 5:.2f} s, former sum(psi(t)) {old / 5:.3f} s, "
        f"ValueCurve {new / 5:.3f} s per coalition (x{old / max(new, 1e-9):.1f}); same integers"
    )


def warm_up(client) -> None:
    """Compile the policies' kernels in this process and on every worker (not timed)."""
    import dataclasses

    from coopsched.audit.sampling import sampled_game
    from coopsched.online.engine import COMPILE_MIN_JOBS
    from coopsched.online.rigid import PLATFORM_BACKFILL, resolve_backfill
    from coopsched.workloads.instance import make_instance

    rng = np.random.default_rng(0)  # enough jobs for the compiled engine (COMPILE_MIN_JOBS)
    jobs = [
        (int(rng.integers(0, 4)), int(rng.integers(0, 5000)), 1 + int(rng.integers(0, 50)))
        for _ in range(COMPILE_MIN_JOBS)
    ]
    inst = make_instance([2, 1, 1, 2], jobs)
    inst = dataclasses.replace(
        inst,
        processors=np.ones(inst.n, dtype=np.int64),
        requested=inst.size.copy(),
        start=inst.release.copy(),
    )
    rule = resolve_backfill(inst, PLATFORM_BACKFILL)
    sampled_game(inst, 6000, [3000], samples=4, backfill=rule)
    if client is not None:
        sampled_game(inst, 6000, [3000], samples=4, backfill=rule, scheduler=client)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--traces", default="../shared/traces")
    ap.add_argument("--only", choices=list(CASES), action="append")
    ap.add_argument("--k", type=int, action="append", help="RICC: these N only")
    ap.add_argument("--days", type=int, default=30)
    ap.add_argument("--samples", type=int, default=5120, help="most orders per case")
    ap.add_argument("--no-refine", action="store_true", help="the orders alone")
    ap.add_argument(
        "--allocate", action="store_true", help="the refinement's optimum allocation (off)"
    )
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--seconds", type=float, help="one budget for every case (0: none)")
    ap.add_argument("--no-dask", action="store_true")
    ap.add_argument("--dask-k", type=int, action="append", help="RICC N compared (default 50)")
    ap.add_argument("--dask-orders", type=int, default=80)
    ap.add_argument(
        "--budget-on-dask",
        action="store_true",
        help="run the budgeted cases on the dask cluster (the whole machine) instead of one "
        "process; no separate comparison",
    )
    ap.add_argument("--valuation", action="store_true")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--estimator", default="split", choices=("split", "ends", "plain"))
    ap.add_argument(
        "--reference",
        type=float,
        metavar="SECONDS",
        help="after each budgeted run, a stratified reference of this many seconds for the "
        "organizations it left undecided (or only within 5 %%) and the closest decided ones",
    )
    ap.add_argument("--reference-seed", type=int, default=1)
    ap.add_argument("--reference-closest", type=int, default=2)
    args = ap.parse_args()
    if args.quick:
        args.only, args.k, args.days, args.samples = ["ricc"], [20], 3, 40
        args.dask_k, args.dask_orders = [20], 20
    dask_k = args.dask_k or [50]

    from coopsched.workloads.swf import read_swf_recorded

    cluster = client = None
    if not args.no_dask:
        from distributed import Client, LocalCluster

        cluster = LocalCluster(
            n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None
        )
        client = Client(cluster)
    print(f"load average at start: {Path('/proc/loadavg').read_text().split()[:3]}")
    try:
        with tempfile.TemporaryDirectory() as tmpdir:
            tmp = Path(tmpdir)
            warm_up(client)
            d = Path(args.traces)
            for name in args.only or list(CASES):
                fname, day, ks = CASES[name]
                log = read_swf_recorded(d / fname)
                if args.valuation and name == "ricc":
                    valuation(log, tmp)
                t0 = day * 86400
                for k in args.k if (args.k and name == "ricc") else ks:
                    inst, T, rule = window(log, t0, t0 + args.days * 86400, k, tmp)
                    label = f"{name} days {day}-{day + args.days} k={inst.k} jobs={inst.n:,}"
                    if args.estimator != "split":
                        label += f" estimator={args.estimator}"
                    where = client if args.budget_on_dask else None
                    one, wall1, cpu1 = run(inst, T, rule, args, where, seconds=budget(k, args))
                    b = budget(k, args)
                    how = f"{args.workers} dask workers" if where is not None else "one process"
                    print(
                        f"{label}: {how}, budget {f'{b:.0f} s' if b else 'none'}: wall "
                        f"{wall1:7.1f} s CPU {cpu1:7.1f} s; " + describe(one),
                        flush=True,
                    )
                    print(refined_verdicts(one, inst.names), flush=True)
                    print(settle_times(one, inst.names), flush=True)
                    if args.reference:
                        reference(inst, T, rule, one, args)
                    if client is None or args.budget_on_dask or name != "ricc" or k not in dask_k:
                        continue
                    n = args.dask_orders
                    one, wall1, cpu1 = run(inst, T, rule, args, None, samples=n)
                    two, wall2, cpu2 = run(inst, T, rule, args, client, samples=n)
                    same = (
                        "same estimate"
                        if np.array_equal(one.phi, two.phi)
                        and np.array_equal(one.halfwidth, two.halfwidth)
                        and one.coalitions == two.coalitions
                        else "ESTIMATES DIFFER"
                    )
                    print(
                        f"{label}: dask comparison, at most {n} orders, no budget: one process "
                        f"wall {wall1:7.1f} s CPU {cpu1:7.1f} s; {args.workers} dask workers "
                        f"wall {wall2:7.1f} s CPU {cpu2:7.1f} s; speed-up x{wall1 / wall2:.2f} "
                        f"(wall); {same}; " + describe(two),
                        flush=True,
                    )
    finally:
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()
    print(f"load average at end: {Path('/proc/loadavg').read_text().split()[:3]}")


if __name__ == "__main__":
    main()
