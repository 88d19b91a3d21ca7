"""The sampled audit's statistics: Shapley values estimated from sampled coalitions.

* :mod:`.intervals` -- confidence intervals for a mean of i.i.d. draws: Student's t
  (:func:`t_quantile`), Hall's skewness-corrected t and the empirical Bernstein bound
  (:func:`pair_halfwidth`).
* :mod:`.antithetic` -- orders of the players: plain permutation sampling with Hoeffding's
  half-width (:func:`shapley_monte_carlo`), antithetic pairs with adaptive looks, a control
  variate or exact end positions (:func:`shapley_antithetic`, :func:`unanimity_control`).
* :mod:`.stratified` -- some players only, stratified by position, with an optimum
  allocation of draws (:func:`shapley_stratified`, :func:`optimum_allocation`).

The sampled Owen values (orders that keep every unit contiguous) are in
:mod:`coopsched.audit.owen`; exact Shapley values from a table of coalition values, which
REF uses, in :mod:`coopsched.online.shapley`. The game the audit samples and its budget
are :mod:`coopsched.audit.sampling`'s.
"""

from __future__ import annotations

from .antithetic import (
    AntitheticEstimate,
    ShapleyEstimate,
    look_schedule,
    shapley_antithetic,
    shapley_monte_carlo,
    unanimity_control,
)
from .intervals import (
    INTERVALS,
    hall_quantile_inverse,
    pair_halfwidth,
    resolve_interval,
    t_quantile,
    t_two_sided,
)
from .stratified import (
    StratifiedEstimate,
    optimum_allocation,
    position_bins,
    refine_schedule,
    shapley_stratified,
)

__all__ = [
    "AntitheticEstimate",
    "INTERVALS",
    "ShapleyEstimate",
    "StratifiedEstimate",
    "hall_quantile_inverse",
    "look_schedule",
    "optimum_allocation",
    "pair_halfwidth",
    "position_bins",
    "refine_schedule",
    "resolve_interval",
    "shapley_antithetic",
    "shapley_monte_carlo",
    "shapley_stratified",
    "t_quantile",
    "t_two_sided",
    "unanimity_control",
]
