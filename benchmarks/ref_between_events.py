"""Rigid REF at events against REF at every time moment, on windows of real logs (issue 45
item 2).

    python benchmarks/ref_between_events.py [--traces ../shared/traces] [--ks 3,5]
                                            [--windows 10] [--length 86400] [--out FILE]

The package's rigid REF (``ref_rigid_schedule``) lets a coalition act only at its events:
releases of its members' jobs and completions in its schedule. Skowron and Rzadca's Fig. 1
loops over every time moment. For sequential jobs (and under ``first-fit`` and
``first-fit-queue``) the two give
the same schedule: at a moment without an event nothing that was left waiting can start.
Under ``none``, ``easy`` and ``easy-queue`` a coalition may hold a free machine and a job
that fits while its best-ranked member's job does not; as the members' ``phi - psi`` move
between events, another member may rise to the top and start there, at a moment that is no
event (docs/conventions.md, "REF between events").

:func:`ref_rigid_moments` simulates both readings the same way, every coalition in
lockstep on Python integers: ``every_moment=False`` is the package's reading (checked
against the package on every window here and in ``tests/test_ref_between_events.py``),
``every_moment=True`` the exact one (checked against the time-moment-by-time-moment
reference ``tests/reference.py::brute_ref_rigid(every_moment=True)``). Between a
coalition's events its members' utilities follow Eq. 3's closed form (``psi`` grows by
``W``, the unit parts processed so far, and ``W`` by the running processors), so a
coalition is visited at a moment without an event only while it could start something
(a free machine and a job that fits): then its keys are Eq. (1) on the exact values
(``coopsched.online.shapley.shapley_restricted``).

For each of SDSC-SP2, CTC-SP2, KTH-SP2 and HPC2N as rigid jobs (each job its processors at
once, its requested time; users dealt to ``k`` organizations in turn, machines split
uniformly, seed 1) at each ``k`` of ``--ks``, ``--windows`` windows of ``--length``
seconds starting at random jobs (seed 11, which samples busy periods more often), under the rules ``none`` and ``easy``: whether the two schedules differ, the
share of the window's jobs whose start differs, the largest ``|psi_u(events) -
psi_u(exact)| / phi_u(exact)`` over the organizations, the distance between the two
readings in the paper's fairness measure (``sum_u |psi_u(events) - psi_u(exact)| / p_tot``
of the exact reading, Sec. 7.2) and, for scale, FIFO's distance to the exact reading on the
same window. Nothing is timed.
"""

from __future__ import annotations

import argparse
import heapq
import itertools
import sys
from fractions import Fraction
from pathlib import Path

import numpy as np
from run_all import machine

from coopsched.online.rigid import BACKFILL as RULES
from coopsched.online.rigid import QUEUE_RULES
from coopsched.online.shapley import shapley, shapley_restricted

LOGS = {
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz",
    "HPC2N": "HPC2N-2002-2.2-cln.swf.gz",
}


class _Coalition:
    """One coalition's schedule being built: free machines, its members' queues, running
    jobs, and each member's ``psi`` and ``W`` (unit parts processed) at ``t0`` with ``R``
    processors running since (Eq. 3 between events: ``W`` grows by ``R`` per moment,
    ``psi`` by ``W``)."""

    def __init__(self, mask: int, members: list[int], machines: int) -> None:
        self.mask = mask
        self.members = members
        self.machines = machines
        self.free = machines
        self.queue: dict[int, list[int]] = {u: [] for u in members}
        self.running: list[tuple[int, int]] = []  # heap of (end, job)
        self.started: dict[int, int] = {}
        self.t0 = 0
        self.psi = dict.fromkeys(members, 0)
        self.work = dict.fromkeys(members, 0)
        self.rate = dict.fromkeys(members, 0)
        self.releases: list[int] = []  # member jobs in submission order
        self.next_release = 0
        self.actionable = False

    def advance(self, t: int) -> None:
        d = t - self.t0
        if d:
            for u in self.members:
                r = self.rate[u]
                self.psi[u] += d * self.work[u] + r * d * (d + 1) // 2
                self.work[u] += r * d
            self.t0 = t

    def psi_at(self, u: int, t: int) -> int:
        d = t - self.t0
        r = self.rate[u]
        return self.psi[u] + d * self.work[u] + r * d * (d + 1) // 2

    def value(self, t: int) -> int:
        return sum(self.psi_at(u, t) for u in self.members)


def ref_rigid_moments(
    inst, T: int, rule: str, every_moment: bool, ties: list[tuple[int, int]] | None = None
) -> tuple[list[int], list[int]]:
    """REF's schedule of the grand coalition for rigid jobs under ``rule`` up to ``T`` and
    every coalition's value at ``T`` (index: the coalition's bit mask), exact. With
    ``every_moment`` a coalition acts at every time moment (the paper's Fig. 1), else only
    at its events (the package). The rules as docs/conventions.md states them; no pinned
    jobs. With a list ``ties``, each time ``t`` at which the grand coalition's best key is
    shared by two members or more with a waiting job and the winner starts ``s >= 2`` jobs
    (a tied winner taking several machines) is appended as ``(t, s)``."""
    if rule not in RULES:
        raise ValueError(f"unknown rule {rule!r}")
    if inst.pinned is not None and np.any(inst.pinned):
        raise ValueError("pinned jobs are not supported here")
    k, n = inst.k, inst.n
    full = (1 << k) - 1
    q = [int(x) for x in inst.width]
    p = [int(x) for x in inst.size]
    r = [int(x) for x in inst.release]
    org = [int(x) for x in inst.org]
    req = [-1] * n if inst.requested is None else [int(x) for x in inst.requested]
    if rule in ("easy", "easy-queue") and min(req, default=1) < 1:
        raise ValueError("EASY needs every job's requested time")
    order = sorted(range(n), key=lambda j: (r[j], j))
    rank = {j: i for i, j in enumerate(order)}
    M = [int(x) for x in inst.machines]
    co: dict[int, _Coalition] = {}
    for C in range(1, full + 1):
        members = [u for u in range(k) if C >> u & 1]
        co[C] = _Coalition(C, members, sum(M[u] for u in members))
        co[C].releases = [j for j in order if C >> org[j] & 1]

    def keys(c: _Coalition, cand: list[int], t: int) -> dict[int, Fraction]:
        """``phi_u - psi_u`` in ``c`` at ``t`` (Eq. (1) on the exact values)."""
        C = c.mask
        values = [0] * (full + 1)
        S = C
        while S:
            values[S] = co[S].value(t)
            S = (S - 1) & C
        phi = shapley_restricted(values, C, k)
        return {u: phi[u] - c.psi_at(u, t) for u in cand}

    def start(c: _Coalition, j: int, t: int) -> None:
        u = org[j]
        c.queue[u].remove(j)
        c.started[j] = t
        c.free -= q[j]
        c.rate[u] += q[j]
        heapq.heappush(c.running, (t + p[j], j))

    def act(c: _Coalition, t: int) -> None:
        queue = c.queue
        cand = [u for u in c.members if queue[u]]
        if not cand:
            return
        key = keys(c, cand, t)
        ranked = sorted(cand, key=lambda u: (-key[u], rank[queue[u][0]]))
        if (
            ties is not None
            and c.mask == full
            and len(cand) > 1
            and key[ranked[1]] == key[ranked[0]]
        ):
            before = len(queue[ranked[0]])
            _rule(c, ranked, queue, t)
            if before - len(queue[ranked[0]]) >= 2:
                ties.append((t, before - len(queue[ranked[0]])))
            return
        _rule(c, ranked, queue, t)

    def _rule(c: _Coalition, ranked: list[int], queue: dict[int, list[int]], t: int) -> None:
        if rule == "first-fit":
            while True:
                u = next((x for x in ranked if queue[x] and q[queue[x][0]] <= c.free), None)
                if u is None:
                    return
                start(c, queue[u][0], t)
        if rule == "first-fit-queue":  # the best ranked with a job that fits: its oldest such
            while True:
                fit = {x: [y for y in queue[x] if q[y] <= c.free] for x in ranked}
                u = next((x for x in ranked if fit[x]), None)
                if u is None:
                    return
                start(c, fit[u][0], t)
        while True:
            u = next((x for x in ranked if queue[x]), None)
            if u is None:
                return
            j = queue[u][0]
            if q[j] <= c.free:
                start(c, j, t)
                continue
            if rule == "none":
                return
            # EASY: the shadow time of j from the running jobs' expected ends
            ends = sorted((max(c.started[x] + req[x], t + 1), q[x]) for _, x in c.running)
            avail, shadow, extra = c.free, -1, 0
            for i, (e, w) in enumerate(ends):
                avail += w
                if i + 1 < len(ends) and ends[i + 1][0] == e:
                    continue
                if avail >= q[j]:
                    shadow, extra = e, avail - q[j]
                    break
            assert shadow >= 0
            while True:
                b, h = -1, -1
                for x in ranked:
                    pool = queue[x] if rule == "easy-queue" else queue[x][:1]
                    for y in pool:
                        if y == j or (rule == "easy" and x == u):
                            continue
                        if q[y] <= c.free and (t + req[y] <= shadow or q[y] <= extra):
                            b, h = x, y
                            break
                    if b >= 0:
                        break
                if b < 0:
                    return
                if t + req[h] > shadow:
                    extra -= q[h]
                start(c, h, t)

    def can_start(c: _Coalition) -> bool:
        """Whether anything could start in ``c`` now: a free machine and a job that may
        start (a queue head, or any queued job under the whole-queue rules) that fits. Constant between
        the coalition's events."""
        if c.free <= 0:
            return False
        for u in c.members:
            pool = c.queue[u] if rule in QUEUE_RULES else c.queue[u][:1]
            if any(q[j] <= c.free for j in pool):
                return True
        return False

    t = 0
    while t < T:
        acting = []
        for c in co.values():
            event = False
            while c.running and c.running[0][0] == t:
                _, j = heapq.heappop(c.running)
                c.advance(t)
                c.free += q[j]
                c.rate[org[j]] -= q[j]
                event = True
            while c.next_release < len(c.releases) and r[c.releases[c.next_release]] == t:
                j = c.releases[c.next_release]
                c.next_release += 1
                if q[j] <= c.machines:  # a job too wide never starts here; still an event
                    c.queue[org[j]].append(j)
                event = True
            if event or (every_moment and c.actionable):
                acting.append(c)
        for c in acting:
            c.advance(t)
            act(c, t)
            c.actionable = can_start(c)
        nxt = T
        for c in co.values():
            if c.running:
                nxt = min(nxt, c.running[0][0])
            if c.next_release < len(c.releases):
                nxt = min(nxt, r[c.releases[c.next_release]])
            if every_moment and c.actionable:
                nxt = min(nxt, t + 1)
        t = max(nxt, t + 1)
    grand = co[full].started
    starts = [grand.get(j, -1) for j in range(n)]
    values = [0] + [co[C].value(T) for C in range(1, full + 1)]
    return starts, values


def psi_of(inst, starts: list[int], T: int) -> list[int]:
    """Each organization's ``psi_sp`` at ``T`` (Eq. 3, a job on ``q`` processors as ``q``
    unit parts) and the unit parts processed before ``T`` (last entry)."""
    psi = [0] * inst.k
    work = 0
    for j, s in enumerate(starts):
        if s < 0 or s >= T:
            continue
        size, w = int(inst.size[j]), int(inst.width[j])
        d = min(size, T - s)
        psi[int(inst.org[j])] += w * (d * (T - s) - d * (d - 1) // 2)
        work += w * d
    return psi + [work]


def _window_row(inst, T: int, rule: str) -> dict:
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy
    from coopsched.online.ref.rigid import ref_rigid_schedule

    k = inst.k
    events, v_events = ref_rigid_moments(inst, T, rule, every_moment=False)
    sched, v_pkg = ref_rigid_schedule(inst, T, rule)
    if events != sched.start.tolist() or v_events != list(v_pkg):
        raise AssertionError("the events reading here is not the package's REF")
    exact, v_exact = ref_rigid_moments(inst, T, rule, every_moment=True)
    phi = shapley(v_exact, k)
    *psi_e, work_e = psi_of(inst, events, T)
    *psi_x, work_x = psi_of(inst, exact, T)
    fifo = simulate(inst, get_policy("fifo"), T, backfill=rule).start.tolist()
    *psi_f, _ = psi_of(inst, fifo, T)

    def dist(a: list[int], b: list[int], work: int) -> float:
        return sum(abs(x - y) for x, y in zip(a, b, strict=True)) / work if work else 0.0

    moved = sum(a != b for a, b in zip(events, exact, strict=True))
    rel = [abs(a - b) / float(f) if f else 0.0 for a, b, f in zip(psi_e, psi_x, phi, strict=True)]
    waited = sum(s != int(inst.release[j]) for j, s in enumerate(exact))
    total = sum(psi_x)
    return {
        "jobs": inst.n,
        "waited": waited,
        "differ": events != exact,
        "moved": moved,
        "rel": max(rel),
        "share": sum(abs(a - b) for a, b in zip(psi_e, psi_x, strict=True)) / total
        if total
        else 0.0,
        "dist": dist(psi_e, psi_x, work_x),
        "fifo_e": dist(psi_f, psi_e, work_e),
        "fifo_x": dist(psi_f, psi_x, work_x),
    }


def log_windows(folder: str, logs: dict[str, tuple[str, str]], length: int, count: int, ks):
    """``(log, jobs, k, start, instance)`` for each log of ``logs`` (name: file, ``jobs``
    model) found in ``folder`` (a missing one is announced and skipped), ``count`` windows
    of ``length`` seconds starting at random jobs (seed 11), at each ``k`` of ``ks`` (users
    dealt in turn, machines split uniformly, seed 1)."""
    from coopsched.workloads.prepare import random_windows, trace_to_instance
    from coopsched.workloads.swf import read_swf

    for name, (file, jobs) in logs.items():
        path = Path(folder) / file
        if not path.exists():
            print(f"# {name}: {path} not found, skipped", flush=True)
            continue
        tr = read_swf(path)
        starts = random_windows(tr, length, count, seed=11, by="job")
        for k, w0 in itertools.product(ks, starts):
            inst = trace_to_instance(tr, k=k, start=w0, length=length, jobs=jobs, seed=1)
            yield name, jobs, k, w0, inst


def say(lines: list[str], line: str) -> None:
    """Print ``line`` now and keep it for the results file."""
    lines.append(line)
    print(line, flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--traces", default=str(Path(__file__).resolve().parents[2] / "shared/traces"))
    ap.add_argument("--ks", default="3,5")
    ap.add_argument("--windows", type=int, default=10)
    ap.add_argument("--length", type=int, default=86_400)
    ap.add_argument("--rules", default="none,easy")
    ap.add_argument("--out", default=None)
    args = ap.parse_args()
    lines = [
        f"# benchmarks/ref_between_events.py --ks {args.ks} --windows {args.windows} "
        f"--length {args.length} --rules {args.rules}",
        *machine(),
        "# nothing timed",
        "# per window: jobs; waited (jobs not started at release in the exact reading, or never); differ (the two schedules); moved (jobs whose start differs);",
        "# rel = max_u |psi_u(events) - psi_u(exact)| / phi_u(exact); share = sum_u |psi_u(events)"
        " - psi_u(exact)| / v(grand, exact);",
        "# dist = sum_u |psi_u(events) - psi_u(exact)| / p_tot(exact) (the paper's fairness measure,"
        " s per unit of work, Sec. 7.2);",
        "# fifo_e, fifo_x = FIFO's unfairness (the same measure) against REF at events (the"
        " package) and at every moment (exact)",
        "",
        f"{'log':<10} {'k':>2} {'rule':<6} {'window':>9} {'jobs':>5} {'waited':>6} {'differ':>6} {'moved':>6} "
        f"{'rel':>9} {'share':>9} {'dist':>10} {'fifo_e':>10} {'fifo_x':>10}",
    ]
    print("\n".join(lines), flush=True)
    summary: dict[str, list[dict]] = {}
    rules = args.rules.split(",")
    ks = [int(x) for x in args.ks.split(",")]
    logs = {name: (file, "rigid") for name, file in LOGS.items()}
    for name, _, k, w0, inst in log_windows(args.traces, logs, args.length, args.windows, ks):
        for rule in rules:
            row = _window_row(inst, args.length, rule)
            summary.setdefault(rule, []).append(row)
            say(
                lines,
                f"{name:<10} {k:>2} {rule:<6} {w0:>9} {row['jobs']:>5} {row['waited']:>6} "
                f"{'yes' if row['differ'] else 'no':>6} {row['moved']:>6} "
                f"{row['rel']:>9.2e} {row['share']:>9.2e} {row['dist']:>10.3e} "
                f"{row['fifo_e']:>10.3e} {row['fifo_x']:>10.3e}",
            )
    lines.append("")
    for rule, rows in summary.items():
        jobs = sum(x["jobs"] for x in rows)
        moved = sum(x["moved"] for x in rows)
        busy = [x for x in rows if x["fifo_x"] > 0]
        gap = [abs(x["fifo_x"] - x["fifo_e"]) / x["fifo_x"] for x in busy]
        line = (
            f"# {rule}: {sum(x['differ'] for x in rows)} of {len(rows)} windows differ "
            f"({len(busy)} where FIFO is not REF); {moved} of {jobs} jobs start elsewhere "
            f"({100 * moved / max(jobs, 1):.2f} %); worst rel {max(x['rel'] for x in rows):.3f}; "
            f"worst share {max(x['share'] for x in rows):.4f}; dist mean "
            f"{np.mean([x['dist'] for x in rows]):.1f} s, worst {max(x['dist'] for x in rows):.1f}"
            f" s; FIFO's unfairness mean {np.mean([x['fifo_e'] for x in rows]):.1f} s (events), "
            f"{np.mean([x['fifo_x'] for x in rows]):.1f} s (exact); FIFO's unfairness moves by "
            f"{100 * max(gap, default=0.0):.1f} % at most, {100 * float(np.mean(gap)) if gap else 0.0:.2f}"
            " % on average over those windows"
        )
        say(lines, line)
    if args.out:
        Path(args.out).write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    sys.exit(main())
