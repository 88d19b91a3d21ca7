"""The model check of every audit: does the model reproduce the platform? (docs/audit.md,
"The model check").

Every counterfactual of an audit (REF's coalitions, the policies) is a schedule of the
model: its machines, its backfilling rule. Before its verdict is read, the audit replays the
window under the platform's own policy (:data:`PLATFORM_POLICY` by default;
``platform_policy=`` for a platform that ran another policy, e.g. ``slurm-fairtree``) and
the audit's backfilling rule (by default the platform's,
:data:`~coopsched.online.rigid.PLATFORM_BACKFILL`: EASY over the whole queue where every job
has a requested time, else first-fit over the whole queue), and compares that replay with
the recorded schedule:

* utilization of the platform over the window, recorded and replayed
  (:meth:`~coopsched.online.schedule.Schedule.utilization`);
* mean wait (hours) of the jobs started in the window, pinned ones left out (they start at
  0 in both);
* the share of the jobs with a recorded start in the window (pinned ones left out) that
  the replay starts within an hour of it (:data:`WITHIN`).

A warning is raised when the utilizations differ by more than :data:`UTILIZATION_GAP`
(3 points), or when the recorded total ``psi`` exceeds REF's (the reference could not
reach what the platform did): the verdict then reflects the model as much as the platform.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..online.policies import get_policy
from ..online.rigid import PLATFORM_BACKFILL
from ..online.schedule import Schedule
from ..workloads.instance import Instance
from .options import PLATFORM_POLICY

#: A replayed start this close to the recorded one (s) counts as reproduced.
WITHIN = 3600
#: Utilizations further apart than this (a fraction: 3 points) raise the warning.
UTILIZATION_GAP = 0.03


def check_policy(name: str) -> str:
    """``name`` if it is a registered policy, else a one-line error naming the parameter."""
    from ..online import policies

    if name not in policies.names():
        raise ValueError(
            f"platform_policy: unknown policy {name!r}; choose from {', '.join(policies.names())}"
        )
    return name


def _waits(sched: Schedule, free: np.ndarray) -> float | None:
    w = sched.waits()[free]
    w = w[w >= 0]
    return float(w.mean()) / 3600 if w.size else None


def model_check(
    inst: Instance,
    horizon: int,
    recorded: Schedule,
    policy: str = PLATFORM_POLICY,
    backfill: str = PLATFORM_BACKFILL,
    recorded_total: int | None = None,
    ref_total: int | None = None,
    seed: int = 0,
) -> dict[str, Any]:
    """The model check's section of the report (module doc): ``policy``, ``backfill`` (the
    rule used; ``None`` for sequential jobs), ``recorded`` and ``model`` (``utilization``,
    ``mean_wait_hours``), ``within_hour`` (a fraction; ``None`` without a recorded start),
    ``jobs_compared``, ``utilization_gap`` (model minus recorded), ``recorded_above_ref``
    and ``warning`` (text, or ``None``)."""
    from ..online.rigid import resolve_backfill

    check_policy(policy)
    try:
        p = get_policy(policy, seed=seed)
    except (TypeError, ValueError):  # a policy without a seed parameter
        p = get_policy(policy)
    rule = resolve_backfill(inst, backfill) if inst.rigid else None
    model = p.run(inst, horizon, backfill=rule) if inst.rigid else p.run(inst, horizon)
    pinned = inst.pinned if inst.pinned is not None else np.zeros(inst.n, dtype=bool)
    free = ~pinned
    rec_start = recorded.start
    compared = free & (rec_start >= 0)
    close = compared & (model.start >= 0) & (np.abs(model.start - rec_start) <= WITHIN)
    n = int(compared.sum())
    u_rec, u_model = recorded.utilization(horizon), model.utilization(horizon)
    gap = u_model - u_rec
    above = recorded_total is not None and ref_total is not None and recorded_total > ref_total
    reasons = []
    if abs(gap) > UTILIZATION_GAP:
        reasons.append(
            f"the model's utilization is {abs(gap) * 100:.1f} points "
            f"{'above' if gap > 0 else 'below'} the recorded one"
        )
    if above:
        reasons.append("the recorded total psi exceeds REF's")
    warning = None
    if reasons:
        warning = (
            "the model does not reproduce this platform ("
            + "; ".join(reasons)
            + "): the verdict reflects the model as much as the platform; read docs/audit.md, "
            "the model check, before acting on it"
        )
    return {
        "policy": policy,
        "backfill": rule,
        "recorded": {"utilization": u_rec, "mean_wait_hours": _waits(recorded, free)},
        "model": {"utilization": u_model, "mean_wait_hours": _waits(model, free)},
        "within_hour": (int(close.sum()) / n) if n else None,
        "jobs_compared": n,
        "utilization_gap": gap,
        "recorded_above_ref": bool(above),
        "warning": warning,
    }


def model_check_text(section: dict[str, Any]) -> str:
    """The model check on one line (the table's, the HTML page's)."""

    def hours(x: float | None) -> str:
        return "—" if x is None else f"{x:.2f} h"

    r, m = section["recorded"], section["model"]
    rule = f" + {section['backfill']} backfilling" if section.get("backfill") else ""
    within = section.get("within_hour")
    return (
        f"model check ({section['policy']}{rule}, the platform's rule): utilization recorded "
        f"{r['utilization']:.1%}, model {m['utilization']:.1%}; mean wait recorded "
        f"{hours(r['mean_wait_hours'])}, model {hours(m['mean_wait_hours'])}; "
        + (
            f"{within:.0%} of {section['jobs_compared']:,} jobs started within an hour of "
            "their recorded start"
            if within is not None
            else "no job with a recorded start to compare"
        )
    )
