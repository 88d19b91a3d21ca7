"""The Sec. 7.1 construction of an equilibrium of the MOSP game, and priority rotation
(Cohen, Cordeiro, Trystram, Sec. 7). It builds on the mechanism (:mod:`coopsched.mosp.game`)
and on exact best responses (:mod:`coopsched.mosp.equilibrium`); neither imports this module,
so the three have no import cycle.
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..workloads.instance import Instance
from .equilibrium import best_response, best_response_dynamics
from .game import (
    Mechanism,
    costs,
    list_positions,
    local_makespans,
    schedule,
)
from .profile import ClusterProfile
from .schedule import MospSchedule, mosp_arrays


@dataclass
class Equilibrium:
    """An equilibrium built by Sec. 7.1's algorithm: the cluster of each job (``config``), its
    schedule and the local makespans."""

    config: np.ndarray
    schedule: MospSchedule
    local: np.ndarray
    info: dict = field(default_factory=dict)

    @property
    def gains(self) -> np.ndarray:
        """Relative improvement of each organization over its local makespan."""
        orgm = self.schedule.org_makespans()
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(self.local > 0, (self.local - orgm) / np.maximum(self.local, 1), 0.0)


def _list_rebalance(
    inst: Instance, config: np.ndarray, mech: Mechanism, k: int, pos: np.ndarray
) -> None:
    """Organization ``k`` takes its jobs back and list-schedules them on the whole platform
    (in place on ``config``): at each time, in list order, a job starts at home if ``k``'s
    cluster has enough free processors (home runs only ``k``'s jobs, first), else on the
    first other cluster where it delays nothing already there; otherwise it waits for the
    next event (Sec. 7.1: "if at a given time the algorithm can choose between different
    organizations ..., the original organization must be chosen"). The jobs kept at home
    run there exactly as the mechanism's list scheduling of them would."""
    p, q, owner, m = mosp_arrays(inst)
    mine = sorted(np.flatnonzero(owner == k).tolist(), key=lambda j: pos[j])
    if not mine:
        return
    # every other cluster as the mechanism schedules it without k's jobs (all of them are
    # still at home: only organizations of higher priority moved jobs)
    others = [c for c in range(inst.k) if c != k]
    profs: dict[int, ClusterProfile] = {}
    base = schedule(inst, config, mech)
    j: int | np.integer  # a job index, from numpy arrays below and from lists after
    for c in others:
        prof = ClusterProfile(int(m[c]))
        for j in np.flatnonzero(config == c):
            prof.place(int(j), int(base.start[j]), int(p[j]), int(q[j]))
        profs[c] = prof
    running: list[tuple[int, int]] = []  # (end, q) of k's jobs at home
    free = int(m[k])
    t = 0
    pending = mine
    while pending:
        rest = []
        for j in pending:
            pj, qj = int(p[j]), int(q[j])
            if qj <= free:
                heapq.heappush(running, (t + pj, qj))
                free -= qj
                config[j] = k
                continue
            for c in others:
                if qj <= m[c] and profs[c].earliest_start(pj, qj, after=t) == t:
                    profs[c].place(int(j), t, pj, qj)
                    config[j] = c
                    break
            else:
                rest.append(j)
        pending = rest
        if not pending:
            break
        events = [running[0][0]] if running else []
        events += [e for c in others if (e := profs[c].next_breakpoint(t)) is not None]
        if not events:
            raise ValueError(f"job {pending[0]} of organization {k} fits on no cluster")
        t = min(events)
        while running and running[0][0] <= t:
            free += heapq.heappop(running)[1]


def construct_equilibrium(
    inst: Instance,
    mech: Mechanism | None = None,
    rebalance: str = "list",
    stabilize: bool = False,
    max_rounds: int = 50,
) -> Equilibrium:
    """Sec. 7.1: rebalance organizations one by one in priority order (Theorem 2).

    ``rebalance="list"``: each organization list-schedules its jobs on the whole platform
    (the mechanism's list algorithm, rho-approximate: a rho-approximate equilibrium).
    ``rebalance="exact"``: each takes an exact best response keeping a maximal number of
    jobs at home (:func:`~coopsched.mosp.equilibrium.best_response`), the optimal algorithm
    of Corollary 3 -- exponential only in the number of distinct jobs of one organization.

    Theorem 2's proof is for organizations with one processor each. For more, the paper
    proposes to "reapply the algorithm until no agent can improve its makespan":
    ``stabilize=True`` does so -- rounds in priority order in which every organization with
    a strictly better best response takes it -- and records in ``info`` whether it reached
    an equilibrium (``converged``) within ``max_rounds``.

    When the dynamics do not converge (a cycle, or ``max_rounds`` spent), the configuration
    they stopped at need not respect the local constraint (an organization that moved a job
    while it paid can be delayed there by the next one's move): the construction then returns,
    of the configurations it visited, the one with the smallest makespan among those in which
    no organization ends later than alone (ties to the later visited), or every job at home
    (each organization's local schedule) if none does; ``info["kept"]`` says which
    (``"visited"`` or ``"home"``). The paper leaves this case open.
    """
    mech = mech or Mechanism()
    if mech.kind != "organizations":
        raise ValueError("the construction of Sec. 7.1 needs priority to organizations")
    if rebalance not in ("list", "exact"):
        raise ValueError("rebalance is 'list' or 'exact'")
    _, _, owner, _ = mosp_arrays(inst)
    rank = mech.org_rank(inst.k)
    order = sorted(range(inst.k), key=lambda u: rank[u])
    config = owner.copy()
    pos = list_positions(inst, mech)
    for k in order:
        if rebalance == "exact":
            config = best_response(inst, config, mech, k).config
        else:
            _list_rebalance(inst, config, mech, k, pos)
    info: dict = {"rebalance": rebalance}
    if stabilize:
        dyn = best_response_dynamics(inst, mech, config, max_rounds, order=order)
        config = dyn.config
        info.update(converged=dyn.converged, improving_moves=dyn.steps, cycle=dyn.cycle is not None)
        if not dyn.converged:
            config, info["kept"] = _within_local(inst, mech, dyn.history, owner)
    info["migrated"] = int((config != owner).sum())
    sched = schedule(inst, config, mech)
    return Equilibrium(config, sched, local_makespans(inst, mech), info)


def _within_local(
    inst: Instance, mech: Mechanism, visited: Sequence[tuple[int, ...]], owner: np.ndarray
) -> tuple[np.ndarray, str]:
    """Of the ``visited`` configurations, the one with the smallest makespan in which every
    organization's makespan is at most its local one (ties to the later visited), else every
    job at home (:func:`construct_equilibrium`, non-converged dynamics)."""
    local = local_makespans(inst, mech)
    best: tuple[int, np.ndarray] | None = None
    for cfg in visited:
        c = np.asarray(cfg, dtype=np.int64)
        cost = costs(inst, c, mech)
        if (cost <= local).all() and (best is None or int(cost.max()) <= best[0]):
            best = (int(cost.max()), c)
    if best is None:
        return owner.copy(), "home"
    return best[1], "visited"


def rotation(instances: Sequence[Instance], order: str = "lpt") -> list[Equilibrium]:
    """Sec. 7.2 end: batches of bags of tasks, the organizations' priorities rotated each
    batch (batch b gives the highest priority to organization ``b mod k``)."""
    out = []
    for b, inst in enumerate(instances):
        k = inst.k
        mech = Mechanism("organizations", order, org_order=[(b + i) % k for i in range(k)])
        out.append(construct_equilibrium(inst, mech))
    return out
