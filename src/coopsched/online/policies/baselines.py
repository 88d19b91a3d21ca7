"""Baseline policies that need no Shapley value (Skowron & Rzadca, Sec. 7.1)."""

from __future__ import annotations

from ..engine import Policy, SimView
from ._registry import register


@register
class Fifo(Policy):
    """FIFO: the oldest waiting job overall (global submission order) starts first."""

    name = "fifo"
    rank = 90

    def select(self, view: SimView) -> int:
        best, best_pos = -1, None
        w = view.waiting
        for u in view.members:
            if w[u]:
                p = view.head_position(u)
                if best_pos is None or p < best_pos:
                    best, best_pos = u, p
        return best


@register
class RoundRobin(Policy):
    """ROUNDROBIN (Sec. 7.1): cycle through the organizations, one job per turn.

    The turn passes to the next organization after the one served last that has a
    waiting job, cyclically in the instance's canonical order (its organizations by first
    job, :meth:`~coopsched.workloads.instance.Instance.canonical_order`), so that names and
    listing order do not matter.
    """

    name = "roundrobin"
    rank = 80

    def reset(self, view: SimView) -> None:
        self._last = -1

    def compiled_result(self, state: dict) -> None:
        self._last = state["last"]

    def select(self, view: SimView) -> int:
        w = view.waiting
        order = view.order
        k = len(order)
        i = self._last  # position in the canonical order of the last one served
        for _ in range(k):
            i = (i + 1) % k
            if w[order[i]]:
                self._last = i
                return order[i]
        raise AssertionError("select called with no waiting job")
