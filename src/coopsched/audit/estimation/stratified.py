"""Shapley values of some players only, by stratified sampling over positions.

:func:`shapley_stratified` -- the first and last positions exact, the middle ones in runs,
one draw per run and round (or an optimum allocation of draws, :func:`optimum_allocation`),
adaptive as :func:`~.antithetic.shapley_antithetic`: the sampled audit's refinement of the
players the orders left undecided.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from .antithetic import GROUP_COALITIONS
from .budget import Budget, Valuation, as_budget
from .control import Surrogate, adjusted, widen
from .intervals import pair_halfwidth, resolve_interval


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
    budget: Budget | None = None,
    keep: int | None = None,
    on_chunk: Callable[[int], None] | None = None,
    surrogate: Surrogate | None = None,
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
    the budget is spent (``budget`` or ``seconds`` of wall-clock time, read before every
    chunk of coalitions as in :func:`~.antithetic.shapley_antithetic`; the rounds valued
    whole make the last look, and a player with fewer than two keeps its estimate of the
    first positions alone, with an infinite interval: the caller keeps its own). The rounds
    up to the next look are drawn at a time (at most
    :data:`~.antithetic.GROUP_COALITIONS` coalitions' worth) and valued in chunks;
    ``values(masks)`` values a chunk at once, at least ``batch`` coalitions while the
    budget affords them, with the same draws and so the same estimate; ``cache`` keeps
    up to ``keep`` values and ``on_chunk(valued)`` is told each chunk.
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
    look or kept one draw per run).

    ``surrogate`` (:class:`~.control.Surrogate`), if given: a control variate, a cheap game
    ``g`` with exact Shapley values, valued on the same coalitions; each round's value of
    ``g`` (the same weighted sum) is subtracted from the round's ``component`` with a
    coefficient fitted per player at each look (:mod:`.control`)."""
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
    runs = position_bins(k, bins)
    first = [c for u in who for c in (1 << u, G ^ (1 << u))] + [G]
    if valuation.ensure(first) < len(first):  # the budget ran out before any round
        return _nothing(who, val(G).shape[0], bins=len(runs), interval=interval, level=level)
    grand = val(G)
    m = grand.shape[0]
    exact = {u: (val(1 << u) + grand - val(G ^ (1 << u))) / k if k > 1 else grand for u in who}
    g = surrogate.value if surrogate is not None else None
    exact_g = {}
    if g is not None:
        exact_g = {u: (g(1 << u) + g(G) - g(G ^ (1 << u))) / k if k > 1 else g(G) for u in who}
    Zg: dict[int, list[float]] = {u: [] for u in who}  # the surrogate's rounds
    share = [(hi - lo + 1) / k for lo, hi in runs]
    rank = list(range(k)) if order is None else [int(w) for w in order]
    others = {u: np.array([w for w in rank if w != u]) for u in who}
    rng = np.random.default_rng(seed)
    Z: dict[int, list[np.ndarray]] = {u: [] for u in who}
    n_rounds = {u: 0 for u in who}
    phi = np.array([exact[u] for u in who]).reshape(len(who), m)
    hw = np.zeros((len(who), m)) if not runs else np.full((len(who), m), np.inf)
    se = hw.copy()
    decided = np.zeros(len(who), dtype=bool)
    active = list(range(len(who))) if runs else []
    stop, look, done = "decided", 0, 0

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
            Zg[u] = []

    for i_look, target in enumerate(plan, 1):
        if not active:
            break
        look = i_look
        out_of_time = False
        while done < target:
            per_round = sum(
                2 * (len(runs) if draws[i] is None else sum(draws[i] or ())) for i in active
            )
            n_batch = max(1, min(target - done, GROUP_COALITIONS // max(1, per_round)))
            rounds_now = [draw_round() for _ in range(n_batch)]
            masks = [
                [c for i, sets in rd for run in sets for S in run for c in (S, S | 1 << who[i])]
                for rd in rounds_now
            ]
            ready = valuation.ensure([c for part in masks for c in part])
            whole = np.cumsum([len(part) for part in masks]) <= ready
            if not whole.all():  # the budget ran out: the rounds valued whole
                rounds_now, out_of_time = rounds_now[: int(whole.sum())], True
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
                    if g is not None:
                        Zg[u].append(
                            exact_g[u]
                            + sum(
                                w * float(np.mean([g(S | 1 << u) - g(S) for S in run]))
                                for w, run in zip(share, sets, strict=True)
                            )
                        )
                    if pilot is not None and done < pilot:  # the first look only
                        D[u].append(deltas)
                        if cost is not None:
                            C[u].append([cost(S) + cost(S | 1 << u) for (S,) in sets])
                        else:
                            C[u].append([2.0] * len(sets))
                    n_rounds[u] += 1
                done += 1
            valuation.forget()
            if out_of_time:
                break
        for i in active:
            y = np.array(Z[who[i]])
            if len(y) >= 2:  # else (the budget ran out) the first look's, or none
                fitted = False
                if surrogate is not None:
                    zg = np.array(Zg[who[i]])[:, None]
                    col, b = adjusted(y[:, [component]], zg, surrogate.phi[[who[i]]])
                    y = y.copy()
                    y[:, component] = col[:, 0]
                    fitted = bool(b[0] != 0)
                phi[i] = y.mean(axis=0)
                hw[i] = pair_halfwidth(y, level, interval)
                se[i] = y.std(axis=0, ddof=1) / math.sqrt(len(y))
                if fitted:
                    n = len(y)
                    hw[i, component] = widen(hw[i, [component]], n, level, np.array([True]))[0]
                    se[i, component] *= math.sqrt((n - 1) / (n - 2))
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
        evaluations=valuation.valued,
        bins=len(runs),
        interval=interval,
        allocation=draws if pilot is not None else None,
    )


def _nothing(
    who: list[int], m: int, *, bins: int, interval: str, level: float
) -> StratifiedEstimate:
    """The estimate of a refinement whose budget ran out before its first round: no
    round, infinite intervals (the caller keeps its own estimates of ``who``)."""
    n = len(who)
    return StratifiedEstimate(
        players=who,
        phi=np.full((n, m), np.nan),
        halfwidth=np.full((n, m), np.inf),
        se=np.full((n, m), np.inf),
        rounds=np.zeros(n, dtype=np.int64),
        looks=0,
        planned_looks=0,
        level=level,
        stop="seconds",
        decided=np.zeros(n, dtype=bool),
        evaluations=0,
        bins=bins,
        interval=interval,
    )
