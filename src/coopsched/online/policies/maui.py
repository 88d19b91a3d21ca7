"""MAUI: Maui/Moab windowed fair-share (usage in fixed windows against target shares).

Source: Maui Scheduler Administrator's Guide, section 6.3 "Fairshare" (parameters
``FSINTERVAL``, ``FSDEPTH``, ``FSDECAY``, ``FSPOLICY``; credential targets ``FSTARGET``)
and Appendix F "Maui Parameters" (their defaults); Moab Workload Manager's "Fairshare"
chapter describes the same mechanism.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..decay import check_weights
from ..engine import Policy, SimView

#: Maui's defaults (Appendix F): FSINTERVAL 12:00:00, FSDEPTH 8, FSDECAY 1.0.
MAUI_INTERVAL = 12 * 3600
MAUI_DEPTH = 8
MAUI_DECAY = 1.0


class Maui(Policy):
    """MAUI: largest fair-share priority ``target% - usage%`` first, usage over windows.

    Formula (Maui's Fairshare section, in our words): time is cut into fair-share
    windows of ``FSINTERVAL`` seconds (``interval``, default 12 h), aligned on multiples
    of the interval; the usage of a credential counts the last ``FSDEPTH`` windows
    (``depth``, default 8, the current partial one included), window ``i`` back weighted
    by ``FSDECAY^i`` (``decay``, default 1.0: no decay); older windows are forgotten.
    The fair-share usage percentage is the credential's weighted usage over everybody's
    weighted usage, and the fair-share priority component is ``FSWEIGHT`` times
    (target percentage minus usage percentage), so a credential below its target gains
    priority and one above it loses some. The metric is ``FSPOLICY=DEDICATEDPS``
    (dedicated processor-seconds), which for our sequential jobs is processed work.

    Our model: the credentials are the organizations, their targets the fractions of
    machines they contribute (``targets`` overrides them; they are normalized to sum
    to 1). Usage per window is work processed inside the window (non-clairvoyant,
    exact integers). The priority is a difference, not a ratio as in Slurm: with no
    usage at all, or equal usage percentages, the larger target wins. Ties go to the
    organization whose oldest waiting job was submitted first.

    Left out: the other priority components (service, queue time, credentials) and the
    ``FS*WEIGHT`` combination of user/group/account/class/QOS fair share; floor and
    ceiling targets (``FSTARGET=25+`` / ``25-``) and fair-share caps; ``FSPOLICY``
    variants based on requested resources; Maui's periodic statistics update
    (``RMPOLLINTERVAL``): we count usage exactly at every event.
    """

    name = "maui"
    wants_events = True

    def __init__(
        self,
        interval: int = MAUI_INTERVAL,
        depth: int = MAUI_DEPTH,
        decay: float = MAUI_DECAY,
        targets: Sequence[float] | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(seed=seed)
        if int(interval) != interval or int(interval) < 1:
            raise ValueError(
                f"interval (FSINTERVAL) must be a whole number of seconds >= 1, got {interval!r}"
            )
        if int(depth) != depth or int(depth) < 1:
            raise ValueError(f"depth (FSDEPTH) must be an integer >= 1, got {depth!r}")
        decay = float(decay)
        if math.isnan(decay) or not 0 <= decay <= 1:
            raise ValueError(f"decay (FSDECAY) must be in [0, 1], got {decay!r}")
        self.interval = int(interval)
        self.depth = int(depth)
        self.decay = decay
        self.targets = None if targets is None else tuple(targets)

    def reset(self, view: SimView) -> None:
        targets = check_weights(self.targets, view.k, "targets")
        self._target = targets if targets is not None else [float(m) for m in view.machines]
        if self.decay == 1.0 and all(float(x).is_integer() for x in self._target):
            self._target = [int(x) for x in self._target]  # exact integer comparisons
        self._running = [0] * view.k
        # window index -> usage of each organization in that window (last `depth` kept)
        self._windows: dict[int, list[int]] = {}
        self._t = view.t
        self._usage_at: tuple[int, list] | None = None  # usage() at one time, reused
        self._tot_u: tuple[list, float] | None = None  # its members' total, reused
        self._tot_t = sum(self._target[v] for v in view.members)

    # ------------------------------------------------------------ usage accounting
    def _advance(self, t: int) -> None:
        t0 = self._t
        if t <= t0:
            return
        self._t = t
        self._usage_at = None
        if not any(self._running):
            self._forget(t)
            return
        L = self.interval
        first = max(t0, (t // L - self.depth + 1) * L)  # older windows are forgotten
        a = first
        while a < t:
            w = a // L
            b = min(t, (w + 1) * L)
            row = self._windows.setdefault(w, [0] * len(self._running))
            d = b - a
            for u, r in enumerate(self._running):
                if r:
                    row[u] += r * d
            a = b
        self._forget(t)

    def _forget(self, t: int) -> None:
        oldest = t // self.interval - self.depth + 1
        for w in [w for w in self._windows if w < oldest]:
            del self._windows[w]

    def usage(self, view: SimView) -> list[float]:
        """Weighted usage ``sum_i FSDECAY^i * usage in window i back`` of every organization
        (the windows change only when time moves on: one computation per event time)."""
        self._advance(view.t)
        if self._usage_at is not None and self._usage_at[0] == view.t:
            return self._usage_at[1]
        now = view.t // self.interval
        k = len(self._running)
        out: list = [0] * k
        for w in sorted(self._windows):
            weight = 1 if self.decay == 1.0 else self.decay ** (now - w)
            row = self._windows[w]
            for u in range(k):
                out[u] += row[u] * weight
        self._usage_at = (view.t, out)
        return out

    def priority(self, view: SimView, u: int) -> float:
        """Maui's fair-share priority component ``target% - usage%`` of ``u`` (percent)."""
        use = self.usage(view)
        tot_u = sum(use[v] for v in view.members)
        tot_t = sum(self._target[v] for v in view.members)
        share = self._target[u] / tot_t if tot_t else 0.0
        return 100.0 * (share - (use[u] / tot_u if tot_u else 0.0))

    # ------------------------------------------------------------ policy interface
    def on_start(self, view: SimView, org: int, machine: int) -> None:
        self._advance(view.t)
        self._running[org] += 1

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        self._advance(view.t)
        self._running[org] -= 1

    def select(self, view: SimView) -> int:
        use = self.usage(view)
        if self._tot_u is None or self._tot_u[0] is not use:  # once per usage computed
            self._tot_u = (use, sum(use[v] for v in view.members))
        tot_u = self._tot_u[1]
        tot_t = self._tot_t
        tgt = self._target
        # priority_u * tot_t * tot_u = target_u * tot_u - use_u * tot_t (no division)
        best, best_key = -1, None
        for u in view.candidates():
            key = tgt[u] * tot_u - use[u] * tot_t if tot_u else tgt[u]
            if best_key is None or key > best_key:
                best, best_key = u, key
        return best
