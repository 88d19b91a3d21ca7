"""DIRECTCONTR, the heuristic of Skowron & Rzadca, Fig. 9 (Sec. 7.1).

Each organization's contribution is estimated directly: a job running on a machine of
organization ``v`` credits its ``psi_sp`` to ``v`` as contribution, and to the job's
owner as utility. At each event, free machines are visited in a random (seeded) order
and the waiting job of the organization with the largest ``phi - psi`` starts;
``phi`` and ``psi`` are evaluated at ``t`` and do not change between the picks at one
``t`` (docs/conventions.md §1; ties to the oldest waiting job, as in every policy).

Departures from the printed pseudo-code, as docs/conventions.md §1 asks:

* erratum: lines 15-16 of Fig. 9 credit ``phi[own(J)]`` and ``psi[own(m)]``; we credit
  utility to the job's owner and contribution to the machine's owner, as lines 13-14
  and the text do;
* running jobs are accounted exactly (a unit part completed at ``tau`` is worth
  ``t - tau`` at ``t``), so the tracked utility equals ``psi_sp`` exactly -- the
  engine's own :meth:`SimView.psi` is used for it;
* visiting free machines in random order is implemented as giving each started job a
  uniformly random free machine, which has the same distribution.
"""

from __future__ import annotations

from ..engine import Policy, SimView
from ._registry import register


@register
class DirectContr(Policy):
    """DIRECTCONTR (Fig. 9): largest estimated contribution minus utility first."""

    name = "directcontr"
    rank = 20
    random_machines = True

    def reset(self, view: SimView) -> None:
        k = view.k
        self._phi = [0] * k  # psi_sp-like accumulator of work done on u's machines
        self._wc = [0] * k  # unit parts processed on u's machines
        self._rc = [0] * k  # jobs running on u's machines
        self._tl = [0] * k
        self._cache_t = -1
        self._cache: dict[int, int] = {}

    def compiled_result(self, state: dict) -> None:
        """The compiled engine's final contribution accumulators, as the Python path leaves
        them."""
        self._phi, self._wc, self._rc, self._tl = (
            state["phi"],
            state["wc"],
            state["rc"],
            state["tv"],
        )
        self._cache_t, self._cache = -1, {}

    def _advance(self, v: int, t: int) -> None:
        d = t - self._tl[v]
        if d:
            r = self._rc[v]
            self._phi[v] += self._wc[v] * d + r * (d * (d + 1) // 2)
            self._wc[v] += r * d
            self._tl[v] = t

    def phi(self, v: int, t: int) -> int:
        """Estimated contribution of ``v`` at ``t``."""
        d = t - self._tl[v]
        return self._phi[v] + self._wc[v] * d + self._rc[v] * (d * (d + 1) // 2)

    def on_start(self, view: SimView, org: int, machine: int) -> None:
        v = view.machine_owner(machine)
        self._advance(v, view.t)
        self._rc[v] += 1

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        v = view.machine_owner(machine)
        self._advance(v, view.t)
        self._rc[v] -= 1

    def select(self, view: SimView) -> int:
        t = view.t
        if t != self._cache_t:  # phi - psi fixed during one event (docs/conventions.md §1)
            self._cache_t = t
            self._cache = {}
        best, best_key = -1, 0
        cache = self._cache
        for u in view.candidates():  # oldest queue head first: ties keep the older
            key = cache.get(u)
            if key is None:
                key = cache[u] = self.phi(u, t) - view.psi(u)
            if best < 0 or key > best_key:
                best, best_key = u, key
        return best
