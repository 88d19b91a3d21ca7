"""SLURM-CLASSIC: Slurm's classic fair-share factor with half-life decayed usage.

Source: Slurm documentation, "Multifactor Priority Plugin" (priority_multifactor.html,
section Fairshare Factor, parameters ``PriorityDecayHalfLife`` and
``PriorityUsageResetPeriod``) and "Classic Fairshare Algorithm" (classic_fair_share.html,
used with ``PriorityFlags=NO_FAIR_TREE``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..decay import (
    DecayedUsagePolicyMixin,
    argmin_usage_per_share,
    check_half_life,
    check_weights,
)
from ..engine import Policy, SimView

#: Slurm's default ``PriorityDecayHalfLife``: 7 days.
SLURM_DEFAULT_HALF_LIFE = 7 * 86400
#: Slurm's default ``PriorityMaxAge``: 7 days.
SLURM_DEFAULT_MAX_AGE = 7 * 86400


class SlurmClassic(DecayedUsagePolicyMixin, Policy):
    """SLURM-CLASSIC: largest Slurm classic fair-share factor ``F = 2^(-U/S)`` first.

    Formula (Slurm's Multifactor Priority and Classic Fairshare pages, in our words):
    an association's usage is the processor-seconds its jobs consumed, decayed with
    the half-life ``PriorityDecayHalfLife`` (``half_life``, default Slurm's 7 days;
    ``0`` is the no-memory limit, ``inf`` means no decay): a second of use ``a``
    seconds ago counts ``2^(-a / half_life)``. ``U`` (EffectvUsage) is the
    organization's decayed usage divided by the decayed usage of all organizations,
    ``S`` (NormShares) its shares divided by all shares; ``F = 2^(-U / S)`` is in
    ``(0, 1]`` and the waiting job with the largest ``F`` starts. Organizations are
    flat accounts under the root, so EffectvUsage is the normalized usage.

    Our model: shares are the machines each organization contributes (``shares``
    overrides them); usage is work already processed (running jobs accrue continuously,
    integrated exactly between events: :mod:`coopsched.online.decay`), never a job's
    size. The ranking is the same as ``U_u / S_u`` ascending; it is compared
    cross-multiplied, so ties are exact; they go to the organization whose oldest
    waiting job was submitted first (as Slurm orders equal priorities by submit time). When nobody has usage yet,
    ``F = 1`` for all. An organization with zero shares has ``F = 0``.

    Age (``age_weight`` > 0, docs/slurm.md): the job priority is Slurm's multifactor sum
    ``floor(fs_weight * F + age_weight * min(1, age / max_age))`` (``PriorityWeightFairshare``,
    ``PriorityWeightAge``, ``PriorityMaxAge``; ``age``: how long the job has waited), and
    the organization whose oldest waiting job has the largest priority goes first (within
    an organization ``F`` is equal and the oldest job is the oldest, so FIFO per
    organization is Slurm's order too). With ``age_weight = 0`` (the default) only ``F``
    ranks, unrounded, as above.

    ``calc_period`` (``PriorityCalcPeriod``, seconds; 0, the default: continuous): Slurm
    recomputes usage and the pending jobs' priorities only every ``PriorityCalcPeriod``
    (ticks at ``calc_phase + i * calc_period``), and a job submitted in between gets its
    priority from the last tick's usage. With a period, the ranking reads the usage (and
    the age) as it was at the last tick; the usage itself stays exact.

    Left out: the other multifactor terms (job size, partition, QOS, nice, TRES);
    ``PriorityCalcPeriod`` by default (Slurm recomputes
    usage every 5 minutes; we integrate exactly); ``PriorityUsageResetPeriod`` (default
    NONE, so no reset); account hierarchies deeper than the flat one; backfill.
    Like in Slurm, jobs started at the same event do not change usage until time
    passes, so one organization may take several machines at one event.
    """

    name = "slurm-classic"

    def __init__(
        self,
        half_life: float = SLURM_DEFAULT_HALF_LIFE,
        shares: Sequence[float] | None = None,
        fs_weight: float = 1.0,
        age_weight: float = 0.0,
        max_age: float = SLURM_DEFAULT_MAX_AGE,
        calc_period: float = 0.0,
        calc_phase: float = 0.0,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        self.half_life = check_half_life(half_life)
        self.shares = None if shares is None else tuple(shares)
        for what, x in (("fs_weight", fs_weight), ("age_weight", age_weight)):
            if not (0 <= float(x) < math.inf):
                raise ValueError(f"{what} must be a finite number >= 0, got {x!r}")
        if not (0 < float(max_age) < math.inf):
            raise ValueError(f"max_age must be a positive number of seconds, got {max_age!r}")
        if not (0 <= float(calc_period) < math.inf) or not math.isfinite(float(calc_phase)):
            raise ValueError(
                f"calc_period must be >= 0 seconds (0: continuous), got {calc_period!r}; "
                f"calc_phase finite, got {calc_phase!r}"
            )
        self.fs_weight = float(fs_weight)
        self.age_weight = float(age_weight)
        self.max_age = float(max_age)
        self.calc_period = float(calc_period)
        self.calc_phase = float(calc_phase)

    def reset(self, view: SimView) -> None:
        self._reset_usage(view)
        shares = check_weights(self.shares, view.k, "shares")
        self._share = shares if shares is not None else [float(m) for m in view.machines]
        # the usage the ranking reads, and when it was taken: the usage now, or with a
        # calc_period the usage at the last tick (none yet: what it was at the start)
        self._seen: list[float] = list(self._usage.level)
        self._seen_t: float = view.t
        P, phase = round(self.calc_period), round(self.calc_phase)
        self._next_tick: float = phase + ((view.t - phase) // P + 1) * P if P else math.inf

    def _bring(self, t: int) -> None:
        """Usage to ``t``; with a ``calc_period``, the ranking's usage taken at every tick
        passed (exact: running counts are constant between events)."""
        usage = self._usage
        while self._next_tick <= t:
            tick = int(self._next_tick)
            usage.advance(tick)
            self._seen, self._seen_t = list(usage.level), tick
            self._next_tick = tick + round(self.calc_period)
        usage.advance(t)
        if not self.calc_period:
            self._seen, self._seen_t = usage.level, t

    def on_start(self, view: SimView, org: int, machine: int) -> None:
        self._bring(view.t)
        self._usage.running[org] += 1

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        self._bring(view.t)  # the size is not used: non-clairvoyant
        self._usage.running[org] -= 1

    def factor(self, view: SimView, u: int) -> float:
        """Slurm's ``F = 2^(-EffectvUsage / NormShares)`` of ``u`` at ``view.t`` (with a
        ``calc_period``: from the usage at the last tick)."""
        self._bring(view.t)
        lvl = self._seen
        total_u = sum(lvl[v] for v in view.members)
        total_s = sum(self._share[v] for v in view.members)
        if self._share[u] == 0 or total_s == 0:
            return 0.0
        if total_u == 0:
            return 1.0
        return 2.0 ** (-(lvl[u] / total_u) / (self._share[u] / total_s))

    def priority(self, view: SimView, u: int) -> int:
        """Slurm's multifactor priority of ``u``'s oldest waiting job at ``view.t``:
        ``floor(fs_weight * F + age_weight * min(1, age / max_age))``, the age taken when
        the factor was (with a ``calc_period``, a job released since the last tick has age
        0, as Slurm sets a new job's priority at submission and recomputes it at ticks)."""
        f = self.factor(view, u)
        rel = view.head_release(u)
        age = 0.0 if rel is None else min(1.0, max(0.0, self._seen_t - rel) / self.max_age)
        return math.floor(self.fs_weight * f + self.age_weight * age)

    def select(self, view: SimView) -> int:
        self._bring(view.t)
        if not self.age_weight:
            return argmin_usage_per_share(view.candidates(), self._seen, self._share)
        best, top = -1, -1
        for u in view.candidates():  # the oldest waiting job's organization first: ties
            p = self.priority(view, u)
            if p > top:
                best, top = u, p
        return best
