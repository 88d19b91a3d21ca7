"""coopsched's FIFO beside AccaSim's on the same synthetic SWF: in-process and whole-process times.

    pip install accasim        # into your own environment; not a coopsched dependency
    python benchmarks/peer_accasim.py [--jobs 5000] [--machines 70] [--repeat 3]

AccaSim (Galleguillos et al., https://github.com/cgalleguillosm/accasim) is an HPC
workload-management simulator in pure Python. Both simulators get the same workload:
``--jobs`` sequential jobs (1 processor each; Poisson arrivals at ``--load`` times the
platform's capacity, log-normal run times, seeded) written as an SWF file, on ``--machines`` single-core nodes, scheduled FIFO
(AccaSim: ``FirstInFirstOut`` dispatcher with the ``FirstFit`` allocator; coopsched:
``fifo`` with one organization). The script checks that both produce the same start
time for every job before timing anything.

Compatibility shim: AccaSim 1.1.3 does ``from collections import Mapping``, which
Python 3.10 removed; the script sets ``collections.Mapping = collections.abc.Mapping``
before importing it (in-process and in the AccaSim subprocess). Nothing else is patched.
AccaSim's output files (dispatching plan, statistics) are turned off for the timed runs.

Printed: CPU and wall seconds (best of ``--repeat``) of

* in-process -- coopsched: ``simulate`` alone (compiled engine; and its Python engine,
  which ``simulate`` uses by default below 50,000 jobs until numba is warm), and read
  SWF + build instance + simulate;
  AccaSim: building the simulator and running it (it reads the SWF while simulating);
* whole process -- ``coopsched simulate syn.swf --orgs 1`` (the default table output)
  and a ``python -c`` running
  AccaSim, each a fresh interpreter (start-up and imports included);

and the ratios AccaSim / coopsched. Times on a busy machine mean little: run it idle.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

SHIM = "import collections, collections.abc\ncollections.Mapping = collections.abc.Mapping\n"

ACCASIM_RUN = SHIM + (
    "from accasim.base.simulator_class import Simulator\n"
    "from accasim.base.scheduler_class import FirstInFirstOut\n"
    "from accasim.base.allocator_class import FirstFit\n"
    "import sys\n"
    "swf, cfg, res, plan = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == '1'\n"
    "sim = Simulator(swf, cfg, FirstInFirstOut(FirstFit()), RESULTS_FOLDER_PATH=res,\n"
    "                scheduling_output=plan, statistics_output=False, show_statistics=False,\n"
    "                LOG_LEVEL='WARNING')\n"
    "sim.start_simulation()\n"
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


def accasim_starts(swf: Path, cfg: Path, folder: Path) -> dict[int, int]:
    """Start time of every job (by SWF job number) in AccaSim's dispatching plan (UTC)."""
    res = folder / "plan"
    subprocess.run(
        [sys.executable, "-c", ACCASIM_RUN, str(swf), str(cfg), str(res), "1"],
        check=True,
        capture_output=True,
    )
    starts = {}
    for line in (res / f"sched-{swf.name}").read_text().splitlines():
        job_id, _, rest = line.split(";", 2)
        start = rest.split("__")[2].split(";")[0]
        when = datetime.strptime(start, "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC)
        starts[int(job_id)] = int(when.timestamp())
    return starts


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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--jobs", type=int, default=5000)
    ap.add_argument("--machines", type=int, default=70)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument(
        "--load", type=float, default=0.8, help="offered load (work / capacity); default 0.8"
    )
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args()
    try:
        exec(SHIM)
        from accasim.base.allocator_class import FirstFit
        from accasim.base.scheduler_class import FirstInFirstOut
        from accasim.base.simulator_class import Simulator
    except ImportError as exc:
        sys.exit(f"AccaSim is not installed ({exc}); run: pip install accasim")
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    folder = Path(tempfile.mkdtemp(prefix="coopsched-accasim-"))
    try:
        swf, cfg, jobs = write_workload(folder, args.jobs, args.machines, args.seed, args.load)
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
            (sub - t0, run, start - sub)
            for j, start in accasim_starts(swf, cfg, folder).items()
            for sub, run in [jobs[j]]
        )
        same = ours == theirs
        print(
            f"{args.jobs} sequential jobs on {args.machines} machines, load {args.load:g}, FIFO; "
            f"identical start times in both simulators: {'yes' if same else 'NO'}"
        )
        if not same:
            print("  the schedules differ: the ratios below compare different work")

        def ours_sim():
            simulate(inst, get_policy("fifo"), compiled=True)

        def ours_py():
            simulate(inst, get_policy("fifo"), compiled=False)

        def ours_all():
            coopsched_fifo(swf)

        def theirs_run():
            res = folder / "timed"
            shutil.rmtree(res, ignore_errors=True)
            sim = Simulator(
                str(swf),
                str(cfg),
                FirstInFirstOut(FirstFit()),
                RESULTS_FOLDER_PATH=str(res),
                scheduling_output=False,
                statistics_output=False,
                show_statistics=False,
                LOG_LEVEL="WARNING",
            )
            sim.start_simulation()

        ours_sim()  # warm-up: numba's cached kernels load once per process
        rows = [
            ("in-process", "coopsched simulate", best(ours_sim, args.repeat)),
            ("in-process", "coopsched Python engine", best(ours_py, args.repeat)),
            ("in-process", "coopsched read+simulate", best(ours_all, args.repeat)),
            ("in-process", "AccaSim", best(theirs_run, args.repeat)),
        ]
        exe = shutil.which("coopsched") or str(Path(sys.executable).with_name("coopsched"))
        env_ok = os.path.exists(exe)
        if env_ok:
            rows.append(
                (
                    "process",
                    "coopsched simulate (CLI)",
                    best_process(
                        [exe, "simulate", str(swf), "--orgs", "1"],
                        args.repeat,
                    ),
                )
            )
        rows.append(
            (
                "process",
                "AccaSim (python -c)",
                best_process(
                    [sys.executable, "-c", ACCASIM_RUN, str(swf), str(cfg), str(folder / "p"), "0"],
                    args.repeat,
                ),
            )
        )
        print(f"{'':11} {'run':26} {'CPU s':>9} {'wall s':>9}")
        for kind, label, (c, w) in rows:
            print(f"{kind:11} {label:26} {c:9.4f} {w:9.4f}")
        t = {label: cw for _, label, cw in rows}
        acc = t["AccaSim"]
        for label in ("coopsched simulate", "coopsched Python engine", "coopsched read+simulate"):
            c, w = t[label]
            print(
                f"in-process ratio AccaSim / {label}: CPU {acc[0] / c:,.0f}x, wall {acc[1] / w:,.0f}x"
            )
        if env_ok:
            a, o = t["AccaSim (python -c)"], t["coopsched simulate (CLI)"]
            print(
                f"whole-process ratio AccaSim / coopsched CLI: CPU {a[0] / o[0]:,.1f}x, wall {a[1] / o[1]:,.1f}x"
            )
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
