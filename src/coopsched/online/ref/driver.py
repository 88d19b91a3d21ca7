"""REF, the exact fair algorithm (Skowron & Rzadca, Fig. 1 with Fig. 3; docs/conventions.md §1).

Every coalition ``C`` keeps its own greedy schedule of its members' jobs on its
members' machines. When ``C`` has a free machine and waiting jobs at ``t``, it starts
the oldest job of the member ``u`` with the largest ``phi_u - psi_u``, where ``phi_u`` is
``u``'s Shapley value in the game restricted to ``C`` (values of all subcoalitions at
``t``) and ``psi_u`` its utility in ``C``'s schedule; ties go to the member whose oldest
waiting job was submitted first (docs/conventions.md, "Ties and anonymity").
``phi`` and ``psi`` do not change between the picks at one ``t``, so the winner keeps
receiving machines until its queue is empty (the "literal reading" of docs/conventions.md §1).

Implementation (one numba kernel, all ``2^k - 1`` coalitions in lockstep):

* events only: a coalition is visited at ``t`` only when one of its jobs completes or
  one of its members releases a job; values at ``t`` are closed-form in the time since
  the coalition's last event, so the cost grows with the events, not the horizon;
* completions are kept in buckets, one per (job, start time): a job that starts at ``t``
  in many coalitions ends at the same time in all of them, so one heap entry serves
  all of them and every start or completion in a coalition costs O(1); the entries of
  a bucket are taken from the pool in address order (a cursor skipping live slots), so
  they lie close together and emptying a bucket reads neighbouring memory; members'
  utilities are brought to ``t`` lazily (when their running count changes or their
  ``psi`` is needed) and waiting counts are kept per coalition, so a visit is O(1);
  state is held in records (one cache line per coalition and per member; their fields
  are named by the kernel module's ``CO_*`` and ``MEM_*`` constants, its counters by
  ``ST_*``), the kernel's arguments come in named groups (:mod:`.kernel`'s ``Run``,
  ``Jobs``, ``Coalitions``, ``Arith``, ``FloatRoute``, ``State``, ``Outputs``), every
  value between events comes from one closed form (``_psi_sp_at``, ``_work_at``), and no
  array is ever reassigned inside the kernel (numba would reference-count it in every
  loop);
* a run of identical jobs (a parallel job split into sequential ones: consecutive in FIFO
  order, same owner, release, size and pin; :func:`job_runs`) that a coalition starts
  goes in one step and one completion entry, as many of its jobs as the coalition has
  free machines: on RICC, whose jobs are ~28 processors wide, this divides the starts
  and completions to handle by about that much;
* interchangeable organizations (:func:`twin_classes`: no jobs, equal machines; common
  when organizations outnumber the users active in a window) make coalitions that
  differ only in which of them they hold identical: same jobs, same machine count, and
  REF never has to pick between such organizations, so swapping them maps one
  coalition's schedule onto the other's. The kernel simulates one coalition per group
  (:func:`canonical_coalitions`: the group's lowest-indexed members), reads every other
  coalition's value from it, and runs the potential over the simulated coalitions only
  (``L P(D) = (L v(D) + sum_w L P(canon(D - w))) / |D|``); exact, tested against
  simulating every coalition and against the definition (``symmetry=False`` turns it
  off). With ``g`` groups of sizes ``n_1..n_g`` it simulates
  ``2^(k - sum n_i) prod (n_i + 1) - 1`` coalitions (``info["simulated_coalitions"]``);
* no Shapley value is computed when it cannot change a decision: when only one member
  has waiting jobs, or when the free machines suffice for every waiting job; with Eq. (1)
  only the values of the deciding coalitions' subsets are brought to ``t``;
* Shapley values, scaled by ``L = lcm(1..k)`` so that they are integers, come at each
  event time from the cheaper of (a) Eq. (1) with the integer weights of
  :func:`coopsched.online.shapley.shapley_weights`, ``2^(|C|-1)`` terms per deciding
  member, and (b) the potential of Hart and Mas-Colell
  (:func:`coopsched.online.shapley.shapley_potential`): ``L P(D)`` for every coalition
  ``D`` in ``k 2^(k-1)`` additions, after which ``L phi_u(C) = L P(C) - L P(C - u)``
  for every deciding ``(C, u)`` costs O(1). An event time thus costs at most
  ``O(k 2^k)``, never ``3^k``;
* the potential is computed in float64 by default (``shapley="auto"`` or ``"float"``;
  on Python integers it stays exact): two to three times cheaper than two exact words,
  since one float holds what needs two words and the lattice is walked in blocks of 16
  coalitions without data-dependent loops, from float64 copies of the records' value
  fields (:mod:`.kernel`), dividing by ``|D|`` as a product with its rounded reciprocal.
  Floats only *rank*; a decision is taken from
  them only when it is proven: every key ``P(C) - P(C - u) - psi_u`` gets an interval
  from a proven error bound (:func:`float_potential_error`: every term of the potential
  is non-negative, so its relative error is at most about ``k^2/2 + 6k`` unit roundoffs), and
  the order of the waiting members must follow from the intervals (or from keys known
  exactly: all values zero, or the Distance rule's clamp). Any other decision (an exact
  tie between non-zero keys, or keys closer than the bound) is taken from Eq. (1) on the
  exact values of ``C``'s subsets, as on the direct route, and counted in
  ``info["float_unproven"]``. The schedule is thus exactly the exact-integer one
  (tested against the exact potential, and the ranking against exact rationals);
* pinned jobs (:attr:`Instance.pinned`, docs/conventions.md §5: running when an audited window
  opened) start in every coalition that has a free machine and contains their owner,
  ahead of every other job, oldest FIFO position first (a pinned job is always at the
  head of its organization's queue); only then does ``phi - psi`` pick among the rest;
* checkpoints (``ref_schedule(..., checkpoints=...)``): every coalition's value at each
  given time, from the same run, in closed form from the coalition's last update, taken
  before the first event at or after that time is processed (jobs starting at a
  checkpoint add nothing at it).

Exact arithmetic (issue 11; bounds are checked in Python before the kernel runs):

* coalition values are at most ``vmax = min(M t(t+1)/2, P t)`` for ``psi_sp`` (``M``
  machines, ``P`` total size, ``t`` the time from the first release, when every
  coalition's clock starts, to the last event) and ``min(M t, P)`` for
  ``work``; every intermediate of the closed-form update stays below
  ``max(min(M t, P) t, min(M, n) t(t+1)/2, t(t+1))``. When that is below ``2^62`` the
  state is int64;
* Shapley sums are held in two int64 words, ``x = h 2^32 + l``: every term (a marginal
  contribution ``v(s + u) - v(s)``, which fits one word since values lie in ``[0, 2^62)``,
  or a value ``v`` for the potential) is split as ``(d >> 32, d & (2^32-1))``, sums are
  taken word by word and carried afterwards. Eq. (1)'s weights add up to ``L``
  (``sum_s binom(c-1, s) L / (c binom(c-1, s)) = L``), so a low word stays below
  ``L 2^32 < 2^60`` and a high word below ``L 2^30``; the potential obeys
  ``L P(D) <= L H_k vmax`` (``H_k`` the harmonic number) and its recursion's partial sums
  ``L v(D) + sum_w L P(D - w) <= (k H_k + 1) L vmax``, so a high word stays below
  ``2^61`` when ``(k H_k + 3) L vmax < 2^93``; when ``(k H_k + 3) L vmax < 2^62`` (as on
  windows of 5·10^4 s of LPC-EGEE up to k = 16) every such sum fits one word, and the
  kernel sums whole words (half the loads and additions; ``info["one_word"]``); the potential's division by ``|D|`` is
  exact (``L P(D)`` is an integer) and done as a long division on the two words;
* otherwise the same kernel runs as plain Python on Python integers (exact at any size,
  slow; :func:`.kernel.python_kernel`, with its closed-form helpers in plain Python too);
  this is reported in ``Schedule.info["python_integers"]`` and by a warning;
* values at the horizon (which may be far beyond the last event) are computed in Python
  integers whenever they could pass ``2^62``;
* pinned starts leave every bound above valid: they only change *which* waiting job a
  coalition starts, never whether it starts one (each coalition stays greedy, so the
  drain bound holds), a coalition still runs at most ``min(m_C, n)`` jobs (the bucket and
  entry pools), and a value stays below ``vmax`` whatever the order of the jobs;
* checkpoints are evaluated in the kernel when the values at the horizon fit int64 (or
  on Python integers); otherwise those up to the last possible event time (where the
  state bound holds) are evaluated in the kernel and the later ones, which lie after the
  last event, in Python integers from the final records; a checkpoint never adds a
  state, so it changes no bound;
* times: a job released at ``r`` and started by a coalition ends by ``r_max + P``; without
  a horizon (or with one beyond ``r_max + P``) that must fit int64, else
  :class:`~coopsched.workloads.instance.InstanceError` says so; with a horizon ``T``, a
  job's end is clamped to ``T`` (it cannot complete before), so no time overflows.

``utility="work"`` (resource utilization) is also available. For it the pick follows
Fig. 1's generic ``Distance`` rule (``rule="distance"``), with ``Delta psi`` the utility
of the tentatively started job's first unit part: the value at ``t`` itself is 0 for every
non-clairvoyant utility, which would make ``Distance`` equal for all candidates.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from fractions import Fraction
from typing import Any, NamedTuple

import numpy as np

from ...workloads.instance import Instance, InstanceError
from ..schedule import Schedule
from ..shapley import popcounts, shapley_weights

_I64_MAX = 2**63 - 1
_STATE_LIMIT = 2**62
_WORDS_LIMIT = 2**93
_MAX_K = 20
# first bucket capacity (48 bytes each): 16 per job, and at least 2^22 (192 MB)
_BUCKETS = (16, 1 << 22)


_UTILITIES = {"psi_sp": 0, "work": 1}
_RULES = {"fig3": 0, "distance": 1}
# the float potential's cost per coalition of the lattice when walked in blocks, in units of
# one addition (2, 3, 4 and 6 tried on the costliest k = 16 windows, 3 and 4 within noise;
# 4, 8, 10 and 12 on the costliest k = 20 window, 4 as good as any)
_FPOT_BLOCK_COST = 4
_MODES = {"auto": 0, "direct": 1, "potential": 2, "float": 3}


def _exact_division(k: int) -> tuple[np.ndarray, ...]:
    """Tables to divide ``X = h 2^32 + l`` (``0 <= l < 2^32``) exactly by ``c <= k``.

    With ``c = 2^a b``, ``b`` odd: shift ``X`` right by ``a`` (exact), then the quotient's
    low word is ``l b^-1 mod 2^32`` and its high word ``(h + (l - b q_l) / 2^32) b^-1 mod
    2^64`` (both divisions are exact, so the modular inverses give them; unsigned
    multiplications wrap by definition). Returns ``(a, b, b^-1 mod 2^32, b^-1 mod 2^64)``.
    """
    tz = np.zeros(k + 1, dtype=np.int64)
    odd = np.ones(k + 1, dtype=np.int64)
    inv32 = np.zeros(k + 1, dtype=np.int64)
    inv64 = np.zeros(k + 1, dtype=np.uint64)
    for c in range(1, k + 1):
        a = (c & -c).bit_length() - 1
        b = c >> a
        tz[c], odd[c] = a, b
        inv32[c] = pow(b, -1, 2**32)
        inv64[c] = pow(b, -1, 2**64)
    return tz, odd, inv32, inv64


def float_potential_error(k: int) -> float:
    """``eta``: a float64 potential key ``P(C) - P(C - u) - psi_u`` is within
    ``eta (P(C) + P(C - u) + psi_u)`` of the exact one, for ``|C| <= k``.

    With unit roundoff ``u = 2^-53``: a value is evaluated in float64 from its record's
    fields (integers, converted with relative error at most ``u``) as ``V + W d + r d (d +
    1) / 2`` (:func:`~coopsched.online.ref.kernel._float_value`), a sum of non-negative
    terms each rounded at most four times (relative error at most ``(1 + u)^4 - 1``);
    ``P(D)`` sums ``|D| + 1`` non-negative terms (relative error at most ``gamma_|D| = |D| u
    / (1 - |D| u)`` in any order) and multiplies by ``1 / |D|`` rounded (two roundings), so
    by induction ``1 + e_d <= (1 + e_(d-1)) (1 + u)^6 (1 + gamma_d)``, ``e_0 = 0``
    (Higham, *Accuracy and Stability of Numerical Algorithms*, ch. 4). Relative to the
    computed ``P``, the error is at most ``e_k / (1 - e_k)``; the key's two subtractions
    and the conversion of ``psi`` add ``3u`` of the same sum. The bound is computed in
    exact rationals and doubled, so that rounding the product ``eta * sum`` cannot undo it.
    """
    u = Fraction(1, 2**53)
    e = Fraction(0)
    for d in range(1, max(k, 1) + 1):
        gamma = d * u / (1 - d * u)
        e = (1 + e) * (1 + u) ** 6 * (1 + gamma) - 1
    return float(2 * (e / (1 - e) + 3 * u))


def _value_bound(utility: str, M: int, P: int, t: int) -> int:
    """Upper bound of every coalition's value at any time ``<= t`` (module docstring)."""
    if utility == "psi_sp":
        return min(M * t * (t + 1) // 2, P * t)
    return min(M * t, P)


def _state_bound(utility: str, M: int, P: int, n: int, t: int) -> int:
    """Upper bound of every intermediate of the closed-form value update up to ``t``."""
    return max(
        min(M * t, P) * t,
        min(M, n) * t * (t + 1) // 2,
        t * (t + 1),
        _value_bound(utility, M, P, t),
    )


def _words_factor(k: int) -> int:
    """``ceil(k H_k) + 3``: the potential's partial sums are below this times ``L vmax``."""
    h = sum((Fraction(1, j) for j in range(1, k + 1)), Fraction(0))
    return -(-(k * h).numerator // (k * h).denominator) + 3


def _drain_bound(instance: Instance, P: int) -> int:
    """Time after the last release by which every coalition has completed every job.

    In a greedy schedule of coalition ``S`` (``m_S >= 1`` machines, total size ``P_S``),
    a job ``j`` that starts after the last release ``r_max`` waited with all machines busy
    on other jobs since ``r_max``, so it starts by ``r_max + (P_S - p_j) / m_S`` and ends by
    ``r_max + P_S / m_S + p_max``. Coalitions without machines start nothing. The maximum
    over all coalitions is computed exactly (int64 when ``P < 2^62``; else ``P`` bounds it).
    """
    k = instance.k
    if instance.n == 0:
        return 0
    p_max = int(instance.size.max())
    if P >= 2**62 or k > _MAX_K:
        return P
    m = instance.machines
    work = np.zeros(k, dtype=np.int64)
    np.add.at(work, instance.org, instance.size)
    mS = np.zeros(1 << k, dtype=np.int64)
    PS = np.zeros(1 << k, dtype=np.int64)
    for b in range(k):
        mS[1 << b : 2 << b] = mS[: 1 << b] + m[b]
        PS[1 << b : 2 << b] = PS[: 1 << b] + work[b]
    ok = mS > 0
    drain = int((-(-PS[ok] // mS[ok])).max()) if ok.any() else 0
    return min(drain + p_max, P)


def plan_arithmetic(instance: Instance, horizon: int | None, utility: str = "psi_sp") -> dict:
    """Check REF's bounds on ``instance`` before any compiled code runs (issue 11).

    Returns ``{"kernel_horizon", "t_events", "python", "final_in_kernel"}``:
    ``kernel_horizon`` is the horizon the kernel uses (``None`` when every job of every
    coalition completes before ``horizon``: then the run is the same without one),
    ``t_events`` bounds every event time, ``python`` says whether Python integers are
    needed (the int64 / two-word bounds of the module docstring fail) and
    ``final_in_kernel`` whether the values at the end fit int64. Raises
    :class:`InstanceError` when a time could pass ``2^63 - 1``.
    """
    n = instance.n
    M = instance.total_machines
    P = int(instance.size.sum(dtype=object)) if n else 0
    r_max = int(instance.release.max()) if n else 0
    r_min = int(instance.release.min()) if n else 0
    t_free = r_max + _drain_bound(instance, P)  # every coalition is done by then
    if horizon is not None and int(horizon) < 0:
        raise ValueError(f"horizon {horizon} is negative")
    if horizon is None or int(horizon) > t_free:
        if t_free > _I64_MAX - 1:
            raise InstanceError(
                f"REF: jobs may run until the last release plus the total size, {t_free} s, "
                f"beyond 2^63 - 1; give a horizon below 2^63"
            )
        kernel_T = None
        t_events = t_free
        t_final = t_free if horizon is None else int(horizon)
    else:
        kernel_T = int(horizon)
        if kernel_T > _I64_MAX:
            raise InstanceError(
                f"REF: events may happen up to the horizon {kernel_T} s, beyond 2^63 - 1; "
                "give a horizon below 2^63"
            )
        t_events = max(kernel_T - 1, 0)
        t_final = kernel_T
    # the kernel's clock starts at the first release: every elapsed time is below the span
    span = max(t_events - r_min, 0)
    L, _ = shapley_weights(max(instance.k, 1))
    vmax = _value_bound(utility, M, P, span)
    python = (
        _state_bound(utility, M, P, n, span) >= _STATE_LIMIT
        or _words_factor(instance.k) * L * vmax >= _WORDS_LIMIT
    )
    one_word = not python and _words_factor(instance.k) * L * vmax < _STATE_LIMIT
    final_ok = _state_bound(utility, M, P, n, max(t_final - r_min, 0)) < _STATE_LIMIT
    return {
        "kernel_horizon": kernel_T,
        "t_start": r_min,
        "t_events": t_events,
        "python": python,
        "one_word": one_word,
        "final_in_kernel": final_ok,
    }


def job_runs(
    org_jobs: np.ndarray, rel: np.ndarray, size: np.ndarray, org: np.ndarray, pinned: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Runs of interchangeable jobs in the organizations' queues, for starting them at once.

    ``org_jobs`` lists job positions (in FIFO order) organization by organization. A run
    is a maximal stretch of it whose jobs are consecutive in FIFO order (no other job in
    between) with the same owner, release, size and pin: a parallel job split into
    sequential ones is one run. Such jobs are interchangeable for every coalition (same
    utility, same end), so a coalition that starts the first waiting job of a run and has
    more free machines starts the following ones of the run at the same step, exactly as
    one-by-one picks would (``phi - psi`` does not change between picks at one time, and
    no other job's FIFO position falls inside the run, so pinned order is kept too).
    Returns ``run_end[x]`` (one past the run's last index in ``org_jobs``) and
    ``run_head[x]`` (the position of the run's first job, which names its completion
    bucket) for every index ``x``.
    """
    n = len(org_jobs)
    if n == 0:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    a, b = org_jobs[:-1], org_jobs[1:]
    same = (
        (b == a + 1)
        & (org[b] == org[a])
        & (rel[b] == rel[a])
        & (size[b] == size[a])
        & (pinned[b] == pinned[a])
    )
    first = np.flatnonzero(np.concatenate(([True], ~same)))
    run_id = np.cumsum(np.concatenate(([True], ~same))) - 1
    ends = np.append(first[1:], n).astype(np.int64)
    return ends[run_id], org_jobs[first][run_id].astype(np.int64)


def twin_classes(instance: Instance) -> list[list[int]]:
    """Groups of two or more interchangeable organizations: no jobs and equal machines.

    Swapping two such organizations maps every coalition's schedule onto another's (they
    never have a waiting job, so REF never picks or tie-breaks between them, and they
    contribute the same machines), so coalitions that differ only in which members of a
    group they hold have identical schedules and values: the kernel simulates one of each
    (:func:`canonical_coalitions`), which is exact, not an approximation.
    """
    counts = np.bincount(instance.org, minlength=instance.k) if instance.n else None
    groups: dict[int, list[int]] = {}
    for u in range(instance.k):
        if counts is None or counts[u] == 0:
            groups.setdefault(int(instance.machines[u]), []).append(u)
    return [g for g in groups.values() if len(g) > 1]


def canonical_coalitions(k: int, classes: list[list[int]]) -> np.ndarray:
    """``canon[D]``: the coalition simulated for ``D`` (each twin group's members in ``D``
    replaced by as many of the group's lowest-indexed members); ``canon[D] <= D``."""
    ids = np.arange(1 << k, dtype=np.int64)
    canon = ids.copy()
    pc = popcounts(k)
    for group in classes:
        mask = sum(1 << u for u in group)
        prefix = np.zeros(len(group) + 1, dtype=np.int64)
        for j, u in enumerate(sorted(group)):
            prefix[j + 1] = prefix[j] | (1 << u)
        canon = (canon & ~mask) | prefix[pc[ids & mask]]
    return canon


class Lattice(NamedTuple):
    """The coalitions as both REF kernels (sequential and rigid jobs) see them."""

    twins: list  # groups of interchangeable organizations (twin_classes)
    canon: np.ndarray  # canon[C]: the coalition simulated for C (canonical_coalitions)
    canon_list: np.ndarray  # the simulated coalitions but the empty one, increasing
    mC: np.ndarray  # machines of every coalition
    nC: np.ndarray  # jobs of every coalition
    rel_ptr: np.ndarray  # u's releases visit rel_idx[rel_ptr[u]:rel_ptr[u + 1]]: the
    rel_idx: np.ndarray  # simulated coalitions that hold u and some machine (none: no jobs)


def coalition_lattice(instance: Instance, counts: np.ndarray, symmetry: bool) -> Lattice:
    """Every coalition's machines and jobs (``counts``: each organization's), and with
    interchangeable organizations (``symmetry``) one simulated coalition per group of
    coalitions with identical schedules (:func:`twin_classes`)."""
    k = instance.k
    NC = 1 << k
    twins = twin_classes(instance) if symmetry else []
    canon = canonical_coalitions(k, twins)
    ids = np.arange(NC, dtype=np.int64)
    mC = np.zeros(NC, dtype=np.int64)
    nC = np.zeros(NC, dtype=np.int64)
    for b in range(k):
        mC[1 << b : 2 << b] = mC[: 1 << b] + int(instance.machines[b])
        nC[1 << b : 2 << b] = nC[: 1 << b] + int(counts[b])
    is_canon = canon == ids
    rel_lists = [
        ids[is_canon & (((ids >> u) & 1) == 1) & (mC > 0)] if counts[u] else ids[:0]
        for u in range(k)
    ]
    rel_ptr = np.zeros(k + 1, dtype=np.int64)
    rel_ptr[1:] = np.cumsum([len(x) for x in rel_lists])
    rel_idx = np.concatenate(rel_lists).astype(np.int64) if rel_lists else ids[:0]
    return Lattice(twins, canon, ids[is_canon & (ids > 0)], mC, nC, rel_ptr, rel_idx)


def ref_schedule(
    instance: Instance,
    horizon: int | None = None,
    *,
    utility: str = "psi_sp",
    rule: str | None = None,
    exact_python: bool | None = None,
    shapley: str = "auto",
    checkpoints: Iterable[int] | None = None,
    force_words: bool = False,
    symmetry: bool = True,
) -> tuple[Schedule, list[int]]:
    """REF's schedule of the grand coalition and the value of every coalition at the end.

    Returns ``(schedule, values)`` where ``values[C]`` is ``v(C)`` at the horizon (without
    one, at the grand coalition's last completion: the schedule's end, where
    :meth:`Schedule.psi` takes it, so ``values[-1]`` is the sum of its ``psi``;
    docs/conventions.md) for every bitmask ``C``, as exact Python integers.
    ``exact_python`` forces (True) or forbids (False: :class:`ValueError` instead) the
    Python-integer path; by default it is used only when the proven bounds of the module
    docstring fail. ``shapley`` picks how Shapley values are computed at an event time:
    ``"direct"`` (Eq. 1), ``"potential"`` (Hart and Mas-Colell, exact integers),
    ``"float"`` (the potential in float64, each decision proven from error bounds or
    else taken from Eq. (1); module docstring) or ``"auto"`` (the cheaper of Eq. (1) and
    the float potential at each event time); all give the same schedule and values. ``force_words`` keeps Shapley sums in two words even when
    one provably suffices (for tests: both paths must agree); ``symmetry=False`` simulates
    every coalition even when organizations are interchangeable (:func:`twin_classes`;
    for tests: both must agree).
    With ``checkpoints`` (times ``0 <= t <= horizon``; a horizon is required),
    ``schedule.info["checkpoints"]`` lists them in increasing order (duplicates dropped)
    and ``schedule.info["checkpoint_values"]`` holds, for each, the list of every
    coalition's value at that time, from the same run (the audit's curves over time use
    it); exact Python integers, like ``values``.
    """
    from ...workloads.limits import check_horizon

    horizon = check_horizon(horizon)
    inst = instance
    k = inst.k
    rule, cps_all = _checked_options(k, horizon, utility, rule, shapley, checkpoints)
    plan = plan_arithmetic(inst, horizon, utility)
    python = plan["python"] if exact_python is None else bool(exact_python)
    one_word = plan["one_word"] and not python and not force_words
    if exact_python is False and plan["python"]:
        raise ValueError(
            "REF: coalition values may exceed the compiled kernel's exact range "
            f"(event times up to {plan['t_events']} s); allow Python integers"
        )
    if python and exact_python is None:
        warnings.warn(
            "REF: values may exceed the compiled kernel's exact range; running on Python "
            "integers (exact, much slower)",
            RuntimeWarning,
            stacklevel=2,
        )
    order = inst.fifo_order()
    rel = inst.release[order]
    size = inst.size[order]
    org = inst.org[order]
    counts = np.bincount(org, minlength=k)
    org_ptr = np.zeros(k + 1, dtype=np.int64)
    org_ptr[1:] = np.cumsum(counts)
    org_jobs = np.argsort(org, kind="stable").astype(np.int64)
    NC = 1 << k
    L, omega = shapley_weights(k)
    pc = popcounts(k)
    kT = plan["kernel_horizon"]
    # checkpoints the kernel evaluates: all of them on Python integers or when the values
    # at the horizon fit int64, else those up to the last possible event time (the state
    # bound holds there); the later ones are computed below from the final records
    cp_lim = None if (python or plan["final_in_kernel"]) else plan["t_events"]
    cps_k = [c for c in cps_all if cp_lim is None or c <= cp_lim]
    cps = np.array(cps_k, dtype=object if python else np.int64)
    pinned = (
        np.zeros(inst.n, dtype=np.bool_)
        if inst.pinned is None
        else np.ascontiguousarray(inst.pinned[order], dtype=np.bool_)
    )
    run_end, run_head = job_runs(org_jobs, rel, size, org, pinned)
    lat = coalition_lattice(inst, counts, symmetry)
    twins, canon, canon_list, mC, nC = lat.twins, lat.canon, lat.canon_list, lat.mC, lat.nC
    rel_ptr, rel_idx = lat.rel_ptr, lat.rel_idx
    # the potential's cost in units of one addition: |D| additions and a value per D;
    # in float64, _FPOT_BLOCK_COST per coalition of the lattice in blocks, or half an addition
    # per member plus a value and a mispredicted loop exit per simulated coalition
    cost_pot = int((pc[canon_list] + 3).sum())
    cost_fpot = int((pc[canon_list] // 2 + 8).sum())
    fblocks = k >= 4 and cost_fpot > _FPOT_BLOCK_COST * NC
    cost_fpot = min(cost_fpot, _FPOT_BLOCK_COST * NC) if k >= 4 else cost_fpot
    filt = _MODES[shapley] in (0, 3) and not python
    # live (coalition, running job) pairs: a coalition runs at most min(m_C, n_C) jobs
    ecap = int(np.minimum(mC[canon_list], nC[canon_list]).sum()) + 1
    dtype = object if python else np.int64

    def z(*shape):
        a = np.zeros(shape, dtype=dtype)
        if python:
            a[...] = 0
        return a

    # completion buckets live at once: a few per running job; a run that needs
    # more stops early and is redone with four times as many (no array ever grows inside
    # the kernel, which keeps numba from reference-counting arrays in its hot loops)
    # a live bucket holds a live entry, so ecap buckets always suffice
    bcap = min(max(_BUCKETS[0] * inst.n, _BUCKETS[1]), ecap)
    reruns = 0
    from .kernel import (
        CO_FIELDS,
        CO_LAST,
        CO_SLOT,
        FL_FIELDS,
        MEM_FIELDS,
        MEM_LAST,
        ST_POOL_FULL,
        ST_SLOTS,
        ST_T_END,
        STAT_NAMES,
        Arith,
        Coalitions,
        FloatRoute,
        Jobs,
        Outputs,
        Run,
        State,
        _ref_kernel,
        python_kernel,
        reciprocals,
    )

    jobs = Jobs(
        machines=inst.machines,
        rel=rel,
        size=size,
        org=org,
        org_ptr=org_ptr,
        org_jobs=org_jobs,
        run_end=run_end,
        run_head=run_head,
        pinned=pinned,
    )
    coalitions = Coalitions(
        pc=pc, canon=canon, canon_list=canon_list, rel_ptr=rel_ptr, rel_idx=rel_idx, mC=mC
    )
    dtz, dodd, dinv32, dinv64 = _exact_division(k)
    arith = Arith(
        L=L if python else np.int64(L),
        omega=omega,
        python_ints=python,  # the kernel runs as plain Python on Python integers
        one_word=one_word,
        dtz=dtz,
        dodd=dodd,
        dinv32=dinv32,
        dinv64=dinv64,
    )
    while True:
        # records, one per (coalition, member) and one per coalition (their fields are
        # named in the kernel module: MEM_* and CO_*)
        # (a member record per simulated coalition, in its slot: CO_SLOT; slot 0 unused)
        mem, co = z(k, len(canon_list) + 1, MEM_FIELDS), z(NC, CO_FIELDS)
        mem[:, :, MEM_LAST] = plan["t_start"]  # every clock starts at the first release
        co[:, CO_LAST] = plan["t_start"]
        co[canon_list, CO_SLOT] = np.arange(1, len(canon_list) + 1)
        vv, qh, ql, final_v = (z(NC) for _ in range(4))
        # at a horizon beyond every event the values are computed below, in Python integers
        do_final = (python or plan["final_in_kernel"]) and (horizon is None or kT is not None)
        out_start = np.full(inst.n, -1, dtype=np.int64)
        out_machine = np.full(inst.n, -1, dtype=np.int64)
        stats = np.zeros(ST_SLOTS, dtype=np.int64)
        cp_vals = z(len(cps_k), NC)
        fn: Any = python_kernel() if python else _ref_kernel
        fn(
            Run(
                k=k,
                has_T=kT is not None,
                T=np.int64(0 if kT is None else kT),
                utility=_UTILITIES[utility],
                rule=_RULES[rule],
                mode=_MODES[shapley],
                ecap=ecap,
                bcap=bcap,
                cost_pot=cost_pot,
                anypin=bool(pinned.any()),
                do_final=do_final,
            ),
            jobs,
            coalitions,
            arith,
            FloatRoute(
                filt=filt,
                pf=np.zeros(NC if filt else 1),
                fco=np.zeros((FL_FIELDS, NC if filt else 1)),
                t0=np.int64(plan["t_start"]),
                rinv=reciprocals(k),
                eta=float_potential_error(k),
                cost_fpot=cost_fpot,
                fblocks=fblocks,
            ),
            State(mem=mem, co=co, vv=vv, qh=qh, ql=ql),
            Outputs(
                final_v=final_v,
                out_start=out_start,
                out_machine=out_machine,
                stats=stats,
                cps=cps,
                cp_vals=cp_vals,
            ),
        )
        if not stats[ST_POOL_FULL]:
            break
        bcap = min(4 * bcap, ecap)
        reruns += 1
    t_end = int(horizon) if horizon is not None else int(stats[ST_T_END])
    # at a horizon far beyond the last event, and checkpoints after it: Python integers
    values = [int(x) for x in final_v] if do_final else _exact_values(co, canon, utility, t_end)
    cp_rows = [[int(x) for x in row] for row in cp_vals]
    cp_rows += [_exact_values(co, canon, utility, c) for c in cps_all[len(cps_k) :]]
    start = np.full(inst.n, -1, dtype=np.int64)
    machine = np.full(inst.n, -1, dtype=np.int64)
    start[order] = out_start
    machine[order] = out_machine
    info: dict[str, Any] = {"utility": utility, "rule": rule}
    info.update((name, int(stats[slot])) for name, slot in STAT_NAMES.items())
    info.update(
        python_integers=python,
        one_word=one_word,
        bucket_reruns=reruns,
        twin_groups=twins,
        simulated_coalitions=len(canon_list),
    )
    sched = Schedule(
        instance=inst,
        start=start,
        machine=machine,
        policy="ref",
        horizon=None if horizon is None else int(horizon),
        info=info,
    )
    if cps_all:
        sched.info["checkpoints"] = cps_all
        sched.info["checkpoint_values"] = cp_rows
    return sched, values


def _checked_options(
    k: int,
    horizon: int | None,
    utility: str,
    rule: str | None,
    shapley: str,
    checkpoints: Iterable[int] | None,
) -> tuple[str, list[int]]:
    """:func:`ref_schedule`'s options checked: its rule (the utility's default when
    ``None``) and its checkpoints, sorted and distinct."""
    if k < 1:
        raise ValueError("REF needs at least one organization")
    if k > _MAX_K:
        raise ValueError(f"REF simulates 2^k coalitions; k={k} is beyond reach (at most {_MAX_K})")
    if utility not in _UTILITIES:
        raise ValueError(f"unknown utility {utility!r}; choose from {sorted(_UTILITIES)}")
    rule = rule or ("fig3" if utility == "psi_sp" else "distance")
    if rule not in _RULES:
        raise ValueError(f"unknown rule {rule!r}; choose from {sorted(_RULES)}")
    if shapley not in _MODES:
        raise ValueError(f"unknown Shapley method {shapley!r}; choose from {sorted(_MODES)}")
    cps_all = sorted({int(c) for c in checkpoints}) if checkpoints is not None else []
    if cps_all and horizon is None:
        raise ValueError("checkpoints need a horizon")
    if cps_all and horizon is not None and (cps_all[0] < 0 or cps_all[-1] > int(horizon)):
        raise ValueError(f"checkpoints must lie in [0, horizon={horizon}]")
    return rule, cps_all


def _exact_values(co: np.ndarray, canon: np.ndarray, utility: str, t: int) -> list[int]:
    """Every coalition's value at ``t`` (not before its last update) from a REF kernel's
    final records (``co``, fields as :mod:`.kernel` names them; ``canon[S]``: the record
    that stands for ``S``), in exact Python integers (Eq. 3 in closed form, as the
    kernels')."""
    from .kernel import CO_LAST, CO_RUNNING, CO_VALUE, CO_WORK, _psi_sp_at, _work_at

    rec = co[canon][:, [CO_VALUE, CO_WORK, CO_RUNNING, CO_LAST]]
    # Python integers (an object array on Python integers may hold numpy ones too)
    rec = rec.astype(object) if rec.dtype != object else np.frompyfunc(int, 1, 1)(rec)
    d = np.maximum(int(t) - rec[:, 3], 0)
    if utility == "psi_sp":
        return _psi_sp_at.py_func(rec[:, 0], rec[:, 1], rec[:, 2], d).tolist()
    return _work_at.py_func(rec[:, 1], rec[:, 2], d).tolist()
