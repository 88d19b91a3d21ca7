"""Online scheduling commands: simulate, demo, compare, trace-info, generate, policies.

Each command parses its options and renders a report the package builds."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated

import typer

from ._app import (
    MODEL,
    OUTPUT,
    POLICY,
    WORKLOAD,
    WORKLOAD_OPTIONS,
    Backfill,
    Backlog,
    CLIError,
    Engine,
    Fmt,
    Jobs,
    Machines,
    Orgs,
    Owners,
    PolicyTimeout,
    Seed,
    Split,
    Trace,
    Warmup,
    WLen,
    WStart,
    _backfill,
    _check_format,
    _given,
    _horizon,
    _input_path,
    _load,
    _refuse,
    _show,
    app,
    console,
    in_flags,
    panelled,
    writable,
)

#: The panels of ``simulate --help`` and ``compare --help``, by parameter.
PANELS = {
    **dict.fromkeys(("trace", *WORKLOAD_OPTIONS), WORKLOAD),
    **dict.fromkeys(("jobs", "backfill", "engine"), MODEL),
    **dict.fromkeys(
        ("policy", "policies", "param", "samples", "horizon", "seed", "policy_timeout"), POLICY
    ),
    **dict.fromkeys(("format", "gantt", "swf_out", "batsim_out"), OUTPUT),
}


@app.command(cls=panelled(PANELS))
def simulate(
    input: Annotated[
        Path | None,
        typer.Argument(help="JSON instance, SWF trace, or archive log name; none: synthetic."),
    ] = None,
    trace: Trace = None,
    policy: Annotated[
        str,
        typer.Option(
            help="Policy name (see 'coopsched policies'), package.module:Class or "
            "path/to/file.py:Class."
        ),
    ] = "fifo",
    param: Annotated[
        list[str] | None,
        typer.Option("--param", help="Policy parameter NAME=VALUE (repeatable)."),
    ] = None,
    horizon: Annotated[
        int | None, typer.Option(help="Stop at this time (default: window length).")
    ] = None,
    orgs: Orgs = 5,
    window_start: WStart = None,
    window_length: WLen = None,
    machines: Machines = None,
    split: Split = "uniform",
    seed: Seed = 0,
    warmup: Warmup = 0,
    owners: Owners = "user",
    backlog: Backlog = False,
    jobs: Jobs = "sequential",
    backfill: Backfill = None,
    engine: Engine = "auto",
    samples: Annotated[
        int | None,
        typer.Option(min=1, help="Shortcut for --param n_samples=N (RAND; paper: 15, 75)."),
    ] = None,
    gantt: Annotated[
        Path | None, typer.Option(help="Write a Gantt chart (PNG, SVG or PDF by suffix).")
    ] = None,
    swf_out: Annotated[
        Path | None, typer.Option(help="Write the schedule as SWF, waits filled in.")
    ] = None,
    batsim_out: Annotated[
        Path | None, typer.Option(help="Write the schedule as Batsim's out_jobs.csv.")
    ] = None,
    format: Fmt = "table",
    policy_timeout: PolicyTimeout = None,
) -> None:
    """Simulate one policy and print per-organization results (JSON: the whole schedule)."""
    from ..online.engine import simulate as simulate_policy
    from ..online.policies import parse_params, policy_class
    from ..online.policies._plugins import time_limit

    _check_format(format)
    cls = policy_class(policy)
    items = list(param or [])
    if "n_samples" not in cls.param_names():
        _refuse(_given("samples"), f"--policy {policy} (only RAND samples orderings)")
    if samples is not None:
        items.append(f"n_samples={samples}")
    params = in_flags(parse_params, "items", {"items": "--param"})(cls, items)
    if "seed" in cls.param_names():
        params.setdefault("seed", seed)
    with time_limit(policy_timeout):
        pol = cls(**params)
    inst = _load(
        input,
        orgs,
        window_start,
        window_length,
        machines,
        split,
        seed,
        trace,
        warmup,
        owners,
        backlog,
        jobs,
    )
    T = _horizon(inst, horizon)
    rule = _backfill(inst, backfill)
    run = in_flags(simulate_policy, "engine")
    with time_limit(policy_timeout):
        sched = run(inst, pol, T, backfill=rule, engine=engine)
    _export(sched, gantt, swf_out, batsim_out)
    _show(sched.report(T), format)


def _export(sched, gantt: Path | None, swf_out: Path | None, batsim_out: Path | None) -> None:
    """Write the requested files; say so on stderr (stdout stays the report)."""
    if gantt is None and swf_out is None and batsim_out is None:
        return
    from ..online import export

    for path, write in (
        (swf_out, export.write_schedule_swf),
        (batsim_out, export.write_batsim_jobs),
    ):
        if path is not None:
            left_out = write(sched, path)
            extra = (
                f" ({left_out} job(s) not started before the horizon left out)" if left_out else ""
            )
            print(f"wrote {path}{extra}", file=sys.stderr)
    if gantt is not None:
        export.plot_gantt(sched, gantt)
        print(f"wrote {gantt}", file=sys.stderr)


@app.command()
def demo(
    seed: Seed = 0,
    orgs: Orgs = 5,
    workload: Annotated[
        str, typer.Option(help="bursty (default) or lublin (Lublin-Feitelson model).")
    ] = "bursty",
    format: Fmt = "table",
) -> None:
    """Compare every registered policy on a built-in synthetic workload (no files needed)."""
    from ..experiments.compare import comparison_report
    from ..workloads.generators import lublin_instance, synthetic_instance

    _check_format(format)
    if workload == "bursty":
        inst = synthetic_instance(k=orgs, seed=seed)
    elif workload == "lublin":
        inst = lublin_instance(k=orgs, seed=seed)
    else:
        raise CLIError("--workload must be 'bursty' or 'lublin'")
    T = inst.meta["horizon"]
    rep = comparison_report(inst, T, None, seed, "Policies compared at the horizon")
    if format == "table":
        s = inst.summary()
        shares = ", ".join(f"{o['name']}:{o['machines']}" for o in s["per_org"])
        jobs = ", ".join(f"{o['name']}:{o['jobs']}" for o in s["per_org"])
        console.print(
            f"Synthetic {workload} workload (seed {seed}): {s['jobs']} jobs, "
            f"{s['machines']} machines.\n"
            f"  machines per organization {shares}; jobs per organization {jobs}; horizon {T}.",
            highlight=False,
        )
    _show(rep, format)


@app.command(cls=panelled(PANELS))
def compare(
    input: Annotated[
        Path | None,
        typer.Argument(help="JSON instance, SWF trace, or archive log name; none: synthetic."),
    ] = None,
    trace: Trace = None,
    policies: Annotated[
        str | None,
        typer.Option(help="Comma-separated policy names (default: every registered policy)."),
    ] = None,
    horizon: Annotated[int | None, typer.Option(help="Horizon (default: window length).")] = None,
    orgs: Orgs = 5,
    window_start: WStart = None,
    window_length: WLen = 50_000,
    machines: Machines = None,
    split: Split = "uniform",
    seed: Seed = 0,
    format: Fmt = "table",
    warmup: Warmup = 0,
    owners: Owners = "user",
    backlog: Backlog = False,
    jobs: Jobs = "sequential",
    backfill: Backfill = None,
    policy_timeout: PolicyTimeout = None,
) -> None:
    """How fair is each policy on this workload? (unfairness against REF, utilization)."""
    from ..experiments.compare import comparison_report, make_policies
    from ..online.policies._plugins import time_limit

    _check_format(format)
    names = None if policies is None else [p.strip() for p in policies.split(",") if p.strip()]
    if names == []:
        raise CLIError("--policies: no policy named; give names separated by commas")
    if names is not None:  # fail early on a typo or a policy named twice, before the trace
        with time_limit(policy_timeout):
            in_flags(make_policies, "policies")(names, seed)
    inst = _load(
        input,
        orgs,
        window_start,
        window_length,
        machines,
        split,
        seed,
        trace,
        warmup,
        owners,
        backlog,
        jobs,
    )
    T = _horizon(inst, horizon)
    if T is None:
        raise CLIError("give --horizon (the instance has none)")
    rule = _backfill(inst, backfill)
    with time_limit(policy_timeout):
        report = comparison_report(inst, T, names, seed, backfill=rule)
    _show(report, format)


@app.command("trace-info")
def trace_info(
    file: Annotated[
        Path | None, typer.Argument(help="SWF trace (.swf or .swf.gz) or archive log name.")
    ] = None,
    trace: Trace = None,
    format: Fmt = "table",
) -> None:
    """Statistics of an SWF trace."""
    from ..workloads.swf import read_swf

    _check_format(format)
    path = _input_path(file, trace)
    if path is None:
        raise CLIError("give an SWF file or --trace NAME")
    _show(read_swf(path).report(), format)


@app.command()
def generate(
    out: Annotated[Path, typer.Argument(help="Output .swf (or .swf.gz) file.")],
    jobs: Annotated[int, typer.Option(min=1, help="Number of jobs.")] = 1000,
    machines: Annotated[int, typer.Option(min=1, help="Processors of the modelled machine.")] = 128,
    seed: Seed = 0,
) -> None:
    """Write a synthetic SWF trace of the Lublin-Feitelson model."""
    from ..workloads.limits import MAX_JOBS, MAX_MACHINES
    from ..workloads.lublin import lublin_jobs
    from ..workloads.swf import write_swf

    if not out.name.lower().endswith((".swf", ".swf.gz")):
        raise CLIError(
            f"OUT: {out} does not end in .swf or .swf.gz; generate writes an SWF trace "
            "(gzip-compressed for .swf.gz)"
        )
    if jobs > MAX_JOBS or machines > MAX_MACHINES:
        raise CLIError(
            f"--jobs {jobs:,} / --machines {machines:,}: beyond the limits of {MAX_JOBS:,} jobs "
            f"and {MAX_MACHINES:,} machines"
        )
    writable(out, "OUT")
    df = lublin_jobs(jobs, machines, seed=seed)
    write_swf(
        out,
        df,
        {
            "Version": "2.2",
            "Computer": "Lublin-Feitelson model (coopsched)",
            "MaxProcs": str(machines),
            "MaxNodes": str(machines),
            "Note": f"seed {seed}",
        },
    )
    print(f"wrote {jobs} jobs to {out}")


@app.command()
def policies(format: Fmt = "table") -> None:
    """List the online policies and their parameters (the registry, plug-ins included)."""
    from ..online.policies import policies_report

    _check_format(format)
    _show(policies_report(), format)
