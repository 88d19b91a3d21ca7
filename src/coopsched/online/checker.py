"""Schedule checker: the invariants every online schedule must satisfy.

1. every started job starts at or after its release, on a machine of the coalition;
2. no machine runs two jobs at once;
3. FIFO within each organization (its jobs start in release order, input order on ties;
   an unstarted job is never followed by a started one);
4. greedy: at no time before the horizon is a machine free while a job waits;
5. every job of the coalition is accounted for: started, or reported unstarted (only
   possible with a horizon, and only for jobs that could not start before it);
6. pinned jobs first (:attr:`Instance.pinned`, docs/conventions.md §5): no unpinned job starts at
   a time when a pinned job of the coalition is released and still waits.

:func:`check_schedule` returns the violations found (empty when the schedule is valid);
:func:`assert_valid` raises :class:`ScheduleError` with all of them.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .schedule import Schedule


@dataclass(frozen=True)
class Violation:
    """One broken rule of a schedule: the rule's name and what broke it."""

    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


class ScheduleError(AssertionError):
    """A schedule broke rules (``violations``); the message lists the first ten."""

    def __init__(self, violations: list[Violation]):
        self.violations = violations
        super().__init__("; ".join(str(v) for v in violations[:10]))


def check_schedule(schedule: Schedule, *, limit: int = 20) -> list[Violation]:
    """All violations of the invariants above (at most ``limit`` per rule)."""
    from ..workloads.limits import check_type

    check_type(schedule, Schedule, "schedule", "a Schedule")
    inst = schedule.instance
    if inst.rigid:
        return check_rigid(schedule, limit=limit)
    out: list[Violation] = []
    mine = schedule.in_coalition
    idx = np.flatnonzero(mine)
    start, mach = schedule.start, schedule.machine
    size, rel, org = inst.size, inst.release, inst.org
    horizon = schedule.horizon
    owner = inst.machine_owner()
    coalition = set(schedule.coalition)
    started = idx[start[idx] >= 0]
    unstarted = idx[start[idx] < 0]

    # 0. nothing outside the coalition was scheduled
    foreign = np.flatnonzero(~mine & (start >= 0))
    for j in foreign[:limit]:
        out.append(Violation("coalition", f"job {j} of a non-member started"))

    # 1. release and machine ownership
    for j in started[start[started] < rel[started]][:limit]:
        out.append(
            Violation("release", f"job {j} starts at {start[j]} before its release {rel[j]}")
        )
    bad_m = started[(mach[started] < 0) | (mach[started] >= len(owner))]
    for j in bad_m[:limit]:
        out.append(Violation("machine", f"job {j} has no valid machine ({mach[j]})"))
    ok_m = started[(mach[started] >= 0) & (mach[started] < len(owner))]
    for j in ok_m[~np.isin(owner[mach[ok_m]], list(coalition))][:limit]:
        out.append(Violation("machine", f"job {j} runs on machine {mach[j]} of a non-member"))
    if horizon is not None:
        for j in started[start[started] >= horizon][:limit]:
            out.append(
                Violation(
                    "horizon", f"job {j} starts at {start[j]}, at or after the horizon {horizon}"
                )
            )

    # 2. no overlap on a machine
    if len(ok_m):
        o = ok_m[np.lexsort((start[ok_m], mach[ok_m]))]
        same = mach[o][1:] == mach[o][:-1]
        clash = np.flatnonzero(same & (start[o][1:] < start[o][:-1] + size[o][:-1]))
        for c in clash[:limit]:
            a, b = o[c], o[c + 1]
            out.append(
                Violation(
                    "overlap",
                    f"machine {mach[a]} runs job {a} [{start[a]}, {start[a] + size[a]}) and job {b} from {start[b]}",
                )
            )

    # 3. FIFO per organization
    fifo = np.lexsort((np.arange(inst.n), rel))
    count = 0
    for u in coalition:
        q = fifo[org[fifo] == u]
        s = start[q]
        st = s >= 0
        if st.any() and (~st).any():
            first_un = int(np.argmax(~st))
            if st[first_un:].any():
                later = q[first_un + int(np.argmax(st[first_un:]))]
                out.append(
                    Violation(
                        "fifo",
                        f"organization {u}: job {q[first_un]} never starts but the later job {later} does",
                    )
                )
                count += 1
        ss = s[st]
        inv = np.flatnonzero(ss[1:] < ss[:-1])
        for c in inv[: max(0, limit - count)]:
            a, b = q[st][c], q[st][c + 1]
            out.append(
                Violation(
                    "fifo",
                    f"organization {u}: job {b} starts at {start[b]} before the earlier job {a} ({start[a]})",
                )
            )

    # 4. greedy: whenever a job waits, every machine is busy
    M = int(sum(inst.machines[u] for u in coalition))
    if len(idx):
        s_sorted = np.sort(start[started])
        e_sorted = np.sort(start[started] + size[started])
        r_sorted = np.sort(rel[idx])
        points = np.unique(np.concatenate([r_sorted, s_sorted, e_sorted]))
        if horizon is not None:
            points = points[points < horizon]
        released = np.searchsorted(r_sorted, points, side="right")
        begun = np.searchsorted(s_sorted, points, side="right")
        ended = np.searchsorted(e_sorted, points, side="right")
        waiting = released - begun
        busy = begun - ended
        idle_wait = np.flatnonzero((waiting > 0) & (busy < M))
        for c in idle_wait[:limit]:
            out.append(
                Violation(
                    "greedy",
                    f"at t={points[c]} {waiting[c]} job(s) wait while only {busy[c]} of {M} machines are busy",
                )
            )
        over = np.flatnonzero(busy > M)
        for c in over[:limit]:
            out.append(
                Violation("capacity", f"at t={points[c]} {busy[c]} jobs run on {M} machines")
            )

    # 6. pinned jobs start ahead of every other job
    if inst.pinned is not None and len(idx):
        pin = idx[inst.pinned[idx]]
        other = started[~inst.pinned[started]]
        if len(pin) and len(other):
            # a pinned job waits during [release, start) (to the horizon if unstarted)
            wait_end = np.where(start[pin] >= 0, start[pin], np.iinfo(np.int64).max)
            for j in other:
                s = start[j]
                blocked = pin[(rel[pin] <= s) & (wait_end > s)]
                if len(blocked):
                    out.append(
                        Violation(
                            "pinned",
                            f"job {j} starts at {s} while the pinned job {blocked[0]} waits",
                        )
                    )
                    if sum(v.rule == "pinned" for v in out) >= limit:
                        break

    # 5. accounting
    if horizon is None:
        for j in unstarted[:limit]:
            out.append(Violation("lost", f"job {j} never started and there is no horizon"))
    return out


def assert_valid(schedule: Schedule) -> None:
    """Raise :class:`ScheduleError` listing the violations, if any."""
    v = check_schedule(schedule)
    if v:
        raise ScheduleError(v)


def check_rigid(schedule: Schedule, *, limit: int = 20) -> list[Violation]:
    """The invariants of a rigid schedule under its backfilling rule (``info["backfill"]``;
    :mod:`coopsched.online.rigid`, docs/conventions.md "Rigid jobs and backfilling"):
    release; no job wider than the coalition's machines starts (too wide); never more
    processors busy than machines (capacity); FIFO within an organization (among the jobs
    that fit); nothing lost; pinned jobs before the others; starts only at events (a
    release of a coalition's job or a completion); and the rule's greedy property after
    every event's starts:

    * ``first-fit``: no waiting organization's oldest job fits the free machines;
    * ``none`` and ``easy``: with machines free and jobs waiting, the rule stopped on the
      policy's pick, which does not fit. Which organization the policy picked, and in
      which order jobs started at one time, is the policy's choice, invisible in the
      starts: the Python engine records it (``info["blocked"]``, one entry per stop:
      ``(t, job, shadow, extra, backfilled)``), and the checker verifies each entry. The
      job is released, unstarted and its organization's oldest waiting job, and does not
      fit the machines left by the other starts at ``t``. Under ``easy`` the checker
      recomputes the reservation from requested times only (the running jobs' expected
      ends ``max(start + requested, t + 1)``: a job past its request is expected at the
      next step, the repair of docs/conventions.md) and verifies that every backfilled
      job fits, belongs to another organization and ends by its requested time no later
      than the shadow time or uses the extra machines (consuming them), so that
      backfilling never delays the reservation; and that no other organization's oldest
      job could still be backfilled. Without records (a schedule built by hand, or by the
      compiled engine) the checker can only verify the weaker properties it can read from
      the starts: under ``none`` some waiting organization's oldest job does not fit;
      under ``easy`` some such job ``J`` does not fit and no other organization's oldest
      job could be backfilled beside ``J``'s reservation computed from the final state.
    * ``easy-queue`` (EASY over the whole queue): as ``easy``, but the backfilled jobs are
      any queued jobs but ``J`` (``J``'s organization's later jobs included), each its
      organization's oldest candidate when it started, and no queued job but ``J`` could
      still be backfilled. FIFO within an organization no longer holds: a job may start
      before an older one of its organization only as a recorded backfill.
    * ``first-fit-queue`` (first-fit over the whole queue): no waiting job fits the free
      machines; a job may start before an older one of its organization (one that did not
      fit then, which the greedy property checks at the event).

    Machines are not identities here: the capacity check is exact for identical machines
    (a valid assignment exists, :meth:`Schedule.allocation`)."""
    inst = schedule.instance
    out: list[Violation] = []
    rule = schedule.info.get("backfill", "first-fit")
    coalition = list(schedule.coalition)
    mine = schedule.in_coalition
    M = int(sum(int(inst.machines[u]) for u in coalition))
    start, rel, size, org = schedule.start, inst.release, inst.size, inst.org
    width = inst.width
    req = inst.requested if inst.requested is not None else np.full(inst.n, -1, np.int64)
    horizon = schedule.horizon
    idx = np.flatnonzero(mine)
    fit = idx[width[idx] <= M]
    wide = idx[width[idx] > M]

    def add(rule_name: str, message: str) -> bool:
        out.append(Violation(rule_name, message))
        return sum(v.rule == rule_name for v in out) >= limit

    for j in np.flatnonzero(~mine & (start >= 0))[:limit]:
        add("coalition", f"job {j} of a non-member started")
    for j in wide[start[wide] >= 0][:limit]:
        add("too-wide", f"job {j} on {width[j]} processors started on {M} machines")
    started = fit[start[fit] >= 0]
    for j in started[start[started] < rel[started]][:limit]:
        add("release", f"job {j} starts at {start[j]} before its release {rel[j]}")
    if horizon is not None:
        for j in started[start[started] >= horizon][:limit]:
            add("horizon", f"job {j} starts at {start[j]}, at or after the horizon {horizon}")
    # FIFO per organization, among the jobs that can run (easy-queue: but for backfills,
    # which a record must then show: ``jumped``, checked with the records below)
    whole = rule in ("easy-queue", "first-fit-queue")
    jumped: dict[int, int] = {}  # job -> its start, for a job started before an older one
    fifo = fit[np.lexsort((fit, rel[fit]))]
    rank = np.empty(inst.n, np.int64)
    rank[fifo] = np.arange(len(fifo))
    for u in coalition:
        q = fifo[org[fifo] == u]
        s = start[q]
        st = s >= 0
        if whole:  # a job is jumped when an older job of u starts later, or never
            latest = -1.0
            for j, sj in zip(q.tolist(), s.tolist(), strict=True):
                if sj >= 0 and latest > sj:
                    jumped[j] = sj
                latest = max(latest, sj if sj >= 0 else np.inf)
            continue
        bad = np.flatnonzero(~st[:-1] & st[1:]) if len(q) > 1 else np.zeros(0, np.int64)
        for c in bad[:1]:
            add(
                "fifo",
                f"organization {u}: job {q[c]} never starts but the later job {q[c + 1]} does",
            )
        ss = s[st]
        for c in np.flatnonzero(ss[1:] < ss[:-1])[:limit]:
            a, b = q[st][c], q[st][c + 1]
            if add(
                "fifo",
                f"organization {u}: job {b} starts at {start[b]} before job {a} ({start[a]})",
            ):
                break
    if horizon is None:
        for j in fit[start[fit] < 0][:limit]:
            add("lost", f"job {j} never started and there is no horizon")
    # the engine acts at events only: releases of the coalition's jobs, completions
    ends = start + size
    times = np.unique(np.concatenate([rel[idx], ends[started]]))
    if horizon is not None:
        times = times[times < horizon]
    for j in started[~np.isin(start[started], times)][:limit]:
        add("event", f"job {j} starts at {start[j]}, neither a release nor a completion")
    times = np.unique(np.concatenate([times, start[started]]))
    records = schedule.info.get("blocked")
    blocked: dict[int, tuple] = {}
    if rule in ("none", "easy", "easy-queue") and records is not None:
        for rec in records:
            if int(rec[0]) in blocked:
                add("blocked", f"two records of where the rule stopped at t={rec[0]}")
            blocked[int(rec[0])] = tuple(rec)
        for t0 in sorted(set(blocked) - set(times.tolist()))[:limit]:
            add("blocked", f"a record of where the rule stopped at t={t0}, not an event")
        for j, t0 in list(jumped.items())[:limit]:  # easy-queue: out of order only backfilled
            rec = blocked.get(int(t0))
            if rec is None or j not in [int(v) for v in rec[4]]:
                add(
                    "fifo",
                    f"organization {org[j]}: job {j} starts at {t0} before an older job of "
                    "its organization, and not as a backfill",
                )

    def stop(rec: tuple, t: int, waiting: np.ndarray) -> None:
        """One record of ``info["blocked"]`` checked against the starts (:func:`check_rigid`)."""
        _, J, shadow, extra, filled = rec
        J = int(J)
        filled = [int(v) for v in filled]
        if not len(waiting) or J not in waiting.tolist():
            add("blocked", f"at t={t} the recorded job {J} is not waiting")
            return
        ahead = fifo[(org[fifo] == org[J]) & (rank[fifo] < rank[J])]
        if ((start[ahead] < 0) | (start[ahead] > t)).any():
            add("blocked", f"at t={t} the recorded job {J} is not its organization's oldest")
        now = started[start[started] == t]
        if any(
            v not in now.tolist() or (v == J if whole else org[v] == org[J]) for v in filled
        ) or (rule == "none" and filled):
            add(
                "blocked",
                f"at t={t} the backfilled jobs {filled} did not start then, or "
                + (f"include job {J}" if whole else f"belong to job {J}'s organization"),
            )
            return
        before = started[(start[started] < t) & (ends[started] > t)]
        first = [j for j in now.tolist() if j not in filled]  # started before the stop
        free = M - int(width[before].sum()) - int(width[first].sum())
        if width[J] <= free:
            add("greedy", f"at t={t} the chosen job {J} fits the {free} free machines ({rule})")
            return
        if rule == "none":
            return
        expected = sorted(
            (max(int(start[j] + req[j]), t + 1), int(width[j])) for j in [*before.tolist(), *first]
        )
        S, E = reservation(expected, free, int(width[J]))
        if (int(shadow), int(extra)) != (S, E):
            add(
                "easy-reservation",
                f"at t={t} job {J}'s reservation is recorded as shadow "
                f"{shadow}, extra {extra}; requested times give {S}, {E}",
            )
        done = set(first)

        def candidate(j: int) -> bool:
            """Whether the waiting job ``j`` may be backfilled now (free, S and E as now)."""
            return j != J and width[j] <= free and (t + req[j] <= S or width[j] <= E)

        for v in filled:
            older = fifo[(org[fifo] == org[v]) & (rank[fifo] < rank[v])]
            if whole:  # its organization's oldest candidate: no older one was waiting
                a = next(
                    (
                        a
                        for a in older.tolist()
                        if rel[a] <= t
                        and (start[a] < 0 or start[a] > t or (start[a] == t and a not in done))
                        and candidate(a)
                    ),
                    None,
                )
                if a is not None:
                    add(
                        "fifo",
                        f"at t={t} job {v} is backfilled before the older candidate {a} of "
                        "its organization",
                    )
            elif any(start[a] == t and a not in done for a in older.tolist()):
                add(
                    "fifo",
                    f"at t={t} job {v} is backfilled before an older job of its organization",
                )
            done.add(v)
            if width[v] > free:
                add("capacity", f"at t={t} the backfilled job {v} does not fit")
            if t + req[v] <= S:
                pass
            elif width[v] <= E:
                E -= int(width[v])
            else:
                add(
                    "easy-reservation",
                    f"at t={t} job {v} (requested {req[v]}, {width[v]} "
                    f"processors) is backfilled past job {J}'s shadow time {S} without spare "
                    f"machines ({E} left): it delays the reservation",
                )
            free -= int(width[v])
        heads: dict[int, int] = {}
        for j in waiting.tolist():
            if whole:  # every queued job is a candidate
                heads[j] = j
            else:
                heads.setdefault(int(org[j]), j)
        for u, h in heads.items():
            if (whole or u != org[J]) and candidate(h):
                add(
                    "easy-reservation",
                    f"at t={t} job {h} could still be backfilled beside job "
                    f"{J}'s reservation (shadow {S}, {E} extra machines)",
                )
                break

    pinned = inst.pinned
    for t in times.tolist():
        run = started[(start[started] <= t) & (ends[started] > t)]
        busy = int(width[run].sum())
        if busy > M:
            if add("capacity", f"at t={t} {busy} processors are busy on {M} machines"):
                break
            continue
        free = M - busy
        waiting = fifo[(rel[fifo] <= t) & ((start[fifo] < 0) | (start[fifo] > t))]
        rec = blocked.pop(t, None)
        if not len(waiting):
            if rec is not None:
                add("blocked", f"at t={t} the rule recorded a stop, but no job waits")
            continue
        if pinned is not None:
            wp = waiting[pinned[waiting]]  # in FIFO order: the oldest first
            if len(wp) and width[wp[0]] <= free:
                add("pinned", f"at t={t} the pinned job {wp[0]} fits the {free} free machines")
        if rec is not None:
            stop(rec, t, waiting)
            continue
        heads = []
        seen = set()
        for j in waiting.tolist():
            if org[j] not in seen:
                seen.add(int(org[j]))
                heads.append(j)
        heads_a = np.array(heads)
        fits = width[heads_a] <= free
        if records is not None and rule in ("none", "easy", "easy-queue") and free > 0:
            add(
                "blocked",
                f"at t={t} {free} machines are free, jobs wait, and the rule recorded no stop",
            )
        elif rule == "none":
            if fits.all():
                add("greedy", f"at t={t} every waiting head fits the {free} free machines (none)")
        elif rule == "first-fit":
            if fits.any():
                add("greedy", f"at t={t} job {heads_a[fits][0]} fits the {free} free machines")
        elif rule == "first-fit-queue":
            fit_now = waiting[width[waiting] <= free]
            if len(fit_now):
                add("greedy", f"at t={t} job {fit_now[0]} fits the {free} free machines")
        else:
            if fits.all():
                add("greedy", f"at t={t} every waiting head fits the {free} free machines (easy)")
                continue
            expected = sorted(
                (max(int(start[j] + req[j]), t + 1), int(width[j])) for j in run.tolist()
            )
            ok = False
            pool = waiting if whole else heads_a  # easy-queue: every queued job may backfill
            for J in heads_a[~fits].tolist():
                shadow, extra = reservation(expected, free, int(width[J]))
                if not any(
                    v != J
                    and (whole or org[v] != org[J])
                    and width[v] <= free
                    and (t + req[v] <= shadow or width[v] <= extra)
                    for v in pool.tolist()
                ):
                    ok = True
                    break
            if not ok:
                add(
                    "easy-reservation",
                    f"at t={t} a waiting job could still be backfilled beside every reservation",
                )
    return out


def reservation(expected: list[tuple[int, int]], free: int, q: int) -> tuple[int, int]:
    """EASY's shadow time and extra machines for a job on ``q`` processors, from the
    running jobs' ``(expected end, processors)`` sorted by end, and ``free`` machines: the
    first expected end at which enough machines are free, counting every job ending then
    (Mu'alem & Feitelson 2001, as stated in docs/conventions.md)."""
    avail, x, n = free, 0, len(expected)
    while x < n:
        e = expected[x][0]
        while x < n and expected[x][0] == e:
            avail += expected[x][1]
            x += 1
        if avail >= q:
            return e, avail - q
    return -1, -1  # never: a queued job is never wider than the machines
