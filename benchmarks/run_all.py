"""Regenerate every benchmark file docs/performance.md quotes, in one run.

    python benchmarks/run_all.py --list                  # what it would run, nothing more
    python benchmarks/run_all.py                         # everything (hours: REF at k = 20)
    python benchmarks/run_all.py --only engine,ref       # some of it
    python benchmarks/run_all.py --skip ref-windows-k20  # all but the longest

Each job runs one benchmark script (or ``coopsched reproduce``) with the command line the
results were published with, one after the other, never two at once, and writes its
output to ``benchmarks/results-*.txt`` behind a header that records the machine: CPU
model, cores, memory, the load average before and after the job, the date, the commit
and the versions of Python, numpy and numba. Timings are only meaningful on an otherwise
idle machine: a job refuses to start while the one-minute load average is above
``--max-load`` (default 0.5) unless ``--force`` is given, and the header says what the
load was either way.

The jobs (``--list`` prints their commands):

* ``engine``: ``benchmarks/engine.py --python`` (docs/performance.md: the online engine);
* ``ref``: ``benchmarks/ref.py --ks 5,8,10,12,16`` (docs/performance.md: REF, exact);
* ``ref-k20``: ``benchmarks/ref.py --ks 20 --windows 1 --busiest 1 --skip-long``;
* ``ref-windows-k16`` and ``ref-windows-k20``: ``benchmarks/ref_windows.py`` on every
  LPC-EGEE window (summaries into ``results-ref-windows-all.txt``, every window into
  ``results-ref-windows-k16.csv`` / ``-k20.csv``); at k = 20 each window runs alone;
* ``audit``: ``benchmarks/audit.py --phases``;
* ``audit-sampled``: ``benchmarks/audit_sampled.py --valuation`` (about half an hour: sampled
  audits up to 100 organizations, each within the issue's time target, in one process, and
  one case compared with 2 dask workers);
* ``audit-budget``: ``benchmarks/audit_budget.py`` (a few minutes: budgets in CPU and
  wall-clock seconds at 2,000 and 10,000 organizations, the time to the first progress line);
* ``sampling-overhead-paired``: ``benchmarks/paired.py --before f8f5774 --rounds 3 --
  benchmarks/sampling_overhead.py`` (a few minutes: the same sampled audits at 50 and 300
  organizations before and after the budget's chunks of coalitions);
* ``audit-sampled-machine``: the HPC2N and KTH-SP2 cases of ``audit-sampled`` on 2 dask
  workers, the whole machine, within the same 10-minute budgets (about 20 minutes);
* ``audit-sampled-long``: the HPC2N and KTH-SP2 cases of ``audit-sampled`` in one process
  with a 30-minute budget each (about an hour: when each organization is settled, and the
  projection for those still open);
* ``audit-reference``: ``benchmarks/audit_sampled.py --no-dask --samples 5120`` with
  ``--reference`` on HPC2N and KTH-SP2, then RICC at N = 50 and 100, and KTH-SP2 with
  ``--estimator ends`` (about 80 minutes: which organizations the budgeted runs leave open,
  and whether their surplus is below 5 % of ``phi``);
* ``valuation-paired``: ``benchmarks/valuation_paired.py`` (a sampled audit's cost per
  coalition on the HPC2N, KTH-SP2 and RICC months, in the package of commit 109e707 and in
  this checkout's, alternating fresh processes; a few minutes);
* ``rigid-paired``: ``benchmarks/paired.py`` running ``benchmarks/rigid.py`` with the package
  of commit f8f5774 (before the one event loop) and with this checkout's, taking turns (the
  whole logs' lines only);
* ``engine-paired``: ``benchmarks/paired.py`` running ``benchmarks/engine.py`` (the compiled
  engine on the whole LPC-EGEE log and a RICC week, every built-in policy) with the package
  of commit f8f5774 (before the one event loop) and with this checkout's, taking turns;
* ``refine-tails``: ``benchmarks/refine_tails.py`` (not a timing: how often the sampled
  audit's refinement calls a wrong sign on a heavy-tailed user, by first look and
  interval; about two minutes);
* ``refine-cost``: ``benchmarks/refine_cost.py`` (what valuing a coalition costs against its
  jobs, and what the refinement's optimum allocation gains on the organizations the
  sampled audit left open; a few minutes);
* ``audit-variance``: ``benchmarks/audit_variance.py`` (not a timing: the spread of the
  organizations' marginal contributions on the RICC month at N = 50, and the orders a
  decided sign needs; a few minutes);
* ``audit-estimators``: ``benchmarks/audit_estimators.py``, then with ``--k 100 --pairs
  100`` (not a timing: the sampled audit's estimators compared on pools of antithetic
  pairs of the RICC month, 200 pairs at N = 50 and 100 at N = 100, variance per
  organization, signs decided at equal orders, adaptive replays; about 30 and 40 minutes
  on an idle machine, nearly all of it valuing the pools' coalitions);
* ``table2``: ``coopsched reproduce table2 --workers 2`` into a fresh folder, timed, and
  its results compared with the committed ``docs/results/table2/results.csv``;
* ``ref-rigid``: ``benchmarks/ref_rigid.py`` (exact REF for rigid jobs with EASY at k = 8,
  12 and 16, in lockstep, and RAND);
* ``rigid``: ``benchmarks/rigid.py`` (the compiled rigid engine on whole logs);
* ``startup``: ``benchmarks/startup.py --runs 20``;
* ``compile``: ``benchmarks/compile.py`` (each numba kernel's first compilation, and the
  first ``coopsched demo`` against the second; docs/performance.md: the first run);
* ``read-large``: ``benchmarks/read_large.py --cases month`` (a 2 GB sacct log written
  into /tmp and removed, read for a one-month audit window; about 11 minutes);
* ``read-memory``: ``benchmarks/read_memory.py`` (peak memory per byte of log of each
  reader: SWF, sacct text, sacct JSON of 1,000,000 jobs; memory, not time);
* ``address-limit``: ``benchmarks/address_limit.py`` (every README command and every trace
  under a 4 GiB address-space limit, ``prlimit --as``);
* ``game``: ``benchmarks/game.py``;
* ``estimator``: ``benchmarks/estimator.py --runs 200`` (docs/audit.md: coverage and
  width of the sampled audit's intervals; counts and ratios only, no timings);
* ``production``: ``benchmarks/production.py`` (docs/production.md);
* ``peer``: ``benchmarks/peer_accasim.py --traces DIR``, then ``--load 1.5 --sizes 0``
  (the sequential comparison on an overloaded platform; needs ``pip install accasim``,
  skipped otherwise);
* ``studies``: the run time of ``coopsched reproduce table1|fig10|mosp|game|poa
  --workers 2`` (docs/reproduction.md), into ``results-studies.txt``.

After the jobs, every entry of ``benchmarks/provenance.toml`` whose files were all rewritten
is stamped with the commit they were measured on (``benchmarks/provenance.py``; refused,
with a line saying why, while their sources have uncommitted changes).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import datetime
import importlib.util
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"


@dataclass
class Job:
    """One benchmark: a name, its commands (run in order) and the file it writes."""

    name: str
    commands: list[list[str]]
    out: str
    what: str
    needs: str = ""  # a module that must be importable, else the job is skipped
    extra: list[str] = field(default_factory=list)  # other files the commands write


def jobs(py: str, traces: str, coopsched: list[str]) -> list[Job]:
    """Every job, with the command lines of the committed results."""
    t = ["--traces", traces]
    a = ["--no-dask", "--samples", "5120"]  # audit-reference: one process, no order cap
    b = str(BENCH)
    return [
        Job(
            "engine",
            [[py, f"{b}/engine.py", *t, "--python"]],
            "results-engine.txt",
            "online engine, compiled and Python, every built-in policy",
        ),
        Job(
            "ref",
            [[py, f"{b}/ref.py", *t, "--ks", "5,8,10,12,16"]],
            "results-ref.txt",
            "REF at k = 5..16 on LPC-EGEE windows, whole LPC-EGEE, a RICC month",
        ),
        Job(
            "ref-k20",
            [
                [
                    py,
                    f"{b}/ref.py",
                    *t,
                    "--ks",
                    "20",
                    "--windows",
                    "1",
                    "--busiest",
                    "1",
                    "--skip-long",
                ]
            ],
            "results-ref-k20.txt",
            "REF at k = 20: a random window and the busiest of 200",
        ),
        Job(
            "ref-windows-k16",
            [
                [
                    py,
                    f"{b}/ref_windows.py",
                    *t,
                    "--k",
                    "16",
                    "--dense",
                    "10",
                    "--out",
                    f"{b}/results-ref-windows-k16.csv",
                ]
            ],
            "results-ref-windows-k16.txt",
            "REF at k = 16 on all 403 LPC-EGEE windows (about 10 CPU-minutes)",
            extra=["results-ref-windows-k16.csv"],
        ),
        Job(
            "ref-windows-k20",
            [
                [
                    py,
                    f"{b}/ref_windows.py",
                    *t,
                    "--k",
                    "20",
                    "--dense",
                    "10",
                    "--out",
                    f"{b}/results-ref-windows-k20.csv",
                ]
            ],
            "results-ref-windows-k20.txt",
            "REF at k = 20 on all 403 LPC-EGEE windows, each alone (about 2 CPU-hours, 2.3 GB)",
            extra=["results-ref-windows-k20.csv"],
        ),
        Job(
            "audit",
            [[py, f"{b}/audit.py", *t, "--phases"]],
            "results-audit.txt",
            "exact audits: a RICC month with 8 organizations, the whole LPC-EGEE log",
        ),
        Job(
            "audit-sampled",
            [[py, f"{b}/audit_sampled.py", *t, "--valuation"]],
            "results-audit-sampled.txt",
            "sampled audits by user: RICC month at N = 20/50/100, HPC2N and KTH-SP2 months, "
            "within the targets' budgets; RICC N = 50 on 2 dask workers",
            needs="distributed",
        ),
        Job(
            "busy-months",
            [
                [py, f"{b}/busy_months.py", *t, "pick"],
                [py, f"{b}/busy_months.py", *t, "budget", "--k", "50", "--cpu-seconds", "300"],
                [py, f"{b}/busy_months.py", *t, "coverage", "--k", "10", "--runs", "200"],
            ],
            "results-busy-months.txt",
            "issue 43: the busiest month of SDSC-SP2, CTC-SP2 and RICC; the sampled audit by "
            "49 users + other within 300 CPU s; coverage against exact values at k = 10",
        ),
        Job(
            "busy-months-every-user",
            [[py, f"{b}/busy_months.py", *t, "budget", "--k", "0", "--cpu-seconds", "900"]],
            "results-busy-months-every-user.txt",
            "issue 43: the same months by every user within 900 CPU s",
        ),
        Job(
            "counterfactuals-sampled",
            [[py, f"{b}/counterfactuals_sampled.py", *t]],
            "results-counterfactuals-sampled.txt",
            "issue 43: sampled counterfactuals against the exact audit's at k <= 16",
        ),
        Job(
            "audit-by-month",
            [[py, f"{b}/audit_by_month.py", *t]],
            "results-audit-by-month.txt",
            "issue 43: KTH-SP2's year month by month, time and memory",
        ),
        Job(
            "audit-budget",
            [[py, f"{b}/audit_budget.py"]],
            "results-audit-budget.txt",
            "sampled audits' CPU and wall-clock budgets at 2,000 and 10,000 organizations, "
            "and how soon progress is shown",
        ),
        Job(
            "sampling-overhead-paired",
            [
                [py, f"{b}/paired.py", "--before", "f8f5774", "--rounds", "3"]
                + ["--", f"{b}/sampling_overhead.py"]
            ],
            "results-sampling-overhead-paired.txt",
            "the sampled audit's own cost (budget read before every chunk of coalitions) "
            "against f8f5774, paired: the same coalitions valued by both",
        ),
        Job(
            "audit-sampled-machine",
            [
                [py, f"{b}/audit_sampled.py", *t, "--only", "hpc2n", "--only", "kth"]
                + ["--budget-on-dask", "--workers", "2"]
            ],
            "results-audit-sampled-machine.txt",
            "sampled audits of the HPC2N and KTH-SP2 months by user on the whole machine "
            "(2 dask workers) within the 10-minute budget",
            needs="distributed",
        ),
        Job(
            "audit-sampled-long",
            [
                [py, f"{b}/audit_sampled.py", *t, "--only", "hpc2n", "--only", "kth"]
                + ["--no-dask", "--seconds", "1800"]
            ],
            "results-audit-sampled-long.txt",
            "the HPC2N and KTH-SP2 months by user in one process with 30 minutes each: when "
            "each organization is settled, and what the ones still open would take",
        ),
        Job(
            "audit-reference",
            [
                [py, f"{b}/audit_sampled.py", *t, *a, "--only", "hpc2n", "--only", "kth"]
                + ["--reference", "600"],
                [py, f"{b}/audit_sampled.py", *t, *a, "--only", "ricc", "--k", "50"]
                + ["--reference", "600"],
                [py, f"{b}/audit_sampled.py", *t, *a, "--only", "kth", "--estimator", "ends"],
                [py, f"{b}/audit_sampled.py", *t, *a, "--only", "ricc", "--k", "100"]
                + ["--reference", "480"],
            ],
            "results-audit-reference.txt",
            "is the sampled audits' target met: HPC2N and KTH-SP2 with the order cap lifted "
            "(600 s budgets), RICC at N = 50 and 100, each followed by a stratified reference "
            "of the organizations it left open; KTH-SP2 with the ends estimator",
        ),
        Job(
            "valuation-paired",
            [[py, f"{b}/valuation_paired.py", *t]],
            "results-valuation-paired.txt",
            "a sampled audit's cost per coalition, before (109e707) and after, paired runs",
        ),
        Job(
            "rigid-paired",
            [
                [
                    py,
                    f"{b}/paired.py",
                    "--before",
                    "f8f5774",
                    "--grep",
                    "54,034",
                    "--grep",
                    "295,540",
                    "--",
                    f"{b}/rigid.py",
                    *t,
                ]
            ],
            "results-rigid-paired.txt",
            "the whole SDSC-SP2 and CEA-Curie logs under FIFO and DIRECTCONTR + EASY, the "
            "package of f8f5774 (before the one event loop) against this one, paired",
        ),
        Job(
            "engine-paired",
            [[py, f"{b}/paired.py", "--before", "f8f5774", "--", f"{b}/engine.py", *t]],
            "results-engine-paired.txt",
            "the compiled engine on the whole LPC-EGEE log and a RICC week, every built-in "
            "policy, the package of f8f5774 against this one, paired",
        ),
        Job(
            "refine-tails",
            [[py, f"{b}/refine_tails.py", *t]],
            "results-refine-tails.txt",
            "the refinement's wrong sign calls on a heavy-tailed user (HPC2N u5), by first "
            "look and interval, on bootstrap replays of 300 measured rounds",
        ),
        Job(
            "refine-cost",
            [[py, f"{b}/refine_cost.py", *t]],
            "results-refine-cost.txt",
            "the refinement's optimum allocation: a coalition's valuation time against its "
            "jobs, and the rounds of one draw per run the same precision would take",
        ),
        Job(
            "audit-variance",
            [[py, f"{b}/audit_variance.py", *t]],
            "results-audit-variance.txt",
            "why the sampled audit needs many orders: marginal spread by organization, "
            "RICC month at N = 50 (not a timing)",
        ),
        Job(
            "audit-estimators",
            [
                [py, f"{b}/audit_estimators.py", *t],
                [py, f"{b}/audit_estimators.py", *t, "--k", "100", "--pairs", "100"],
            ],
            "results-audit-estimators.txt",
            "the sampled audit's estimators (plain, split, ends) on pools of antithetic "
            "pairs, RICC month at N = 50 and 100 (not a timing)",
        ),
        Job(
            "table2",
            [
                [
                    *coopsched,
                    "reproduce",
                    "table2",
                    "--workers",
                    "2",
                    "--traces",
                    traces,
                    "--out",
                    "{tmp}",
                ]
            ],
            "results-table2.txt",
            "coopsched reproduce table2 on 2 cores, timed; results compared with the committed ones",
        ),
        Job(
            "ref-rigid",
            [[py, f"{b}/ref_rigid.py", *t]],
            "results-ref-rigid.txt",
            "exact rigid REF with EASY at k = 8, 12, 16 and RAND at k = 50 on four parallel logs",
        ),
        Job(
            "rigid",
            [[py, f"{b}/rigid.py", *t]],
            "results-rigid.txt",
            "rigid jobs with EASY: whole SDSC-SP2 and CEA-Curie, growth with the log's length",
        ),
        Job(
            "startup", [[py, f"{b}/startup.py", "--runs", "20"]], "results-startup.txt", "start-up"
        ),
        Job(
            "compile",
            [[py, f"{b}/compile.py"]],
            "results-compile.txt",
            "numba kernels' first compilation, first demo against the second",
        ),
        Job(
            "read-large",
            [[py, f"{b}/read_large.py", "--cases", "month"]],
            "results-read-large.txt",
            "reading a 2 GB sacct log for a one-month audit window",
        ),
        Job(
            "read-memory",
            [[py, f"{b}/read_memory.py", *t]],
            "results-read-memory.txt",
            "peak memory per byte of log of each reader",
        ),
        Job(
            "address-limit",
            [[py, f"{b}/address_limit.py", *t]],
            "results-address-limit.txt",
            "README commands and traces under a 4 GiB address-space limit",
        ),
        Job("game", [[py, f"{b}/game.py"]], "results-game.txt", "exact best responses, MOSP game"),
        Job(
            "estimator",
            [[py, f"{b}/estimator.py", *t, "--runs", "200"]],
            "results-estimator.txt",
            "sampled audit's intervals: coverage and width on games with known values",
        ),
        Job(
            "production",
            [[py, f"{b}/production.py", *t]],
            "results-production.txt",
            "production fair-share policies' throughput",
        ),
        Job(
            "peer",
            [
                [py, f"{b}/peer_accasim.py", *t],
                [py, f"{b}/peer_accasim.py", "--load", "1.5", "--sizes", "0"],
            ],
            "results-peer.txt",
            "coopsched beside AccaSim: sequential FIFO (load 0.8 and 1.5); rigid FIFO + EASY "
            "on HPC2N at 5k, 20k, 100k jobs, start times job by job",
            needs="accasim",
        ),
        Job(
            "studies",
            [
                [
                    *coopsched,
                    "reproduce",
                    s,
                    "--workers",
                    "2",
                    *(["--traces", traces] if s in ("table1", "fig10") else []),
                    "--out",
                    "{tmp}/" + s,
                ]
                for s in ("table1", "fig10", "mosp", "game", "poa")
            ],
            "results-studies.txt",
            "run time of the reproductions table1, fig10, mosp, game and poa on 2 cores",
        ),
    ]


def machine() -> list[str]:
    """The header lines that describe this machine and this checkout."""
    model = platform.processor() or platform.machine()
    mem = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                mem = f", {int(line.split()[1]) / 2**20:.1f} GB memory"
                break
    except OSError:
        pass
    try:
        sha = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
        ).stdout.strip()
        dirty = subprocess.run(
            ["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
        ).stdout.strip()
        commit = sha + (" with uncommitted changes" if dirty else "")
    except OSError:
        commit = "unknown"
    versions = [f"Python {platform.python_version()}"]
    for mod in ("numpy", "numba"):
        with contextlib.suppress(ImportError):
            versions.append(f"{mod} {__import__(mod).__version__}")
    return [
        f"# machine: {model}, {os.cpu_count()} logical cores{mem}; {platform.system()} "
        f"{platform.release()}",
        f"# {', '.join(versions)}; commit {commit}",
    ]


def load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _same_table2(out: Path) -> str:
    """Whether a fresh table2 run gives the committed results (timing columns aside, and
    the task keys, which hash each task's log path as given: ``--traces`` spelled another
    way gives other keys for the same tasks)."""
    mine, ref = out / "results.csv", ROOT / "docs" / "results" / "table2" / "results.csv"
    if not mine.exists() or not ref.exists():
        return "results not compared (a file is missing)"

    def rows(p: Path) -> list[dict[str, str]]:
        with p.open() as f:
            return [
                {k: v for k, v in r.items() if not k.startswith("seconds") and k != "task_key"}
                for r in csv.DictReader(f)
            ]

    a, b = rows(mine), rows(ref)
    key = lambda r: (r["trace"], r["window"])  # noqa: E731
    same = sorted(a, key=key) == sorted(b, key=key)
    return (
        "committed results reproduced exactly (every column but the timings)"
        if same
        else "DIFFERENT from the committed docs/results/table2/results.csv"
    )


def run_job(job: Job, max_load: float, force: bool) -> bool:
    """Run one job and write its file; False if it was skipped."""
    if job.needs and importlib.util.find_spec(job.needs) is None:
        print(f"{job.name}: skipped ({job.needs} is not installed)")
        return False
    before = load()
    if os.getloadavg()[0] > max_load and not force:
        print(
            f"{job.name}: refused, load average {before} is above {max_load} (--force runs anyway)"
        )
        return False
    date = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    body: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for cmd in job.commands:
            cmd = [c.replace("{tmp}", tmp) for c in cmd]
            shown = " ".join(
                Path(c).relative_to(ROOT).as_posix() if c.startswith(str(ROOT)) else c for c in cmd
            )
            print(f"{job.name}: {shown}", flush=True)
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            w0 = time.perf_counter()
            res = subprocess.run(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True)
            wall = time.perf_counter() - w0
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            body.append(f"# command: {shown}")
            body.append(res.stdout.rstrip("\n"))
            if job.name in ("table2", "studies"):
                body.append(
                    f"{wall:.2f} s wall, {r1.ru_utime - r0.ru_utime:.2f} s user, "
                    f"{r1.ru_stime - r0.ru_stime:.2f} s sys, {r1.ru_maxrss} KB maxrss (children)"
                )
            if job.name == "table2":
                body.append(_same_table2(Path(tmp)))
            if res.returncode:
                body.append(f"# exit status {res.returncode}")
    header = [f"# benchmarks/run_all.py, job {job.name} ({job.what}), {date}", *machine()]
    header.append(f"# load average (1, 5, 15 min) before: {before}; after: {load()}")
    (BENCH / job.out).write_text("\n".join(header + body) + "\n")
    print(f"{job.name}: wrote benchmarks/{job.out}", flush=True)
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--list", action="store_true", help="print the jobs and their commands; run nothing"
    )
    ap.add_argument("--only", default="", help="comma-separated job names")
    ap.add_argument("--skip", default="", help="comma-separated job names to leave out")
    ap.add_argument(
        "--traces", default=str(ROOT.parent / "shared" / "traces"), help="folder of the SWF logs"
    )
    ap.add_argument(
        "--max-load", type=float, default=0.5, help="refuse to start a job above this load"
    )
    ap.add_argument("--force", action="store_true", help="run even on a loaded machine")
    args = ap.parse_args(argv)
    py = sys.executable
    script = Path(py).with_name("coopsched")
    coopsched = (
        [str(script)]
        if script.exists()
        else [py, "-c", "import sys; from coopsched.cli import main; sys.exit(main())"]
    )
    every = jobs(py, args.traces, coopsched)
    names = [j.name for j in every]
    only = [n for n in args.only.split(",") if n]
    skip = [n for n in args.skip.split(",") if n]
    unknown = sorted(set(only + skip) - set(names))
    if unknown:
        ap.error(f"unknown job(s) {', '.join(unknown)}; jobs: {', '.join(names)}")
    chosen = [j for j in every if (not only or j.name in only) and j.name not in skip]
    if args.list:
        for j in chosen:
            files = ", ".join([j.out, *j.extra])
            print(
                f"{j.name}: {j.what} -> benchmarks/{files}"
                + (f" (needs {j.needs})" if j.needs else "")
            )
            for cmd in j.commands:
                print(
                    "    "
                    + " ".join(
                        Path(c).relative_to(ROOT).as_posix() if c.startswith(str(ROOT)) else c
                        for c in cmd
                    )
                )
        print(f"now: {machine()[0][2:]}; load average {load()}")
        return 0
    if not Path(args.traces).is_dir():
        ap.error(f"--traces {args.traces}: no such folder")
    ran = [run_job(j, args.max_load, args.force) for j in chosen]
    written = [
        f"benchmarks/{f}" for j, r in zip(chosen, ran, strict=True) if r for f in (j.out, *j.extra)
    ]
    if "ref-windows-k16" in [j.name for j in chosen] or "ref-windows-k20" in [
        j.name for j in chosen
    ]:
        parts = [BENCH / f"results-ref-windows-k{k}.txt" for k in (16, 20)]
        have = [p.read_text() for p in parts if p.exists()]
        if have:
            (BENCH / "results-ref-windows-all.txt").write_text("\n".join(have))
            print("wrote benchmarks/results-ref-windows-all.txt (k = 16 and k = 20 summaries)")
            written.append("benchmarks/results-ref-windows-all.txt")
    # benchmarks/provenance.toml: the files rewritten whole were measured on this commit
    from provenance import stamp_written

    for line in stamp_written(written):
        print(f"provenance: {line}")
    print(f"{sum(ran)} of {len(chosen)} job(s) ran")
    return 0 if all(ran) else 1


if __name__ == "__main__":
    sys.exit(main())
