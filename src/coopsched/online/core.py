"""The one Python event loop of the online engine, for every job width (docs/conventions.md §1,
"Rigid jobs and backfilling"; Skowron & Rzadca, Sec. 2).

A sequential job is the ``q = 1`` case of a rigid job: the same loop runs both, the
backfilling rule being one step of it (:func:`coopsched.online.rigid.rule_step`; with one
processor per job every rule is the greedy step, so the step takes the rule ``none`` then,
which picks exactly as first-fit and EASY would). At each event time ``t``:

1. completions (a job frees its ``q`` machines); the machines freed at ``t`` return to the
   free pool in machine order, and a policy's ``on_complete`` hooks are called in that
   order;
2. releases, in submission order (a rigid job wider than the schedule's machines is never
   queued: it is counted in ``info["too_wide"]``);
3. pinned jobs (an audited window's running jobs, docs/conventions.md §5): the oldest waiting
   one starts while it fits, without asking the policy;
4. the tie order of ``t`` is fixed (:meth:`SimView.rank_position`), then the rule step asks
   the policy for organizations and starts their oldest jobs.

A started job takes the lowest-numbered free machines of the coalition, or for a policy with
``random_machines`` uniformly random ones (Python's ``random.Random(seed)``). Machine identities
are kept when the schedule stores them (every job on one processor) or a policy needs them
(event hooks, random machines); otherwise only the number of free machines is.

:func:`~coopsched.online.engine.simulate` is the door to this loop and to the compiled one
(:mod:`coopsched.online.compiled`), which gives identical schedules.
"""

from __future__ import annotations

import bisect
import heapq
import random
from types import SimpleNamespace
from typing import Any

import numpy as np

from ..workloads.instance import Instance, InstanceError
from .rigid import EASY_RULES, QUEUE_RULES, check_requested, rule_step, too_wide_info
from .schedule import Schedule
from .view import PolicyError, SimView, as_index


def run_loop(
    inst: Instance,
    policy: Any,
    horizon: int | None,
    members: tuple[int, ...],
    rule: str | None,
    events: bool,
    on_release: bool,
) -> Schedule:
    """Simulate ``policy`` on the jobs of ``members`` (module docstring). ``rule`` is the
    backfilling rule of a rigid instance (``None`` for sequential jobs), ``events`` whether
    the policy's start and completion hooks are called, ``on_release`` its release hook."""
    k = inst.k
    is_member = np.zeros(k, dtype=bool)
    is_member[list(members)] = True
    order = inst.fifo_order()
    order = order[is_member[inst.org[order]]]
    n = len(order)
    rel = inst.release[order].tolist()
    owner = inst.org[order].tolist()
    size = inst.size[order].tolist()
    w = inst.width[order]
    one = not len(w) or int(w.max()) == 1  # the q = 1 case
    width = [1] * n if one else w.tolist()
    req = [-1] * n if inst.requested is None else inst.requested[order].tolist()
    pinned = [False] * n if inst.pinned is None else inst.pinned[order].tolist()
    machine_owner = inst.machine_owner().tolist()
    machines = inst.machines.tolist()
    M = int(sum(machines[u] for u in members))
    wide = [pos for pos in range(n) if width[pos] > M] if rule is not None else []
    is_wide = [False] * n
    for pos in wide:
        is_wide[pos] = True
    queues: list[list[int]] = [[] for _ in range(k)]
    for pos in range(n):
        if not is_wide[pos]:
            queues[owner[pos]].append(pos)
    head = [0] * k
    view = SimView(k, members, machines, machine_owner)
    view.order = tuple(u for u in inst.canonical_order().tolist() if is_member[u])
    view.rigid = rule is not None
    view._nfree = M
    view._width, view._req, view._rel = width, req, rel
    # waiting: what the rule shows the policy; queued: the true counts (one list for
    # sequential jobs, where no step restricts the candidates)
    view.queued = queued = [0] * k if rule is not None else view.waiting
    waiting, running = view.waiting, view.running
    psi_acc, work_acc, tl, head_pos = view._psi, view._work, view._tl, view._head_pos
    BIG = n + 1
    for u in range(k):
        head_pos[u] = BIG
    rank_pos = view._rank_pos = head_pos[:]
    rng = random.Random(getattr(policy, "seed", 0)) if policy.random_machines else None
    track = one or events or rng is not None  # machine identities
    free_ids = [m for m in range(len(machine_owner)) if is_member[machine_owner[m]]]
    held: dict[int, list[int]] = {}  # machines of a running job on q > 1 processors
    where = [-1] * n  # each job's machine (one processor per job)
    start = [-1] * n
    N1 = n + 1
    # completions: a heap of end * (n + 1) + job (at equal ends in no particular order:
    # nothing depends on it, the machines freed at one time are returned in machine order)
    comp: list[int] = []
    # EASY's running jobs by (start + requested, job, q): with one processor per job no
    # reservation is ever made
    easy = rule in EASY_RULES and not one
    gaps = rule in QUEUE_RULES and not one  # a later job may start before its head
    expected: list[tuple[int, int, int]] = []
    pin_waiting = 0
    on_start = policy.on_start if events else None
    on_done = policy.on_complete if events else None
    on_rel = policy.on_release if on_release else None

    def check(u: Any, t: int) -> int:
        """A pick that is not a waiting organization's index: a numpy integer that is one
        is accepted, anything else is a :class:`PolicyError`."""
        if u.__class__ is not int:
            u = as_index(policy, u, t)
        if not 0 <= u < k or not waiting[u]:
            raise PolicyError(
                f"{policy!r}.select returned {u!r} at t={t}: "
                + (
                    f"not an organization index (0..{k - 1})"
                    if not 0 <= u < k
                    else f"organization {u} has no waiting job"
                    + (" it may start now" if rule is not None else "")
                )
            )
        return u

    def begin(pos: int, t: int) -> None:
        """Job ``pos`` (its organization's oldest queued job, or under a whole-queue rule a
        later one that fits: a gap the head skips) starts at ``t``."""
        nonlocal pin_waiting
        u = owner[pos]
        q = width[pos]
        qu = queues[u]
        h = head[u]
        if qu[h] == pos:
            h += 1
            if gaps:  # skip the later jobs backfilled before
                while h < len(qu) and start[qu[h]] >= 0:
                    h += 1
            head[u] = h
        queued[u] -= 1
        waiting[u] = queued[u]
        view._qw -= q
        if pin_waiting and pinned[pos]:
            pin_waiting -= 1
        head_pos[u] = queues[u][head[u]] if queued[u] else BIG
        d = t - tl[u]
        if d:  # u's utility brought to t (Eq. 3 in closed form; inlined: the hot path)
            r = running[u]
            psi_acc[u] += work_acc[u] * d + r * (d * (d + 1) // 2)
            work_acc[u] += r * d
            tl[u] = t
        running[u] += q
        view._nfree -= q
        start[pos] = t
        heapq.heappush(comp, (t + size[pos]) * N1 + pos)
        if easy:
            bisect.insort(expected, (t + req[pos], pos, q))
        if not track:
            return
        if q == 1:
            m = heapq.heappop(free_ids) if rng is None else draw()
            where[pos] = m
            if on_start is not None:
                on_start(view, u, m)
            return
        held[pos] = got = [heapq.heappop(free_ids) if rng is None else draw() for _ in range(q)]
        if on_start is not None:
            for m in got:
                on_start(view, u, m)

    def draw() -> int:
        """A uniformly random free machine (Python's stream for the policy's seed)."""
        assert rng is not None
        x = rng.randrange(len(free_ids))
        free_ids[x], free_ids[-1] = free_ids[-1], free_ids[x]
        return free_ids.pop()

    # what the rule step (rigid.rule_step) reads and calls
    lp = SimpleNamespace(
        view=view,
        select=policy.select,
        check=check,
        begin=begin,
        queues=queues,
        head=head,
        width=width,
        req=req,
        order=order,
        expected=expected,
        start=start,
        rel=rel,
        blocked=[],  # where the rule stopped: (t, job, shadow, extra, backfilled)
    )
    check_requested(rule, order, req, is_wide)
    step = rule_step("none" if one or rule is None else rule, lp)  # q = 1: always greedy
    policy.reset(view)
    T = float("inf") if horizon is None else int(horizon)
    i = 0
    while True:
        t_rel = rel[i] if i < n else None
        t_comp = comp[0] // N1 if comp else None
        if t_rel is None:
            if t_comp is None:
                break
            t = t_comp
        else:
            t = t_rel if t_comp is None or t_rel < t_comp else t_comp
        if t >= T:
            break
        view.t = t
        freed: list[tuple[int, int]] = []
        while comp and comp[0] // N1 == t:  # completions, in start order
            pos = heapq.heappop(comp) % N1
            u = owner[pos]
            q = width[pos]
            d = t - tl[u]
            if d:
                r = running[u]
                psi_acc[u] += work_acc[u] * d + r * (d * (d + 1) // 2)
                work_acc[u] += r * d
                tl[u] = t
            running[u] -= q
            view._nfree += q
            if easy:
                del expected[bisect.bisect_left(expected, (start[pos] + req[pos], pos, q))]
            if not track:
                continue
            if q > 1:
                freed.extend((m, pos) for m in held.pop(pos))
            elif rng is None and on_done is None:
                heapq.heappush(free_ids, where[pos])  # a heap: the order does not matter
            else:
                freed.append((where[pos], pos))
        if freed:  # the machines freed at t return in machine order, with the hooks
            freed.sort()
            for m, pos in freed:
                if rng is None:
                    heapq.heappush(free_ids, m)
                else:
                    free_ids.append(m)
                if on_done is not None:
                    on_done(view, owner[pos], m, size[pos])
        while i < n and rel[i] == t:  # releases
            if not is_wide[i]:
                u = owner[i]
                if not queued[u]:
                    head_pos[u] = i
                queued[u] += 1
                waiting[u] = queued[u]
                view._qw += width[i]
                pin_waiting += pinned[i]
                if on_rel is not None:
                    on_rel(view, u)
            i += 1
        if not view._nfree or not view._qw:
            continue
        while pin_waiting:  # pinned jobs first, oldest first, while the oldest fits
            pos = min(head_pos[x] for x in members if queued[x] and pinned[head_pos[x]])
            if width[pos] > view._nfree:
                break
            begin(pos, t)
        rank_pos[:] = head_pos  # ties at t: the queue heads as the rule's picks begin
        step(t)
    if n and max(start) > 2**63 - 1:  # a refusal, never a wrapped start time
        raise InstanceError(
            f"{policy.name}: a job would start at {max(start)} s, beyond 2^63 - 1; "
            "give a horizon below that"
        )
    start_arr = np.full(inst.n, -1, dtype=np.int64)
    machine = np.full(inst.n, -1, dtype=np.int64)
    start_arr[order] = np.array(start, dtype=np.int64)
    if one:
        machine[order] = np.array(where, dtype=np.int64)
    info: dict = {"params": policy.params(), "engine": "python"}
    if rule is not None:
        jobs = order[wide] if wide else np.zeros(0, np.int64)
        info |= {"backfill": rule, "too_wide": too_wide_info(inst, jobs, M), "blocked": lp.blocked}
    return Schedule(
        instance=inst,
        start=start_arr,
        machine=machine,
        policy=policy.name,
        horizon=None if horizon is None else int(horizon),
        info=info,
    )
