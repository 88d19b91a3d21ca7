"""Usage decayed over time, integrated exactly between events (for the production
fair-share policies: Slurm, HTCondor).

Between two events the number of running jobs ``r_u`` of an organization is constant,
so exponentially decayed usage has a closed form. With ``lam = ln 2 / half_life`` the
decayed usage at ``t`` is ``D_u(t) = integral_0^t e^{-lam (t - tau)} r_u(tau) dtau`` and,
from one event ``t0`` to the next ``t = t0 + d``,

    ``D_u(t) = e^{-lam d} D_u(t0) + r_u (1 - e^{-lam d}) / lam``.

We keep the normalized form ``A_u = lam * D_u`` (an exponential moving average of the
number of running jobs), updated as ``A_u <- e^{-lam d} A_u + r_u (1 - e^{-lam d})``
with ``expm1`` for ``1 - e^{-lam d}``: it stays well-conditioned when the half-life is
tiny (``A_u`` tends to ``r_u``, exactly once ``e^{-lam d}`` underflows to 0) and when it
is huge (``A_u`` is small but carries full relative precision). Rankings only compare
``A_u`` between organizations, so the common factor ``lam`` does not matter. An infinite
half-life keeps undecayed usage ``D_u`` = processed work, in exact integers.

Every organization is updated with the same operations at every event, so organizations
with identical histories have bit-identical values and tie exactly (ties then go to the
oldest waiting job). Only start and completion times are used, never a job's size: the usage
is non-clairvoyant (docs/conventions.md §1).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

from .engine import SimView

LN2 = math.log(2.0)


def check_half_life(half_life: float, what: str = "half_life") -> float:
    """A half-life in seconds: ``>= 0`` (0 = the no-memory limit) or ``inf`` (no decay)."""
    try:
        h = float(half_life)
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be a number of seconds, got {half_life!r}") from None
    if math.isnan(h) or h < 0:
        raise ValueError(f"{what} must be >= 0 seconds (or inf), got {half_life!r}")
    return h


def check_weights(values: Sequence[float] | None, k: int, what: str) -> list[float] | None:
    """Per-organization weights (shares, targets, factors): ``k`` numbers ``>= 0``."""
    if values is None:
        return None
    if isinstance(values, str):
        values = [v for v in values.replace(";", ",").split(",") if v.strip()]
    try:
        out = [float(v) for v in values]
    except (TypeError, ValueError):
        raise ValueError(f"{what} must be numbers, got {values!r}") from None
    if len(out) != k:
        raise ValueError(f"{what} needs one value per organization ({k}), got {len(out)}")
    if any(math.isnan(v) or v < 0 or math.isinf(v) for v in out):
        raise ValueError(f"{what} must be finite numbers >= 0, got {values!r}")
    return out


class DecayedUsage:
    """Exponentially decayed usage of every organization, exact between events.

    ``level[u]`` is ``lam * D_u`` for a finite half-life (``r_u`` just before ``t``
    when the half-life is 0) and the processed work for an infinite one. Call
    :meth:`advance` at every event before reading or changing ``running``.
    """

    __slots__ = ("half_life", "lam", "level", "running", "t")

    def __init__(self, k: int, half_life: float, initial: float = 0.0) -> None:
        self.half_life = check_half_life(half_life)
        h = self.half_life
        self.lam = 0.0 if math.isinf(h) else (math.inf if h == 0 else LN2 / h)
        self.level: list[float] = [initial] * k if self.lam else [0] * k
        self.running = [0] * k
        self.t = 0

    def advance(self, t: int) -> None:
        """Bring every organization's usage to time ``t`` (running counts constant since
        the last call)."""
        d = t - self.t
        if d <= 0:
            return
        self.t = t
        lvl, run = self.level, self.running
        if not self.lam:  # no decay: usage is the processed work, exact integers
            for u, r in enumerate(run):
                if r:
                    lvl[u] += r * d
            return
        x = -self.lam * d
        keep = math.exp(x)  # e^{-lam d}; 0.0 when the half-life is 0
        gain = -math.expm1(x)  # 1 - e^{-lam d}, accurate for small lam*d
        for u, r in enumerate(run):
            lvl[u] = lvl[u] * keep + r * gain

    def decayed_seconds(self, u: int) -> float:
        """``D_u``: processor-seconds of ``u`` decayed to the current time."""
        if not self.lam:
            return float(self.level[u])
        if math.isinf(self.lam):
            return 0.0
        return self.level[u] / self.lam


class DecayedUsagePolicyMixin:
    """Tracks :class:`DecayedUsage` from the engine's start and completion events."""

    wants_events = True
    half_life: float
    _usage: DecayedUsage
    _usage_initial: float = 0.0

    def _reset_usage(self, view: SimView) -> None:
        self._usage = DecayedUsage(view.k, self.half_life, self._usage_initial)
        self._usage.t = view.t

    def on_start(self, view: SimView, org: int, machine: int) -> None:
        """Decay the usage to now; ``org`` runs one job more."""
        self._usage.advance(view.t)
        self._usage.running[org] += 1

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        """Decay the usage to now; ``org`` runs one job less (the size is not read: non-
        clairvoyant)."""
        self._usage.advance(view.t)  # the size is not used: non-clairvoyant
        self._usage.running[org] -= 1


def argmin_usage_per_share(
    candidates: Sequence[int],
    usage: Sequence[float],
    share: Sequence[float],
    zero_usage_ties: bool = False,
) -> int:
    """Candidate minimizing ``usage[u] / share[u]``, compared cross-multiplied; a zero
    share is an infinite ratio (or, with ``zero_usage_ties``, zero usage is ratio 0
    whatever the share); ties go to the first candidate (:meth:`SimView.candidates` lists
    the oldest waiting job's organization first).

    The same order as :func:`argbest` with :func:`_ratio_less`, written out in one loop
    (it runs at every pick of a long simulation).
    """
    best, best_class = -1, 0
    for u in candidates:
        cu = 0 if zero_usage_ties and usage[u] == 0 else (1 if share[u] > 0 else 2)
        if best < 0 or cu < best_class:
            best, best_class = u, cu
        elif cu == best_class == 1 and usage[u] * share[best] < usage[best] * share[u]:
            best = u
    return best


def _ratio_less(
    usage: Sequence[float], share: Sequence[float], zero_usage_ties: bool
) -> Callable[[int, int], bool]:
    def key_class(u: int) -> int:
        if zero_usage_ties and usage[u] == 0:
            return 0
        return 1 if share[u] > 0 else 2

    def less(u: int, v: int) -> bool:
        cu, cv = key_class(u), key_class(v)
        if cu != cv:
            return cu < cv
        if cu != 1:
            return False
        return usage[u] * share[v] < usage[v] * share[u]

    return less


def argbest(candidates: Sequence[int], less: Callable[[int, int], bool]) -> int:
    """The first candidate that no later candidate beats strictly under ``less``."""
    best = -1
    for u in candidates:
        if best < 0 or less(u, best):
            best = u
    return best
