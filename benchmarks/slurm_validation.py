"""Replays of three log windows on a loopback Slurm, FIFO and fair share, for the model
validation of docs/slurm.md (issue #44, item 2), and the checking window under the settings
`coopsched tune` found (item 4).

    sudo .venv/bin/python benchmarks/slurm_validation.py replay [TAG ...]   # ~7 min each
    sudo .venv/bin/python benchmarks/slurm_validation.py replay willrun-demo willrun-demo-far charge-demo
    .venv/bin/python benchmarks/slurm_validation.py tune                    # seconds
    .venv/bin/python benchmarks/slurm_validation.py compare                 # seconds

``tune`` searches the settings on the windows before ctc-check, checked on it (docs/results/slurm/tune.json,
which ``replay ctc-b-tuned`` reads); ``replay`` writes docs/results/slurm/TAG/ (the capture, replay.json with the load during
the replay); ``compare`` reads every TAG folder there and writes
docs/results/slurm/validation.md and validation.csv. Needs root and Debian's slurm-wlm,
slurmdbd, mariadb-server (a replay is bound by real time: it cannot be sped up by a faster
machine, only its scheduling latency can).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
OUT = HERE.parent / "docs" / "results" / "slurm"
TRACES = Path("/work/shared/traces")  # the project's copies; any PWA copy of the logs works
SPEED = 120.0
#: one node per processor (one slurmd each): Slurm's backfill reserves whole nodes, and on
#: one 64-CPU node a reservation holds every CPU (docs/slurm.md); the one-node replays are
#: kept in docs/results/slurm/one-node/
NODES = 64
LENGTH = 43200
MACHINES = 64

#: tag -> (log, window start from the log's first submit)
WINDOWS = {
    "hpc2n-a": ("HPC2N-2002-2.2-cln.swf.gz", 9633600),
    "hpc2n-b": ("HPC2N-2002-2.2-cln.swf.gz", 9676800),
    "ctc-a": ("CTC-SP2-1996-3.1-cln.swf.gz", 8856000),
    "ctc-check": ("CTC-SP2-1996-3.1-cln.swf.gz", 1080000),
}
#: ctc-check follows tune's training period (the TRAIN_WINDOWS windows before it): replayed
#: with the current settings (ctc-check-fs) and with the tuned ones (ctc-check-tuned, item 4)
RUNS = {f"{w}-{p}": (w, p) for w in WINDOWS for p in ("fifo", "fs") if w != "ctc-check"}
RUNS["ctc-check-fs"] = ("ctc-check", "fs")
RUNS["ctc-check-fs-2"] = ("ctc-check", "fs")  # the same replay again: run-to-run spread


def window(tag: str):
    from coopsched.slurm.source import replay_source

    log, start = WINDOWS[tag]
    return replay_source(TRACES / log, start=start, length=LENGTH, machines=MACHINES)


def scheduling_of(policy: str, tuned: dict | None = None):
    from coopsched.slurm.plan import Scheduling

    if policy == "fifo":
        return Scheduling(fairshare=False, nodes=NODES)
    if policy == "fs":
        return Scheduling(nodes=NODES)
    assert tuned is not None
    return Scheduling(**tuned, nodes=NODES)


def run(tag: str) -> None:
    from coopsched.slurm.plan import ReplayPlan, Scheduling
    from coopsched.slurm.replay import replay

    if tag == "backfill-demo":  # three jobs: Slurm's reservation holds the whole node
        from coopsched.slurm.source import backfill_demo

        plan = ReplayPlan.build(backfill_demo(), 60.0, 2400, Scheduling(fairshare=False))
        replay(plan, OUT / tag, progress=lambda m: print(f"[{tag}] {m}", flush=True))
        return
    if tag == "charge-demo":  # four jobs: usage charged only at the decay thread's ticks
        from coopsched.slurm.source import charge_demo

        plan = ReplayPlan.build(charge_demo(), 60.0, 9600, Scheduling(shares=(1, 1), nodes=3))
        replay(plan, OUT / tag, progress=lambda m: print(f"[{tag}] {m}", flush=True))
        return
    if tag in ("willrun-demo", "willrun-demo-far"):  # four jobs: Slurm's start estimate
        from coopsched.slurm.source import willrun_demo

        inst = willrun_demo(far=tag.endswith("-far"))
        plan = ReplayPlan.build(inst, 60.0, 12000, Scheduling(fairshare=False, nodes=4))
        replay(plan, OUT / tag, progress=lambda m: print(f"[{tag}] {m}", flush=True))
        return
    if tag in RUNS:
        w, policy = RUNS[tag]
        tuned = None
    else:  # "<window>-tuned" / "<window>-searched": the settings in tune.json (the advice;
        # the search's best before the held-out windows chose)
        w, policy = tag.rsplit("-", 1)
        tuned = json.loads((OUT / "tune.json").read_text())[
            "scheduling" if policy == "tuned" else policy
        ]
        if tuned.get("shares") is not None:
            tuned["shares"] = tuple(tuned["shares"])
        tuned["half_life"] = float(tuned["half_life"])
    inst, base = window(w)
    plan = ReplayPlan.build(inst, SPEED, LENGTH, scheduling_of(policy, tuned))
    r = replay(plan, OUT / tag, base=base, progress=lambda m: print(f"[{tag}] {m}", flush=True))
    print(f"[{tag}] done in {r.wall_seconds:.0f} s, lag {r.lag()}, failed {len(r.failed)}")


#: tune's training period: the TRAIN_WINDOWS windows of LENGTH before ctc-check
TRAIN_WINDOWS = 20


def tune() -> None:
    """`coopsched tune`'s search on the TRAIN_WINDOWS windows before ctc-b, checked on
    ctc-b, on the instances the replays run (quantized at SPEED):
    docs/results/slurm/tune.json."""
    from coopsched.slurm.plan import ReplayPlan
    from coopsched.slurm.source import replay_source
    from coopsched.slurm.tune import tune as search

    log, check_start = WINDOWS["ctc-check"]

    def quantized(start: int):
        inst, _ = replay_source(TRACES / log, start=start, length=LENGTH, machines=MACHINES)
        return (ReplayPlan.build(inst, SPEED, LENGTH).quantized(), LENGTH) if inst.n else None

    windows = [quantized(check_start - i * LENGTH) for i in range(TRAIN_WINDOWS, 0, -1)]
    train = [w for w in windows if w is not None]  # a window without jobs scores 0 anyway
    # the model of the replays: Slurm recomputes priorities every PriorityCalcPeriod (1 real
    # minute, SPEED log minutes)
    r = search(train, [quantized(check_start)], calc_period=60 * SPEED, progress=print)
    d = r.to_dict()
    (OUT / "tune.json").write_text(json.dumps(d, indent=1) + "\n")
    print(json.dumps(d, indent=1))


def compare_all() -> None:
    """validation.md/.csv, the cost of the time scaling, and the audits of the checking
    window's two replays (coopsched audit on each capture's schedule.json)."""
    import subprocess

    from coopsched.online.fairness import fairness
    from coopsched.online.policies import get_policy
    from coopsched.slurm.plan import ReplayPlan
    from coopsched.slurm.validate import write_validation

    print(write_validation(OUT, WINDOWS, SPEED))
    if (OUT / "one-node").is_dir():  # the first replays, on one 64-CPU node (historical)
        print(write_validation(OUT / "one-node", WINDOWS, SPEED))
    rows = [
        "| window | jobs | FIFO, log's times | FIFO, quantized | SLURM-CLASSIC, log's times "
        "| SLURM-CLASSIC, quantized |",
        "|---|---|---|---|---|---|",
    ]
    for w in WINDOWS:
        inst, _ = window(w)
        q = ReplayPlan.build(inst, SPEED, LENGTH).quantized()
        cells = []
        for pol in ("fifo", "slurm-classic"):
            for x in (inst, q):
                ref = get_policy("ref").run(x, LENGTH, backfill="easy")
                s = get_policy(pol).run(x, LENGTH, backfill="easy")
                cells.append(f"{fairness(s, ref, LENGTH).ratio:,.1f}")
        rows.append(f"| {w} | {inst.n} | " + " | ".join(cells) + " |")
    (OUT / "scaling.md").write_text("\n".join(rows) + "\n")
    print("\n".join(rows))
    for tag in sorted(p.name for p in OUT.iterdir() if p.name.startswith("ctc-check-")):
        folder = OUT / tag
        if not (folder / "schedule.json").is_file():
            continue
        audit = subprocess.run(
            [
                str(Path(sys.executable).parent / "coopsched"),
                "audit",
                str(folder / "schedule.json"),
                "--horizon",
                str(LENGTH),
            ],
            capture_output=True,
            text=True,
            env={**__import__("os").environ, "COLUMNS": "110"},
            check=True,
        )
        (OUT / f"audit-{tag}.txt").write_text(audit.stdout)
        print(audit.stdout)


def main(argv: list[str]) -> None:
    if not argv or argv[0] not in ("replay", "compare", "tune"):
        sys.exit(__doc__)
    if argv[0] == "tune":
        tune()
    elif argv[0] == "replay":
        for tag in argv[1:] or list(RUNS):
            run(tag)
    else:
        compare_all()


if __name__ == "__main__":
    main(sys.argv[1:])
