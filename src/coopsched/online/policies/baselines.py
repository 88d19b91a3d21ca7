"""Baseline policies that need no Shapley value (Skowron & Rzadca, Sec. 7.1)."""

from __future__ import annotations

import numpy as np

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

    def _compiled(self) -> dict | None:
        """Private hook for :func:`~coopsched.online.engine.simulate`: the compiled rule."""
        return {"rule": "fifo"} if type(self) is Fifo else None


@register
class RoundRobin(Policy):
    """ROUNDROBIN (Sec. 7.1): cycle through the organizations, one job per turn.

    The turn passes to the next organization (in index order, cyclically) after the one
    served last that has a waiting job.
    """

    name = "roundrobin"
    rank = 80

    def reset(self, view: SimView) -> None:
        self._last = -1

    def select(self, view: SimView) -> int:
        w = view.waiting
        k = view.k
        u = self._last
        for _ in range(k):
            u = (u + 1) % k
            if w[u]:
                self._last = u
                return u
        raise AssertionError("select called with no waiting job")

    def _compiled(self) -> dict | None:
        """Private hook for :func:`~coopsched.online.engine.simulate`: the compiled rule."""
        if type(self) is not RoundRobin:
            return None
        state = np.zeros((5, 2), dtype=np.int64)
        state[4, 0] = -1  # as reset(): no organization served yet
        return {"rule": "roundrobin", "state": state}

    def _compiled_done(self, state: np.ndarray) -> None:
        self._last = int(state[4, 0])
