"""Where Slurm's backfill departs from EASY's rule: its estimate of a waiting job's start
(docs/slurm.md, sixth departure).

Slurm's backfill scheduler asks the select plugin when the job it reserves for can start
(``select/cons_tres``, Slurm 22.05: ``_will_run_test`` in
``src/plugins/select/cons_common/job_test.c``). The plugin does not take the running jobs
one at a time, as EASY's shadow time does: it takes them in the order of their expected
ends (start plus time limit), in batches. The first batch holds every job that ends by the
first end rounded up to the next multiple of 30 wall-clock seconds, plus 30 s; after each
batch the window doubles (until it reaches the next end); after each batch it tries the
job, and when it fits, the estimate is the *latest* end of the batch. So the reservation
may fall up to a minute (at the first batch; more later) after the earliest time the job
could start, on more free processors than EASY's, and jobs that would delay the job under
EASY's rule backfill before it. At a replay's speed ``v`` the window is ``30 v`` log
seconds (an hour at ``v = 120``).

:func:`willrun_start` is that estimate; :func:`backfill_starts` classifies every job a
replay's Slurm started by backfill: allowed by EASY's rule, allowed only by Slurm's
estimate, or by neither (other causes: the scheduler's latency, its snapshot).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

#: The first window of ``_will_run_test`` (wall-clock seconds): the first batch ends at the
#: first end rounded up to a multiple of it, plus it.
WINDOW = 30


def willrun_start(ends: Sequence[tuple[int, int]], free: int, need: int) -> tuple[int, int] | None:
    """Slurm 22.05's estimate of when a job of ``need`` processors starts, with ``free``
    processors free now and running jobs ending (expected: start plus time limit, Unix
    seconds) as ``ends`` (``(end, processors)`` pairs): ``(start, processors free then)``,
    or ``None`` if it never fits. Processors are one-CPU nodes (the replays' platform)."""
    if need <= free:
        return None
    order = sorted(ends)
    window, i, first = WINDOW, 0, -1
    while i < len(order):
        if first < 0:
            e0 = order[i][0]
            first = e0 + (window - e0 % window)
        while i < len(order):  # one batch
            end, q = order[i]
            free += q
            i += 1
            if i < len(order) and order[i][0] > first + window:
                break
        window *= 2
        while i < len(order) and order[i][0] > first + window:
            window *= 2
        if free >= need:
            return end, free
    return None


def easy_shadow(ends: Sequence[tuple[int, int]], free: int, need: int) -> tuple[int, int] | None:
    """EASY's shadow time and extra processors for the same job (the independent checker's
    :func:`~coopsched.online.checker.reservation`): the first expected end at which it
    fits, and the processors it leaves free then; ``None`` if it never fits."""
    from ..online.checker import reservation

    end, extra = reservation(sorted(ends), free, need)
    return None if end < 0 else (end, extra)


_STARTED = re.compile(r"sched/backfill: _start_job: Started JobId=(\d+)")


def backfill_starts(out: str | Path) -> dict[int, str]:
    """Every job the replay's Slurm started by backfill (``slurmctld.log``, by Slurm job
    id), classified
    against the highest-priority job waiting then that did not fit (the reservation):
    ``easy`` (EASY's rule allows it: it ends by the shadow time or fits in the extra
    processors), ``willrun`` (only Slurm's estimate, :func:`willrun_start`, does),
    ``neither``, or ``free`` (no waiting job was wider than the free processors). Times are
    Slurm's (``sacct_real.txt``, whole seconds); priorities the order Slurm received the
    jobs under ``priority/basic``, the fair-share factor of each job's account at the last
    tick otherwise (the model Slurm's priorities match: :mod:`coopsched.slurm.charged`)."""
    from .validate import account_factors

    out = Path(out)
    meta = json.loads((out / "replay.json").read_text())
    jobs = _capture(out)
    log = (out / "slurmctld.log").read_text(errors="replace")
    started = [
        j for j in map(int, _STARTED.findall(log)) if j in jobs and jobs[j]["start"] is not None
    ]
    position = {j: i for i, j in enumerate(int(x) for x in re.findall(r"JobId=(\d+)", log))}
    fairshare = bool(meta["scheduling"].get("fairshare"))
    times = sorted({jobs[j]["start"] for j in started})
    factors = account_factors(out, times) if fairshare else {}
    M = int(meta["machines"])
    kind: dict[int, str] = {}
    for x in started:
        t = jobs[x]["start"]
        # running at t: started before t (or at t, logged before x) and not ended by t
        run = [
            j
            for j, r in jobs.items()
            if j != x
            and r["start"] is not None
            and (r["start"] < t or (r["start"] == t and position.get(j, 0) < position[x]))
            and (r["end"] is None or r["end"] > t)
        ]
        free = M - sum(jobs[j]["q"] for j in run)
        waiting = [
            j
            for j, r in jobs.items()
            if j != x
            and r["submit"] <= t
            and (
                r["start"] is None
                or r["start"] > t
                or (r["start"] == t and position.get(j, 0) > position[x])
            )
        ]
        f = factors.get(t, {})
        waiting.sort(key=lambda j: (-f.get(jobs[j]["account"], 0.0), jobs[j]["submit"], j))
        head = next((j for j in waiting if jobs[j]["q"] > free), None)
        if head is None:
            kind[x] = "free"
            continue
        ends = [(jobs[j]["start"] + jobs[j]["limit"], jobs[j]["q"]) for j in run]
        need, q, end = jobs[head]["q"], jobs[x]["q"], t + jobs[x]["limit"]
        easy = easy_shadow(ends, free, need)  # before x starts
        slurm = willrun_start(ends, free, need)
        if easy is None or end <= easy[0] or q <= easy[1]:
            kind[x] = "easy"
        elif slurm is None or end <= slurm[0] or q <= slurm[1] - need:
            kind[x] = "willrun"
        else:
            kind[x] = "neither"
    return kind


def backfill_table(folder: str | Path) -> str:
    """One line per replay under ``folder`` declared on one-CPU nodes: how many of the
    jobs its Slurm started by backfill each class of :func:`backfill_starts` holds."""
    kinds = ("easy", "willrun", "neither", "free")
    out = [
        "| replay | started by backfill | EASY allows | only Slurm's estimate allows | neither "
        "| no wider job waiting |",
        "|---|---|---|---|---|---|",
    ]
    for path in sorted(p for p in Path(folder).iterdir() if (p / "replay.json").is_file()):
        meta = json.loads((path / "replay.json").read_text())
        if int(meta["scheduling"].get("nodes", 1)) != int(meta["machines"]):
            continue
        n = Counter(backfill_starts(path).values())
        out.append(
            f"| {path.name} | {sum(n.values())} | " + " | ".join(str(n[k]) for k in kinds) + " |"
        )
    return "\n".join(out)


def _capture(out: Path) -> dict[int, dict]:
    """``sacct_real.txt`` (Slurm's own clock) by job id: account, submit, start, end (None
    when unknown), processors, time limit in seconds."""
    lines = (out / "sacct_real.txt").read_text().splitlines()
    head = lines[0].split("|")
    col = {name: i for i, name in enumerate(head)}
    jobs: dict[int, dict] = {}
    for line in lines[1:]:
        f = line.split("|")
        if not f[col["JobID"]].isdigit():
            continue
        days, _, clock = f[col["Timelimit"]].rpartition("-")
        h, m, s = (int(x) for x in clock.split(":"))
        limit = (int(days or 0) * 24 + h) * 3600 + m * 60 + s

        def when(v: str) -> int | None:
            return int(v) if v.isdigit() else None

        jobs[int(f[col["JobID"]])] = {
            "account": f[col["Account"]],
            "submit": int(f[col["Submit"]]),
            "start": when(f[col["Start"]]),
            "end": when(f[col["End"]]),
            "q": int(f[col["AllocCPUS"]]),
            "limit": limit,
        }
    return jobs


__all__ = ["WINDOW", "backfill_starts", "backfill_table", "easy_shadow", "willrun_start"]
