"""The last results of Skowron & Rzadca, "Non-monetary fair scheduling", as tests (issue 28
item 4): the worked example of Fig. 2, Proposition 3.4 and Corollary 3.5 (REF's cost per
time moment; FPT in the number of organizations), Theorem 5.7 (RAND is an FPRAS for unit
jobs) and Theorem 5.3's whole construction (docs/online.md says what they show).

REF is used only through its public API, ``simulate(instance, "ref", ...)``: the reference
implementations here are written from the paper's figures, not from the package's kernel.
"""

from __future__ import annotations

import itertools
from collections import deque
from fractions import Fraction
from math import factorial
from pathlib import Path

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import example, given, settings
from hypothesis import strategies as st

from coopsched import simulate
from coopsched.online.policies.rand import samples_for
from coopsched.online.shapley import shapley
from coopsched.online.utilities import flow_time, psi_sp
from coopsched.workloads.instance import make_instance

# --------------------------------------------------------------------------- Fig. 2
#: Fig. 2's schedule: O(1)'s nine jobs J1..J9 (sizes) and O(2)'s one job, all released at 0,
#: list-scheduled on 3 processors in this order (O(2)'s job after J7). The caption gives
#: J1 = (0, 3), J2 = (0, 4), J6 of size 6, J8 = (9, 3), J9 = (10, 4); the figure itself (the
#: other sizes) is not in our copy of the paper: these are the sizes of one of the schedules
#: that meet every statement of the caption (test_fig2_caption_pins_the_schedule_down).
FIG2_SIZES = [3, 4, 3, 3, 6, 6, 3, 3, 4]
FIG2_O2_POSITION = 7  # O(2)'s job comes after J1..J7 in the list
FIG2_STARTS = [0, 0, 0, 3, 3, 4, 6, 9, 10]


def _fig2_instance(o2_size: int | None = 1, sizes=FIG2_SIZES, position=FIG2_O2_POSITION):
    jobs = [(0, 0, p) for p in sizes]
    if o2_size is not None:
        jobs.insert(position, (1, 0, o2_size))
    return make_instance([3, 0], jobs)


def _o1(inst, sched):
    """O(1)'s (start, size) pairs in job order."""
    return [
        (int(s), int(p)) for s, p, u in zip(sched.start, inst.size, inst.org, strict=True) if u == 0
    ]


def _psi1(pairs, t):
    org = np.zeros(len(pairs), dtype=np.int64)
    start = np.array([s for s, _ in pairs], dtype=np.int64)
    size = np.array([p for _, p in pairs], dtype=np.int64)
    return psi_sp(org, start, size, t, 1)[0]


def _flow1(pairs, t):
    n = len(pairs)
    start = np.array([s for s, _ in pairs], dtype=np.int64)
    size = np.array([p for _, p in pairs], dtype=np.int64)
    return flow_time(np.zeros(n, dtype=np.int64), np.zeros(n, dtype=np.int64), start, size, t, 1)[0]


def test_fig2_worked_example():
    """Every number of Fig. 2's caption, from the package's psi_sp (Eq. 3) and a greedy
    (FIFO) schedule of the engine."""
    inst = _fig2_instance()
    sched = simulate(inst, "fifo")
    jobs = _o1(inst, sched)
    assert [s for s, _ in jobs] == FIG2_STARTS
    assert max(s + p for s, p in jobs) == 14  # all jobs finish by 14
    assert jobs[0] == (0, 3) and jobs[1] == (0, 4) and jobs[7] == (9, 3) and jobs[8] == (10, 4)
    # the caption's sums, term by term: at 13 J9 counts 3 of its 4 parts
    terms13 = [min(p, 13 - s) * (13 - (2 * s + min(p, 13 - s) - 1) / 2) for s, p in jobs]
    assert sched.psi(13)[0] == _psi1(jobs, 13) == sum(terms13) == 262
    assert sched.psi(14)[0] == _psi1(jobs, 14) == 297
    assert terms13[-1] == 3 * (13 - (10 + 12) / 2)
    assert sched.flow_time(14)[0] == _flow1(jobs, 14) == 70
    # without O(2)'s job, J9 starts at 9 instead of 10: psi_sp +4, flow time -1
    alone = simulate(_fig2_instance(None), "fifo")
    jobs_alone = _o1(_fig2_instance(None), alone)
    assert jobs_alone[8] == (9, 4)
    assert _psi1(jobs_alone, 14) - 297 == 4 == 4 * ((10 + 13) / 2 - (9 + 12) / 2)
    assert _flow1(jobs_alone, 14) == 70 - 1
    # J6 (size 6) started one unit later: psi_sp -6 (the size of the job); its flow time
    # grows by 1 (the caption says "would decrease by 1": it is the flow *objective* that
    # gets worse by 1)
    later = list(jobs)
    later[5] = (jobs[5][0] + 1, jobs[5][1])
    assert jobs[5][1] == 6 and _psi1(later, 14) - 297 == -6
    assert _flow1(later, 14) == 70 + 1
    # J9 not scheduled: psi_sp -10 (more tasks, more utility), flow time -14
    assert _psi1(jobs[:8], 14) == 297 - 10 and _flow1(jobs[:8], 14) == 70 - 14


@pytest.mark.slow
def test_fig2_caption_pins_the_schedule_down():
    """Brute force over the schedules the caption allows (3 processors, all released at 0,
    greedy in list order, J1 = (0,3), J2 = (0,4), J6 of size 6, J8 = (9,3), J9 = (10,4), one
    job of O(2), all done by 14): those that also give 262, 297 and a flow time of 70 all
    agree with the caption's three perturbations (+4 without O(2)'s job, -6 when J6 starts
    one unit later, -10 without J9), and ours is one of them."""
    found = []
    for p3, p4, p5, p7 in itertools.product(range(1, 13), repeat=4):
        if 3 + 4 + p3 + p4 + p5 + 6 + p7 + 3 + 4 != 35:  # psi(14) - psi(13) = work = 35
            continue
        sizes = [3, 4, p3, p4, p5, 6, p7, 3, 4]
        for q, pos in itertools.product(range(1, 6), range(10)):
            inst = _fig2_instance(q, sizes, pos)
            sched = simulate(inst, "fifo")
            jobs = _o1(inst, sched)
            if jobs[0] != (0, 3) or jobs[1] != (0, 4) or jobs[7] != (9, 3) or jobs[8] != (10, 4):
                continue
            if max(s + p for s, p in jobs) > 14 or sched.start[pos] + q > 14:
                continue
            if (_psi1(jobs, 13), _psi1(jobs, 14), _flow1(jobs, 14)) != (262, 297, 70):
                continue
            found.append((sizes, q, pos))
            alone = _o1(_fig2_instance(None, sizes), simulate(_fig2_instance(None, sizes), "fifo"))
            later = list(jobs)
            later[5] = (jobs[5][0] + 1, 6)
            assert alone[8][0] == 9 and _psi1(alone, 14) == 297 + 4
            assert _psi1(later, 14) == 297 - 6 and _psi1(jobs[:8], 14) == 297 - 10
    assert (FIG2_SIZES, 1, FIG2_O2_POSITION) in found


# ---------------------------------------------------------- Proposition 3.4, Corollary 3.5
def _popcount(x: int) -> int:
    return bin(x).count("1")


#: The tie readings :func:`literal_ref` can apply: the package's (docs/conventions.md, "Ties
#: and anonymity": once per time, ties to the member whose oldest waiting job was submitted
#: first, the heads taken as the picks at ``t`` begin), and two mutants of it, to show that
#: the comparison with the package catches them: the heads compared afresh at every pick,
#: and the lowest organization index.
TIES = ("event", "pick", "index")


def literal_ref(inst, T: int, every_time: bool = False, tie: str = "event") -> dict:
    """REF as Fig. 1 writes it, with Fig. 3's SelectAndSchedule for psi_sp: every coalition
    keeps a schedule; at each time moment, coalitions by increasing size run UpdateVals
    (psi, v, and phi by its double loop over sub-coalitions and their members) and then pick
    ``argmax(phi - psi)`` while a machine is free, ``phi`` and ``psi`` taken at ``t`` for
    every pick at ``t``. Exact (integers and Fractions). ``tie``: one of :data:`TIES`.

    Returns the grand coalition's starts, the times visited (``visits``), the jobs started
    in every coalition (``starts``) and the picks per coalition and time (``picks``).
    ``every_time``: visit every time moment 0..T-1, not only releases and completions."""
    assert tie in TIES
    k, n = inst.k, inst.n
    M = [int(m) for m in inst.machines]
    full = (1 << k) - 1
    masks = sorted(range(1, full + 1), key=lambda c: (_popcount(c), c))
    members = {c: [u for u in range(k) if c >> u & 1] for c in masks}
    m_c = {c: sum(M[u] for u in members[c]) for c in masks}
    pos = np.empty(n, dtype=np.int64)
    pos[np.lexsort((np.arange(n), inst.release))] = np.arange(n)
    release, size, org = inst.release.tolist(), inst.size.tolist(), inst.org.tolist()
    by_release: dict[int, list[int]] = {}
    for j in sorted(range(n), key=lambda j: pos[j]):
        by_release.setdefault(release[j], []).append(j)
    queue = {c: {u: deque() for u in members[c]} for c in masks}
    running: dict[int, list[int]] = {c: [] for c in masks}
    started: dict[int, list[tuple[int, int]]] = {c: [] for c in masks}
    start = [-1] * n
    out: dict = {"visits": [], "starts": 0, "picks": {}}

    def psi_of(c: int, u: int, t: int) -> int:
        tot = 0
        for j, s in started[c]:
            if org[j] == u and s < t:
                q = min(size[j], t - s)
                tot += q * (t - s) - q * (q - 1) // 2
        return tot

    times = set(by_release)
    t = min(times) if times and not every_time else 0
    while t < T:
        out["visits"].append(t)
        for j in by_release.get(t, []):
            for c in masks:
                if c >> org[j] & 1:
                    queue[c][org[j]].append(j)
        v = {0: 0}
        for c in masks:
            running[c] = [e for e in running[c] if e > t]
            psi = {u: psi_of(c, u, t) for u in members[c]}
            v[c] = sum(psi.values())
            size_c = len(members[c])
            phi = {u: Fraction(0) for u in members[c]}
            sub = c
            while sub:
                s = _popcount(sub)
                w = Fraction(factorial(s - 1) * factorial(size_c - s), factorial(size_c))
                for u in members[c]:
                    if sub >> u & 1:
                        phi[u] += (v[sub] - v[sub ^ (1 << u)]) * w
                sub = (sub - 1) & c
            head = {u: pos[queue[c][u][0]] for u in members[c] if queue[c][u]}  # as picks begin
            picks = 0
            while len(running[c]) < m_c[c] and any(queue[c][u] for u in members[c]):
                cand = [u for u in members[c] if queue[c][u]]
                best = max(phi[u] - psi[u] for u in cand)
                tied = [u for u in cand if phi[u] - psi[u] == best]
                if tie == "event":
                    u = min(tied, key=head.__getitem__)
                elif tie == "pick":
                    u = min(tied, key=lambda u: pos[queue[c][u][0]])
                else:
                    u = min(tied)
                j = queue[c][u].popleft()
                started[c].append((j, t))
                running[c].append(t + size[j])
                picks += 1
                if c == full:
                    start[j] = t
            out["picks"][(c, t)] = picks
            out["starts"] += picks
        if every_time:
            t += 1
            continue
        ends = [e for c in masks for e in running[c] if e > t]
        rel = [r for r in times if r > t]
        t = min(ends + rel, default=T)
    out["start"] = start
    return out


#: Two organizations with two machines each, five jobs of size 5 at 0, A's first: every key
#: is 0 at 0. Once per time (the package), A keeps receiving machines until its queue is
#: empty: A, A, A, then B. Per pick, the heads move and the machines go A, B, A, B.
TIED = make_instance([2, 2], [(0, 0, 5), (1, 0, 5), (0, 0, 5), (1, 0, 5), (0, 0, 5)])
#: One machine (O0's) and a tie at 0 between O1's older job and O0's: the older job first.
OLDER_SECOND = make_instance([1, 0], [(1, 0, 3), (0, 0, 3)])


@settings(max_examples=60, deadline=None)
@given(inst=small_instances(max_k=4, max_jobs=10, max_release=6, max_size=4), T=st.integers(1, 14))
@example(inst=TIED, T=12)
@example(inst=OLDER_SECOND, T=8)
def test_proposition_3_4_and_corollary_3_5(inst, T):
    """Fig. 1's REF, run literally, builds REF's schedule (the package's, public API) on
    every instance, ties included. The package's own work is what the proofs bound:

    * Corollary 3.5 (FPT in k): only releases and completions need a visit -- visiting every
      time moment gives the same schedule -- and the package visits exactly the times the
      literal Fig. 1 visits (``event_times``), at most ``n`` releases and, per coalition
      holding a job's owner, one completion: ``n (1 + 2^(k-1))``;
    * Proposition 3.4 (the cost per time moment): at one time the package visits each
      simulated coalition at most once (``coalition_visits <= event_times (2^k - 1)``), a
      coalition starts at most its machines' worth of jobs at one time (the literal picks),
      and every job starts at most once in every coalition holding its owner
      (``coalition_starts``; the literal count exactly when no organizations are twins,
      which the package simulates once).

    The proof's ``sum_C sum_{C' in C} |C'| = k 3^(k-1)`` iterations of UpdateVals are
    arithmetic about Fig. 1's loops, not about any code, and are not tested."""
    k, n = inst.k, inst.n
    lit = literal_ref(inst, T)
    ref = simulate(inst, "ref", horizon=T)
    assert ref.start.tolist() == lit["start"]
    every = literal_ref(inst, T, every_time=True)
    assert every["start"] == lit["start"]
    info = ref.info
    if n:
        assert info["event_times"] == len(lit["visits"])
    assert info["event_times"] <= n * (1 + 2 ** (k - 1))
    assert info["coalition_visits"] <= info["event_times"] * info["simulated_coalitions"]
    assert info["simulated_coalitions"] <= 2**k - 1
    m_c = {c: sum(int(inst.machines[u]) for u in range(k) if c >> u & 1) for c in range(1, 1 << k)}
    assert all(p <= m_c[c] for (c, _), p in lit["picks"].items())
    jobs = np.bincount(inst.org, minlength=k)
    assert info["coalition_starts"] <= sum(int(jobs[u]) * 2 ** (k - 1) for u in range(k))
    if not info["twin_groups"]:
        assert info["coalition_starts"] == lit["starts"]


def test_the_literal_reference_tells_the_tie_readings_apart():
    """The comparison above catches a REF that read ties another way: on TIED the heads
    compared at every pick give another schedule, and on OLDER_SECOND the lowest index
    does."""
    for inst, T, mutant in ((TIED, 12, "pick"), (OLDER_SECOND, 8, "index")):
        ref = simulate(inst, "ref", horizon=T).start.tolist()
        assert literal_ref(inst, T)["start"] == ref
        assert literal_ref(inst, T, tie=mutant)["start"] != ref
    assert simulate(TIED, "ref", horizon=12).start.tolist() == [0, 0, 0, 5, 0]
    assert literal_ref(TIED, 12, tie="pick")["start"] == [0, 0, 0, 0, 5]
    assert simulate(OLDER_SECOND, "ref", horizon=8).start.tolist() == [0, 3]


def test_refs_work_counters_on_a_known_case():
    """The package's counters on a hand-checked instance: 2 organizations, one machine
    each, three unit jobs of O0 at 0, horizon 5. Coalitions {O0} (jobs at 0, 1, 2) and
    {O0, O1} (two at 0, one at 1); {O1} has no job. Event times 0 (releases), 1, 2, 3
    (completions): 4. Visits: {O0} at 0, 1, 2, 3 and {O0, O1} at 0, 1, 2: 7. Starts: 3 in
    each: 6. With a free machine and a waiting job: {O0} at 0, 1, 2 and {O0, O1} at 0, 1: 5.
    Never a choice between two members with waiting jobs: no decisions."""
    inst = make_instance([1, 1], [(0, 0, 1), (0, 0, 1), (0, 0, 1)])
    ref = simulate(inst, "ref", horizon=5)
    assert ref.start.tolist() == [0, 0, 1]
    info = ref.info
    got = {x: info[x] for x in ("event_times", "coalition_visits", "coalition_starts")}
    assert got == {"event_times": 4, "coalition_visits": 7, "coalition_starts": 6}
    assert info["coalition_ready"] == 5 and info["decisions"] == 0
    lit = literal_ref(inst, 5)
    assert lit["start"] == [0, 0, 1] and lit["visits"] == [0, 1, 2, 3] and lit["starts"] == 6


# --------------------------------------------------------------------------- Theorem 5.7
def _unit_instance(seed: int, k: int, n: int, T: int):
    rng = np.random.default_rng(seed)
    machines = [int(x) for x in rng.integers(0, 3, size=k)]
    machines[0] = max(machines[0], 1)
    jobs = [(int(rng.integers(0, k)), int(rng.integers(0, T)), 1) for _ in range(n)]
    return make_instance(machines, jobs)


#: Theorem 5.7's check: eps, lambda, horizon, and the seeds of ``_unit_instance(seed, 5, 70,
#: 20)`` on which the bound separates (asserted below: FIFO and ROUNDROBIN, blind to
#: contributions, miss it; on most seeds of this generator they meet it, 8 of the first 10
#: for FIFO at eps = 0.05, and such an instance could not fail a RAND that ignored its
#: estimates). eps = 0.05 (N = 32,189 orderings for 5 organizations): RAND's worst distance
#: over the 20 seeds is 0.018 v* on seed 3 and 0.014 v* on seed 2, against 0.05 v*.
T57 = {"eps": 0.05, "lam": 0.8, "T": 25, "instances": (2, 3)}


def _theorem_5_7_distances(inst, star: list[int], seeds: int, policy=None) -> list[float]:
    """``||psi - psi*|| / v*`` of ``seeds`` RAND seeds (or the given policy class's)."""
    from coopsched.online.policies.rand import Rand

    eps, lam, T = T57["eps"], T57["lam"], T57["T"]
    cls = policy or Rand
    out = []
    for seed in range(seeds):
        r = simulate(inst, cls(epsilon=eps, lam=lam, seed=seed), horizon=T)
        assert r.info["samples"] == samples_for(5, eps, lam)
        out.append(sum(abs(a - b) for a, b in zip(r.psi(T), star, strict=True)) / sum(star))
    return out


def _theorem_5_7_instance(seed: int):
    """The instance and REF's utilities, after checking that the bound separates on it."""
    eps, T = T57["eps"], T57["T"]
    inst = _unit_instance(seed, 5, 70, 20)
    star = simulate(inst, "ref", horizon=T).psi(T)
    for blind in ("fifo", "roundrobin"):
        psi = simulate(inst, blind, horizon=T).psi(T)
        assert sum(abs(a - b) for a, b in zip(psi, star, strict=True)) > eps * sum(star)
    return inst, star


@pytest.mark.slow
def test_theorem_5_7_rand_meets_its_guarantee_with_probability_lambda():
    """Theorem 5.6, which Theorem 5.7 turns into an FPRAS: with unit jobs and
    ``N = ceil(k^2/eps^2 ln(k/(1-lambda)))`` orderings, ``||psi - psi*||_M <= eps v*(C)``
    with probability at least lambda. Over 20 seeds on each instance of :data:`T57`
    (5 organizations), the share of seeds that meet the bound is at least lambda;
    docs/online.md quotes the worst distance and the sample count."""
    worst = 0.0
    for seed in T57["instances"]:
        inst, star = _theorem_5_7_instance(seed)
        d = _theorem_5_7_distances(inst, star, 20)
        assert sum(x <= T57["eps"] for x in d) >= T57["lam"] * 20
        worst = max(worst, *d)
    text = " ".join(
        Path(__file__).resolve().parents[1].joinpath("docs/online.md").read_text().split()
    )
    N = samples_for(5, T57["eps"], T57["lam"])
    assert f"{N:,} orderings for 5 organizations" in text
    assert f"RAND's worst distance: {worst:.3f}·v*" in text


def test_theorem_5_7_on_one_instance_and_its_mutants():
    """The same check on one instance with 5 seeds (the default test set), and what it
    catches: RAND with a single ordering (a sample count far below Theorem 5.6's) and RAND
    with N orderings that are all the canonical order (tests/mutants.py: a biased estimate)
    each meet the bound on fewer than lambda of the seeds."""
    from mutants import RandFixedOrder

    from coopsched.online.policies.rand import Rand

    eps, lam, T = T57["eps"], T57["lam"], T57["T"]
    inst, star = _theorem_5_7_instance(T57["instances"][1])
    assert sum(x <= eps for x in _theorem_5_7_distances(inst, star, 5)) >= lam * 5
    one = [simulate(inst, Rand(n_samples=1, seed=seed), horizon=T).psi(T) for seed in range(20)]
    met = [sum(abs(a - b) for a, b in zip(p, star, strict=True)) <= eps * sum(star) for p in one]
    assert sum(met) < lam * 20
    assert _theorem_5_7_distances(inst, star, 1, policy=RandFixedOrder)[0] > eps


def test_theorem_5_7_rand_cost_is_polynomial_not_exponential_in_k():
    """The FPRAS's cost: RAND keeps the prefix coalitions of its N orderings, at most
    ``k N`` of them (``N`` polynomial in k, 1/eps and log(1/(1-lambda))), each scheduled
    alone by a greedy algorithm -- never the ``2^k - 1`` coalitions REF needs. At k = 24
    (16.7 million coalitions) it runs with a few thousand."""
    k, eps, lam = 24, 2.0, 0.5
    inst = _unit_instance(7, k, 200, 40)
    r = simulate(inst, "rand", horizon=50, epsilon=eps, lam=lam, seed=1)
    N = samples_for(k, eps, lam)
    assert r.info["samples"] == N == int(np.ceil(k * k / eps**2 * np.log(k / (1 - lam))))
    assert 0 < r.info["coalitions_kept"] <= k * N < 2**k - 1
    assert r.info["coalitions_kept"] == 10_951  # docs/online.md quotes it (seeded)


# --------------------------------------------------------------------------- Theorem 5.3
def theorem53_instance(S, x, ell, L, XL, H, XH):
    """Theorem 5.3's whole construction (proof in Sec. 5): organizations O_S (one per
    element of ``S``), ``a`` and B_1..B_ell, one machine each; independent batches, each
    starting once every job of the previous one is done in every coalition (its length is
    its largest release plus its total size):

    1. B_i releases ``2i`` jobs of size ``L``;
    2. every organization but ``a`` releases 2 jobs of size ``H``;
    3. ``ell^2`` gadget batches: for each i, ``i`` of type Bch(B_i, 2x+1) and ``ell - i`` of
       type Bch(B_i, 2x). In both, O_S's j-th organization releases ``(0, 2 x_tot + 1)``
       and ``(1, 2 x_j)``, every B_j but B_i one job ``(0, 2 x_tot + 2)``, B_i nothing, and
       ``a`` two jobs ``(0, 2x + 1)`` and ``(2x, XL)`` (type 2x) or ``(0, 2x + 2)`` and
       ``(2x + 1, XL)`` (type 2x + 1);
    4. every B organization releases ``|O|`` jobs of size ``XH``.

    Jobs are listed by release, then organization (so that the two tie rules agree on
    simultaneous heads). Returns the instance, the end time of each batch and the B
    organizations' indices."""
    k = len(S)
    a, B, n_orgs = k, [k + 1 + i for i in range(ell)], k + 1 + ell
    x_tot = sum(S)
    jobs: list[tuple[int, int, int]] = []
    ends: list[int] = []

    def batch(js):
        t0 = ends[-1] if ends else 0
        jobs.extend((u, t0 + r, p) for u, r, p in sorted(js, key=lambda j: (j[1], j[0])))
        ends.append(t0 + max(r for _, r, _ in js) + sum(p for _, _, p in js))

    batch([(B[i], 0, L) for i in range(ell) for _ in range(2 * (i + 1))])
    batch([(u, 0, H) for u in range(n_orgs) if u != a for _ in range(2)])
    for i in range(ell):
        for typ in [1] * (i + 1) + [0] * (ell - i - 1):
            js = [(a, 0, 2 * x + 1 + typ), (a, 2 * x + typ, XL)]
            js += [(B[j], 0, 2 * x_tot + 2) for j in range(ell) if j != i]
            js += [job for j in range(k) for job in ((j, 0, 2 * x_tot + 1), (j, 1, 2 * S[j]))]
            batch(js)
    batch([(b, 0, XH) for b in B for _ in range(n_orgs)])
    return make_instance([1] * n_orgs, jobs), ends, B


def _phi_minus_psi(inst, t):
    """``phi - psi`` of every organization in the grand coalition at ``t``: every
    coalition's value from its own REF schedule (public API), then Eq. (1)."""
    k = inst.k
    values = [0] * (1 << k)
    for c in range(1, 1 << k):
        members = [u for u in range(k) if c >> u & 1]
        values[c] = sum(simulate(inst, "ref", horizon=t, members=members).psi(t))
    grand = simulate(inst, "ref", horizon=t)
    return [phi - psi for phi, psi in zip(shapley(values), grand.psi(t), strict=True)]


def _last_batch_order(inst, sched, start, B):
    first = {
        b: min(
            int(s)
            for s, u, r in zip(sched.start, inst.org, inst.release, strict=True)
            if u == b and r >= start
        )
        for b in B
    }
    return sorted(B, key=lambda b: first[b])


#: Constants in the proof's order L << XL << H << XH. The proof's own values exceed 2^53
#: already for |S| = 2 and |B| = 2 (H is about 7e31), so smaller ones are used; the
#: finding below does not depend on them (batch 2 works at the scale H^2, above all else).
T53 = {"L": 100, "XL": 10**6, "H": 10**9, "XH": 10**10}
YES = ([1, 2], 2)  # {2} sums to 2
NO = ([2, 3], 4)  # no subset of {2, 3} sums to 4


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # REF on Python integers (large values)
def test_theorem_5_3_construction_first_two_batches():
    """What holds: after batch 1, ``phi - psi`` of B_1 is above B_2's (the proof's first
    step); after batch 2, ``a``'s is at least H (the proof: ``a`` makes a job of size H
    start earlier in every coalition it joins)."""
    inst, ends, B = theorem53_instance(*NO, 2, **T53)
    d1 = _phi_minus_psi(inst, ends[0])
    assert d1[B[0]] > d1[B[1]]
    d2 = _phi_minus_psi(inst, ends[1])
    assert d2[len(NO[0])] >= T53["H"]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_theorem_5_3_batch_two_decides_the_last_batch_order():
    """What breaks the proof: batch 2 (two jobs of size H for every organization but a,
    one machine each) cannot start every job at once, and REF serves the organizations in
    the order of their ``phi - psi``, B_1 before B_2. That gives the B organizations
    ``phi - psi`` differences of order H^2 -- above the batch-1 gaps (order L^2) and the
    gadgets' effects (order XL^2) -- in the opposite order. The last batch follows that
    order, with or without an x-sum subset: sigma_rev in both cases."""
    for S, x in (YES, NO):
        inst, ends, B = theorem53_instance(S, x, 2, **T53)
        d1 = _phi_minus_psi(inst, ends[0])
        d2 = _phi_minus_psi(inst, ends[1])
        assert d1[B[0]] > d1[B[1]] and d2[B[1]] - d2[B[0]] > T53["H"] ** 2 / 2
        sched = simulate(inst, "ref", horizon=ends[-1])
        assert _last_batch_order(inst, sched, ends[-2], B) == B[::-1]


@pytest.mark.xfail(
    strict=True,
    reason="Theorem 5.3's premise fails under REF: batch 2 sets the B organizations' order "
    "(test_theorem_5_3_batch_two_decides_the_last_batch_order), so the last batch does not "
    "follow the SUBSETSUM answer",
)
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_theorem_5_3_last_batch_order_answers_subsetsum():
    """The proof's claim: the last batch is served B_1, B_2, ... (sigma_ord) when no x-sum
    subset exists and in the reverse order (sigma_rev) when one does."""
    for S, x, want in ((*YES, "rev"), (*NO, "ord")):
        inst, ends, B = theorem53_instance(S, x, 2, **T53)
        sched = simulate(inst, "ref", horizon=ends[-1])
        order = _last_batch_order(inst, sched, ends[-2], B)
        assert order == (B if want == "ord" else B[::-1]), (S, x, order)
