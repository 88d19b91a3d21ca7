"""Policies on related machines ("Migration and fairness in online scheduling").

* :class:`GreedyMigration` -- Algorithm 1 (GM): at every arrival or termination, rank
  the present jobs by priority (descending), then release (earlier first), then id (the
  input's job ids when it gives them, else input order);
  rank the machines by speed (descending, then index); give the i-th job the i-th
  machine. Preempts and migrates freely (zero cost in the paper).
* Busy schedulers without migration (Def. 5: an idle machine never coexists with a
  waiting, never-started job; started jobs are never stopped):
  :class:`FcfsFastest` (earliest release to the fastest idle machine),
  :class:`FcfsRandom` (earliest release to a uniformly random idle machine, seeded),
  :class:`PriorityFastest` (highest priority, then earliest release, to the fastest
  idle machine).
* :class:`PreemptivePriority` -- preemption without migration, the paper's Observation:
  a job is bound to the machine it first ran on; at each event machines go, fastest
  first, to the highest-ranked jobs, a new job may take a machine whose bound jobs rank
  lower (preempting them), and a preempted job may only resume on its own machine.
"""

from __future__ import annotations

import random
from fractions import Fraction

from .engine import JobView, MigrationPolicy


def _rank(j: JobView) -> tuple:
    return (-j.priority, j.release, j.tie)


class GreedyMigration(MigrationPolicy):
    """GM (Algorithm 1): highest-ranked job on the fastest machine, at every event.

    Algorithm 1 does not say how to order machines of equal speed. With ``sticky``
    (default) a job keeps its current machine when the machine it would get has the same
    speed: every job still gets a machine of the same speed rank, so the service (and
    Lemmas 1-3) are unchanged, but no job is moved between equal machines -- which
    matters once migrations cost something. ``sticky=False`` is the literal index order.
    """

    name = "gm"
    preemptive = True
    migrating = True

    def __init__(self, seed: int = 0, sticky: bool = True):
        super().__init__(seed)
        self.sticky = sticky

    def assign(self, t: Fraction, jobs: list[JobView], idle: list[int]) -> dict[int, int]:
        """The highest-ranked jobs on the fastest machines; with ``sticky``, a job keeps its
        machine when the one it would get has the same speed."""
        speeds = self.inst.speeds
        machines = sorted(range(self.inst.machines), key=lambda m: (-speeds[m], m))
        ranked = sorted(jobs, key=_rank)[: len(machines)]
        if not self.sticky:
            return {m: j.id for m, j in zip(machines, ranked, strict=False)}
        out: dict[int, int] = {}
        i = 0
        while i < len(ranked):
            # the speed class of the i-th machine, and the jobs that land in it
            v = speeds[machines[i]]
            cls = [m for m in machines if speeds[m] == v]
            group = ranked[i : i + len(cls)]
            keep = {j.machine: j for j in group if j.machine in cls}
            rest = [j for j in group if j.machine not in keep or keep[j.machine] is not j]
            free = [m for m in cls if m not in keep]
            for m, j in keep.items():
                out[m] = j.id
            for m, j in zip(free, rest, strict=False):
                out[m] = j.id
            i += len(cls)
        return out


class _Busy(MigrationPolicy):
    """Non-preemptive busy scheduler: running jobs stay; idle machines take waiting jobs."""

    def order_jobs(self, waiting: list[JobView]) -> list[JobView]:
        return sorted(waiting, key=lambda j: (j.release, j.tie))

    def order_machines(self, idle: list[int]) -> list[int]:
        return sorted(idle, key=lambda m: (-self.inst.speeds[m], m))

    def assign(self, t: Fraction, jobs: list[JobView], idle: list[int]) -> dict[int, int]:
        out = {j.machine: j.id for j in jobs if j.machine is not None}
        waiting = self.order_jobs([j for j in jobs if j.machine is None])
        for m, j in zip(self.order_machines(idle), waiting, strict=False):
            out[m] = j.id
        return out


class FcfsFastest(_Busy):
    """FCFS: the earliest released waiting job goes to the fastest idle machine."""

    name = "fcfs-fastest"


class FcfsRandom(_Busy):
    """FCFS to a uniformly random idle machine (seeded)."""

    name = "fcfs-random"

    def reset(self, inst) -> None:
        """Start a new run on ``inst``, reseeding the machine order."""
        super().reset(inst)
        self._rng = random.Random(self.seed)

    def order_machines(self, idle: list[int]) -> list[int]:
        """The idle machines in random order."""
        idle = list(idle)
        self._rng.shuffle(idle)
        return idle


class PriorityFastest(_Busy):
    """Highest priority first (then earliest release) to the fastest idle machine."""

    name = "priority-fastest"

    def order_jobs(self, waiting: list[JobView]) -> list[JobView]:
        """The waiting jobs by rank: highest priority first, then earliest release, then the
        tie-break."""
        return sorted(waiting, key=_rank)


class PreemptivePriority(MigrationPolicy):
    """Preemption without migration (the paper's Observation)."""

    name = "preemptive-priority"
    preemptive = True
    migrating = False

    def assign(self, t: Fraction, jobs: list[JobView], idle: list[int]) -> dict[int, int]:
        """Preempt on priority without migrating: a started job runs only on its machine, the
        others by rank on the fastest machines left."""
        speeds = self.inst.speeds
        running = {j.machine: j for j in jobs if j.machine is not None}
        taken: dict[int, int] = {}
        for j in sorted(jobs, key=_rank):
            if j.home is not None:  # bound to its machine: run there if nobody better took it
                if j.home not in taken:
                    taken[j.home] = j.id
                continue
            free = [m for m in range(self.inst.machines) if m not in taken]
            if not free:
                continue
            idle_now = [m for m in free if m not in running]
            if idle_now:  # busy: an idle machine first, the fastest
                m = min(idle_now, key=lambda x: (-speeds[x], x))
            else:  # preempt the lowest-ranked running job
                m = max(free, key=lambda x: _rank(running[x]))
            taken[m] = j.id
        return taken


POLICIES = {
    "gm": GreedyMigration,
    "fcfs-fastest": FcfsFastest,
    "fcfs-random": FcfsRandom,
    "priority-fastest": PriorityFastest,
    "preemptive-priority": PreemptivePriority,
}
NON_MIGRATING = ("fcfs-fastest", "fcfs-random", "priority-fastest", "preemptive-priority")


def get_policy(name: str, seed: int = 0) -> MigrationPolicy:
    """A migration policy by name (``POLICIES``), seeded; a ``KeyError`` lists the names."""
    if name not in POLICIES:
        raise KeyError(f"unknown migration policy {name!r}; choose from {', '.join(POLICIES)}")
    return POLICIES[name](seed=seed)
