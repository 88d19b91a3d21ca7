"""SLURM-CLASSIC: Slurm's classic fair-share factor with half-life decayed usage.

Source: Slurm documentation, "Multifactor Priority Plugin" (priority_multifactor.html,
section Fairshare Factor, parameters ``PriorityDecayHalfLife`` and
``PriorityUsageResetPeriod``) and "Classic Fairshare Algorithm" (classic_fair_share.html,
used with ``PriorityFlags=NO_FAIR_TREE``).
"""

from __future__ import annotations

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

    Left out: the other multifactor terms (age, job size, partition, QOS, nice, TRES)
    and their ``PriorityWeight*`` combination, i.e. the policy is multifactor priority
    with only ``PriorityWeightFairshare`` set; ``PriorityCalcPeriod`` (Slurm recomputes
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
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        self.half_life = check_half_life(half_life)
        self.shares = None if shares is None else tuple(shares)

    def reset(self, view: SimView) -> None:
        self._reset_usage(view)
        shares = check_weights(self.shares, view.k, "shares")
        self._share = shares if shares is not None else [float(m) for m in view.machines]

    def factor(self, view: SimView, u: int) -> float:
        """Slurm's ``F = 2^(-EffectvUsage / NormShares)`` of ``u`` at ``view.t``."""
        self._usage.advance(view.t)
        lvl = self._usage.level
        total_u = sum(lvl[v] for v in view.members)
        total_s = sum(self._share[v] for v in view.members)
        if self._share[u] == 0 or total_s == 0:
            return 0.0
        if total_u == 0:
            return 1.0
        return 2.0 ** (-(lvl[u] / total_u) / (self._share[u] / total_s))

    def select(self, view: SimView) -> int:
        self._usage.advance(view.t)
        return argmin_usage_per_share(view.candidates(), self._usage.level, self._share)
