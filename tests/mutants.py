"""Mutants of the package's code, for tests that must show they can fail (issue 45 item 6):
each is the package's class with one decision changed, and a test that guards that decision
checks that it tells the mutant apart."""

from __future__ import annotations

from coopsched.online.policies.rand import Rand


class RandFixedOrder(Rand):
    """RAND whose ``N`` orderings are all the canonical order, never shuffled: each
    organization's estimate is its marginal contribution in that one order, not the Shapley
    value (a biased estimator with the right sample count)."""

    name = "rand-fixed-order"

    def _orderings(self, order):
        k = len(order)
        N = self.samples(k)
        coalitions: dict[int, int] = {0: 0}
        coeff: list[dict[int, int]] = [dict() for _ in range(k)]
        mask = 0
        for i in range(k):
            u = int(order[i])
            with_u = mask | (1 << u)
            for c in (mask, with_u):
                coalitions.setdefault(c, len(coalitions))
            coeff[u][with_u] = N
            coeff[u][mask] = coeff[u].get(mask, 0) - N
            mask = with_u
        return list(coalitions), coeff
