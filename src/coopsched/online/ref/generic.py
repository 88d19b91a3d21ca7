"""REF for an arbitrary utility (Skowron & Rzadca, Fig. 1, the generic ``Distance`` rule).

The fast kernel (:mod:`coopsched.online.ref.driver`) offers ``psi_sp`` and ``work``. The
paper presents REF "for arbitrary utility function psi" (Sec. 3, Fig. 1); this module runs
Fig. 1 as written for any utility that is a sum over an organization's jobs of a per-job
value ``value(r, s, p, t)`` (release, start, size, time; 0 for a job not started before
``t``). It is exact (``Fraction``) and plain Python: for small instances and for checking.

Pick rule (Fig. 1, ``SelectAndSchedule`` and ``Distance``): in coalition ``C`` of ``c``
members with a free machine at ``t``, start the first waiting job of the member ``u``
minimising ``|phi_u + D/c - psi_u - D| + sum_{u' != u} |phi_u' + D/c - psi_u'|``, ties to
the member whose oldest waiting job was submitted first (docs/conventions.md), where ``D`` (Fig. 1's ``Delta psi``) is the utility gained by starting
``u``'s first waiting job at ``t``. Fig. 1 measures ``D`` at ``t`` itself, where it is 0
for every non-clairvoyant utility (a job started at ``t`` has no part done by ``t``). We
take, as the kernel does for ``work``, the value of the job's first unit part: ``D =
value(r, t, 1, t + 1)``, the job as if it lasted one unit (all a non-clairvoyant scheduler
knows). ``phi`` and ``psi`` are evaluated at ``t`` and do not change between the picks
at ``t`` (docs/conventions.md §1, the literal reading). When the free machines suffice for every
waiting job, all start.

Utilities (:data:`JOB_VALUES`; the minimisation objectives enter with a minus sign, the
paper's footnote 6):

* ``psi_sp``: Eq. (3); ``work``: unit parts processed before ``t``;
* ``flow_time``: ``-(s + p - r)`` for a job completed by ``t``, else 0;
* ``tardiness``: ``-max(0, s + p - d)`` for a job completed by ``t``, else 0, with the due
  date ``d = r + due_factor * p`` (default ``due_factor = 2``: a job is due when it has
  waited as long as it runs). Only completed jobs count, so that the utility at ``t``
  depends on nothing a non-clairvoyant scheduler does not know.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable
from fractions import Fraction

import numpy as np

from ...workloads.instance import Instance
from ..schedule import Schedule
from ..shapley import shapley_restricted

JobValue = Callable[[int, int, int, int], int]


def psi_sp_value(r: int, s: int, p: int, t: int) -> int:
    """``psi_sp`` of one job at ``t`` (Eq. 3; docs/conventions.md §1's integer form)."""
    if s < 0 or s >= t:
        return 0
    q = min(p, t - s)
    return q * (t - s) - q * (q - 1) // 2


def work_value(r: int, s: int, p: int, t: int) -> int:
    """Unit parts of one job processed before ``t``."""
    return min(p, t - s) if 0 <= s < t else 0


def flow_time_value(r: int, s: int, p: int, t: int) -> int:
    """Minus the flow time of a job completed by ``t`` (0 otherwise)."""
    return -(s + p - r) if s >= 0 and s + p <= t else 0


def tardiness_value(due_factor: int = 2) -> JobValue:
    """Minus the tardiness ``max(0, C - d)`` of a job completed by ``t``, with the due date
    ``d = r + due_factor * p`` (0 for a job not completed by ``t``)."""

    def value(r: int, s: int, p: int, t: int) -> int:
        if s < 0 or s + p > t:
            return 0
        return -max(0, s + p - (r + due_factor * p))

    return value


#: Per-job values of the utilities REF can run with here.
JOB_VALUES: dict[str, JobValue] = {
    "psi_sp": psi_sp_value,
    "work": work_value,
    "flow_time": flow_time_value,
    "tardiness": tardiness_value(2),
}


def distance(phi: dict[int, Fraction], psi: dict[int, int], u: int, delta: int, c: int) -> Fraction:
    """Fig. 1's ``Distance(C, u, t)`` with ``Delta psi = delta`` in a coalition of ``c``."""
    d = Fraction(delta, c)
    return abs(phi[u] + d - psi[u] - delta) + sum(abs(phi[w] + d - psi[w]) for w in phi if w != u)


def generic_ref(
    instance: Instance, horizon: int, utility: str | JobValue = "flow_time"
) -> tuple[Schedule, list[int]]:
    """REF by Fig. 1 with the ``Distance`` rule for ``utility`` (a name in
    :data:`JOB_VALUES` or a per-job value function), up to ``horizon``.

    Returns the grand coalition's schedule and every coalition's value at the horizon
    (by bitmask; index 0 is the empty coalition)."""
    value = JOB_VALUES[utility] if isinstance(utility, str) else utility
    inst = instance
    k, n, T = inst.k, inst.n, int(horizon)
    if k > 12:
        raise ValueError(f"generic REF simulates 2^k coalitions in Python; k={k} is too many")
    NC = 1 << k
    G = NC - 1
    rel = inst.release.tolist()
    size = inst.size.tolist()
    org = inst.org.tolist()
    fifo = inst.fifo_order().tolist()
    queue = {u: [j for j in fifo if org[j] == u] for u in range(k)}
    rank = {j: i for i, j in enumerate(fifo)}  # ties: the older queue head
    members = {C: [u for u in range(k) if C >> u & 1] for C in range(NC)}
    mC = {C: sum(int(inst.machines[u]) for u in members[C]) for C in range(NC)}
    start: dict[int, dict[int, int]] = {C: {} for C in range(NC)}
    nxt = {C: dict.fromkeys(members[C], 0) for C in range(NC)}
    ends: dict[int, list[int]] = {
        C: [] for C in range(NC)
    }  # heap of completion times of running jobs
    gmach = [-1] * n
    gbusy: list[tuple[int, int]] = []  # (end, machine) in the grand coalition
    gfree = list(range(inst.total_machines))
    events = sorted(set(rel))
    heapq.heapify(events)
    seen = set(events)

    def psi_of(C: int, u: int, t: int) -> int:
        return sum(value(rel[j], s, size[j], t) for j, s in start[C].items() if org[j] == u)

    while events:
        t = heapq.heappop(events)
        if t >= T:
            break
        v = [0] * NC
        for C in range(1, NC):
            v[C] = sum(psi_of(C, u, t) for u in members[C])
        for C in range(1, NC):
            while ends[C] and ends[C][0] <= t:
                heapq.heappop(ends[C])
            free = mC[C] - len(ends[C])
            if free <= 0:
                continue
            waiting = {}
            for u in members[C]:
                q = queue[u][nxt[C][u] :]
                w = [j for j in q if rel[j] <= t]  # FIFO queue: released ones are a prefix
                if w:
                    waiting[u] = w
            if not waiting:
                continue
            if free >= sum(len(w) for w in waiting.values()):
                ranked = sorted(waiting, key=lambda u: rank[waiting[u][0]])
            else:
                phi = shapley_restricted(v, C, k)
                psi = {u: psi_of(C, u, t) for u in members[C]}
                c = len(members[C])
                key = {
                    u: distance(phi, psi, u, value(rel[w[0]], t, 1, t + 1), c)
                    for u, w in waiting.items()
                }
                ranked = sorted(waiting, key=lambda u: (key[u], rank[waiting[u][0]]))
            for u in ranked:
                for j in waiting[u]:
                    if free == 0:
                        break
                    start[C][j] = t
                    nxt[C][u] += 1
                    free -= 1
                    heapq.heappush(ends[C], t + size[j])
                    if t + size[j] not in seen:
                        seen.add(t + size[j])
                        heapq.heappush(events, t + size[j])
                    if C == G:
                        while gbusy and gbusy[0][0] <= t:
                            heapq.heappush(gfree, heapq.heappop(gbusy)[1])
                        m = heapq.heappop(gfree)
                        gmach[j] = m
                        heapq.heappush(gbusy, (t + size[j], m))
    values = [0] * NC
    for C in range(1, NC):
        values[C] = sum(psi_of(C, u, T) for u in members[C])
    s = np.full(n, -1, dtype=np.int64)
    for j, st in start[G].items():
        s[j] = st
    name = utility if isinstance(utility, str) else getattr(utility, "__name__", "custom")
    sched = Schedule(
        inst,
        s,
        np.array(gmach, dtype=np.int64),
        "ref",
        T,
        info={"utility": name, "rule": "distance"},
    )
    return sched, values
