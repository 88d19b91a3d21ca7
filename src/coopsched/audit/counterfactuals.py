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


def too_large(name: str, inst: Instance, horizon: int, seed: int = 0) -> str | None:
    """Why the counterfactual ``name`` is skipped on ``inst``, or ``None`` to run it.

    RAND keeps, for each of its sampled coalitions, that coalition's running count
    (:meth:`~coopsched.online.policies.rand.Rand.memory_estimate`: at most two events
    of 12 bytes per job and coalition). On the 30-day RICC window with 8 organizations
    (1.8 million sequential jobs, 79 kept coalitions) the bound is 1.9 GB, within the
    budget; what is actually kept is far less (1.2 million events, 14 MB: in a busy
    schedule most starts coincide with an end and cancel). On larger inputs the audit
    skips RAND and says so, rather than exhaust the machine's memory. The other
    policies hold a few arrays per job and are never skipped.
    """
    if name.lower() != "rand":
        return None
    from ..online.policies.rand import Rand

    try:
        policy = get_policy(name, seed=seed)
    except (TypeError, ValueError):
        policy = get_policy(name)
    if not isinstance(policy, Rand):
        return None
    try:
        estimate = policy.memory_estimate(inst)
    except ValueError as exc:  # its tables alone pass the limit (LimitError)
        return f"skipped: {exc}"
    if estimate <= MEMORY_BUDGET:
        return None
    return (
        f"skipped: RAND would need about {estimate / 2**30:,.1f} GB here "
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
    backfill: str | None = None,
    reference_policy: str | None = None,
    target: Callable[[int, int], Callable[[list[int]], tuple[float, float, float]]] | None = None,
) -> list[dict]:
    """One row per schedule: ``policy``, ``unfairness`` (with ``unfairness_low`` and
    ``unfairness_high``), ``utilization``, and the ranking of :func:`~.unfairness.rank_policies`
    (``rank``, ``tied_with``); rigid jobs under the backfilling rule ``backfill``.

    With REF's schedule ``ref`` (an exact audit), the unfairness is Sec. 7.2's against it
    (an interval of one point). Without it, ``target(total, work)``, given the grand total
    ``psi`` and the work processed of the schedule of ``reference_policy`` (the sampled
    game's stand-in for REF, run among the policies, or apart if skipped), returns the
    function that estimates a schedule's unfairness from its organizations' ``psi``
    (:func:`~.unfairness.unfairness_interval`); with neither, ``unfairness`` is ``None``."""
    from .unfairness import rank_policies

    # one processor per job: the sequential engines give the rigid schedules under every
    # rule, faster (RAND above all: its coalitions come from the FIFO kernel). Not for a
    # policy that draws machines at random (DIRECTCONTR): the sequential engines return the
    # machines freed at one time in machine order, the rigid ones in start order, so the
    # same seed draws other machines; the rigid engine keeps the row equal to running the
    # policy on the rigid instance
    seq = inst.one_processor_sequential()

    def run(name: str) -> Schedule:
        if name.lower() == "ref" and ref is not None:
            return ref
        try:
            policy = get_policy(name, seed=seed)
        except (TypeError, ValueError):  # a policy without a seed parameter
            policy = get_policy(name)
        if seq is not None and not policy.random_machines:
            return policy.run(seq, horizon)
        if inst.rigid:
            return policy.run(inst, horizon, backfill=backfill)
        return policy.run(inst, horizon)

    rows: list[dict] = []
    psis: list[list[int] | None] = []
    stand_in: tuple[int, int] | None = None  # the reference policy's total psi and work

    def add(name: str, sched: Schedule) -> None:
        nonlocal stand_in
        psi = sched.psi(horizon)
        row: dict = {"policy": name, "unfairness": None}
        if ref is not None:
            f = fairness(sched, ref, horizon).ratio
            row.update(unfairness=f, unfairness_low=f, unfairness_high=f)
        row["utilization"] = sched.utilization(horizon)
        rows.append(row)
        psis.append(psi)
        if name == reference_policy:
            stand_in = sum(psi), sum(sched.work(horizon))

    add("recorded", recorded)
    for name in policy_names():
        if name in skip:
            continue
        if progress is not None:
            progress(name)
        reason = too_large(name, inst, horizon, seed)
        if reason is not None:
            rows.append({"policy": name, "unfairness": None, "utilization": None, "note": reason})
            psis.append(None)
            continue
        add(name, run(name))  # (the schedule is not kept: a few arrays per job)
    if ref is None and target is not None and reference_policy is not None:
        if stand_in is None:  # skipped, or not a counterfactual of the registry
            sched = run(reference_policy)
            stand_in = sum(sched.psi(horizon)), sum(sched.work(horizon))
        measure = target(*stand_in)
        for row, psi in zip(rows, psis, strict=True):
            if psi is not None:
                f, lo, hi = measure(psi)
                row.update(unfairness=f, unfairness_low=lo, unfairness_high=hi)
    rank_policies(rows)
    return rows
