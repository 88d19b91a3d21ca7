"""The fairness metric of Skowron & Rzadca, Sec. 7.2 (CONVENTIONS 1).

For a policy ``A`` on an instance at horizon ``T``:
``dpsi = sum_u |psi_u(A) - psi_u(REF)|`` and ``p_tot`` = unit parts processed before ``T``
in REF's schedule; ``dpsi / p_tot`` is the average unjustified delay (or speed-up) per
unit of work, in seconds. 0 means exactly as fair as REF.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schedule import Schedule


@dataclass(frozen=True)
class Fairness:
    policy: str
    dpsi: int
    p_tot: int
    psi: tuple[int, ...]
    psi_ref: tuple[int, ...]

    @property
    def ratio(self) -> float:
        """``dpsi / p_tot`` (0 when REF processed nothing)."""
        return self.dpsi / self.p_tot if self.p_tot else 0.0


def fairness(schedule: Schedule, reference: Schedule, horizon: int) -> Fairness:
    """``dpsi`` and ``p_tot`` of ``schedule`` against REF's ``reference`` at ``horizon``."""
    if schedule.instance is not reference.instance and schedule.instance.n != reference.instance.n:
        raise ValueError("the two schedules are of different instances")
    psi = schedule.psi(horizon)
    ref = reference.psi(horizon)
    dpsi = sum(abs(a - b) for a, b in zip(psi, ref, strict=True))
    p_tot = sum(reference.work(horizon))
    return Fairness(schedule.policy, dpsi, p_tot, tuple(psi), tuple(ref))
