"""coopsched beside AccaSim on the same SWF: identical start times, then in-process and
whole-process times.

    pip install accasim        # into your own environment; not a coopsched dependency
    python benchmarks/peer_accasim.py --traces DIR [--log HPC2N-2002-2.2-cln.swf.gz]
        [--sizes 5000,20000,100000] [--repeat 3] [--fifo-jobs 5000] [--explain-max 20000]

AccaSim (Galleguillos et al., https://github.com/cgalleguillosm/accasim, 1.1.3) is an HPC
workload-management simulator in pure Python. Two comparisons, each checked job by job
before anything is timed:

**1. Sequential FIFO** (``--fifo-jobs`` synthetic one-processor jobs, Poisson arrivals at
``--load`` times the capacity of ``--machines`` single-core nodes, log-normal run times,
seeded): AccaSim's ``FirstInFirstOut`` dispatcher with the ``FirstFit`` allocator against
coopsched's ``fifo`` with one organization. The two give the same start to every job.

**2. Rigid FIFO + EASY** on the first ``N`` jobs (each of ``--sizes``) of a parallel PWA log
in ``--traces`` (default HPC2N-2002, 240 processors, 202,871 usable jobs, so that one log gives
every size). The workload both simulators read: every log job with a run time >= 1, a
requested time (field 9) >= 1 and at most the log's ``MaxProcs`` processors (the others are
counted and left out: AccaSim rejects wider jobs, coopsched never starts them, a job without
a requested time has no EASY meaning in AccaSim), sorted by submit time and renumbered;
processors written in both field 5 and field 8 (coopsched reads field 5 first, AccaSim
field 8 first), memory fields -1. Jobs that outlive their requested time are kept (the run
time stands in both) and counted. AccaSim: ``MaxProcs`` nodes of one core each and no
other resource (a job on ``q`` processors asks ``q`` nodes of one core: no node packing;
with a ``mem`` resource, its ``EASYBackfilling`` divides by the zero memory request of a
job without one), ``EASYBackfilling(FirstFit())``. coopsched: ``simulate(inst, fifo,
engine="compiled", backfill="easy")``.

Semantics (read from AccaSim's source, ``base/scheduler_class.py``,
``base/allocator_class.py``, ``base/event_class.py``, ``base/simulator_class.py``):

* Shared: events at submit times and at (real) completions; at a time, completions first,
  then submissions, then the dispatcher; the queue in submit order (ties: file order), as
  coopsched's FIFO; integer seconds; requested time (field 9) is AccaSim's
  ``expected_duration``, read by its reservation only; the run time stands when a job
  outlives it.
* **Candidates.** coopsched backfills only each organization's oldest waiting job
  (docs/conventions.md, rigid jobs); AccaSim every queued job. Made comparable by giving
  coopsched organizations in which no two jobs ever wait at the same time (then every
  waiting job is its organization's oldest): jobs in submit order take the first
  organization whose previous job has started by their submit time, in coopsched's own
  schedule, recomputed until the schedule it yields keeps that property (two or three
  rounds; the result is the schedule of one organization per job, which is checked at the
  sizes up to ``--explain-max``). The organizations are written as the SWF's user field
  (field 12; AccaSim ignores it) for the whole-process run, and are part of the workload
  (their computation is not timed; it costs a few of coopsched's simulations). FIFO over
  organizations then picks the oldest waiting job, as AccaSim's queue order does. (With
  literally one organization per job the schedule is the same, but coopsched's engine,
  built for tens of organizations, scans every organization at each pick: its cost grows
  as jobs x organizations.)
* **A. The reservation is not protected in AccaSim.** Its EASY calls the allocator with
  ``reserved_nodes=[]``, so no node is ever withheld: every queued job that fits now
  starts, in queue order, even one that ends after the reservation and takes the machines
  reserved for the blocked job. coopsched starts such a job only if it ends by its
  requested time no later than the shadow time or fits in the extra machines.
* **B. The blocked job is held until its reservation time in AccaSim.** The reservation
  time ``R`` (the first expected end, start + requested time, of the running jobs at which
  the blocked job fits) is computed once, when the job blocks; until an event at or after
  ``R`` the blocked job is not even tried, although it may fit earlier (running jobs end
  before their requested time). coopsched tries it at every event and starts it as soon as
  it fits.
* **C. The reservation is not repaired in AccaSim.** ``R`` is never recomputed: a job
  expected before ``R`` that outlives its request, or an unprotected backfill (A), leaves
  ``R`` in the past; the blocked job is then tried first at every later event and
  everything else that fits starts. coopsched recomputes the shadow time at every event
  (an overdue job expected at ``t + 1``).
* AccaSim advances its clock by one second when no event is left (a blocked job held
  with nothing running waits until ``R``); coopsched needs no such step.

So the two differ by A, B and C only. The script proves it job by job at each size up to
``--explain-max``: a short reference of AccaSim's ``EASYBackfilling`` as read above must give
AccaSim's start for every job, and the same reference without A, B and C (textbook EASY)
coopsched's; it then lists, in AccaSim's own run, every decision where A or B departs from
the textbook rule (a backfill the reservation forbids; a blocked job that fits but is
held, and every job started while it is held), checks that the two schedules are identical before the first such decision, and
prints the first differing jobs with the reason. Every later difference follows from it
(the machines' state differs from then on).

A workload on which the two agree exactly: the same jobs with requested time := run time
(exact requests). Then B and C cannot happen (no job ends before or after its expected
end, so a blocked job cannot fit before its reservation time), and AccaSim's EASY is list
scheduling without any reservation (A alone): coopsched's ``fifo`` with
``backfill="first-fit"`` gives every job the same start (printed, with coopsched's EASY on
the same jobs for contrast). No real log has exact requests, and A differs from EASY on
every log, so identical starts for FIFO + EASY on both sides hold on no realistic workload;
the references above are the job-by-job account instead.

Timing. Printed per size: CPU and wall seconds (best of ``--repeat``) of

* in-process -- coopsched: ``simulate`` alone (compiled engine, kernels loaded);
  AccaSim: building the simulator and running it (it reads the SWF while simulating);
  both with output files off;
* whole process -- a fresh interpreter each: ``python -c`` reading the SWF with coopsched's
  reader, building the instance and simulating (start-up, imports and numba's cached
  kernels included), and ``python -c`` running AccaSim;

then the ratios AccaSim / coopsched, and the machine and its load average. Times on a busy
machine mean little: run it idle. The sequential FIFO comparison prints the same rows for
its one size (plus coopsched's Python engine, read + simulate, and the ``coopsched
simulate`` command line).

Compatibility shim: AccaSim 1.1.3 does ``from collections import Mapping``, which Python
3.10 removed; the script sets ``collections.Mapping = collections.abc.Mapping`` before
importing it (in-process and in every AccaSim subprocess). Nothing else is patched.
"""

from __future__ import annotations

import argparse
import heapq
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import numpy as np

SHIM = "import collections, collections.abc\ncollections.Mapping = collections.abc.Mapping\n"

ACCASIM_RUN = SHIM + (
    "from accasim.base.simulator_class import Simulator\n"
    "from accasim.base.scheduler_class import FirstInFirstOut, EASYBackfilling\n"
    "from accasim.base.allocator_class import FirstFit\n"
    "import sys\n"
    "swf, cfg, res, plan, rule = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == '1', sys.argv[5]\n"
    "disp = EASYBackfilling(FirstFit()) if rule == 'easy' else FirstInFirstOut(FirstFit())\n"
    "sim = Simulator(swf, cfg, disp, RESULTS_FOLDER_PATH=res,\n"
    "                scheduling_output=plan, statistics_output=False, show_statistics=False,\n"
    "                LOG_LEVEL='WARNING')\n"
    "sim.start_simulation()\n"
)

# the whole-process coopsched run of the rigid comparison: organizations in field 12
COOPSCHED_RUN = (
    "import sys\n"
    "from coopsched.online.engine import simulate\n"
    "from coopsched.online.policies import get_policy\n"
    "from coopsched.workloads.instance import Instance, Organization\n"
    "from coopsched.workloads.swf import read_swf\n"
    "j = read_swf(sys.argv[1]).jobs\n"
    "org = j['user'].to_numpy() - 1\n"
    "orgs = [Organization(f'o{u}', int(sys.argv[2]) if u == 0 else 0)"
    " for u in range(int(org.max()) + 1)]\n"
    "inst = Instance(orgs, org, j['submit'].to_numpy(), j['run_time'].to_numpy(),\n"
    "                processors=j['processors'].to_numpy(), requested=j['req_time'].to_numpy())\n"
    "simulate(inst, get_policy('fifo'), engine='compiled', backfill='easy')\n"
)


def write_workload(folder: Path, n: int, machines: int, seed: int, load: float = 0.8):
    """The synthetic SWF, AccaSim's system file (``machines`` nodes of one core) and the
    jobs' ``{number: (submit, run time)}``."""
    import numpy as np
    import pandas as pd

    from coopsched.workloads.swf import write_swf

    rng = np.random.default_rng(seed)
    run = np.maximum(1, rng.lognormal(7.0, 1.5, n)).astype(np.int64)
    # arrivals at ``load`` times the platform's capacity (above 1, queues keep growing)
    gap = float(np.exp(7.0 + 1.5**2 / 2)) / (load * machines)
    submit = np.cumsum(rng.exponential(gap, n)).astype(np.int64)
    df = pd.DataFrame(
        {
            "job": np.arange(1, n + 1),
            "submit": submit,
            "wait": 0,
            "run_time": run,
            "alloc_procs": 1,
            "req_procs": 1,
            "req_time": run,
            "status": 1,
            "user": rng.integers(1, 30, n),
        }
    )
    swf = folder / "syn.swf"
    write_swf(swf, df, {"MaxProcs": str(machines), "MaxNodes": str(machines)})
    cfg = folder / "sys.json"
    cfg.write_text(
        json.dumps({"groups": {"n": {"core": 1, "mem": 1}}, "resources": {"n": machines}})
    )
    jobs = dict(
        zip(df["job"].tolist(), zip(submit.tolist(), run.tolist(), strict=True), strict=True)
    )
    return swf, cfg, jobs


def coopsched_fifo(swf: Path):
    """(instance, FIFO schedule) -- the in-process coopsched run."""
    from coopsched.online.policies import get_policy
    from coopsched.workloads.prepare import trace_to_instance
    from coopsched.workloads.swf import read_swf

    inst = trace_to_instance(read_swf(swf), k=1, seed=0)
    return inst, get_policy("fifo").run(inst)


def accasim_waits(swf: Path, cfg: Path, folder: Path, rule: str) -> dict[int, int]:
    """Wait (start - submit, seconds) of every job, by SWF job number, in AccaSim's
    dispatching plan (both times read from the plan, so its time zone does not matter)."""
    res = folder / f"plan-{rule}"
    shutil.rmtree(res, ignore_errors=True)
    subprocess.run(
        [sys.executable, "-c", ACCASIM_RUN, str(swf), str(cfg), str(res), "1", rule],
        check=True,
        capture_output=True,
    )

    def stamp(text: str) -> int:
        return int(datetime.strptime(text, "%Y-%m-%d %H:%M:%S").timestamp())

    waits = {}
    for line in (res / f"sched-{swf.name}").read_text().splitlines():
        job_id, _, rest = line.split(";", 2)
        parts = rest.split("__")
        waits[int(job_id)] = stamp(parts[2].split(";")[0]) - stamp(parts[0])
    return waits


def best(fn, repeat: int) -> tuple[float, float]:
    """Best (CPU, wall) seconds of ``fn()`` over ``repeat`` runs."""
    cpu = wall = float("inf")
    for _ in range(repeat):
        c0, w0 = time.process_time(), time.perf_counter()
        fn()
        cpu = min(cpu, time.process_time() - c0)
        wall = min(wall, time.perf_counter() - w0)
    return cpu, wall


def best_process(argv: list[str], repeat: int) -> tuple[float, float]:
    """Best (CPU of the child, wall) seconds of running ``argv`` as a fresh process."""
    cpu = wall = float("inf")
    for _ in range(repeat):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        w0 = time.perf_counter()
        subprocess.run(argv, check=True, capture_output=True)
        w = time.perf_counter() - w0
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        c = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        cpu, wall = min(cpu, c), min(wall, w)
    return cpu, wall


def machine() -> str:
    """The machine and its load, for the printed table."""
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from importlib.metadata import version

    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return (
        f"machine: {cpu}, {os.cpu_count()} logical CPUs, load average {load}; "
        f"Python {platform.python_version()}, numba {version('numba')}, "
        f"AccaSim {version('accasim')}"
    )


# ---------------------------------------------------------------- the rigid workload
def rigid_workload(log: Path, n: int, folder: Path):
    """The first ``n`` usable jobs of ``log`` (module docstring) as a dict of arrays
    ``rel`` (submit - first submit), ``run``, ``q``, ``req``, ``submit``, with ``M`` (the
    log's processors) and the counts of jobs left out."""
    from coopsched.workloads.swf import read_swf

    trace = read_swf(log)
    M = int(trace.max_procs)
    df = trace.jobs
    left: dict[str, int] = {}
    wide = df["processors"].to_numpy() > M
    noreq = df["req_time"].to_numpy() < 1
    df = df.loc[~wide & ~noreq]
    df = df.iloc[np.argsort(df["submit"].to_numpy(), kind="stable")].head(n)
    # count what was left out among the jobs up to the last one kept
    last = int(df["line"].max())
    upto = trace.jobs["line"].to_numpy() <= last
    left[f"wider than {M}"] = int((wide & upto).sum())
    left["without a requested time"] = int((noreq & ~wide & upto).sum())
    left["with run time <= 0 or no processors (in the whole log)"] = trace.n_dropped
    submit = df["submit"].to_numpy().astype(np.int64)
    w = {
        "submit": submit,
        "rel": submit - submit[0],
        "run": df["run_time"].to_numpy().astype(np.int64),
        "q": df["processors"].to_numpy().astype(np.int64),
        "req": df["req_time"].to_numpy().astype(np.int64),
    }
    return w, M, left


def write_rigid_swf(
    folder: Path, w: dict, M: int, org: np.ndarray, tag: str = ""
) -> tuple[Path, Path]:
    """The workload as an SWF (organization + 1 in the user field) and AccaSim's system file."""
    import pandas as pd

    from coopsched.workloads.swf import write_swf

    n = len(w["run"])
    df = pd.DataFrame(
        {
            "job": np.arange(1, n + 1),
            "submit": w["submit"],
            "wait": -1,
            "run_time": w["run"],
            "alloc_procs": w["q"],
            "req_procs": w["q"],
            "req_time": w["req"],
            "status": 1,
            "user": org + 1,
        }
    )
    swf = folder / f"rigid-{n}{tag}.swf"
    write_swf(swf, df, {"MaxProcs": str(M), "MaxNodes": str(M)})
    cfg = folder / "rigid-sys.json"
    cfg.write_text(json.dumps({"groups": {"n": {"core": 1}}, "resources": {"n": M}}))
    return swf, cfg


def instance(w: dict, M: int, org: np.ndarray):
    from coopsched.workloads.instance import Instance, Organization

    k = int(org.max()) + 1
    orgs = [Organization(f"o{u}", M if u == 0 else 0) for u in range(k)]
    return Instance(orgs, org, w["rel"], w["run"], processors=w["q"], requested=w["req"])


def easy(inst, rule: str = "easy"):
    """coopsched's FIFO schedule (starts) under the backfilling ``rule``, compiled engine."""
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    return simulate(inst, get_policy("fifo"), engine="compiled", backfill=rule).start


def organizations(w: dict, M: int, rule: str = "easy", rounds: int = 10) -> tuple[np.ndarray, int]:
    """Organizations in which no two jobs wait at the same time in coopsched's EASY schedule
    (module docstring), and the rounds it took: each round deals the jobs, in submit order,
    to the first organization whose previous job started by their submit time in the last
    schedule, and reruns. Falls back to one organization per job."""
    rel = w["rel"]
    n = len(rel)
    start = rel.copy()  # round 0: every job starts at its submit time
    for r in range(1, rounds + 1):
        heap: list[tuple[int, int]] = []
        org = np.empty(n, np.int64)
        k = 0
        for j in range(n):  # jobs are in submit order
            if heap and heap[0][0] <= rel[j]:
                _, u = heapq.heappop(heap)
            else:
                u, k = k, k + 1
            org[j] = u
            heapq.heappush(heap, (int(max(start[j], rel[j])), u))
        start = easy(instance(w, M, org), rule)
        if consistent(org, rel, start):
            return org, r
    return np.arange(n, dtype=np.int64), 0


def consistent(org: np.ndarray, rel: np.ndarray, start: np.ndarray) -> bool:
    """Whether each organization's job starts by its next job's submit time."""
    o = np.lexsort((np.arange(len(rel)), org))
    same = org[o][1:] == org[o][:-1]
    return bool(np.all(start[o][:-1][same] <= rel[o][1:][same]))


# ---------------------------------------------------------------- the reference
def reference(w: dict, M: int, accasim: bool):
    """Start times under AccaSim's ``EASYBackfilling`` as read from its source
    (``accasim=True``) or under textbook EASY (no A, B, C; module docstring), and, for
    AccaSim, its decisions that depart from the textbook rule: ``(t, job, kind, text)``."""
    rel, run, q, req = (w[x].tolist() for x in ("rel", "run", "q", "req"))
    n = len(rel)
    start = [-1] * n
    ends: list[tuple[int, int]] = []  # (real end, job)
    running: dict[int, int] = {}  # job -> expected end (start + requested)
    queue: list[int] = []
    dev: list[tuple[int, int, str, str]] = []
    held_noted: set[int] = set()
    free = M
    blocked, R = -1, 0  # AccaSim: the blocked job and its reservation time
    INF = float("inf")

    def begin(j: int, t: int) -> None:
        nonlocal free
        free -= q[j]
        start[j] = t
        heapq.heappush(ends, (t + run[j], j))
        running[j] = t + req[j]

    def shadow(h: int, t: int) -> tuple[int, int]:
        """Textbook EASY: the first expected end (overdue: t + 1) at which h fits, counting
        every job expected then, and the machines left over (h fits now: ``t``)."""
        if q[h] <= free:
            return t, free - q[h]
        exp = sorted((max(e, t + 1), q[j]) for j, e in running.items())
        avail = free
        for x, (e, qq) in enumerate(exp):
            avail += qq
            if avail >= q[h] and (x + 1 == len(exp) or exp[x + 1][0] != e):
                return e, avail - q[h]
        raise AssertionError("a queued job wider than the machine")

    def slot(h: int) -> int:
        """AccaSim's reservation time: the first expected end (not clamped) at which h fits."""
        avail = free
        for e, qq in sorted((e, q[j]) for j, e in running.items()):
            avail += qq
            if avail >= q[h]:
                return e
        raise AssertionError("a queued job wider than the machine")

    def fill(cands: list[int], t: int, h: int) -> list[int]:
        """AccaSim's backfill: every candidate that fits starts, in order; notes those the
        textbook reservation of h forbids, or all it starts while h fits but is held (B)."""
        held = q[h] <= free
        S, extra = shadow(h, t)
        left = []
        for j in cands:
            if q[j] > free:
                left.append(j)
                continue
            if held:
                dev.append(
                    (
                        t,
                        j,
                        "B+",
                        f"AccaSim started it at {t} while it holds blocked job {h + 1}, which "
                        f"fits, until {R} (textbook EASY starts job {h + 1} first)",
                    )
                )
            elif t + req[j] <= S:
                pass
            elif q[j] <= extra:
                extra -= q[j]
            else:
                dev.append(
                    (
                        t,
                        j,
                        "A",
                        f"AccaSim backfilled it at {t} on {q[j]} processors until {t + req[j]} "
                        f"(requested), past the shadow time {S} of blocked job {h + 1} with "
                        f"{extra} extra machines: its reservation is not protected",
                    )
                )
            begin(j, t)
        return left

    i = 0
    t = 0
    while i < n or ends or queue:
        nxt = min(rel[i] if i < n else INF, ends[0][0] if ends else INF)
        if nxt == INF:  # AccaSim steps its clock by one second until R
            nxt = max(R, t + 1)
        t = int(nxt)
        while ends and ends[0][0] == t:
            _, j = heapq.heappop(ends)
            free += q[j]
            del running[j]
        while i < n and rel[i] == t:
            queue.append(i)
            i += 1
        if not queue:
            continue
        if not accasim:  # textbook EASY = coopsched's rule, one job per organization
            while queue and q[queue[0]] <= free:
                begin(queue.pop(0), t)
            if queue:
                S, extra = shadow(queue[0], t)
                left = [queue[0]]
                for j in queue[1:]:
                    if q[j] <= free and (t + req[j] <= S or q[j] <= extra):
                        if t + req[j] > S:
                            extra -= q[j]
                        begin(j, t)
                    else:
                        left.append(j)
                queue = left
            continue
        rest = queue
        reached = blocked >= 0 and t >= R
        new: list[int] = []
        if reached:
            b, rest = rest[0], rest[1:]
            if q[b] <= free:
                begin(b, t)
                blocked = -1
            else:
                new.append(b)
        if blocked < 0:
            for x, j in enumerate(rest):
                if q[j] <= free:
                    begin(j, t)
                    continue
                blocked, R = j, slot(j)
                new.append(j)
                new += fill(rest[x + 1 :], t, j)
                break
        elif not reached:  # held: not tried before R
            b = rest[0]
            if q[b] <= free and b not in held_noted:
                held_noted.add(b)
                dev.append(
                    (
                        t,
                        b,
                        "B",
                        f"it fits at {t} but AccaSim holds it until its reservation time {R} "
                        "(computed when it blocked; running jobs ended before their request)",
                    )
                )
            new.append(b)
            new += fill(rest[1:], t, b)
        else:  # R reached (and past), the blocked job still does not fit
            new += fill(rest, t, new[0])
        queue = new
    return np.array(start, dtype=np.int64), dev


def explain(w: dict, M: int, ours: np.ndarray, theirs: np.ndarray, org: np.ndarray) -> list[str]:
    """The job-by-job account of the differences (module docstring), as printed lines."""
    n = len(ours)
    out = []
    one = easy(instance(w, M, np.arange(n, dtype=np.int64)))
    out.append(
        "  coopsched with one organization per job gives the same schedule: "
        + ("yes" if (one == ours).all() else f"NO ({int((one != ours).sum())} jobs differ)")
    )
    ref_acc, dev = reference(w, M, accasim=True)
    ref_txt, _ = reference(w, M, accasim=False)
    same_a = int((ref_acc == theirs).sum())
    same_t = int((ref_txt == ours).sum())
    out.append(f"  the reference of AccaSim's EASY gives AccaSim's start: {same_a:,} / {n:,} jobs")
    out.append(f"  the textbook reference gives coopsched's start:        {same_t:,} / {n:,} jobs")
    kinds = {"A": 0, "B": 0, "B+": 0}
    for _, _, kind, _ in dev:
        kinds[kind] += 1
    out.append(
        f"  AccaSim's decisions that depart from textbook EASY in its own run: "
        f"{kinds['A']:,} unprotected backfills (A), {kinds['B']:,} blocked jobs held although "
        f"they fit (B), {kinds['B+']:,} jobs started while one was so held"
    )
    diff = np.flatnonzero(ours != theirs)
    if not len(diff):
        return out
    first_dev = dev[0][0] if dev else None
    first_diff = int(np.minimum(ours, theirs)[diff].min())
    before = first_dev is not None and first_diff >= first_dev
    out.append(
        f"  first departure at t={first_dev}, first differing start at t={first_diff}: "
        + (
            "identical before it"
            if before
            else "DIFFERENCE BEFORE ANY DEPARTURE (not explained by A, B, C)"
        )
    )
    why = {j: text for _, j, _, text in dev}
    order = diff[np.argsort(np.minimum(ours, theirs)[diff], kind="stable")]
    own = sum(1 for j in diff.tolist() if j in why)
    out.append(
        f"  of the {len(diff):,} differing jobs, {own:,} are themselves such a decision, the "
        f"other {len(diff) - own:,} start after the first one (t={first_dev}), on machines "
        "whose state already differs"
    )
    out.append("  first differing jobs (times from the first submit):")
    for j in order[:8].tolist():
        reason = why.get(j)
        if reason is None:
            reason = f"follows the departures before (the first at t={first_dev})"
        out.append(
            f"    job {j + 1}: submit {w['rel'][j]}, {w['q'][j]} proc, run {w['run'][j]}, "
            f"requested {w['req'][j]}; AccaSim {theirs[j]}, coopsched {ours[j]}: {reason}"
        )
    return out


def exact_requests(w: dict, M: int, folder: Path) -> list[str]:
    """The same jobs with requested time := run time (exact requests: B and C cannot happen,
    and a blocked job cannot fit before its reservation time): AccaSim's EASY is then
    list scheduling without reservation (A alone), which is coopsched's ``first-fit``."""
    w2 = dict(w, req=w["run"].copy())
    n = len(w2["run"])
    org, _ = organizations(w2, M, "first-fit")
    swf, cfg = write_rigid_swf(folder, w2, M, org, "-exact")
    waits = accasim_waits(swf, cfg, folder, "easy")
    theirs = np.array([w2["rel"][j] + waits[j + 1] for j in range(n)], dtype=np.int64)
    ff = easy(instance(w2, M, org), "first-fit")
    one = easy(instance(w2, M, np.arange(n, dtype=np.int64)), "first-fit")
    ez = easy(instance(w2, M, organizations(w2, M, "easy")[0]), "easy")
    ref, dev = reference(w2, M, accasim=True)
    return [
        "  the same jobs with requested time := run time (exact requests):",
        f"    AccaSim EASY = coopsched FIFO + first-fit: {int((theirs == ff).sum()):,} / {n:,} "
        f"jobs (one organization per job: {int((one == ff).sum()):,} / {n:,}; "
        f"the reference of AccaSim: {int((ref == theirs).sum()):,} / {n:,})",
        f"    AccaSim EASY = coopsched FIFO + EASY: {int((theirs == ez).sum()):,} / {n:,} jobs "
        f"({sum(1 for d in dev if d[2] == 'A'):,} unprotected backfills (A), "
        f"{sum(1 for d in dev if d[2] != 'A'):,} held (B))",
    ]


def timing_rows(rows, label_ours: str, label_theirs: str, proc_ours: str, proc_theirs: str):
    """The printed table and ratios of one comparison."""
    lines = [f"  {'':11} {'run':28} {'CPU s':>9} {'wall s':>9}"]
    for kind, label, (c, w) in rows:
        lines.append(f"  {kind:11} {label:28} {c:9.4f} {w:9.4f}")
    t = {label: cw for _, label, cw in rows}
    for a, o, kind in (
        (label_theirs, label_ours, "in-process"),
        (proc_theirs, proc_ours, "whole-process"),
    ):
        if a in t and o in t:
            (ac, aw), (oc, ow) = t[a], t[o]
            lines.append(
                f"  {kind} ratio AccaSim / coopsched: CPU {ac / oc:,.1f}x, wall {aw / ow:,.1f}x"
            )
    return lines


def rigid_section(args, log: Path, n: int, folder: Path) -> None:
    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import EASYBackfilling
    from accasim.base.simulator_class import Simulator

    w, M, left = rigid_workload(log, n, folder)
    n = len(w["run"])
    org, rounds = organizations(w, M)
    swf, cfg = write_rigid_swf(folder, w, M, org)
    inst = instance(w, M, org)
    ours = easy(inst)
    waits = accasim_waits(swf, cfg, folder, "easy")
    theirs = np.array([w["rel"][j] + waits[j + 1] for j in range(n)], dtype=np.int64)
    same = int((ours == theirs).sum())
    outl = int((w["run"] > w["req"]).sum())
    print(
        f"\n{log.name}, first {n:,} jobs ({M} processors; left out: "
        + ", ".join(f"{v:,} {k}" for k, v in left.items())
        + f"; {outl:,} outlive their request), FIFO + EASY, {int(org.max()) + 1} organizations "
        f"({rounds} rounds): identical start times {same:,} / {n:,}"
    )
    if n <= args.explain_max:
        for line in explain(w, M, ours, theirs, org) + exact_requests(w, M, folder):
            print(line)
    if args.repeat <= 0:
        return

    def ours_sim():
        easy(inst)

    def theirs_run():
        res = folder / "timed"
        shutil.rmtree(res, ignore_errors=True)
        Simulator(
            str(swf),
            str(cfg),
            EASYBackfilling(FirstFit()),
            RESULTS_FOLDER_PATH=str(res),
            scheduling_output=False,
            statistics_output=False,
            show_statistics=False,
            LOG_LEVEL="WARNING",
        ).start_simulation()

    rows = [
        ("in-process", "coopsched simulate", best(ours_sim, args.repeat)),
        ("in-process", "AccaSim", best(theirs_run, args.repeat)),
        (
            "process",
            "coopsched (python -c)",
            best_process([sys.executable, "-c", COOPSCHED_RUN, str(swf), str(M)], args.repeat),
        ),
        (
            "process",
            "AccaSim (python -c)",
            best_process(
                [
                    sys.executable,
                    "-c",
                    ACCASIM_RUN,
                    str(swf),
                    str(cfg),
                    str(folder / "p"),
                    "0",
                    "easy",
                ],
                args.repeat,
            ),
        ),
    ]
    for line in timing_rows(
        rows, "coopsched simulate", "AccaSim", "coopsched (python -c)", "AccaSim (python -c)"
    ):
        print(line)


def fifo_section(args, folder: Path) -> None:
    from accasim.base.allocator_class import FirstFit
    from accasim.base.scheduler_class import FirstInFirstOut
    from accasim.base.simulator_class import Simulator

    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    swf, cfg, jobs = write_workload(folder, args.fifo_jobs, args.machines, args.seed, args.load)
    inst, sched = coopsched_fifo(swf)
    # the same schedule: equal multisets of (release, size, wait), releases taken
    # from the first submit (coopsched shifts the trace to start at 0)
    ours = sorted(
        zip(
            inst.release.tolist(),
            inst.size.tolist(),
            (sched.start - inst.release).tolist(),
            strict=True,
        )
    )
    t0 = min(sub for sub, _ in jobs.values())
    theirs = sorted(
        (sub - t0, run, wait)
        for j, wait in accasim_waits(swf, cfg, folder, "fifo").items()
        for sub, run in [jobs[j]]
    )
    same = ours == theirs
    print(
        f"\nsynthetic, {args.fifo_jobs:,} sequential jobs on {args.machines} machines, load "
        f"{args.load:g}, FIFO: identical start times in both simulators: "
        f"{'yes' if same else 'NO'}"
    )
    if not same:
        print("  the schedules differ: the ratios below compare different work")
    if args.repeat <= 0:
        return

    def ours_sim():
        simulate(inst, get_policy("fifo"), compiled=True)

    def ours_py():
        simulate(inst, get_policy("fifo"), compiled=False)

    def ours_all():
        coopsched_fifo(swf)

    def theirs_run():
        res = folder / "timed"
        shutil.rmtree(res, ignore_errors=True)
        Simulator(
            str(swf),
            str(cfg),
            FirstInFirstOut(FirstFit()),
            RESULTS_FOLDER_PATH=str(res),
            scheduling_output=False,
            statistics_output=False,
            show_statistics=False,
            LOG_LEVEL="WARNING",
        ).start_simulation()

    ours_sim()  # warm-up: numba's cached kernels load once per process
    rows = [
        ("in-process", "coopsched simulate", best(ours_sim, args.repeat)),
        ("in-process", "coopsched Python engine", best(ours_py, args.repeat)),
        ("in-process", "coopsched read+simulate", best(ours_all, args.repeat)),
        ("in-process", "AccaSim", best(theirs_run, args.repeat)),
    ]
    exe = shutil.which("coopsched") or str(Path(sys.executable).with_name("coopsched"))
    if os.path.exists(exe):
        rows.append(
            (
                "process",
                "coopsched simulate (CLI)",
                best_process([exe, "simulate", str(swf), "--orgs", "1"], args.repeat),
            )
        )
    rows.append(
        (
            "process",
            "AccaSim (python -c)",
            best_process(
                [
                    sys.executable,
                    "-c",
                    ACCASIM_RUN,
                    str(swf),
                    str(cfg),
                    str(folder / "p"),
                    "0",
                    "fifo",
                ],
                args.repeat,
            ),
        )
    )
    for line in timing_rows(
        rows, "coopsched simulate", "AccaSim", "coopsched simulate (CLI)", "AccaSim (python -c)"
    ):
        print(line)
    t = {label: cw for _, label, cw in rows}
    acc = t["AccaSim"]
    for label in ("coopsched Python engine", "coopsched read+simulate"):
        c, w = t[label]
        print(
            f"  in-process ratio AccaSim / {label}: CPU {acc[0] / c:,.0f}x, wall {acc[1] / w:,.0f}x"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--traces", default="../shared/traces", help="folder of PWA SWF logs")
    ap.add_argument("--log", default="HPC2N-2002-2.2-cln.swf.gz", help="the parallel log used")
    ap.add_argument(
        "--sizes", default="5000,20000,100000", help="jobs of the rigid comparison; 0: skip it"
    )
    ap.add_argument("--repeat", type=int, default=3, help="best of; 0: check only, no timing")
    ap.add_argument(
        "--explain-max",
        type=int,
        default=20000,
        help="explain the differences job by job up to this size (Python references)",
    )
    ap.add_argument("--fifo-jobs", type=int, default=5000, help="sequential FIFO; 0: skip")
    ap.add_argument("--machines", type=int, default=70, help="machines of the FIFO comparison")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--load", type=float, default=0.8, help="FIFO: offered load (work / capacity); default 0.8"
    )
    args = ap.parse_args()
    try:
        exec(SHIM)
        import accasim.base.simulator_class  # noqa: F401
    except ImportError as exc:
        sys.exit(f"AccaSim is not installed ({exc}); run: pip install accasim")
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy
    from coopsched.workloads.instance import Instance, Organization

    print(machine())
    # load numba's kernels once (the in-process rows time the simulation alone)
    warm = Instance(
        [Organization("a", 2)], [0, 0], [0, 1], [2, 1], processors=[2, 1], requested=[2, 1]
    )
    simulate(warm, get_policy("fifo"), engine="compiled", backfill="easy")
    folder = Path(tempfile.mkdtemp(prefix="coopsched-accasim-"))
    try:
        if args.fifo_jobs > 0:
            fifo_section(args, folder)
        log = Path(args.traces) / args.log
        for n in (int(x) for x in args.sizes.split(",") if x.strip()):
            if n > 0:
                rigid_section(args, log, n, folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
