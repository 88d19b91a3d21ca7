"""The fair-share family (Skowron & Rzadca, Sec. 7.1; Kay & Lauder 1988).

Target shares are the fractions of machines each organization contributes. Each policy
starts a job of the organization with the smallest ratio of some measure to its share:

* FAIRSHARE -- processor time already given to its jobs (elapsed, so non-clairvoyant);
* UTFAIRSHARE -- its ``psi_sp`` utility;
* CURRFAIRSHARE -- its number of currently running jobs (no history).

Ratios are compared exactly (cross-multiplied integers); ties go to the organization whose
oldest waiting job was submitted first (:meth:`SimView.candidates` order). An
organization with no machine has an infinite ratio.
"""

from __future__ import annotations

from collections.abc import Callable

from ..engine import Policy, SimView
from ._registry import register


def argmin_ratio(view: SimView, measure: Callable[[int], int]) -> int:
    """Waiting organization minimizing ``measure(u) / machines[u]``, exactly."""
    best = -1
    bn = bd = 0
    mach = view.machines
    for u in view.candidates():  # oldest queue head first: ties keep the older
        d = mach[u]
        if best < 0:
            best, bn, bd = u, measure(u), d
            continue
        if d == 0:
            continue
        num = measure(u)
        if bd == 0 or num * bd < bn * d:
            best, bn, bd = u, num, d
    return best


@register
class FairShare(Policy):
    """FAIRSHARE: smallest (processor time used so far) / share."""

    name = "fairshare"
    rank = 30

    def select(self, view: SimView) -> int:
        return argmin_ratio(view, view.work)


@register
class UtFairShare(Policy):
    """UTFAIRSHARE: smallest ``psi_sp`` / share."""

    name = "utfairshare"
    rank = 31

    def select(self, view: SimView) -> int:
        return argmin_ratio(view, view.psi)


@register
class CurrFairShare(Policy):
    """CURRFAIRSHARE: smallest (running jobs) / share."""

    name = "currfairshare"
    rank = 32

    def select(self, view: SimView) -> int:
        return argmin_ratio(view, view.running.__getitem__)
