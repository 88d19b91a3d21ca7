"""HTCONDOR: HTCondor's effective user priority (decayed real priority x priority factor).

Source: HTCondor Administrator's Manual, "User Priorities and Negotiation" (Real User
Priority, Effective User Priority, ``PRIORITY_HALFLIFE``), and the ``condor_userprio``
manual page (minimum priority 0.5; effective = real x priority factor).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..decay import DecayedUsagePolicyMixin, argbest, check_half_life, check_weights
from ..engine import Policy, SimView

#: HTCondor's default ``PRIORITY_HALFLIFE``: one day.
HTCONDOR_DEFAULT_HALF_LIFE = 86400
#: The smallest (best) real user priority; a new user starts there.
MIN_PRIORITY = 0.5


class HTCondor(DecayedUsagePolicyMixin, Policy):
    """HTCONDOR: smallest effective user priority ``EUP = RUP x factor`` first.

    Formula (HTCondor manual, User Priorities, in our words): the real user priority
    follows the number of resources ``rho`` a user holds, as a moving average with
    half-life ``PRIORITY_HALFLIFE`` (``half_life``, default 86400 s): after ``dt``
    seconds, ``RUP <- b * RUP + (1 - b) * rho`` with ``b = 0.5^(dt / half_life)``.
    A new user starts at the minimum 0.5 and no RUP goes below 0.5. The effective user
    priority is ``RUP`` times the user's priority factor; a smaller value is better,
    and the negotiator serves users in increasing effective priority.

    Our model: ``rho`` is the organization's number of running jobs, constant between
    events, so the update above is the exact solution over each interval (see
    :mod:`coopsched.online.decay`; the 0.5 floor is applied at every event, which for
    this monotone relaxation equals applying it continuously). Priority factors are
    inversely proportional to the machines contributed (``factor_u = M / m_u``, so
    equal shares mean equal factors; ``factors`` overrides them, and an organization
    with no machine has an infinite factor). Ties go to the organization whose oldest
    waiting job was submitted first (:meth:`SimView.candidates` order).

    Because RUP is a moving average of resources held (not accumulated usage) and
    starts at 0.5, the limits differ from Slurm's: with ``half_life -> 0`` it ranks by
    ``max(0.5, running) / share``; with ``half_life -> inf`` RUP never leaves 0.5 and
    the policy is a static priority by share.

    Left out: the negotiation cycle (``NEGOTIATOR_INTERVAL``: HTCondor samples ``rho``
    once a cycle; we integrate exactly); the per-submitter pie slice proportional to
    ``1 / EUP`` within a cycle (we serve the smallest EUP first, one job at a time);
    slot weights (``SLOT_WEIGHT``: each job holds one machine here); accounting groups,
    quotas and ``PRIORITY_FACTOR`` defaults such as ``DEFAULT_PRIO_FACTOR`` (only ratios
    matter here).
    """

    name = "htcondor"
    _usage_initial = MIN_PRIORITY

    def __init__(
        self,
        half_life: float = HTCONDOR_DEFAULT_HALF_LIFE,
        factors: Sequence[float] | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        self.half_life = check_half_life(half_life, "half_life (PRIORITY_HALFLIFE)")
        self.factors = None if factors is None else tuple(factors)

    def reset(self, view: SimView) -> None:
        self._reset_usage(view)
        self._frozen = math.isinf(self.half_life)  # b = 1: RUP keeps its initial 0.5
        if self._frozen:
            self._usage.level = [MIN_PRIORITY] * view.k
        factors = check_weights(self.factors, view.k, "factors")
        self._factors = factors
        self._machines = list(view.machines)

    def _advance(self, t: int) -> None:
        if self._frozen:
            self._usage.t = max(self._usage.t, t)
            return
        if t <= self._usage.t:  # levels already advanced and clamped to t: nothing changes
            return
        self._usage.advance(t)
        lvl = self._usage.level
        for u, x in enumerate(lvl):
            if x < MIN_PRIORITY:
                lvl[u] = MIN_PRIORITY

    def on_start(self, view: SimView, org: int, machine: int) -> None:
        self._advance(view.t)
        self._usage.running[org] += 1

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        self._advance(view.t)
        self._usage.running[org] -= 1

    def real_priority(self, view: SimView, u: int) -> float:
        """RUP of organization ``u`` at ``view.t``."""
        self._advance(view.t)
        return self._usage.level[u]

    def effective_priority(self, view: SimView, u: int) -> float:
        """EUP = RUP x priority factor of ``u`` at ``view.t`` (``inf`` without machines)."""
        rup = self.real_priority(view, u)
        if self._factors is not None:
            return rup * self._factors[u]
        m = self._machines[u]
        return rup * view.total_machines / m if m else math.inf

    def select(self, view: SimView) -> int:
        self._advance(view.t)
        rup = self._usage.level
        if self._factors is not None:
            f = self._factors
            return argbest(view.candidates(), lambda u, v: rup[u] * f[u] < rup[v] * f[v])
        m = self._machines
        best = -1  # argbest under rup_u / m_u < rup_v / m_v (m = 0 is infinite), written out
        for u in view.candidates():
            if best < 0:
                best = u
            elif not m[u] or not m[best]:
                if m[u] and not m[best]:
                    best = u
            elif rup[u] * m[best] < rup[best] * m[u]:
                best = u
        return best
