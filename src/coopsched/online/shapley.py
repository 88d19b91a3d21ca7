"""Shapley values from a table of coalition values (Skowron & Rzadca, Sec. 3, Eq. 1-2).

Coalitions are bitmasks: organization ``u`` is in coalition ``C`` iff ``C >> u & 1``.
A table ``v`` has ``2**k`` entries, ``v[0] = 0``.

* :func:`shapley` -- exact, in O(k 2^k): Eq. (1) summed over subsets with the integer
  weights ``omega(c, s) = L / (c * binom(c-1, s))``, ``L = lcm(1..k)`` (an integer
  because ``c * binom(c-1, s)`` divides ``lcm(1..c)``), so integer tables give exact
  rational results (:class:`fractions.Fraction`).
* :func:`shapley_restricted` -- the Shapley values in the game restricted to a coalition.
* :func:`shapley_potential` -- the potential of Hart and Mas-Colell (Econometrica 1989),
  ``P(D) = (v(D) + sum_{w in D} P(D - w)) / |D|``, ``P(empty) = 0``, scaled by ``L``: then
  ``phi_u(C) = P(C) - P(C - u)`` in the game restricted to ``C``, for every ``C`` at once
  in ``O(k 2^k)`` (REF uses it when many coalitions decide at one time).
* :func:`shapley_monte_carlo` -- permutation sampling (Eq. 2) with a Hoeffding
  confidence half-width shared by all players (kept for comparison and its callers).
* :func:`shapley_antithetic` -- antithetic permutation sampling (each order and its
  reverse), a per-player confidence interval from the observed variance (Student t, or
  with Hall's skewness correction: :func:`pair_halfwidth`), and
  an adaptive number of orders: batches until a caller's test decides every player, or a
  budget of orders or seconds is spent; optionally with a control variate, a surrogate game
  whose Shapley values are known exactly (:func:`unanimity_control`).
* :func:`shapley_stratified` -- some players only, stratified by position (the first and
  last positions exact, the middle ones in runs, one draw per run and round), adaptive in
  the same way: the sampled audit's refinement of the players the orders left undecided.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import lru_cache
from statistics import NormalDist

import numpy as np


def lcm_upto(k: int) -> int:
    """``lcm(1, ..., k)``."""
    out = 1
    for i in range(2, k + 1):
        out = out * i // math.gcd(out, i)
    return out


@lru_cache(maxsize=64)
def shapley_weights(k: int) -> tuple[int, np.ndarray]:
    """``(L, omega)`` with ``L = lcm(1..k)`` and ``omega[c, s] = L / (c * binom(c-1, s))``.

    ``phi_u(C) * L = sum over S in C \\ {u} of omega[|C|, |S|] * (v(S+u) - v(S))``.
    """
    L = lcm_upto(max(k, 1))
    omega = np.zeros((k + 1, k + 1), dtype=np.int64)
    for c in range(1, k + 1):
        for s in range(c):
            den = c * math.comb(c - 1, s)
            assert L % den == 0
            omega[c, s] = L // den
    return L, omega


def popcounts(k: int) -> np.ndarray:
    """Number of members of every coalition ``0 .. 2**k - 1``."""
    pc = np.zeros(1 << k, dtype=np.int64)
    for b in range(k):
        pc[1 << b : 1 << (b + 1)] = pc[: 1 << b] + 1
    return pc


def _check_table(v, k: int | None) -> tuple[list, int]:
    vals = list(v)
    n = len(vals)
    kk = n.bit_length() - 1
    if n < 1 or (1 << kk) != n:
        raise ValueError(f"a value table needs 2**k entries, got {n}")
    if k is not None and k != kk:
        raise ValueError(f"table of {n} entries does not match k={k}")
    return vals, kk


def shapley_restricted(v, coalition: int, k: int | None = None) -> dict[int, Fraction]:
    """Exact Shapley values of the members of ``coalition`` in the game restricted to it.

    Cost O(|C| 2^|C|).
    """
    vals, k = _check_table(v, k)
    members = [u for u in range(k) if coalition >> u & 1]
    c = len(members)
    L, omega = shapley_weights(max(k, 1))
    out: dict[int, Fraction] = {}
    for u in members:
        ub = 1 << u
        rest = coalition ^ ub
        acc = 0
        s = rest
        while True:
            acc += int(omega[c, bin(s).count("1")]) * (vals[s | ub] - vals[s])
            if s == 0:
                break
            s = (s - 1) & rest
        out[u] = Fraction(acc, L)
    return out


def shapley_potential(v, k: int | None = None) -> list[int]:
    """``L * P(D)`` for every coalition ``D``: the Hart--Mas-Colell potential, scaled.

    ``P(D) = sum over nonempty T in D of v(T) / (|T| binom(|D|, |T|))``, which satisfies
    ``|D| P(D) = v(D) + sum_{w in D} P(D - w)``; ``L = lcm(1..k)`` makes every entry an
    integer for an integer table (``|T| binom(|D|, |T|) = |D| binom(|D|-1, |T|-1)``
    divides ``lcm(1..|D|)``), so the recursion divides exactly. Eq. (1) then reads
    ``L phi_u(C) = L P(C) - L P(C - u)``.
    """
    vals, k = _check_table(v, k)
    L = lcm_upto(max(k, 1))
    q = [0] * len(vals)
    for D in range(1, len(vals)):
        total = L * vals[D]
        rest = D
        while rest:
            w = rest & -rest
            total += q[D ^ w]
            rest ^= w
        c = D.bit_count()
        assert total % c == 0
        q[D] = total // c
    return q


def shapley(v, k: int | None = None) -> list[Fraction]:
    """Exact Shapley values of all organizations in the grand coalition (Eq. 1).

    ``v`` is a table of ``2**k`` coalition values (ints give exact results).
    """
    vals, k = _check_table(v, k)
    phi = shapley_restricted(vals, (1 << k) - 1, k)
    return [phi[u] for u in range(k)]


@dataclass
class ShapleyEstimate:
    """Monte-Carlo Shapley values with a confidence half-width per organization."""

    phi: np.ndarray
    halfwidth: np.ndarray
    samples: int
    confidence: float


def shapley_monte_carlo(
    value,
    k: int,
    samples: int,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    value_range: float | None = None,
    order: Sequence[int] | None = None,
) -> ShapleyEstimate:
    """Estimate Shapley values by sampling ``samples`` permutations (Eq. 2).

    ``value`` is a table (indexable by bitmask) or a function of a bitmask. The
    half-width is Hoeffding's: with probability ``confidence`` each estimate is within
    ``range * sqrt(ln(2/(1-confidence)) / (2 samples))`` of the true value, where
    ``range`` bounds the marginal contributions (default: the observed spread). A drawn
    permutation orders positions of ``order`` (default ``0..k-1``): with a canonical order
    of the players (as the audit passes), the sample does not depend on how they are
    numbered.
    """
    if samples < 1:
        raise ValueError("samples must be at least 1")
    f = value if callable(value) else value.__getitem__
    rng = np.random.default_rng(seed)
    marg = np.zeros((samples, k), dtype=np.float64)
    cache: dict[int, float] = {}

    def val(mask: int) -> float:
        x = cache.get(mask)
        if x is None:
            x = cache[mask] = float(f(mask))
        return x

    players = list(range(k)) if order is None else [int(u) for u in order]
    for i in range(samples):
        perm = rng.permutation(k)
        mask = 0
        prev = val(0)
        for x in perm:
            u = players[x]
            mask |= 1 << u
            cur = val(mask)
            marg[i, u] = cur - prev
            prev = cur
    phi = marg.mean(axis=0)
    if value_range is None:
        value_range = float(marg.max() - marg.min()) if samples > 1 else 0.0
    hw = value_range * math.sqrt(math.log(2 / (1 - confidence)) / (2 * samples))
    return ShapleyEstimate(phi, np.full(k, hw), samples, confidence)


def t_two_sided(t: float, dof: int) -> float:
    """``P(|T| <= t)`` for Student's t with an integer ``dof`` (Abramowitz & Stegun,
    Handbook of Mathematical Functions, 26.7.3 and 26.7.4: finite series in
    ``theta = arctan(t / sqrt(dof))``)."""
    th = math.atan(t / math.sqrt(dof))
    c2, s = math.cos(th) ** 2, math.sin(th)
    if dof % 2:
        if dof == 1:
            return 2 * th / math.pi
        term, acc = math.cos(th), math.cos(th)
        for j in range(3, dof - 1, 2):  # cos^(j) terms with coefficient 2.4..(j-1)/1.3..j
            term *= c2 * (j - 1) / j
            acc += term
        return 2 / math.pi * (th + s * acc)
    term, acc = 1.0, 1.0
    for j in range(2, dof - 1, 2):
        term *= c2 * (j - 1) / j
        acc += term
    return s * acc


@lru_cache(maxsize=4096)
def t_quantile(p: float, dof: int) -> float:
    """The ``p`` quantile (``p >= 1/2``) of Student's t with ``dof`` degrees of freedom:
    bisection on :func:`t_two_sided` up to 400 degrees of freedom, beyond it the
    Cornish--Fisher expansion about the normal quantile (Abramowitz & Stegun, 26.7.5),
    whose error there is below 1e-6."""
    if dof < 1 or not 0.5 <= p < 1:
        raise ValueError("t_quantile: dof >= 1 and 1/2 <= p < 1")
    z = NormalDist().inv_cdf(p)
    if dof > 400:
        n = float(dof)
        g1 = (z**3 + z) / 4
        g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
        g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
        return z + g1 / n + g2 / n**2 + g3 / n**3
    lo, hi = z, z
    while t_two_sided(hi, dof) < 2 * p - 1:
        hi *= 2
    for _ in range(200):
        mid = (lo + hi) / 2
        if t_two_sided(mid, dof) < 2 * p - 1:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-12 * hi:
            break
    return hi


@dataclass
class AntitheticEstimate:
    """Shapley estimates from antithetic pairs of orders (:func:`shapley_antithetic`).

    ``phi`` and ``halfwidth`` have one row per player and one column per component of the
    value (a scalar game has one column). ``level`` is the confidence of each interval at
    the look it was taken at (``1 - (1 - confidence) / planned_looks``): with probability at
    least ``confidence``, every look's interval of a player covers its value, so the last
    one does whatever rule stopped the sampling. ``stop``: ``"decided"`` (the caller's test
    held for every player), ``"orders"`` (the budget of orders was spent) or ``"seconds"``
    (the time budget was); ``decided`` is the test's last answer (all ``True`` without a
    test). ``evaluations``: distinct coalitions valued. ``interval``: the interval used
    (:func:`pair_halfwidth`)."""

    phi: np.ndarray
    halfwidth: np.ndarray
    #: per player (and component), the standard error ``s / sqrt(n)`` of the estimate
    #: over its ``n`` pair means (``ends``: its valid ones, times the middle's weight), the
    #: half-width before its quantile: what projections of further sampling start from
    se: np.ndarray
    orders: int
    looks: int
    planned_looks: int
    level: float
    stop: str
    confidence: float
    decided: np.ndarray
    evaluations: int
    interval: str = "t"
    #: a control variate was used (``control`` of :func:`shapley_antithetic`)
    control: bool = False
    #: the first and last positions were valued exactly (``ends`` of :func:`shapley_antithetic`)
    ends: bool = False


def look_schedule(max_orders: int, first_orders: int) -> list[int]:
    """The numbers of antithetic pairs at which :func:`shapley_antithetic` looks: ``first``
    pairs, then doubling, the last one at ``max_orders // 2`` (planned before sampling, so
    that the intervals can share the error probability between them)."""
    top = max_orders // 2
    if top < 2:
        raise ValueError(f"max_orders: {max_orders}; at least 4 orders (2 antithetic pairs)")
    n = min(top, max(2, first_orders // 2))
    out = [n]
    while out[-1] < top:
        out.append(min(top, 2 * out[-1]))
    return out


#: the intervals :func:`pair_halfwidth` computes
INTERVALS = ("hall", "t", "bernstein")


def resolve_interval(interval: str, looks: bool) -> str:
    """The interval ``interval`` names: ``"auto"`` is ``"hall"`` with one look (no stopping
    rule) and ``"t"`` with adaptive looks (measured, benchmarks/estimator.py: with one look
    at 40 orders the 90 % t interval covers 0.88 to 0.90 on skewed games, Hall's 0.92 to
    0.97; with the looks' Bonferroni split t already covers 0.97 to 0.98 and Hall's wider
    intervals only spend more orders)."""
    if interval == "auto":
        return "t" if looks else "hall"
    if interval not in INTERVALS:
        raise ValueError(f"interval: {interval!r}; choose auto, {', '.join(INTERVALS)}")
    return interval


def hall_quantile_inverse(x: float, a: np.ndarray) -> np.ndarray:
    """The ``t`` with ``Q(t) = x`` for Hall's transformation ``Q(t) = t + a t^2 / 3 +
    a^2 t^3 / 27 + a / 6`` (``a = skewness / sqrt(n)``). ``Q(t) = ((1 + a t / 3)^3 - 1) / a +
    a / 6`` increases strictly, so ``t = 3 (c - 1) / a`` with ``c = cbrt(1 + a (x - a / 6))``,
    computed as ``3 (x - a / 6) / (c^2 + c + 1)`` (no division by ``a``: ``t = x`` at
    ``a = 0``)."""
    y = x - a / 6
    c = np.cbrt(1 + a * y)
    return 3 * y / (c * c + c + 1)


def pair_halfwidth(Y: np.ndarray, level: float, interval: str = "hall") -> np.ndarray:
    """Per player (and component), the half-width of the ``level`` interval for the mean of
    the rows of ``Y`` (``n >= 2`` i.i.d. pair means), centred on their mean.

    * ``"t"``: Student's t, ``t_{n-1} s / sqrt(n)``; exact for normal pair means, but with
      skewed ones (a small player contributes only when it comes early) it falls short: the
      studentized mean is then skewed itself, its error of order ``1 / sqrt(n)``.
    * ``"hall"``: the studentized mean ``T = sqrt(n) (mean - phi) / s`` through Hall's
      transformation (P. Hall, "On the removal of skewness by transformation", JRSS B 54,
      1992, 221-228), ``Q(T) = T + a T^2 / 3 + a^2 T^3 / 27 + a / 6`` with ``a = g / sqrt(n)``
      and ``g = m3 / m2^(3/2)`` the sample skewness (central moments over ``n``), which
      removes the ``1 / sqrt(n)`` skewness term of ``T``'s distribution (the term Johnson's
      modified t corrects, N. J. Johnson, JASA 73, 1978, 536-544; Hall's cubic term makes
      ``Q`` monotone, so it inverts): ``phi`` lies in ``[mean - s/sqrt(n) Q^-1(q),
      mean - s/sqrt(n) Q^-1(-q)]`` with ``q`` Student's ``t_{n-1}`` quantile, as for
      ``"t"`` (so it is the t interval when ``g = 0``). One half-width per player: the
      larger of the two sides, so the interval contains Hall's.
    * ``"bernstein"``: the empirical Bernstein bound (Maurer & Pontil, COLT 2009, Thm. 4,
      two-sided) with the observed range, see :func:`shapley_antithetic`.
    """
    n = Y.shape[0]
    if n < 2:
        raise ValueError("pair_halfwidth: at least 2 pair means")
    sd = Y.std(axis=0, ddof=1)
    if interval == "bernstein":
        span = Y.max(axis=0) - Y.min(axis=0)
        log = math.log(4 / (1 - level))
        return np.sqrt(2 * sd**2 * log / n) + 7 * span * log / (3 * (n - 1))
    q = t_quantile(1 - (1 - level) / 2, n - 1)
    se = sd / math.sqrt(n)
    if interval == "t":
        return q * se
    if interval != "hall":
        raise ValueError(f"interval: {interval!r}; choose {', '.join(INTERVALS)}")
    c = Y - Y.mean(axis=0)
    m2 = (c * c).mean(axis=0)
    m3 = (c * c * c).mean(axis=0)
    pos = m2 > 0
    g = np.where(pos, m3 / np.where(pos, m2, 1.0) ** 1.5, 0.0)
    a = g / math.sqrt(n)
    return se * np.maximum(hall_quantile_inverse(q, a), -hall_quantile_inverse(-q, a))


def shapley_antithetic(
    value: Callable[[int], object],
    k: int,
    max_orders: int,
    *,
    seed: int = 0,
    confidence: float = 0.95,
    order: Sequence[int] | None = None,
    first_orders: int = 20,
    decide: Callable[[np.ndarray, np.ndarray], np.ndarray] | None = None,
    seconds: float | None = None,
    on_look: Callable[[int, int, int, int], None] | None = None,
    interval: str = "auto",
    draw: Callable[[np.random.Generator], Sequence[int]] | None = None,
    values: Callable[[list[int]], Sequence[object]] | None = None,
    control: Callable[[int], object] | None = None,
    control_phi: object = None,
    ends: bool = False,
    cache: dict[int, np.ndarray] | None = None,
    handoff: Callable[[np.ndarray, np.ndarray, np.ndarray, int, float, int, int], bool]
    | None = None,
    batch: int = 1,
) -> AntitheticEstimate:
    """Estimate Shapley values (Eq. 2) from antithetic pairs of orders, adaptively.

    Each draw is a uniformly random order ``pi`` of the players and its reverse (antithetic
    sampling; Mitchell, Cooper, Frank & Holmes, "Sampling Permutations for Shapley Value
    Estimation", JMLR 23, 2022; Illes & Kerenyi, "Estimation of the Shapley value by
    ergodic sampling", 2019): a player early in ``pi`` is late in its reverse, so the two
    marginal contributions are negatively correlated and their mean varies less than one
    order's. The prefixes of the reverse are the complements of ``pi``'s, so a pair needs
    the ``2(k - 1)`` proper coalitions ``P_i`` and ``N \\ P_i``: as many as two plain
    orders. Per player, the pair means are i.i.d. with mean ``phi_u``; the estimate is their
    mean and the interval the central limit theorem's from the pairs' sample variance (per
    player: a player whose contributions vary little gets a narrow interval).

    ``interval`` (:func:`pair_halfwidth`): ``"t"``, Student's t quantile; ``"hall"``, the
    same with Hall's skewness-removing transformation of the studentized mean, for skewed
    pair means (a small player contributes only when it comes early), the one half-width
    the larger side; ``"auto"`` (default): ``"hall"`` with one look, ``"t"`` with adaptive
    looks (:func:`resolve_interval`, from the measured coverage and width).
    ``interval="bernstein"``: the empirical Bernstein bound instead (Maurer & Pontil,
    "Empirical Bernstein Bounds and Sample Variance Penalization", COLT 2009, Thm. 4, two-sided:
    ``sqrt(2 V ln(4/delta) / n) + 7 R ln(4/delta) / (3 (n - 1))``), wider, with no normal
    approximation; the range ``R`` of a player's pair means is not known in advance, so the
    observed one is used (a heuristic: rare large contributions not yet seen are missed).

    Adaptive number of orders: the looks are planned before sampling
    (:func:`look_schedule`: ``first_orders`` orders, then doubling, up to ``max_orders``),
    and each look's interval is at level ``1 - (1 - confidence) / looks`` (Bonferroni over
    the planned looks), so that the interval where sampling stops covers with probability at
    least ``confidence`` whatever stopped it (a union bound; the stopping need not be planned).
    At each look ``decide(phi, halfwidth)`` (one boolean per player) is asked; sampling stops
    when it holds for all players, when ``max_orders`` are used, or when ``seconds`` have
    passed (checked after each pair; the pairs done so far make the last look, which takes
    the place of a planned one). Without ``decide``, one look at ``max_orders``
    (the nominal ``confidence``). ``on_look(look, orders, coalitions, undecided)`` is told
    each look.

    ``value(mask)`` is a number or a 1-D array (several games valued at once, as the audit's
    values at several times); it is called once per distinct coalition. Orders are drawn
    over positions of ``order`` (default ``0..k-1``), as :func:`shapley_monte_carlo`.

    ``draw(rng)``, when given, draws each order instead (a sequence of all ``k`` players):
    the estimate is then the expected marginal contribution over ``draw``'s distribution,
    which must be the same as that of the reversed orders for the pairs to be unbiased (it
    is for the orders that keep each union of a hierarchy contiguous, :mod:`coopsched.audit.owen`).

    ``values(masks)``, if given, values a batch of coalitions at once (one result per mask,
    in order, e.g. on a cluster): the orders up to the next look are drawn first and their
    new coalitions valued in one call (with ``seconds``, pairs of orders up to ``batch``
    coalitions at a time, at least one pair: the time is checked after each batch, so a
    larger batch, which keeps a cluster's workers busy, may overshoot the budget by up to
    one batch). The orders drawn and the values used are the same, so is the estimate.

    ``control(mask)`` and ``control_phi``, if given: a control variate, a surrogate game
    ``g`` (cheap to value, ``g(0) = 0``, numbers or 1-D arrays as ``value``) with its exact
    Shapley values ``control_phi`` (one row per player). By linearity of the Shapley value,
    ``phi(v) = phi(g) + phi(v - g)``: the orders sample only the residual game ``v - g``
    (each pair mean is that of ``v``'s marginal contributions less ``g``'s on the same
    coalitions), so the estimate stays unbiased whatever ``g`` is, and the intervals are
    those of the residual pair means (narrower when ``g``'s marginal contributions follow
    ``v``'s; zero when ``v - g`` is additive). This is regression-adjusted Monte Carlo with
    a fixed surrogate (R. T. Witter, Y. Liu, C. Musco, "Regression-adjusted Monte Carlo
    estimators for Shapley values and probabilistic values", 2025), without its fitting
    step, so no cross-fitting is needed. A surrogate of degree at most two (additive plus
    pairwise terms ``b_uw``) gains nothing here: a player's predecessors in an order's
    reverse are the complement of those in the order, so the pair mean of such a game's
    marginal contributions is already its Shapley value ``a_u + sum_w b_uw / 2``.

    ``ends=True``: stratification by position, the first and last positions exact. A
    player's Shapley value is the mean over the ``k`` positions of its expected marginal
    contribution there; at the first position it is ``v({u})``, at the last
    ``v(N) - v(N - u)``, both valued before the first order for every player (``2 k``
    coalitions, which later orders reuse). So ``phi_u = (v({u}) + v(N) - v(N - u)) / k +
    (k - 2) / k * E[middle]``, where ``E[middle]`` is the mean of ``u``'s pair means over the
    pairs in which it is neither first nor last (post-stratification: given how many there
    are, they are i.i.d. draws of the middle positions, so the estimate is unbiased and the
    interval, scaled by ``(k - 2) / k``, is the same CLT interval on them; a player with
    fewer than two such pairs has an infinite half-width). It takes every jump at the first
    or last position out of the sampling (as the grand coalition's recorded total in the
    sampled audit, and a small player's own value alone). Uniform orders only: a ``draw``
    must draw uniformly random orders (as a replay of stored ones), the weights ``1 / k``
    assume it; not with ``control``. Unlike the other estimates, the values do not sum to
    ``v(N)`` exactly (each player's mean is over its own pairs); and a player's middle
    contributions are averaged over about ``(k - 2) / k`` of the pairs, so at few orders
    skewed games are covered less well (tests/test_shapley_antithetic.py: 0.85 for a nominal
    0.90 at 40 orders on airport games, nominal at 80).

    ``cache``, if given, holds the values (1-D arrays) of coalitions already valued and
    receives the new ones (a later estimate of the same game reuses them,
    :func:`shapley_stratified`). ``handoff(phi, halfwidth, decided, pairs, seconds,
    coalitions, next_pairs)``, if given, is asked at each look but the last that leaves a
    player undecided (``next_pairs``: the pairs of the next planned look; ``seconds``: the
    sampling's time so far, ``coalitions`` the distinct ones valued); if it
    answers ``True``, sampling stops there with ``stop="handoff"``: the caller goes on
    another way (the sampled audit's refinement of the undecided players).
    """
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    interval = resolve_interval(interval, decide is not None)
    looks = look_schedule(max_orders, first_orders) if decide is not None else None
    if looks is None:
        look_schedule(max_orders, max_orders)  # checks max_orders
        looks = [max_orders // 2]
    planned = len(looks)
    level = 1 - (1 - confidence) / planned
    players = list(range(k)) if order is None else [int(u) for u in order]
    G = (1 << k) - 1
    if cache is None:
        cache = {}

    def val(mask: int) -> np.ndarray:
        x = cache.get(mask)
        if x is None:
            x = cache[mask] = np.atleast_1d(np.asarray(value(mask), dtype=np.float64))
        return x

    m = val(G).shape[0]
    if (control is None) != (control_phi is None):
        raise ValueError("control and control_phi go together")
    if ends and control is not None:
        raise ValueError("ends: not with control")
    phi0 = np.zeros((k, m))
    gcache: dict[int, np.ndarray] = {}
    if control is not None:
        phi0 = np.asarray(control_phi, dtype=np.float64).reshape(k, -1) + phi0

        def gval(mask: int) -> np.ndarray:
            x = gcache.get(mask)
            if x is None:
                x = gcache[mask] = np.atleast_1d(np.asarray(control(mask), dtype=np.float64))
            return x

        if np.any(gval(0) != 0):
            raise ValueError("control: the surrogate game must value the empty coalition 0")
    rng = np.random.default_rng(seed)
    if batch < 1:
        raise ValueError(f"batch: {batch}; at least 1 coalition")
    per_batch = max(1, -(-batch // (2 * max(1, k - 1))))  # pairs of orders per batch
    Y = np.zeros((looks[-1], k, m), dtype=np.float64)
    valid = np.ones((looks[-1], k), dtype=bool)  # ends: u neither first nor last in the pair
    weight = 1.0
    if ends:
        masks = [c for u in range(k) for c in (1 << u, G ^ (1 << u))]
        if values is not None:
            todo = [m for m in dict.fromkeys(masks) if m not in cache]
            for mask, x in zip(todo, values(todo) if todo else [], strict=True):
                cache[mask] = np.atleast_1d(np.asarray(x, dtype=np.float64))
        if k == 1:  # the one position is both first and last
            phi0, weight = np.array([val(G)]), 0.0
        else:
            phi0 = np.array([val(1 << u) + val(G) - val(G ^ (1 << u)) for u in range(k)]) / k
            weight = (k - 2) / k
    start = time.perf_counter()
    done, stop = 0, "orders"
    phi = hw = np.zeros((k, m))
    decided = np.ones(k, dtype=bool)
    look = 0
    ahead: list[list[int]] = []  # orders drawn, not yet used (batch valuation)

    def one(r: np.random.Generator) -> list[int]:
        if draw is None:
            return [players[x] for x in r.permutation(k)]
        return [int(u) for u in draw(r)]

    for look, target in enumerate(looks, 1):
        out_of_time = False
        while done < target:
            if values is not None and not ahead:
                n_ahead = min(per_batch, target - done) if seconds is not None else target - done
                ahead = [one(rng) for _ in range(n_ahead)]
                new: dict[int, None] = {}
                for p in ahead:
                    acc = 0
                    for u in p:
                        acc |= 1 << u
                        new.update({m: None for m in (acc, G ^ acc) if m not in cache})
                todo = list(new)
                for mask, x in zip(todo, values(todo), strict=True):
                    cache[mask] = np.atleast_1d(np.asarray(x, dtype=np.float64))
            perm = ahead.pop(0) if ahead else one(rng)
            pre = [0]
            for u in perm:
                pre.append(pre[-1] | 1 << u)
            fwd = [val(p) for p in pre]
            rev = [val(G ^ p) for p in pre]
            if control is not None:  # the residual game v - g
                fwd = [x - gval(p) for x, p in zip(fwd, pre, strict=True)]
                rev = [x - gval(G ^ p) for x, p in zip(rev, pre, strict=True)]
            for i, u in enumerate(perm, 1):
                Y[done, u] = ((fwd[i] - fwd[i - 1]) + (rev[i - 1] - rev[i])) / 2
            if ends:
                valid[done, perm[0]] = valid[done, perm[-1]] = False
            done += 1
            over = seconds is not None and time.perf_counter() - start > seconds
            if over and done >= 2 and not ahead:  # a batch valued is used whole
                out_of_time = True
                break
        if ends:
            phi, hw = _middle(Y[:done], valid[:done], phi0, weight, level, interval)
        else:
            phi = phi0 + Y[:done].mean(axis=0)
            hw = pair_halfwidth(Y[:done], level, interval)
        if decide is not None:
            decided = np.asarray(decide(phi, hw), dtype=bool)
        if on_look is not None:
            on_look(look, 2 * done, len(cache), int(k - decided.sum()))
        if decide is not None and decided.all():
            stop = "decided"
            break
        if out_of_time:
            stop = "seconds"
            break
        if (
            handoff is not None
            and look < len(looks)
            and handoff(
                phi, hw, decided, done, time.perf_counter() - start, len(cache), looks[look]
            )
        ):
            stop = "handoff"
            break
    return AntitheticEstimate(
        phi=phi,
        halfwidth=hw,
        se=_standard_error(Y[:done], valid[:done] if ends else None, weight if ends else 1.0),
        orders=2 * done,
        looks=look,
        planned_looks=planned,
        level=level,
        stop=stop,
        confidence=confidence,
        decided=decided,
        evaluations=len(cache),
        interval=interval,
        control=control is not None,
        ends=ends,
    )


def _middle(
    Y: np.ndarray, valid: np.ndarray, exact: np.ndarray, weight: float, level: float, interval: str
) -> tuple[np.ndarray, np.ndarray]:
    """``ends`` of :func:`shapley_antithetic`: per player, ``exact + weight * mean`` of its
    valid pair means, and ``weight`` times their interval's half-width (infinite below two
    pairs; zero when no position is sampled, ``weight = 0``)."""
    k, m = Y.shape[1], Y.shape[2]
    phi, hw = exact.copy(), np.zeros((k, m))
    if weight == 0:
        return phi, hw
    for u in range(k):
        y = Y[valid[:, u], u]
        if len(y):
            phi[u] += weight * y.mean(axis=0)
        hw[u] = weight * pair_halfwidth(y, level, interval) if len(y) >= 2 else np.inf
    return phi, hw


def _standard_error(Y: np.ndarray, valid: np.ndarray | None, weight: float) -> np.ndarray:
    """Per player (and component), ``weight`` times the standard error ``s / sqrt(n)`` of
    the mean of its rows of ``Y`` (with ``valid``, its valid rows only); ``inf`` below two."""
    k, m = Y.shape[1], Y.shape[2]
    out = np.full((k, m), np.inf)
    for u in range(k):
        y = Y[:, u] if valid is None else Y[valid[:, u], u]
        if len(y) >= 2:
            out[u] = weight * y.std(axis=0, ddof=1) / math.sqrt(len(y))
    return out


def position_bins(k: int, bins: int) -> list[tuple[int, int]]:
    """The middle positions of ``k`` players, as sizes ``1`` to ``k - 2`` of the set of
    players before the estimated one, cut into ``min(bins, k - 2)`` runs of consecutive
    sizes of near-equal length: ``(first, last)`` pairs (none for ``k <= 2``)."""
    if bins < 1:
        raise ValueError(f"bins: {bins}; at least 1")
    mid = k - 2
    if mid <= 0:
        return []
    b = min(bins, mid)
    edges = [1 + (mid * i) // b for i in range(b + 1)]
    return [(edges[i], edges[i + 1] - 1) for i in range(b)]


def refine_schedule(max_rounds: int, first_rounds: int) -> list[int]:
    """The rounds at which :func:`shapley_stratified` looks: ``first_rounds``, then doubling,
    the last at ``max_rounds`` (planned before sampling, as :func:`look_schedule`)."""
    if max_rounds < 2:
        raise ValueError(f"max_rounds: {max_rounds}; at least 2 rounds")
    out = [min(max_rounds, max(2, first_rounds))]
    while out[-1] < max_rounds:
        out.append(min(max_rounds, 2 * out[-1]))
    return out


@dataclass
class StratifiedEstimate:
    """Shapley estimates of some players by stratified sampling (:func:`shapley_stratified`).

    ``phi`` and ``halfwidth``: one row per player of ``players`` (in that order), one column
    per component of the value. ``rounds``: per player, the rounds drawn for it (it stops
    being sampled at the look that decides it; with an ``allocation``, the first look's
    rounds are counted but its estimate uses the later ones). ``level``, ``looks``,
    ``planned_looks``: as :class:`AntitheticEstimate`; ``stop``: ``"decided"``,
    ``"rounds"`` (``max_rounds`` used) or ``"seconds"``; ``evaluations``: coalitions this
    estimate valued (not found in the cache); ``bins``: strata of middle positions."""

    players: list[int]
    phi: np.ndarray
    halfwidth: np.ndarray
    #: per player, the standard error ``s / sqrt(n)`` of its estimate over the ``n`` rounds
    #: it uses (as :class:`AntitheticEstimate`'s)
    se: np.ndarray
    rounds: np.ndarray
    looks: int
    planned_looks: int
    level: float
    stop: str
    decided: np.ndarray
    evaluations: int
    bins: int
    interval: str = "t"
    #: per player, its draws per run after the first look (``None``: one draw per run);
    #: ``None`` when the estimate was not asked to allocate
    allocation: list[tuple[int, ...] | None] | None = None


def optimum_allocation(
    weight: np.ndarray, spread: np.ndarray, cost: np.ndarray, budget: float, rounded: bool = True
) -> tuple[float, ...]:
    """Draws per stratum minimizing the variance ``sum_b weight_b**2 spread_b**2 / n_b`` of
    a stratified mean at the cost ``sum_b n_b cost_b = budget``, at least one draw each
    (every stratum must be sampled for the mean to be unbiased): ``n_b`` proportional to
    ``weight_b spread_b / sqrt(cost_b)`` (Cochran, "Sampling Techniques", 3rd ed., 1977,
    Sec. 5.5; with equal costs Neyman's allocation, the "optimum allocation" of Castro et
    al. 2017), strata that would get less than one draw given one and the rest of the
    budget shared again, then rounded (at least 1; ``rounded=False``: the real optimum)."""
    weight, spread = np.asarray(weight, float), np.asarray(spread, float)
    cost = np.asarray(cost, float)
    if np.any(cost <= 0) or np.any(spread < 0) or len({len(weight), len(spread), len(cost)}) != 1:
        raise ValueError("optimum_allocation: positive costs, spreads >= 0, one per stratum")
    n = np.ones(len(cost))
    if spread.size and spread.max() > 0:  # only ratios matter: tiny spreads lose no digits
        spread = spread / spread.max()
    free = weight * spread > 0
    while free.any():
        left = budget - cost[~free].sum()
        a = weight * spread / np.sqrt(cost)
        n_free = left * a / float((weight * spread * np.sqrt(cost))[free].sum())
        low = free & (n_free < 1)
        if not low.any():
            n[free] = n_free[free]
            break
        free &= ~low
    if not rounded:
        return tuple(float(x) for x in n)
    return tuple(int(x) for x in np.maximum(1, np.rint(n)))


def shapley_stratified(
    value: Callable[[int], object],
    k: int,
    players: Sequence[int],
    max_rounds: int,
    *,
    seed: int | np.random.SeedSequence = 0,
    confidence: float = 0.95,
    bins: int = 8,
    first_rounds: int = 8,
    decide: Callable[[np.ndarray, np.ndarray, np.ndarray], np.ndarray] | None = None,
    seconds: float | None = None,
    interval: str = "t",
    values: Callable[[list[int]], Sequence[object]] | None = None,
    cache: dict[int, np.ndarray] | None = None,
    order: Sequence[int] | None = None,
    allocate: float = 0,
    cost: Callable[[int], float] | None = None,
    component: int = -1,
    allocate_gain: float = 2.0,
    batch: int = 1,
) -> StratifiedEstimate:
    """Estimate the Shapley values of the players ``players`` only, stratified by position.

    A player's Shapley value (Eq. 2) is the mean over the ``k`` positions ``s`` (the number
    of players before it, ``0`` to ``k - 1``) of its expected marginal contribution
    ``v(S + u) - v(S)`` over the sets ``S`` of ``s`` other players drawn uniformly
    (stratified sampling by position: Maleki, Tran-Thanh, Hines, Rahwan & Rogers, "Bounding
    the estimation error of sampling-based Shapley value approximation", 2013; Castro,
    Gomez, Molina & Tejada, "Improving polynomial estimation of the Shapley value by
    stratified random sampling with optimum allocation", Computers & Operations Research
    82, 2017). The first position (``v({u})``) and the last (``v(N) - v(N - u)``) are
    valued exactly; the middle sizes ``1`` to ``k - 2`` are cut into ``bins`` runs of
    consecutive sizes (:func:`position_bins`), and each round draws, per player and run, one
    size uniformly in the run and one set of that size uniformly: ``2`` coalitions per run,
    whatever ``k``. A round's value ``Z = (v({u}) + v(N) - v(N - u)) / k + sum_b (n_b / k)
    (v(S_b + u) - v(S_b))`` (``n_b`` sizes in run ``b``) is unbiased for ``phi_u``, and the
    rounds are i.i.d.: the estimate is their mean, its interval the central limit theorem's
    (:func:`pair_halfwidth` on the rounds, Student t by default). Unlike full orders, a round
    serves one player; it pays when few players are left to decide, as the position, which
    full orders leave random, no longer adds to the variance.

    Adaptive as :func:`shapley_antithetic`: looks planned before sampling
    (:func:`refine_schedule`), each at level ``1 - (1 - confidence) / planned`` (Bonferroni);
    at each look ``decide(players, phi, halfwidth)`` (the players still sampled, their
    estimates; one boolean each) and a decided player is no longer sampled, its estimate
    kept; the sampling stops when every player is decided, ``max_rounds`` are used, or
    ``seconds`` have passed (checked after each round, at least 2 rounds; the rounds done
    make the last look). ``values(masks)``: values a batch (with ``seconds``, rounds up to
    ``batch`` coalitions at a time, at least one round, and the time checked after each
    batch; else the rounds up to the next look), with the same draws and so the same
    estimate.
    ``cache``: coalitions valued before (e.g. by :func:`shapley_antithetic` on the same
    game), reused and extended. ``order`` (default ``0..k-1``): the coalitions are drawn over
    positions of it, as :func:`shapley_antithetic` draws its orders, and the players are
    sampled in the order given, so that with a canonical order and players listed in it the
    estimate does not depend on how the players are numbered.

    ``allocate`` (adaptive only; ``0``, the default, keeps one draw per run): optimum
    allocation after the first look (Castro et al. 2017; Cochran 1977, Sec. 5.5). A player
    still open after the first look gets a fixed number of draws per run for its later
    rounds, :func:`optimum_allocation` of the first look's spread of its marginal
    contributions in each run (``component`` of the value) and of the cost of the run's
    coalitions (``cost(mask)``, relative; equal by default), for ``allocate`` times the
    cost of a first-look round; a later round's value is ``exact + sum_b (n_b / k)`` times
    the mean of its draws in run ``b``. Those rounds are i.i.d. given the first look, and
    from then on the player's estimate and interval use them only (the first look's rounds,
    which chose the allocation, are not of the same law); below two of them the first
    look's estimate stands. A player gets an allocation only if the first look predicts it
    worth the first look's rounds, which it gives up: one draw per run would need at least
    ``allocate_gain`` times the optimum's variance at equal cost (Cochran's
    ``(sum_b w_b sd_b sqrt(c_b))**2 / sum_b c_b`` against ``sum_b w_b**2 sd_b**2``, ``w_b =
    n_b / k``); otherwise it keeps one draw per run and its first-look rounds.
    ``allocation``: per player, its draws per run (``None`` if it was decided at the first
    look or kept one draw per run)."""
    if not 0 < confidence < 1:
        raise ValueError("confidence must be in (0, 1)")
    if allocate and not allocate >= 1:
        raise ValueError(f"allocate: {allocate}; 0 (off) or at least 1 first-look round")
    interval = resolve_interval(interval, decide is not None)
    plan = refine_schedule(max_rounds, first_rounds) if decide is not None else [max_rounds]
    if decide is None:
        refine_schedule(max_rounds, max_rounds)  # checks max_rounds
    level = 1 - (1 - confidence) / len(plan)
    who = [int(u) for u in players]
    G = (1 << k) - 1
    if cache is None:
        cache = {}
    before = len(cache)

    def val(mask: int) -> np.ndarray:
        x = cache.get(mask)
        if x is None:
            x = cache[mask] = np.atleast_1d(np.asarray(value(mask), dtype=np.float64))
        return x

    def fill(masks: list[int]) -> None:
        todo = [m for m in dict.fromkeys(masks) if m not in cache]
        if values is not None and todo:
            for mask, x in zip(todo, values(todo), strict=True):
                cache[mask] = np.atleast_1d(np.asarray(x, dtype=np.float64))

    fill([c for u in who for c in (1 << u, G ^ (1 << u))] + [G])
    grand = val(G)
    m = grand.shape[0]
    runs = position_bins(k, bins)
    exact = {u: (val(1 << u) + grand - val(G ^ (1 << u))) / k if k > 1 else grand for u in who}
    share = [(hi - lo + 1) / k for lo, hi in runs]
    rank = list(range(k)) if order is None else [int(w) for w in order]
    others = {u: np.array([w for w in rank if w != u]) for u in who}
    rng = np.random.default_rng(seed)
    if batch < 1:
        raise ValueError(f"batch: {batch}; at least 1 coalition")
    Z: dict[int, list[np.ndarray]] = {u: [] for u in who}
    n_rounds = {u: 0 for u in who}
    phi = np.array([exact[u] for u in who]).reshape(len(who), m)
    hw = np.zeros((len(who), m)) if not runs else np.full((len(who), m), np.inf)
    se = hw.copy()
    decided = np.zeros(len(who), dtype=bool)
    active = list(range(len(who))) if runs else []
    stop, look, done = "decided", 0, 0
    start = time.perf_counter()

    draws: list[tuple[int, ...] | None] = [None] * len(who)
    pilot = plan[0] if allocate and len(plan) > 1 else None
    D: dict[int, list[list[np.ndarray]]] = {u: [] for u in who}  # the first look's deltas
    C: dict[int, list[list[float]]] = {u: [] for u in who}  # and their costs

    def draw_round() -> list[tuple[int, list[list[int]]]]:
        out = []
        for i in active:
            u = who[i]
            sets = []
            per = draws[i]
            for b, (lo, hi) in enumerate(runs):
                run = []
                for _ in range(1 if per is None else per[b]):
                    s = int(rng.integers(lo, hi + 1))
                    S = 0
                    for w in rng.choice(others[u], size=s, replace=False):
                        S |= 1 << int(w)
                    run.append(S)
                sets.append(run)
            out.append((i, sets))
        return out

    def allocate_open() -> None:
        for i in active:
            u = who[i]
            d = np.array(D[u])  # rounds x runs x components
            spread = d[:, :, component].std(axis=0, ddof=1)
            c = np.array(C[u]).mean(axis=0)
            w = np.array(share)
            one = float((w**2 * spread**2).sum())  # variance of a round, one draw per run
            best = float((w * spread * np.sqrt(c)).sum() ** 2 / c.sum())  # optimum, same cost
            if best == 0 or one < allocate_gain * best:
                continue  # not worth its first look: one draw per run, those rounds kept
            n = optimum_allocation(w, spread, c, allocate * c.sum())
            draws[i] = tuple(int(x) for x in n)
            Z[u] = []

    for i_look, target in enumerate(plan, 1):
        if not active:
            break
        look = i_look
        out_of_time = False
        while done < target:
            if seconds is not None:  # rounds per batch: at least batch coalitions
                per_round = sum(
                    2 * (len(runs) if draws[i] is None else sum(draws[i] or ())) for i in active
                )
                n_batch = min(max(1, -(-batch // max(1, per_round))), target - done)
            else:
                n_batch = target - done
            rounds_now = [draw_round() for _ in range(n_batch)]
            fill(
                [
                    c
                    for rd in rounds_now
                    for i, sets in rd
                    for run in sets
                    for S in run
                    for c in (S, S | 1 << who[i])
                ]
            )
            for rd in rounds_now:
                for i, sets in rd:
                    u = who[i]
                    z = exact[u].copy()
                    deltas = [
                        np.mean([val(S | 1 << u) - val(S) for S in run], axis=0) for run in sets
                    ]
                    for w, d in zip(share, deltas, strict=True):
                        z += w * d
                    Z[u].append(z)
                    if pilot is not None and done < pilot:  # the first look only
                        D[u].append(deltas)
                        if cost is not None:
                            C[u].append([cost(S) + cost(S | 1 << u) for (S,) in sets])
                        else:
                            C[u].append([2.0] * len(sets))
                    n_rounds[u] += 1
                done += 1
            if seconds is not None and time.perf_counter() - start > seconds and done >= 2:
                out_of_time = True
                break
        for i in active:
            y = np.array(Z[who[i]])
            if len(y) >= 2 or draws[i] is None:
                phi[i] = y.mean(axis=0)
                hw[i] = pair_halfwidth(y, level, interval)
                if len(y) >= 2:
                    se[i] = y.std(axis=0, ddof=1) / math.sqrt(len(y))
        if decide is not None:
            got = np.asarray(decide(np.array([who[i] for i in active]), phi[active], hw[active]))
            for i, d in zip(list(active), got, strict=True):
                decided[i] = bool(d)
            active = [i for i in active if not decided[i]]
            if not active:
                stop = "decided"
                break
            if pilot is not None and i_look == 1 and not out_of_time:
                allocate_open()
        if out_of_time:
            stop = "seconds"
            break
        stop = "rounds"
    if not runs:
        decided[:] = True
    return StratifiedEstimate(
        players=who,
        phi=phi,
        halfwidth=hw,
        se=se,
        rounds=np.array([n_rounds[u] for u in who], dtype=np.int64),
        looks=look,
        planned_looks=len(plan),
        level=level,
        stop=stop,
        decided=decided,
        evaluations=len(cache) - before,
        bins=len(runs),
        interval=interval,
        allocation=draws if pilot is not None else None,
    )


def unanimity_control(k: int, offset: object) -> tuple[Callable[[int], object], np.ndarray]:
    """The control variate ``offset * u_N`` for :func:`shapley_antithetic`: ``u_N`` is the
    unanimity game of the grand coalition (1 for it, 0 for every other coalition), whose
    Shapley value is ``1/k`` for every player (symmetry and efficiency; Shapley 1953).

    With ``offset = v(N) - v'(N)``, where ``v'(N)`` values the grand coalition as the other
    coalitions are, the orders sample the game ``v'`` and ``phi(v) = phi(v') + offset / k``
    exactly. The sampled audit needs it: its ``v(N)`` is the recorded total (Skowron &
    Rzadca, Definition 3.2: the utility the organizations actually got), the other
    coalitions are valued by a policy's schedule, and the difference falls on whoever comes
    last in an order, a jump in that player's marginal contribution that swamps a small
    player's share (``benchmarks/audit_estimators.py``). ``offset``: a number or 1-D array
    (one per component of the value)."""
    G = (1 << k) - 1
    off = np.atleast_1d(np.asarray(offset, dtype=np.float64))
    zero = np.zeros_like(off)

    def g(mask: int) -> np.ndarray:
        return off if mask == G else zero

    return g, np.tile(off / k, (k, 1))
