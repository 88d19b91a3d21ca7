"""The online engine: event-driven, greedy, FIFO per organization, non-clairvoyant.

Model (Skowron & Rzadca, Sec. 2; CONVENTIONS 1): sequential jobs on identical machines;
time is integer; a job released at ``r`` may start at any ``s >= r`` and occupies one
machine during ``[s, s+p)``. At every event time ``t`` (a release or a completion) the
engine frees the machines whose jobs complete at ``t``, queues the jobs released at ``t``
(each organization's queue in input order) and then, while a machine is free and a job
waits, asks the policy for an organization; that organization's oldest waiting job
starts at ``t``. The cost grows with the number of events, not with the horizon.

Policies see the world through a :class:`SimView`: release order, queue lengths,
running counts, machines, and utilities computed from elapsed time. A job's size is
revealed to the policy only by :meth:`Policy.on_complete`, once the job has completed.
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Iterable

import numpy as np

from ..workloads.instance import Instance, InstanceError
from .schedule import Schedule


class PolicyError(RuntimeError):
    """A policy returned an organization that has no waiting job."""


class SimView:
    """What a policy may look at, at the current time ``t``.

    Attributes are read-only by contract: ``t``, ``k``, ``members`` (organization
    indices taking part), ``machines[u]``, ``total_machines``, ``waiting[u]`` (jobs
    released and not started), ``running[u]``. Methods give ``psi_sp`` and processed
    work at ``t`` from elapsed times only, and the release order of queue heads.
    """

    __slots__ = (
        "t",
        "k",
        "members",
        "machines",
        "total_machines",
        "waiting",
        "running",
        "_psi",
        "_work",
        "_tl",
        "_head_pos",
        "_machine_owner",
        "_free",
    )

    def __init__(
        self, k: int, members: tuple[int, ...], machines: list[int], machine_owner: list[int]
    ):
        self.t = 0
        self.k = k
        self.members = members
        self.machines = machines
        self.total_machines = sum(machines[u] for u in members)
        self.waiting = [0] * k
        self.running = [0] * k
        self._psi = [0] * k
        self._work = [0] * k
        self._tl = [0] * k
        self._head_pos: list[int] = [0] * k
        self._machine_owner = machine_owner
        self._free: list[int] = []

    @property
    def free(self) -> int:
        """Number of free machines right now."""
        return len(self._free)

    def psi(self, u: int) -> int:
        """``psi_sp`` of organization ``u`` at the current time (exact integer)."""
        d = self.t - self._tl[u]
        return self._psi[u] + self._work[u] * d + self.running[u] * (d * (d + 1) // 2)

    def work(self, u: int) -> int:
        """Unit parts of ``u``'s jobs processed before the current time."""
        return self._work[u] + self.running[u] * (self.t - self._tl[u])

    def head_position(self, u: int) -> int:
        """Global submission rank of ``u``'s oldest waiting job (smaller = older)."""
        return self._head_pos[u]

    def machine_owner(self, m: int) -> int:
        return self._machine_owner[m]

    def candidates(self) -> list[int]:
        """Organizations with a waiting job, in index order."""
        w = self.waiting
        return [u for u in self.members if w[u]]


class Policy:
    """One interface for every online policy (scikit-learn style: parameters in
    ``__init__``, state created in :meth:`reset`).

    A policy implements :meth:`select`; it may track state through :meth:`on_start`
    and :meth:`on_complete`. Policies that build many schedules at once (REF, RAND)
    override :meth:`run` instead. ``random_machines`` asks the engine to give each
    started job a uniformly random free machine (seeded) instead of the lowest-numbered.
    """

    name: str = "policy"
    random_machines: bool = False
    wants_events: bool = False

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def params(self) -> dict:
        return {"seed": self.seed}

    def reset(self, view: SimView) -> None:
        """Called once before the simulation starts."""

    def select(self, view: SimView) -> int:
        """Return an organization with a waiting job; its oldest job starts now."""
        raise NotImplementedError

    def on_start(self, view: SimView, org: int, machine: int) -> None:
        """A job of ``org`` started on ``machine`` at ``view.t``."""

    def on_complete(self, view: SimView, org: int, machine: int, size: int) -> None:
        """A job of ``org`` completed on ``machine`` at ``view.t``; its size is now known."""

    def run(
        self, instance: Instance, horizon: int | None = None, members: Iterable[int] | None = None
    ) -> Schedule:
        """Simulate this policy on ``instance`` (optionally only a coalition's part)."""
        return simulate(instance, self, horizon=horizon, members=members)

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({args})"


def simulate(
    instance: Instance,
    policy: Policy,
    horizon: int | None = None,
    members: Iterable[int] | None = None,
) -> Schedule:
    """Run ``policy`` on ``instance`` until ``horizon`` (no job starts at ``t >= horizon``).

    With ``members``, only that coalition's jobs and machines take part (the schedule
    the coalition would build alone). Without a horizon, runs until every job started.
    """
    inst = instance
    k = inst.k
    mem = tuple(range(k)) if members is None else tuple(sorted({int(u) for u in members}))
    is_member = np.zeros(k, dtype=bool)
    is_member[list(mem)] = True
    order = inst.fifo_order()
    order = order[is_member[inst.org[order]]]
    n = len(order)
    rel = inst.release[order].tolist()
    owner = inst.org[order].tolist()
    size = inst.size[order].tolist()
    queues: list[list[int]] = [[] for _ in range(k)]
    for pos, u in enumerate(owner):
        queues[u].append(pos)
    head = [0] * k
    machine_owner = inst.machine_owner().tolist()
    machines = inst.machines.tolist()
    view = SimView(k, mem, machines, machine_owner)
    M = len(machine_owner)
    free = [m for m in range(M) if is_member[machine_owner[m]]]  # sorted: a valid heap
    view._free = free
    start = [-1] * n
    where = [-1] * n
    on_machine = [-1] * max(M, 1)
    comp: list[int] = []  # heap of end * M + machine
    INF = float("inf")
    T = INF if horizon is None else int(horizon)
    waiting, running = view.waiting, view.running
    psi_acc, work_acc, tl, head_pos = view._psi, view._work, view._tl, view._head_pos
    BIG = n + 1
    for u in range(k):
        head_pos[u] = BIG
    policy.reset(view)
    rng = random.Random(getattr(policy, "seed", 0)) if policy.random_machines else None
    select = policy.select
    events = policy.wants_events
    i = 0
    total_waiting = 0
    MM = max(M, 1)
    while True:
        t_rel = rel[i] if i < n else INF
        t_comp = comp[0] // MM if comp else INF
        t = t_rel if t_rel < t_comp else t_comp
        if t == INF or t >= T:
            break
        view.t = t
        # completions at t
        while comp and comp[0] // MM == t:
            m = heapq.heappop(comp) % MM
            pos = on_machine[m]
            u = owner[pos]
            d = t - tl[u]
            if d:  # bring u's accumulators to t (inlined: this loop is the hot path)
                r = running[u]
                psi_acc[u] += work_acc[u] * d + r * (d * (d + 1) // 2)
                work_acc[u] += r * d
                tl[u] = t
            running[u] -= 1
            on_machine[m] = -1
            if rng is None:
                heapq.heappush(free, m)
            else:
                free.append(m)
            if events:
                policy.on_complete(view, u, m, size[pos])
        # releases at t
        while i < n and rel[i] == t:
            u = owner[i]
            if not waiting[u]:
                head_pos[u] = i
            waiting[u] += 1
            total_waiting += 1
            i += 1
        # greedy starts at t
        while free and total_waiting:
            u = select(view)
            if not waiting[u]:
                raise PolicyError(
                    f"{policy!r} chose organization {u}, which has no waiting job at t={t}"
                )
            pos = queues[u][head[u]]
            head[u] += 1
            waiting[u] -= 1
            total_waiting -= 1
            head_pos[u] = queues[u][head[u]] if waiting[u] else BIG
            if rng is None:
                m = heapq.heappop(free)
            else:
                j = rng.randrange(len(free))
                free[j], free[-1] = free[-1], free[j]
                m = free.pop()
            d = t - tl[u]
            if d:
                r = running[u]
                psi_acc[u] += work_acc[u] * d + r * (d * (d + 1) // 2)
                work_acc[u] += r * d
                tl[u] = t
            running[u] += 1
            start[pos] = t
            where[pos] = m
            on_machine[m] = pos
            heapq.heappush(comp, (t + size[pos]) * MM + m)
            if events:
                policy.on_start(view, u, m)
    if n and max(start) > 2**63 - 1:  # a refusal, never a wrapped start time
        raise InstanceError(
            f"{policy.name}: a job would start at {max(start)} s, beyond 2^63 - 1; "
            "give a horizon below that"
        )
    start_arr = np.full(inst.n, -1, dtype=np.int64)
    mach_arr = np.full(inst.n, -1, dtype=np.int64)
    start_arr[order] = np.array(start, dtype=np.int64)
    mach_arr[order] = np.array(where, dtype=np.int64)
    return Schedule(
        instance=inst,
        start=start_arr,
        machine=mach_arr,
        policy=policy.name,
        horizon=None if horizon is None else int(horizon),
        members=None if members is None else mem,
        info={"params": policy.params()},
    )
