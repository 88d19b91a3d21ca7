"""Shapley values by sampling orders of the players (Skowron & Rzadca, Eq. 2).

* :func:`shapley_monte_carlo` -- permutation sampling with a Hoeffding confidence
  half-width shared by all players (kept for comparison and its callers).
* :func:`shapley_antithetic` -- antithetic permutation sampling (each order and its
  reverse), a per-player confidence interval from the observed variance (Student t, or
  with Hall's skewness correction: :func:`~.intervals.pair_halfwidth`), and an adaptive
  number of orders: batches until a caller's test decides every player, or a budget of
  orders or seconds (CPU or wall-clock, :mod:`.budget`) is spent; optionally with a control variate, a surrogate game whose
  Shapley values are known exactly (:func:`unanimity_control`).

Coalitions are bitmasks: player ``u`` is in coalition ``C`` iff ``C >> u & 1``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .budget import Budget, BudgetError, Valuation, as_budget
from .control import Surrogate, adjusted, widen
from .intervals import pair_halfwidth, resolve_interval

#: Coalitions whose orders are drawn and valued at a time, at most (at least one order):
#: the bitmasks of an order of ``k`` players take about ``k**2 / 4`` bytes.
GROUP_COALITIONS = 65_536


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
    #: the pair means themselves, one row per antithetic pair (``orders / 2`` rows, then
    #: players, then components; of the residual game with a control variate, the
    #: surrogate's subtracted at the fitted coefficients): what a
    #: function of several players' values needs for its variance (their covariance), as
    #: the sampled counterfactuals' unfairness (:mod:`coopsched.audit.unfairness`)
    pairs: np.ndarray | None = None
    #: ``ends``: per pair and player, whether the player was in the middle (its pair mean
    #: counts); ``None`` otherwise
    valid: np.ndarray | None = None
    #: with a ``surrogate``: each player's fitted coefficient at the last look
    coefficients: np.ndarray | None = None


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
    budget: Budget | None = None,
    keep: int | None = None,
    on_chunk: Callable[[int], None] | None = None,
    surrogate: Surrogate | None = None,
    component: int = -1,
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
    when it holds for all players, when ``max_orders`` are used, or when the budget is spent:
    ``budget`` (a :class:`~.budget.Budget` of CPU and/or wall-clock seconds) or ``seconds``
    of wall-clock time, read before every chunk of coalitions (:class:`~.budget.Valuation`:
    chunks sized by their measured cost, about a second each, never planned beyond what
    the budget has left), so that it holds to about one coalition's cost whatever the
    number of players. The orders whose coalitions were all valued make the last look,
    which takes the place of a planned one; fewer than two antithetic pairs make no
    estimate (:class:`~.budget.BudgetError`, saying what two would cost). Without
    ``decide``, one look at ``max_orders`` (the nominal ``confidence``).
    ``on_look(look, orders, coalitions, undecided)`` is told each look, ``on_chunk(valued)``
    each chunk of coalitions.

    ``value(mask)`` is a number or a 1-D array (several games valued at once, as the audit's
    values at several times); it is called once per distinct coalition. Orders are drawn
    over positions of ``order`` (default ``0..k-1``), as :func:`shapley_monte_carlo`.

    ``draw(rng)``, when given, draws each order instead (a sequence of all ``k`` players):
    the estimate is then the expected marginal contribution over ``draw``'s distribution,
    which must be the same as that of the reversed orders for the pairs to be unbiased (it
    is for the orders that keep each union of a hierarchy contiguous, :mod:`coopsched.audit.owen`).

    The orders up to the next look are drawn first (at most :data:`GROUP_COALITIONS`
    coalitions' worth, at least one order) and their new coalitions valued in chunks.
    ``values(masks)``, if given, values a chunk at once (one result per mask, in order,
    e.g. on a cluster), at least ``batch`` coalitions per call while the budget affords
    them (a cluster's workers kept busy). The orders drawn and the values used are the
    same however they are chunked, so is the estimate.

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

    ``surrogate`` (:class:`~.control.Surrogate`), if given: a second control variate, a
    cheap game ``g`` with exact Shapley values, whose pair means are taken on the same
    orders and subtracted from the value's ``component`` (the horizon's, by default the
    last) with a coefficient fitted per player at each look (:mod:`.control`); the other
    components are estimated without it. Not with ``ends``.

    ``cache``, if given, holds the values (1-D arrays) of coalitions already valued and
    receives the new ones, up to ``keep`` of them (a later estimate of the same game
    reuses them, :func:`~.stratified.shapley_stratified`). ``handoff(phi, halfwidth,
    decided, pairs, each, coalitions, next_pairs)``, if given, is asked at each look but
    the last that leaves a player undecided (``next_pairs``: the pairs of the next planned
    look; ``each``: the measured seconds per coalition on the budget's clock,
    ``coalitions`` the distinct ones valued); if it
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
    before = len(cache)
    budget = as_budget(budget, seconds)
    valuation = Valuation(
        value,
        budget,
        values=values,
        cache=cache,
        keep=keep,
        min_chunk=batch,
        on_chunk=on_chunk,
    )
    val = valuation.get
    m = val(G).shape[0]
    if (control is None) != (control_phi is None):
        raise ValueError("control and control_phi go together")
    if ends and (control is not None or surrogate is not None):
        raise ValueError("ends: not with control or surrogate")
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
    # the pairs' means, grown look by look (memory follows the pairs done, not max_orders)
    Y = np.zeros((0, k, m), dtype=np.float64)
    Z = np.zeros((0, k), dtype=np.float64)  # the surrogate's pair means
    valid = np.ones((0, k), dtype=bool)  # ends: u neither first nor last in the pair
    weight = 1.0
    if ends:
        masks = [c for u in range(k) for c in (1 << u, G ^ (1 << u))]
        if valuation.ensure(masks) < len(masks):
            raise BudgetError(
                f"the budget ({budget.describe()}) ran out before the first and last "
                f"positions of {k:,} players were valued ({2 * k:,} coalitions)",
                budget.binding(),
            )
        if k == 1:  # the one position is both first and last
            phi0, weight = np.array([val(G)]), 0.0
        else:
            phi0 = np.array([val(1 << u) + val(G) - val(G ^ (1 << u)) for u in range(k)]) / k
            weight = (k - 2) / k
    done, stop = 0, "orders"
    phi = hw = np.zeros((k, m))
    decided = np.ones(k, dtype=bool)
    look = 0
    ahead: list[list[int]] = []  # orders drawn whose coalitions are valued, not yet used
    # orders drawn (and their coalitions valued) at a time: those up to the next look,
    # fewer when each has many coalitions (their bitmasks take k / 8 bytes each)
    group = max(1, GROUP_COALITIONS // (2 * k))
    out_of_time = False

    def too_few(cost: float, done: int = 0) -> str:
        if valuation.per_coalition() == 0:  # nothing measured: the budget ran out first
            return (
                f"the budget ({budget.describe()}) ran out before the first coalition was "
                f"valued ({budget.spent()} spent); the 2 antithetic pairs of orders an "
                f"estimate needs value 2 x 2 x {k - 1:,} coalitions"
            )
        return (
            f"the budget ({budget.describe()}) "
            + (f"bought {done} of" if cost == 0 else "cannot buy")
            + f" the 2 antithetic pairs of orders an estimate needs: a pair values "
            f"2 x {k - 1:,} coalitions, {valuation.per_coalition():.3g} s each here"
            + (f", so the pairs left would take about {cost:,.0f} s more" if cost else "")
        )

    # the first two pairs or no estimate: given up on once measured to cost too much
    valuation.require(2 * 2 * k, too_few)

    def one(r: np.random.Generator) -> list[int]:
        if draw is None:
            return [players[x] for x in r.permutation(k)]
        return [int(u) for u in draw(r)]

    for look, target in enumerate(looks, 1):
        Y = np.concatenate([Y, np.zeros((target - len(Y), k, m))])
        if surrogate is not None:
            Z = np.concatenate([Z, np.zeros((target - len(Z), k))])
        valid = np.concatenate([valid, np.ones((target - len(valid), k), dtype=bool)])
        while done < target:
            if not ahead:
                if out_of_time:
                    break
                ahead = [one(rng) for _ in range(min(group, target - done))]
                masks = []
                for p in ahead:
                    acc = 0
                    for u in p:
                        acc |= 1 << u
                        masks += (acc, G ^ acc)
                ready = valuation.ensure(masks)
                if ready < len(masks):  # the budget ran out: the orders valued whole
                    ahead, out_of_time = ahead[: ready // (2 * k)], True
                    if not ahead:
                        break
            perm = ahead.pop(0)
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
            if surrogate is not None:  # g on the same coalitions: prefixes and complements
                gf = surrogate.along(perm)
                gr = surrogate.along(perm[::-1])[::-1]  # gr[i] = g(G ^ prefix i)
                Z[done, perm] = ((gf[1:] - gf[:-1]) + (gr[:-1] - gr[1:])) / 2
            if ends:
                valid[done, perm[0]] = valid[done, perm[-1]] = False
            done += 1
            if done == 2:
                valuation.require(0, None)
            if not ahead:
                valuation.forget()
        if done < 2:
            raise BudgetError(too_few(0, done), budget.binding())
        if ends:
            phi, hw = _middle(Y[:done], valid[:done], phi0, weight, level, interval)
        else:
            used, b = _with_surrogate(Y[:done], Z[:done], surrogate, component)
            phi = phi0 + used.mean(axis=0)
            hw = pair_halfwidth(used, level, interval)
            if b is not None:
                hw[:, component] = widen(hw[:, component], done, level, b != 0)
        if decide is not None:
            decided = np.asarray(decide(phi, hw), dtype=bool)
        if on_look is not None:
            on_look(look, 2 * done, before + valuation.valued, int(k - decided.sum()))
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
                phi,
                hw,
                decided,
                done,
                valuation.per_coalition(),
                before + valuation.valued,
                looks[look],
            )
        ):
            stop = "handoff"
            break
    used, b = _with_surrogate(Y[:done], Z[:done], surrogate, component)
    se = _standard_error(used, valid[:done] if ends else None, weight if ends else 1.0)
    if b is not None and done > 2:
        se[:, component] *= np.where(b != 0, math.sqrt((done - 1) / (done - 2)), 1.0)
    return AntitheticEstimate(
        phi=phi,
        halfwidth=hw,
        se=se,
        orders=2 * done,
        looks=look,
        planned_looks=planned,
        level=level,
        stop=stop,
        confidence=confidence,
        decided=decided,
        evaluations=before + valuation.valued,
        interval=interval,
        control=control is not None,
        ends=ends,
        pairs=used,
        valid=valid[:done] if ends else None,
        coefficients=b,
    )


def _with_surrogate(
    Y: np.ndarray, Z: np.ndarray, surrogate: Surrogate | None, component: int
) -> tuple[np.ndarray, np.ndarray | None]:
    """The pair means with the surrogate's subtracted from ``component`` at the fitted
    coefficients (:mod:`.control`), and the coefficients (``None``: no surrogate)."""
    if surrogate is None:
        return Y, None
    out = Y.copy()
    out[:, :, component], b = adjusted(Y[:, :, component], Z, surrogate.phi)
    return out, b


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
