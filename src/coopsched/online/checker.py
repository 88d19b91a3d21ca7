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
    rule: str
    message: str

    def __str__(self) -> str:
        return f"{self.rule}: {self.message}"


class ScheduleError(AssertionError):
    def __init__(self, violations: list[Violation]):
        self.violations = violations
        super().__init__("; ".join(str(v) for v in violations[:10]))


def check_schedule(schedule: Schedule, *, limit: int = 20) -> list[Violation]:
    """All violations of the invariants above (at most ``limit`` per rule)."""
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
    :mod:`coopsched.online.rigid`): release; no job wider than the coalition's machines
    starts (too wide); never more processors busy than machines (capacity); FIFO within an
    organization (among the jobs that fit); nothing lost; pinned jobs before the others; and
    the greedy property of the rule, after every event's starts: ``none``, not every
    waiting head fits the free machines; ``first-fit``, no waiting head fits; ``easy``, some
    waiting head ``J`` does not fit and no other organization's head could be backfilled
    beside ``J``'s reservation, computed from requested times (so backfilling never delayed
    the reservation). Machines are not identities here: the capacity check is exact for
    identical machines (a valid assignment exists, :meth:`Schedule.allocation`)."""
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
    # FIFO per organization, among the jobs that can run
    fifo = fit[np.lexsort((fit, rel[fit]))]
    for u in coalition:
        q = fifo[org[fifo] == u]
        s = start[q]
        st = s >= 0
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
    # every event time: capacity, pinned, and the rule's greedy property
    ends = start + size
    times = np.unique(np.concatenate([rel[fit], start[started], ends[started]]))
    if horizon is not None:
        times = times[times < horizon]
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
        if not len(waiting):
            continue
        if pinned is not None:
            wp = waiting[pinned[waiting]]  # in FIFO order: the oldest first
            if len(wp) and width[wp[0]] <= free:
                add("pinned", f"at t={t} the pinned job {wp[0]} fits the {free} free machines")
        heads = []
        seen = set()
        for j in waiting.tolist():
            if org[j] not in seen:
                seen.add(int(org[j]))
                heads.append(j)
        heads_a = np.array(heads)
        fits = width[heads_a] <= free
        if rule == "none":
            if fits.all():
                add("greedy", f"at t={t} every waiting head fits the {free} free machines (none)")
        elif rule == "first-fit":
            if fits.any():
                add("greedy", f"at t={t} job {heads_a[fits][0]} fits the {free} free machines")
        else:
            if fits.all():
                add("greedy", f"at t={t} every waiting head fits the {free} free machines (easy)")
                continue
            expected = sorted(
                (max(int(start[j] + req[j]), t + 1), int(width[j])) for j in run.tolist()
            )
            ok = False
            for J in heads_a[~fits].tolist():
                avail, shadow, extra = free, None, 0
                for x, (e, q) in enumerate(expected):
                    avail += q
                    if avail >= width[J] and (x + 1 == len(expected) or expected[x + 1][0] != e):
                        shadow, extra = e, avail - int(width[J])
                        break
                if shadow is None:
                    continue
                if not any(
                    v != J
                    and org[v] != org[J]
                    and fits[i]
                    and (t + req[v] <= shadow or width[v] <= extra)
                    for i, v in enumerate(heads_a.tolist())
                ):
                    ok = True
                    break
            if not ok:
                add(
                    "easy-reservation",
                    f"at t={t} a waiting job could still be backfilled beside every reservation",
                )
    return out
