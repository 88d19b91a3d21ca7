"""The fairness metric of Skowron & Rzadca, Sec. 7.2 (docs/conventions.md §1).

For a policy ``A`` on an instance at horizon ``T``:
``dpsi = sum_u |psi_u(A) - psi_u(REF)|`` and ``p_tot`` = unit parts processed before ``T``
in REF's schedule; ``dpsi / p_tot`` is the average unjustified delay (or speed-up) per
unit of work, in seconds. 0 means exactly as fair as REF.

Measured window (beyond the paper, for windows with a simulated warm-up): with
``since = t0`` every utility is the one accrued in ``[t0, T)``, ``psi_u(T) - psi_u(t0)``
(by Eq. 3, ``psi_sp(T) - psi_sp(t0) = W(t0 + 1) + ... + W(T)``, where ``W(tau)`` counts the
unit parts processed before ``tau``, warm-up included), and ``p_tot`` counts the unit parts
REF processes in ``[t0, T)``. ``since = 0`` is the paper's metric.
"""

from __future__ import annotations

from dataclasses import dataclass

from .schedule import Schedule


@dataclass(frozen=True)
class Fairness:
    """The fairness of a schedule against REF (Skowron & Rzadca, Sec. 7.2): ``dpsi``, ``p_tot`` and
    the organizations' ``psi`` in both schedules."""

    policy: str
    dpsi: int
    p_tot: int
    psi: tuple[int, ...]
    psi_ref: tuple[int, ...]

    @property
    def ratio(self) -> float:
        """``dpsi / p_tot`` (0 when REF processed nothing)."""
        return self.dpsi / self.p_tot if self.p_tot else 0.0


def fairness(schedule: Schedule, reference: Schedule, horizon: int, since: int = 0) -> Fairness:
    """``dpsi`` and ``p_tot`` of ``schedule`` against REF's ``reference`` at ``horizon``,
    over the utilities accrued from ``since`` on (module docstring; 0: the paper's metric)."""
    from ..workloads.limits import check_horizon, check_int, check_type

    check_type(schedule, Schedule, "schedule", "a Schedule")
    check_type(reference, Schedule, "reference", "a Schedule (REF's)")
    check_horizon(horizon)
    check_int(since, "since")
    if schedule.instance is not reference.instance and schedule.instance.n != reference.instance.n:
        raise ValueError("the two schedules are of different instances")
    if not 0 <= since <= horizon:
        raise ValueError("the measured window must start between 0 and the horizon")
    psi = schedule.psi(horizon)
    ref = reference.psi(horizon)
    if since:
        psi = [a - b for a, b in zip(psi, schedule.psi(since), strict=True)]
        ref = [a - b for a, b in zip(ref, reference.psi(since), strict=True)]
    dpsi = sum(abs(a - b) for a, b in zip(psi, ref, strict=True))
    p_tot = sum(reference.work(horizon)) - (sum(reference.work(since)) if since else 0)
    return Fairness(schedule.policy, dpsi, p_tot, tuple(psi), tuple(ref))
