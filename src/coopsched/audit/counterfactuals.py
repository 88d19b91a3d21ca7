"""Counterfactuals: the audited window's instance under every online policy of the package.

Same jobs, same backlog (pinned jobs first), same machines, same horizon; for each
policy of :data:`coopsched.online.policies.POLICIES` its distance to REF, ``dpsi / p_tot``
(Skowron & Rzadca, Sec. 7.2, :func:`coopsched.online.fairness.fairness`), and its
utilization. The recorded schedule gets the same two figures, first, so an operator sees
which policy would have been fairer than what actually ran.
"""

from __future__ import annotations

from collections.abc import Callable

from ..online import policies as _policies
from ..online.fairness import fairness
from ..online.policies import get_policy
from ..online.schedule import Schedule
from ..workloads.instance import Instance


def policy_names() -> list[str]:
    """Every registered online policy, in the registry's listing order."""
    return _policies.names()


def counterfactuals(
    inst: Instance,
    horizon: int,
    recorded: Schedule,
    ref: Schedule | None,
    *,
    seed: int = 0,
    skip: tuple[str, ...] = (),
    progress: Callable[[str], None] | None = None,
) -> list[dict]:
    """One row per schedule: ``policy``, ``unfairness`` (None without REF), ``utilization``."""
    rows = []

    def row(name: str, sched: Schedule) -> dict:
        f = fairness(sched, ref, horizon) if ref is not None else None
        return {
            "policy": name,
            "unfairness": None if f is None else f.ratio,
            "utilization": sched.utilization(horizon),
        }

    rows.append(row("recorded", recorded))
    for name in policy_names():
        if name in skip:
            continue
        if progress is not None:
            progress(name)
        if name.lower() == "ref" and ref is not None:
            sched = ref
        else:
            try:
                policy = get_policy(name, seed=seed)
            except (TypeError, ValueError):  # a policy without a seed parameter
                policy = get_policy(name)
            sched = policy.run(inst, horizon)
        rows.append(row(name, sched))
    return rows
