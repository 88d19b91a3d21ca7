"""The backfilling rule of the online engine, one step of its event loop (docs/conventions.md,
"Rigid jobs and backfilling").

A rigid job on ``q`` processors holds ``q`` of the coalition's machines at once, from its
start to its completion (the model of every HPC platform; Skowron & Rzadca split such a
job into ``q`` sequential ones, Sec. 7.2, and name parallel jobs as the open extension of
their approach, end of Sec. 6 and Sec. 8). The policy still says *whose* job is next (its
``select`` contract and FIFO within an organization are unchanged); the **backfilling
rule** says what happens when that job does not fit. At each event time ``t``
(:mod:`coopsched.online.core`, the loop): completions (a job frees its ``q`` machines), then
releases (a job wider than the coalition's machines is never queued: it is counted in
``info["too_wide"]`` and its organization's later jobs are not held behind it), then pinned
jobs (an audited window's running jobs: the oldest waiting one starts while it fits), then
the rule (:func:`rule_step`; the compiled engine's twin of it is
:func:`coopsched.online.compiled._rule_step`, tested equal):

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
  reserved job waits. EASY reads requested times only, never run times;
* ``easy-queue``: EASY over the whole queue (as real schedulers run it): the same
  reservation, then every queued job but the reserved one (its organization's later jobs
  included) that fits now and ends by ``S`` or fits in ``extra`` is a candidate; the
  policy picks among the organizations that have one, each showing its oldest candidate
  as its head, so FIFO backfills in global submission order whatever the grouping. A
  backfilled later job leaves a gap in its organization's queue, which the head skips;
  FIFO within an organization no longer holds;
* ``first-fit-queue``: first-fit over the whole queue (the platform's rule where jobs carry
  no requested times): every queued job that fits now is a candidate, the policy picks
  among the organizations that have one, each showing its oldest candidate, until none
  fits; under FIFO, in global submission order whatever the grouping. Its later jobs may
  start before an older one that does not fit, as under ``easy-queue``.

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
it (``random_machines``, as DIRECTCONTR, or event hooks, called once per machine) or every
job has one processor. A rigid schedule stores starts, and machines only in that last case
(``machine`` is ``-1`` otherwise); :meth:`Schedule.allocation` gives a valid machine
assignment on demand. With one processor per job every rule is the greedy step (a queue
head always fits a free machine), so the loop runs the rule ``none`` then: the schedule,
machines included, is the sequential one.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np

from ..workloads.instance import Instance
from .view import SimView

#: The backfilling rules: ``first-fit`` and ``easy`` are the papers' per-organization model
#: (only queue heads are candidates), ``easy-queue`` and ``first-fit-queue`` look down the
#: whole queue (as real schedulers do).
BACKFILL = ("none", "first-fit", "easy", "easy-queue", "first-fit-queue")
#: The rules that reserve for the policy's pick and read requested times.
EASY_RULES = ("easy", "easy-queue")
#: The rules whose candidates are every queued job, not only each organization's oldest.
QUEUE_RULES = ("easy-queue", "first-fit-queue")


def resolve_backfill(instance: Instance, backfill: str | None) -> str:
    """The rule to use: ``backfill`` checked, or for ``None``/``"auto"`` EASY when every job
    has a requested time and first-fit otherwise."""
    if backfill is None or backfill == "auto":
        req = instance.requested
        return "easy" if req is not None and instance.n and (req >= 1).all() else "first-fit"
    if backfill not in BACKFILL:
        raise ValueError(f"backfill: {backfill!r}; choose from auto, {', '.join(BACKFILL)}")
    return backfill


def check_requested(rule: str | None, order: np.ndarray, req: list[int], wide: list[bool]) -> None:
    """EASY reads requested times: every job that may queue (``wide``: never queued) needs
    one (``req``, in submission order ``order``)."""
    if rule not in EASY_RULES:
        return
    bad = next((pos for pos in range(len(req)) if not wide[pos] and req[pos] < 1), None)
    if bad is not None:
        raise ValueError(
            f"backfill={rule!r} reads requested times, and job {int(order[bad])} has none "
            "(give every job a requested time, or choose first-fit)"
        )


def rule_step(rule: str, lp: Any) -> Callable[[int], None]:
    """The backfilling rule ``rule`` (module docstring) as one step of the loop of
    :mod:`coopsched.online.core`: a function of ``t`` that asks the policy for picks and
    starts their jobs (``lp.begin``) until the rule stops or no machine is free. ``lp``
    holds the loop's view, queues and actions; ``lp.check(u, t)`` turns a pick that is not
    a valid index into an int or a :class:`~coopsched.online.view.PolicyError`. Where the
    rule stops with machines free and jobs waiting (``none``: the pick does not fit;
    ``easy``: a reservation), the stop is recorded in ``lp.blocked``."""
    view = lp.view
    queues, head, width, begin, select, check = (
        lp.queues,
        lp.head,
        lp.width,
        lp.begin,
        lp.select,
        lp.check,
    )
    waiting, queued, k, blocked, order = view.waiting, view.queued, view.k, lp.blocked, lp.order

    def pick(t: int) -> int:
        u = select(view)
        if u.__class__ is not int or not 0 <= u < k or not waiting[u]:
            u = check(u, t)
        return u

    if rule == "none":

        def greedy(t: int) -> None:
            while view._qw and view._nfree:
                u = select(view)  # pick(t), inlined: the hot path of sequential jobs
                if u.__class__ is not int or not 0 <= u < k or not waiting[u]:
                    u = check(u, t)
                pos = queues[u][head[u]]
                if width[pos] > view._nfree:
                    blocked.append((t, int(order[pos]), -1, -1, ()))
                    return
                begin(pos, t)

        return greedy

    def fits(u: int) -> bool:
        return queued[u] > 0 and width[queues[u][head[u]]] <= view._nfree

    if rule == "first-fit":

        def first_fit(t: int) -> None:
            while view._qw and view._nfree and _show(view, fits):
                u = pick(t)
                begin(queues[u][head[u]], t)
            _show(view, None)

        return first_fit
    if rule not in BACKFILL:
        raise ValueError(f"backfill: {rule!r}; choose from {', '.join(BACKFILL)}")
    req, expected = lp.req, lp.expected

    whole = rule in QUEUE_RULES

    def backfill(t: int, u: int, shadow: float, left: float) -> tuple[int, ...]:
        """EASY's backfill at ``t`` beside the reservation of ``u``'s oldest job, in the
        policy's order: under ``easy`` the other organizations' oldest jobs that fit now and
        end by the shadow time or use the extra machines (``left``); under ``easy-queue``
        every other queued job that does, the policy asked among the organizations that
        have one, each showing its oldest candidate as its head (``view.head_position``
        and the like). ``first-fit-queue`` is this scan without a reservation (``u`` is
        ``-1``, the shadow time and extra machines infinite). A candidate stops being one
        only when the free or extra machines fall, so each organization's oldest candidate
        moves forward only: its queue is scanned once per reservation."""
        start, rel, head_pos = lp.start, lp.rel, view._head_pos
        reserved = queues[u][head[u]] if u >= 0 else -1
        cand = {v: head[v] for v in view.members if queued[v]}  # scan positions

        def oldest(v: int) -> bool:
            """Move ``v``'s scan to its oldest candidate (``easy``: its head, if one);
            whether it has one."""
            qv, i, free = queues[v], cand[v] if whole else head[v], view._nfree
            while i < len(qv):
                h = qv[i]
                if rel[h] > t:
                    break
                w = width[h]
                if (
                    start[h] < 0
                    and h != reserved
                    and w <= free
                    and (t + req[h] <= shadow or w <= left)
                ):
                    cand[v] = i
                    head_pos[v] = h
                    return True
                if not whole:
                    break
                i += 1
            cand[v] = i
            return False

        filled: list[int] = []
        while view._nfree and _show(view, oldest):
            v = pick(t)
            h = queues[v][cand[v]]
            if t + req[h] > shadow:
                left -= width[h]
            filled.append(int(order[h]))
            begin(h, t)
        _show(view, None)
        if whole:  # the heads as they are
            for v in cand:
                head_pos[v] = queues[v][head[v]] if queued[v] else len(start) + 1
        return tuple(filled)

    if rule == "first-fit-queue":

        def first_fit_queue(t: int) -> None:
            if view._qw and view._nfree:
                backfill(t, -1, math.inf, math.inf)

        return first_fit_queue

    def easy(t: int) -> None:
        while view._qw and view._nfree:
            u = pick(t)
            pos = queues[u][head[u]]
            if width[pos] <= view._nfree:
                begin(pos, t)
                continue
            shadow, extra = reservation(expected, view._nfree, width[pos], t)
            filled = backfill(t, u, shadow, extra)
            blocked.append((t, int(order[pos]), shadow, extra, filled))
            return

    return easy


def _show(view: SimView, eligible: Callable[[int], bool] | None) -> bool:
    """What ``select`` sees: the true counts (``eligible`` None), or only the candidates of
    this step; whether any organization is shown."""
    waiting, queued = view.waiting, view.queued
    anyone = False
    for u in view.members:
        ok = queued[u] > 0 and (eligible is None or eligible(u))
        waiting[u] = queued[u] if ok else 0
        anyone = anyone or ok
    return anyone


def reservation(expected: list[tuple[int, int, int]], free: int, q: int, t: int) -> tuple[int, int]:
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
