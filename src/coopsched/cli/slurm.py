"""``coopsched replay`` (a window on a real loopback Slurm) and ``coopsched tune`` (fair-share
settings an operator can apply); docs/slurm.md."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Annotated

import typer

from ._app import CLIError, app, console

LogArg = Annotated[Path, typer.Argument(help="An SWF log (.swf, .swf.gz) or an instance file.")]
Start = Annotated[
    int | None, typer.Option(help="Window start, log seconds after the first submit (SWF).")
]
Length = Annotated[int | None, typer.Option(help="Window length, log seconds (SWF).")]
Machines = Annotated[
    int | None,
    typer.Option(
        help="The platform's processors for a log's window (default 64); an instance keeps its own."
    ),
]
K = Annotated[int, typer.Option("-k", help="Organizations (Slurm accounts); users dealt in turn.")]
Split = Annotated[str, typer.Option(help="Machines split across organizations: uniform or zipf.")]
Seed = Annotated[int, typer.Option(help="Seed of the users' dealing and the split.")]
Widths = Annotated[
    str,
    typer.Option(help="Jobs of a larger log than the platform: scale their widths, or drop them."),
]


def _duration(text: str, what: str) -> float:
    """``inf``, seconds, or a number with a unit s, m, h, d (``7d``, ``12h``)."""
    t = text.strip().lower()
    if t in ("inf", "infinity", "none"):
        return math.inf
    unit = {"s": 1, "m": 60, "h": 3600, "d": 86400}.get(t[-1:])
    try:
        value = float(t[:-1]) * unit if unit else float(t)
    except ValueError:
        raise CLIError(f"{what}: {text!r} is not a duration (e.g. 3600, 12h, 7d, inf)") from None
    if not value >= 0:
        raise CLIError(f"{what}: must be >= 0, got {text!r}")
    return value


def _shares(text: str | None, k: int) -> tuple[float, ...] | None:
    if text is None:
        return None
    try:
        out = tuple(float(x) for x in text.split(",") if x.strip())
    except ValueError:
        raise CLIError(f"--shares: numbers separated by commas, got {text!r}") from None
    if len(out) != k or any(not (x > 0 and math.isfinite(x)) for x in out):
        raise CLIError(f"--shares: {k} positive numbers (one per organization), got {text!r}")
    return out


def _source(log, start, length, machines, k, split, seed, widths):
    from ..slurm.plan import PlanError
    from ..slurm.source import replay_source

    if not log.is_file():
        raise CLIError(f"{log}: no such file")
    if machines is not None and not log.name.lower().endswith((".swf", ".swf.gz")):
        raise CLIError("--machines: an instance file states its own machines")
    try:
        return replay_source(
            log,
            start=start,
            length=length,
            machines=machines or 64,
            k=k,
            split=split,
            seed=seed,
            widths=widths,
        )
    except PlanError as e:
        raise CLIError(str(e)) from None


@app.command()
def replay(
    log: LogArg,
    out: Annotated[Path, typer.Option(help="Folder for the capture (created).")],
    start: Start = None,
    length: Length = None,
    machines: Machines = None,
    k: K = 4,
    split: Split = "zipf",
    seed: Seed = 0,
    widths: Widths = "scale",
    speed: Annotated[
        float, typer.Option(help="Log seconds per real second (60: one log minute a second).")
    ] = 60.0,
    fairshare: Annotated[
        bool, typer.Option(help="priority/multifactor with fair share (else priority/basic: FIFO).")
    ] = True,
    half_life: Annotated[
        str, typer.Option(help="PriorityDecayHalfLife, log time (3600, 12h, 7d, inf).")
    ] = "7d",
    age_weight: Annotated[int, typer.Option(help="PriorityWeightAge.")] = 0,
    fs_weight: Annotated[int, typer.Option(help="PriorityWeightFairshare.")] = 1_000_000,
    max_age: Annotated[str, typer.Option(help="PriorityMaxAge, log time.")] = "7d",
    shares: Annotated[
        str | None, typer.Option(help="Accounts' shares, comma-separated (default: machines).")
    ] = None,
    bf_interval: Annotated[int, typer.Option(help="bf_interval, real seconds (min 1).")] = 1,
    reserve: Annotated[
        int,
        typer.Option(help="bf_job_part_count_reserve: 1 = EASY, 0 = a reservation for every job."),
    ] = 1,
    nodes: Annotated[
        int,
        typer.Option(
            help="Declare the platform as this many nodes (one slurmd each): Slurm's "
            "backfill reserves whole nodes."
        ),
    ] = 1,
    compare: Annotated[
        bool, typer.Option(help="Compare the models with the capture afterwards.")
    ] = True,
) -> None:
    """Replay a window of a log (or an instance) on a throwaway Slurm on loopback, capture
    sacct on the log's clock (docs/slurm.md). Needs root and Debian's slurm-wlm, slurmdbd,
    mariadb-server; takes the window's length divided by --speed, plus about a minute."""
    from ..slurm.plan import PlanError, ReplayPlan, Scheduling
    from ..slurm.replay import SlurmUnavailable
    from ..slurm.replay import replay as run_replay

    inst, base = _source(log, start, length, machines, k, split, seed, widths)
    try:
        sch = Scheduling(
            fairshare=fairshare,
            half_life=_duration(half_life, "--half-life"),
            fs_weight=fs_weight,
            age_weight=age_weight,
            max_age=_duration(max_age, "--max-age"),
            shares=_shares(shares, inst.k),
            bf_interval=bf_interval,
            reserve=reserve,
            nodes=nodes,
        )
        plan = ReplayPlan.build(inst, speed, length, sch)
    except PlanError as e:
        raise CLIError(str(e)) from None
    console.print(
        f"replaying {inst.n} jobs of {log} on {plan.machines} processors, {inst.k} accounts, "
        f"{plan.real_seconds:,.0f} s at {speed:g} log s per s",
        highlight=False,
    )
    try:
        r = run_replay(plan, out, base=base, progress=lambda m: console.print(m, highlight=False))
    except SlurmUnavailable as e:
        raise CLIError(f"Slurm cannot run here: {e}") from None
    lag = r.lag()
    console.print(
        f"capture: {out / 'sacct.txt'} (log clock); {len(r.submissions)} jobs submitted, "
        f"{len(r.failed)} failed, latest {lag['max']:.2f} s late; {r.wall_seconds:.0f} s",
        highlight=False,
    )
    if compare:
        _print_comparison(out)


def _settings(sch) -> str:
    from ..slurm.plan import operator_lines

    lines = [x for x in operator_lines(sch) if not x.startswith("PriorityType")]
    return ", ".join(lines) + ", shares " + ", ".join(f"{x:g}" for x in sch.shares or ())


def _print_comparison(out: Path) -> None:
    from ..slurm.validate import compare as run_compare
    from ..slurm.validate import write_schedule

    console.print(f"schedule for coopsched audit: {write_schedule(out)}", highlight=False)
    rows = run_compare(out)
    w = max(len(c.schedule) for c in rows)
    head = f"starts within {rows[0].tolerance} s"
    console.print(
        f"{'schedule':<{w}}  {head:>20}  {'utilization':>11}  {'unfairness':>10}", highlight=False
    )
    for c in rows:
        console.print(
            f"{c.schedule:<{w}}  {c.agree:>20.1%}  {c.utilization:>11.3f}  {c.unfairness:>10.1f}",
            highlight=False,
        )
    console.print(
        "unfairness: dpsi / p_tot against REF (s per unit of work); starts compared with "
        "Slurm's, job by job",
        highlight=False,
    )


@app.command()
def tune(
    log: LogArg,
    start: Start = None,
    length: Length = None,
    machines: Machines = None,
    k: K = 4,
    split: Split = "zipf",
    seed: Seed = 0,
    widths: Widths = "scale",
    windows: Annotated[
        int,
        typer.Option(
            help="Training windows of --length from --start (a third held out to choose the "
            "advice when 3 or more)."
        ),
    ] = 1,
    check: Annotated[
        bool, typer.Option(help="Check the settings on the next window of the same length.")
    ] = True,
    fs_weight: Annotated[int, typer.Option(help="PriorityWeightFairshare kept fixed.")] = 1_000_000,
    calc_period: Annotated[
        str, typer.Option(help="The cluster's PriorityCalcPeriod (Slurm's default 5 minutes).")
    ] = "5m",
    format: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
) -> None:
    """Search Slurm's fair-share settings (PriorityDecayHalfLife, PriorityWeightAge against
    PriorityWeightFairshare, PriorityMaxAge, the accounts' shares) for the smallest
    unfairness against REF on a window; check them on the next window; print the
    slurm.conf lines and sacctmgr commands (docs/slurm.md)."""
    from ..slurm.tune import tune as run_tune

    if format not in ("text", "json"):
        raise CLIError(f"--format: text or json, got {format!r}")
    if length is None:
        raise CLIError("--length: the training window's length (log seconds) is required")
    if windows < 1:
        raise CLIError(f"--windows: at least 1, got {windows}")
    cut = [(start or 0) + i * length for i in range(windows + (1 if check else 0))]
    insts = [_source(log, s, length, machines, k, split, seed, widths)[0] for s in cut]
    pairs = [(inst, length) for inst in insts]
    train = [w for w in pairs[:windows] if w[0].n]  # an empty window scores 0 anyway
    if not train:
        raise CLIError("the training windows hold no job")
    say = (lambda m: console.print(m, highlight=False)) if format == "text" else None
    try:
        r = run_tune(
            train,
            pairs[windows:],
            fs_weight=fs_weight,
            calc_period=_duration(calc_period, "--calc-period"),
            progress=say,
        )
    except ValueError as e:
        raise CLIError(str(e)) from None
    if format == "json":
        print(json.dumps(r.to_dict(), indent=1))
        return
    p = console.print
    p(
        f"searched {r.evaluations} settings in {r.seconds:.1f} s ({', '.join(r.trail)})",
        highlight=False,
    )
    p(
        "expected (model: SLURM-CLASSIC, EASY backfilling), unfairness = dpsi/p_tot against REF:",
        highlight=False,
    )
    rows = [("training", r.train)] + ([("next window", r.check[:2])] if r.check else [])
    for name, (cur, new) in rows:
        p(
            f"  {name:<16} unfairness {cur.unfairness:,.1f} -> {new.unfairness:,.1f}, "
            f"utilization {cur.utilization:.3f} -> {new.utilization:.3f}",
            highlight=False,
        )
    if r.tuned == r.current:
        p(
            "advice: keep the current settings (nothing the search found did better on the "
            "held-out windows than they do)",
            highlight=False,
        )
        if r.searched is not None and r.searched != r.current:
            p(f"  the search's best on its windows was: {_settings(r.searched)}", highlight=False)
    p("slurm.conf:", highlight=False)
    for line in r.conf_lines():
        p(f"  {line}", highlight=False)
    p("accounts (each organization is an account):", highlight=False)
    for line in r.share_commands():
        p(f"  {line}", highlight=False)
