"""SLURM-CLASSIC with usage charged as Slurm 22.05 charges it (docs/slurm.md, first
departure): the model the replay comparison checks against Slurm's own priorities.

Slurm's ``priority/multifactor`` plugin (``src/plugins/priority/multifactor/
priority_multifactor.c``, 22.05) charges usage only in its decay thread, once every
``PriorityCalcPeriod``: at each tick it first computes the usage the priorities read
(``_set_children_usage_efctv``), then decays the stored usage over the time since the last
tick (``_apply_decay``) and charges every job running at the tick the time since the last
tick or since its start, decayed over that time (``decay_apply_new_usage``, with the
factor ``1 - ln 2 / half-life`` per second), and sets the pending jobs' priorities from the
usage computed first. A job's time after the last tick that saw it running is never
charged: the plugin's charge at a job's end (``priority_p_job_end``) is not called by
slurmctld 22.05. So a job that starts and ends between two ticks costs its account
nothing, and a running job's use enters the ranking one to two periods late.
"""

from __future__ import annotations

from typing import Any

from ..online.engine import SimView
from ..online.policies.slurm_classic import SlurmClassic


class SlurmCharged(SlurmClassic):
    """SLURM-CLASSIC whose ranking reads usage charged at the ticks of ``calc_period``
    (module docstring): at each tick ``tau`` every busy processor is charged
    ``d * 2^(-d / half_life)`` for the time ``d`` since the previous tick (or since its
    job started), after the stored usage was decayed by ``2^(-P / half_life)`` (Slurm's
    per-second factor ``1 - ln 2 / half_life`` is this to first order), and the ranking
    until the next tick reads the usage as it was before that charge. Everything else is
    :class:`~coopsched.online.policies.slurm_classic.SlurmClassic` with the same
    ``calc_period`` and ``calc_phase`` (the ages are read at the ticks too)."""

    name = "slurm-classic-charged"

    def __init__(self, calc_period: float, **kwargs: Any) -> None:
        """``calc_period`` (seconds, > 0) and the other parameters of
        :class:`~coopsched.online.policies.slurm_classic.SlurmClassic` (``half_life`` > 0)."""
        super().__init__(calc_period=calc_period, **kwargs)
        if not (self.calc_period > 0 and self.half_life > 0):
            raise ValueError(
                "Slurm charges usage at the ticks of a calc_period > 0 seconds, with a "
                f"half_life > 0; got calc_period={calc_period!r}, "
                f"half_life={self.half_life!r}"
            )

    def reset(self, view: SimView) -> None:
        super().reset(view)
        self._charged = [0.0] * view.k  # the usage charged so far
        self._last_tick = float(self._next_tick - round(self.calc_period))
        self._busy: dict[int, tuple[int, int]] = {}  # machine -> (organization, start)

    def _bring(self, t: int) -> None:
        while self._next_tick <= t:
            tick = int(self._next_tick)
            self._seen, self._seen_t = list(self._charged), tick  # read before the charge
            self._charge(tick)
            self._next_tick = tick + round(self.calc_period)
        self._usage.advance(t)

    def _charge(self, tick: int) -> None:
        """The stored usage decayed over the time since the last tick, then every busy
        processor's time since then (or since its start), each decayed over its length."""
        h, last, charged = self.half_life, self._last_tick, self._charged
        keep = 2.0 ** (-(tick - last) / h)
        for u in range(len(charged)):
            charged[u] *= keep
        for org, began in self._busy.values():
            d = tick - max(began, last)
            charged[org] += d * 2.0 ** (-d / h)
        self._last_tick = tick

    def on_start(self, view: SimView, org: int, machine: int) -> None:
        super().on_start(view, org, machine)
        self._busy[machine] = (org, view.t)

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        super().on_complete(view, org, machine, size)
        del self._busy[machine]


__all__ = ["SlurmCharged"]
