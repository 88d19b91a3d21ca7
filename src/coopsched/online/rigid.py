"""The online engine for rigid parallel jobs, with a backfilling rule (docs/conventions.md,
"Rigid jobs and backfilling").

A rigid job on ``q`` processors holds ``q`` of the coalition's machines at once, from its
start to its completion (the model of every HPC platform; Skowron & Rzadca split such a
job into ``q`` sequential ones, Sec. 7.2, and name parallel jobs as the open extension of
their approach, end of Sec. 6 and Sec. 8). The policy still says *whose* job is next (its
``select`` contract and FIFO within an organization are unchanged); the **backfilling
rule** says what happens when that job does not fit. At each event time ``t``: completions
(a job frees its ``q`` machines; at equal times in start order), then releases (a job wider
than the coalition's machines is never queued: it is counted in ``info["too_wide"]`` and its
organization's later jobs are not held behind it), then pinned jobs (an audited window's
running jobs: the oldest waiting one starts while it fits), then the rule:

* ``none``: the policy picks among the organizations with a waiting job; the pick's
  oldest job starts if it fits, otherwise nothing more starts until the next event;
* ``first-fit``: the policy picks among the organizations whose oldest job fits, until
  none fits (non-clairvoyant list scheduling);
* ``easy``: the policy picks among all; a pick that fits starts. One that does not gets a
  reservation: walking the running jobs by expected end (start + requested time; a job
  past its requested time is expected at ``t + 1``, and the reservation is recomputed at
  every event), the *shadow time* ``S`` is the first expected end at which enough
  machines are free, and ``extra`` the machines left over then. Other organizations'
  oldest jobs then start, in the policy's order, if they fit now and either end by their
  requested time no later than ``S`` or fit in ``extra`` (which they then use up); the
  reserved job waits. EASY reads requested times only, never run times.

Where the rule stops at an event with machines free and jobs waiting (``none``: the pick
does not fit; ``easy``: a reservation), the Python engine records it in
``info["blocked"]`` as ``(t, job, shadow, extra, backfilled)`` (input indices; ``-1`` for
``none``): the policy's picks, which :func:`coopsched.online.checker.check_rigid` cannot
know, so that it can verify everything the rule decides from them.

The policy keeps its contract unchanged: during a step that restricts the candidates
(``first-fit``, EASY's backfill), an organization that is not a candidate shows
``view.waiting[u] == 0`` (its true count is ``view.queued[u]``), so every policy, plug-ins
included, runs under every rule. ``view.running[u]`` counts processors in use, so ``psi_sp``
and processed work count a job on ``q`` processors as ``q`` unit parts that start together.

Machines are identical; the engine tracks which machine runs what only when a policy needs
it (``random_machines``, as DIRECTCONTR, or event hooks, called once per machine). A rigid
schedule stores starts (``machine`` is ``-1``); :meth:`Schedule.allocation` gives a valid
machine assignment on demand.
"""

from __future__ import annotations

import bisect
import heapq
import random
from typing import TYPE_CHECKING

import numpy as np

from ..workloads.instance import Instance
from .schedule import Schedule

if TYPE_CHECKING:
    from .engine import Policy

#: The backfilling rules.
BACKFILL = ("none", "first-fit", "easy")


def resolve_backfill(instance: Instance, backfill: str | None) -> str:
    """The rule to use: ``backfill`` checked, or for ``None``/``"auto"`` EASY when every job
    has a requested time and first-fit otherwise."""
    if backfill is None or backfill == "auto":
        req = instance.requested
        return "easy" if req is not None and instance.n and (req >= 1).all() else "first-fit"
    if backfill not in BACKFILL:
        raise ValueError(f"backfill: {backfill!r}; choose from auto, {', '.join(BACKFILL)}")
    return backfill


def simulate_rigid(
    inst: Instance,
    policy: Policy,
    horizon: int | None,
    members: tuple[int, ...] | None,
    mem: tuple[int, ...],
    backfill: str,
) -> Schedule:
    """The Python reference of the rigid engine (module docstring)."""
    from .engine import Policy, PolicyError, SimView, _as_index, _wants_events

    k = inst.k
    cls = type(policy)
    is_member = np.zeros(k, dtype=bool)
    is_member[list(mem)] = True
    order = inst.fifo_order()
    order = order[is_member[inst.org[order]]]
    n = len(order)
    rel = inst.release[order].tolist()
    owner = inst.org[order].tolist()
    size = inst.size[order].tolist()
    width = inst.width[order].tolist()
    req = [-1] * n if inst.requested is None else inst.requested[order].tolist()
    pinned = [False] * n if inst.pinned is None else inst.pinned[order].tolist()
    machine_owner = inst.machine_owner().tolist()
    machines = inst.machines.tolist()
    M = int(sum(machines[u] for u in mem))
    wide = [pos for pos in range(n) if width[pos] > M]
    if backfill == "easy":
        bad = next((pos for pos in range(n) if width[pos] <= M and req[pos] < 1), None)
        if bad is not None:
            raise ValueError(
                f"backfill='easy' reads requested times, and job {int(order[bad])} has none "
                "(give every job a requested time, or choose first-fit)"
            )
    is_wide = [False] * n
    for pos in wide:
        is_wide[pos] = True
    queues: list[list[int]] = [[] for _ in range(k)]
    for pos in range(n):
        if not is_wide[pos]:
            queues[owner[pos]].append(pos)
    head = [0] * k
    view = SimView(k, mem, machines, machine_owner)
    view.order = tuple(u for u in inst.canonical_order().tolist() if is_member[u])
    view.rigid = True
    view._nfree = M
    view._width = width
    view._req = req
    view.queued = queued = [0] * k  # the true counts; waiting shows a step's candidates
    waiting, running = view.waiting, view.running
    psi_acc, work_acc, tl, head_pos = view._psi, view._work, view._tl, view._head_pos
    BIG = n + 1
    for u in range(k):
        head_pos[u] = BIG
    rank_pos = view._rank_pos = head_pos[:]  # the tie order, taken once per event time
    view._rel = rel
    # machine identities only when the policy needs them (hooks, random machines)
    events = _wants_events(policy)
    track = events or policy.random_machines
    rng = random.Random(getattr(policy, "seed", 0)) if policy.random_machines else None
    free_ids = [m for m in range(len(machine_owner)) if is_member[machine_owner[m]]]
    held: dict[int, list[int]] = {}
    policy.reset(view)
    select = policy.select
    on_release = policy.on_release if cls.on_release is not Policy.on_release else None
    start = [-1] * n
    comp: list[tuple[int, int, int]] = []  # (end, start sequence, position)
    expected: list[tuple[int, int, int]] = []  # EASY: (start + requested, sequence, q)
    seq = 0
    INF = float("inf")
    T = INF if horizon is None else int(horizon)
    i = 0
    total = 0
    pin_waiting = 0

    def advance(u: int, t: int) -> None:
        d = t - tl[u]
        if d:
            r = running[u]
            psi_acc[u] += work_acc[u] * d + r * (d * (d + 1) // 2)
            work_acc[u] += r * d
            tl[u] = t

    def show(eligible) -> None:
        """What ``select`` sees: the true counts, or only the candidates of this step."""
        for u in mem:
            waiting[u] = queued[u] if eligible is None or eligible(u) else 0

    def pick(t: int) -> int:
        u = select(view)
        if u.__class__ is not int:
            u = _as_index(policy, u, t)
        if not 0 <= u < k or not waiting[u]:
            raise PolicyError(
                f"{policy!r}.select returned {u!r} at t={t}: "
                + (
                    f"not an organization index (0..{k - 1})"
                    if not 0 <= u < k
                    else f"organization {u} has no waiting job it may start now"
                )
            )
        return u

    def begin(pos: int, t: int) -> None:
        nonlocal total, seq, pin_waiting
        u = owner[pos]
        q = width[pos]
        head[u] += 1
        queued[u] -= 1
        total -= 1
        if pinned[pos]:
            pin_waiting -= 1
        head_pos[u] = queues[u][head[u]] if queued[u] else BIG
        advance(u, t)
        running[u] += q
        view._nfree -= q
        start[pos] = t
        seq += 1
        heapq.heappush(comp, (t + size[pos], seq, pos))
        if backfill == "easy":
            bisect.insort(expected, (t + req[pos], seq, q))
        if track:
            got = []
            for _ in range(q):
                if rng is None:
                    m = heapq.heappop(free_ids)
                else:
                    x = rng.randrange(len(free_ids))
                    free_ids[x], free_ids[-1] = free_ids[-1], free_ids[x]
                    m = free_ids.pop()
                got.append(m)
            held[pos] = got
            if events:
                for m in got:
                    policy.on_start(view, u, m)

    def fits(u: int) -> bool:
        return queued[u] > 0 and width[queues[u][head[u]]] <= view._nfree

    # where the rule stopped: (t, the chosen job that did not fit, EASY's shadow time and
    # extra machines, or -1, the jobs backfilled beside the reservation, in order)
    blocked: list[tuple[int, int, int, int, tuple[int, ...]]] = []
    res = [-1, 0, 0, 0]  # EASY's reservation: reserved organization, shadow, extra, time

    def backfills(v: int) -> bool:
        """May ``v``'s oldest job start now beside the reservation ``res``?"""
        if v == res[0] or not fits(v):
            return False
        h = queues[v][head[v]]
        return res[3] + req[h] <= res[1] or width[h] <= res[2]

    while True:
        t_rel = rel[i] if i < n else INF
        t_comp = comp[0][0] if comp else INF
        t = t_rel if t_rel < t_comp else t_comp
        if isinstance(t, float) or t >= T:
            break
        view.t = t
        while comp and comp[0][0] == t:  # completions, in start order
            _, sq, pos = heapq.heappop(comp)
            u = owner[pos]
            q = width[pos]
            advance(u, t)
            running[u] -= q
            view._nfree += q
            if backfill == "easy":
                del expected[bisect.bisect_left(expected, (start[pos] + req[pos], sq, q))]
            if track:
                for m in held.pop(pos):
                    if rng is None:
                        heapq.heappush(free_ids, m)
                    else:
                        free_ids.append(m)
                    if events:
                        policy.on_complete(view, u, m, size[pos])
        while i < n and rel[i] == t:  # releases
            if not is_wide[i]:
                u = owner[i]
                if not queued[u]:
                    head_pos[u] = i
                queued[u] += 1
                waiting[u] = queued[u]
                total += 1
                pin_waiting += pinned[i]
                if on_release is not None:
                    on_release(view, u)
            i += 1
        # pinned jobs first, oldest first, while the oldest fits
        while pin_waiting:
            pos = min(head_pos[x] for x in mem if queued[x] and pinned[head_pos[x]])
            if width[pos] > view._nfree:
                break
            begin(pos, t)
        rank_pos[:] = head_pos  # ties at t: the queue heads as the rule's picks begin
        # the rule
        if backfill == "none":
            while total and view._nfree:
                show(None)
                u = pick(t)
                pos = queues[u][head[u]]
                if width[pos] > view._nfree:
                    blocked.append((t, int(order[pos]), -1, -1, ()))
                    break
                begin(pos, t)
        elif backfill == "first-fit":
            while total and view._nfree:
                if not any(fits(u) for u in mem):
                    break
                show(fits)
                u = pick(t)
                begin(queues[u][head[u]], t)
        else:  # easy
            while total and view._nfree:
                show(None)
                u = pick(t)
                pos = queues[u][head[u]]
                if width[pos] <= view._nfree:
                    begin(pos, t)
                    continue
                shadow, extra = _reservation(expected, view._nfree, width[pos], t)
                res[:] = [u, shadow, extra, t]
                filled: list[int] = []
                while any(backfills(v) for v in mem):
                    show(backfills)
                    v = pick(t)
                    h = queues[v][head[v]]
                    if t + req[h] > res[1]:
                        res[2] -= width[h]
                    filled.append(int(order[h]))
                    begin(h, t)
                blocked.append((t, int(order[pos]), shadow, extra, tuple(filled)))
                break
        show(None)
    start_arr = np.full(inst.n, -1, dtype=np.int64)
    start_arr[order] = np.array(start, dtype=np.int64)
    return Schedule(
        instance=inst,
        start=start_arr,
        machine=np.full(inst.n, -1, dtype=np.int64),
        policy=policy.name,
        horizon=None if horizon is None else int(horizon),
        members=members,
        info={
            "params": policy.params(),
            "engine": "python",
            "backfill": backfill,
            "too_wide": too_wide_info(inst, order[wide] if wide else np.zeros(0, np.int64), M),
            "blocked": blocked,
        },
    )


def _reservation(
    expected: list[tuple[int, int, int]], free: int, q: int, t: int
) -> tuple[int, int]:
    """EASY's shadow time and extra machines for a job on ``q`` processors at ``t``: the
    first expected end (``max(start + requested, t + 1)``) at which ``free`` plus the
    processors of the jobs expected to end by then reach ``q``, counting every job that
    ends at that time; ``extra`` is what is left over then."""
    avail = free
    x = 0
    n = len(expected)
    while x < n:
        e = max(expected[x][0], t + 1)
        while x < n and max(expected[x][0], t + 1) == e:
            avail += expected[x][2]
            x += 1
        if avail >= q:
            return e, avail - q
    raise AssertionError("a queued job is never wider than the coalition's machines")


def too_wide_info(inst: Instance, jobs: np.ndarray, machines: int) -> dict:
    """``{"count", "machines", "first"}``: the jobs wider than the schedule's machines, which
    never start there (docs/conventions.md), with the first few ids."""
    first = [inst.ids[j] if inst.ids is not None else int(j) for j in jobs[:5].tolist()]
    return {"count": int(len(jobs)), "machines": int(machines), "first": first}
