"""The counterfactual policies' unfairness when ``phi`` is sampled, and the policies' ranking.

An exact audit measures each policy ``P`` against REF's own schedule (Skowron & Rzadca,
Sec. 7.2): ``dpsi / p_tot = sum_u |psi_u(P) - psi_u(REF)| / p_tot``. REF starts, at every
step, a job of the member with the largest ``phi_u - psi_u`` (Fig. 1), so its utilities
follow the Shapley values of the game it plays: ``psi_u(REF)`` is (up to the discreteness of
jobs) ``f_u``, the Shapley value of the game in which *every* coalition, the grand one
included, is valued by REF.

A sampled audit cannot run REF on the grand coalition, but its game values every other
coalition under a stand-in policy (``value_policy``, FAIRSHARE by default), and the stand-in's
schedule of the grand coalition is one simulation. Its fair utilities are then
``f_u = phi_u + loss_share`` exactly (``phi`` the audit's Shapley values, whose grand coalition
is the recorded total, and ``loss_share = (v'(N) - recorded total) / k``: the Shapley value is
linear, docs/audit.md "The recorded total, taken out of the sampling"), and each policy's
unfairness is estimated as ``U_P = sum_u |psi_u(P) - f_u| / p_tot``, ``p_tot`` the work the
stand-in's schedule processed (REF's in the exact measure), from the same sampled orders as
``phi`` (:func:`unfairness_interval`). The recorded schedule's own row is then
``sum_u |vs_ref_u| / p_tot``.

The interval (:func:`unfairness_interval`) separates the organizations whose side is known
from the others. Where ``f_u``'s interval excludes ``psi_u(P)``, ``|psi_u(P) - f_u|`` is the
linear ``s_u (psi_u(P) - f_u)`` with a known sign ``s_u``; their sum is estimated with the
central limit theorem's interval on the per-pair values of that linear form (the pairs of
orders give every organization a value, so the covariance between organizations is
counted), plus, independently, the refined organizations' own standard errors. Where
``f_u``'s interval contains ``psi_u(P)``, the term lies between 0 and
``|psi_u(P) - f_u_hat| + halfwidth_u``, and the interval widens by that much on the upper
side. Policies are then ranked where their intervals separate
(:func:`rank_policies`): a policy's rank is one more than the number of policies whose
whole interval lies below its own, and policies whose intervals overlap are tied.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .estimation import t_quantile

__all__ = ["FairShares", "unfairness_interval", "rank_policies"]


@dataclass(frozen=True)
class FairShares:
    """What a sampled audit knows of the fair utilities ``f`` (module doc), at the horizon.

    ``f``: the estimates, one per organization; ``halfwidth``: their intervals' half-widths
    (as the report's ``phi``); ``se``: their standard errors; ``refined``: the organizations
    whose estimate comes from the refinement (independent of the orders and of one another);
    ``pairs``: the orders' pair means (one row per antithetic pair, one column per
    organization), whose covariance a sum over organizations needs (``None``: unknown, then
    the standard error of a sum is bounded by the sum of the standard errors); ``quantile``:
    the Student t quantile of the organizations' intervals (the stricter of the orders' and
    the refinement's); ``p_tot``: the work the stand-in's schedule processed; ``confidence``:
    the audit's."""

    f: np.ndarray
    halfwidth: np.ndarray
    se: np.ndarray
    refined: np.ndarray
    pairs: np.ndarray | None
    quantile: float
    p_tot: float
    confidence: float


def unfairness_interval(psi: Sequence[int], fair: FairShares) -> tuple[float, float, float]:
    """A policy's unfairness ``sum_u |psi_u - f_u| / p_tot`` and its interval, from its
    organizations' utilities ``psi`` and the estimated fair utilities (module doc):
    ``(estimate, low, high)``."""
    a = np.asarray([float(x) for x in psi], dtype=np.float64)
    d = a - fair.f
    p = float(fair.p_tot)
    if p <= 0:
        return 0.0, 0.0, 0.0
    known = np.abs(d) > fair.halfwidth
    sign = np.sign(d) * known
    linear = math.fsum(
        np.abs(d[known]).tolist()
    )  # fsum: exact, so no order of organizations matters
    from_orders = known & ~fair.refined
    if fair.pairs is not None and len(fair.pairs) >= 2:
        z = fair.pairs[:, from_orders] @ sign[from_orders]
        var = float(z.var(ddof=1)) / len(z)
    else:  # no covariance known: sd(sum) <= sum of sd (Cauchy-Schwarz)
        var = math.fsum(fair.se[from_orders].tolist()) ** 2
    var += math.fsum((fair.se[known & fair.refined] ** 2).tolist())
    spread = fair.quantile * math.sqrt(var) if math.isfinite(var) else math.inf
    open_ = ~known
    upper_open = math.fsum((np.abs(d[open_]) + fair.halfwidth[open_]).tolist())
    estimate = math.fsum(np.abs(d).tolist()) / p
    low = max(0.0, linear - spread) / p
    high = (linear + spread + upper_open) / p
    return estimate, low, high


def fair_shares(sg: object, loss_share: float, p_tot: float, confidence: float) -> FairShares:
    """:class:`FairShares` of a sampled game (:class:`~.sampling.SampledGame`) whose
    stand-in's grand total exceeds the recorded one by ``loss_share`` per organization."""
    from .sampling import SampledGame

    assert isinstance(sg, SampledGame)
    est, ref = sg.estimate, sg.refinement
    k = len(sg.psi)
    h = sg.component
    refined = np.zeros(k, dtype=bool)
    se = np.asarray(est.se[:, h], dtype=np.float64).copy()
    for g in sg.groups or []:
        se[g] = se[g].max()
    q = t_quantile(1 - (1 - est.level) / 2, max(1, est.orders // 2 - 1))
    if ref is not None:
        got = np.isfinite(ref.halfwidth[:, h])
        who = np.array(ref.players, dtype=np.int64)[got]
        refined[who] = True
        se[who] = ref.se[got, h]
        rounds = int(ref.rounds[got].min()) if got.any() else 2
        q = max(q, t_quantile(1 - (1 - ref.level) / 2, max(1, rounds - 1)))
    pairs = None
    if est.pairs is not None and est.valid is None:
        pairs = np.asarray(est.pairs[:, :, h], dtype=np.float64)
        for g in sg.groups or []:  # interchangeable organizations: their mean, as phi's
            pairs[:, g] = pairs[:, g].mean(axis=1, keepdims=True)
    return FairShares(
        f=np.asarray(sg.phi, dtype=np.float64) + loss_share,
        halfwidth=np.asarray(sg.halfwidth, dtype=np.float64),
        se=se,
        refined=refined,
        pairs=pairs,
        quantile=q,
        p_tot=float(p_tot),
        confidence=confidence,
    )


def rank_policies(rows: list[dict]) -> None:
    """Rank the rows (``unfairness``, ``unfairness_low``, ``unfairness_high``) in place: a
    row's ``rank`` is one more than the number of rows whose interval lies wholly below its
    own (fairer beyond doubt), ``tied_with`` the rows whose intervals overlap its own (an
    exact audit's intervals are points: ties are equal values). Rows without a value get
    neither."""
    valued = [r for r in rows if r.get("unfairness") is not None]
    for r in valued:
        lo, hi = _bounds(r)
        r["rank"] = 1 + sum(1 for o in valued if o is not r and _bounds(o)[1] < lo)
        r["tied_with"] = [
            o["policy"]
            for o in valued
            if o is not r and not (_bounds(o)[1] < lo or _bounds(o)[0] > hi)
        ]


def _bounds(row: dict) -> tuple[float, float]:
    lo = row.get("unfairness_low")
    hi = row.get("unfairness_high")
    value = float(row["unfairness"])
    return (value if lo is None else float(lo)), (value if hi is None else float(hi))
