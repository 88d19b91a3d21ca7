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


#: Memory a counterfactual may plan to use before it is skipped, with the reason stated.
MEMORY_BUDGET = 4 * 2**30


def too_large(name: str, inst: Instance, horizon: int) -> str | None:
    """Why the counterfactual ``name`` is skipped on ``inst``, or ``None`` to run it.

    RAND evaluates every sampled coalition's value curve. With pinned jobs (a backlog at
    the window's start) it runs in the Python engine, whose curves hold about eight arrays
    per coalition and job, as Python integers when ``n * (horizon + longest job)^2`` may pass
    int64; on a 30-day RICC window that is tens of gigabytes. Rather than exhaust memory, the
    audit skips it and says so.
    """
    if name.lower() != "rand" or inst.pinned is None or not bool(inst.pinned.any()):
        return None
    n = inst.n
    reach = int(horizon) + (int(inst.size.max()) if n else 0)
    per_value = 40 if n * reach * reach * 4 >= 2**62 else 8
    coalitions = min(2**inst.k, 15 * inst.k)  # RAND's N = 15 orderings of k organizations
    estimate = coalitions * n * 8 * per_value // 2  # a coalition holds about half the jobs
    if estimate <= MEMORY_BUDGET:
        return None
    return (
        f"skipped: RAND with a backlog would need about {estimate / 2**30:,.0f} GB here "
        f"(budget {MEMORY_BUDGET / 2**30:.0f} GB)"
    )


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
        reason = too_large(name, inst, horizon)
        if reason is not None:
            rows.append({"policy": name, "unfairness": None, "utilization": None, "note": reason})
            continue
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
