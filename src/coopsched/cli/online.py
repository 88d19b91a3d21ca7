"""Online scheduling commands: simulate, demo, compare, trace-info, generate, policies."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from ._app import (
    CLIError,
    Fmt,
    Machines,
    Orgs,
    Owners,
    Seed,
    Split,
    Warmup,
    WLen,
    WStart,
    _check_format,
    _horizon,
    _load,
    app,
    console,
)


@app.command()
def simulate(
    input: Annotated[
        Path | None, typer.Argument(help="JSON instance or SWF trace; none: synthetic.")
    ] = None,
    policy: Annotated[str, typer.Option(help="Policy name (see 'coopsched policies').")] = "fifo",
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
    samples: Annotated[
        int, typer.Option(min=1, help="RAND: sampled orderings N (paper: 15, 75).")
    ] = 15,
    format: Fmt = "table",
) -> None:
    """Simulate one policy and print per-organization results (or the schedule as JSON)."""
    from ..online.policies import get_policy

    _check_format(format)
    params = {} if policy.lower() == "ref" else {"seed": seed}  # REF is deterministic
    if policy.lower() == "rand":
        params["n_samples"] = samples
    pol = get_policy(policy, **params)
    inst = _load(input, orgs, window_start, window_length, machines, split, seed, warmup, owners)
    T = _horizon(inst, horizon)
    sched = pol.run(inst, T)
    if format == "json":
        print(json.dumps(sched.to_dict(T)))
        return
    t = sched._at(T)
    table = Table(title=f"{pol.name} on {inst.n} jobs, {inst.total_machines} machines, horizon {t}")
    for col in ("org", "machines", "jobs", "started", "completed", "psi_sp", "work", "mean flow"):
        table.add_column(col, justify="left" if col == "org" else "right")
    for row in sched.per_org_table(t):
        mf = row["mean_flow"]
        table.add_row(
            row["org"],
            str(row["machines"]),
            str(row["jobs"]),
            str(row["started"]),
            str(row["completed"]),
            f"{row['psi_sp']:,}",
            f"{row['work']:,}",
            "-" if mf is None else f"{mf:,.0f}",
        )
    console.print(table)
    console.print(
        f"utilization {sched.utilization(t):.1%}; {len(sched.unstarted)} job(s) not started before t={t}"
    )


def _compare_table(inst, T: int, policies: list[str], seed: int, title: str) -> None:
    from ..experiments.compare import compare_policies

    rows = compare_policies(inst, T, tuple(policies), seed=seed)
    table = Table(title=title)
    for col in ("policy", "dpsi/p_tot", "utilization", "mean flow", "started", "seconds"):
        table.add_column(col, justify="left" if col == "policy" else "right")
    for r in rows:
        table.add_row(
            r["policy"],
            "-" if r["unfairness"] is None else f"{r['unfairness']:.2f}",
            f"{r['utilization']:.1%}",
            "-" if r["mean_flow"] is None else f"{r['mean_flow']:,.0f}",
            str(r["started"]),
            f"{r['seconds']:.3f}",
        )
    console.print(table)
    console.print(
        "dpsi/p_tot: average unjustified delay (s) per unit of work against REF, "
        "the exact Shapley-fair schedule (Skowron & Rzadca, Sec. 7.2); 0 = as fair as REF."
    )


@app.command()
def demo(
    seed: Seed = 0,
    orgs: Orgs = 5,
    workload: Annotated[
        str, typer.Option(help="bursty (default) or lublin (Lublin-Feitelson model).")
    ] = "bursty",
) -> None:
    """Compare every policy on a built-in synthetic workload (no files needed)."""
    from ..workloads.generators import lublin_instance, synthetic_instance

    if workload == "bursty":
        inst = synthetic_instance(k=orgs, seed=seed)
    elif workload == "lublin":
        inst = lublin_instance(k=orgs, seed=seed)
    else:
        raise CLIError("--workload must be 'bursty' or 'lublin'")
    T = inst.meta["horizon"]
    shares = ", ".join(f"{o.name}:{o.machines}" for o in inst.organizations)
    jobs = ", ".join(
        f"{inst.organizations[u].name}:{int((inst.org == u).sum())}" for u in range(inst.k)
    )
    console.print(
        f"Synthetic {workload} workload (seed {seed}): {inst.n} jobs, {inst.total_machines} machines."
    )
    console.print(
        f"  machines per organization {shares}; jobs per organization {jobs}; horizon {T}."
    )
    from ..experiments.compare import DEFAULT_POLICIES

    _compare_table(inst, T, list(DEFAULT_POLICIES), seed, "Policies compared at the horizon")


@app.command()
def compare(
    input: Annotated[
        Path | None, typer.Argument(help="JSON instance or SWF trace; none: synthetic.")
    ] = None,
    policies: Annotated[str, typer.Option(help="Comma-separated policy names.")] = ",".join(
        (
            "ref",
            "rand",
            "directcontr",
            "fairshare",
            "utfairshare",
            "currfairshare",
            "roundrobin",
            "fifo",
        )
    ),
    horizon: Annotated[int | None, typer.Option(help="Horizon (default: window length).")] = None,
    orgs: Orgs = 5,
    window_start: WStart = None,
    window_length: WLen = 50_000,
    machines: Machines = None,
    split: Split = "uniform",
    seed: Seed = 0,
    warmup: Warmup = 0,
    owners: Owners = "user",
) -> None:
    """How fair is each policy on this workload? (unfairness against REF, utilization)."""
    inst = _load(input, orgs, window_start, window_length, machines, split, seed, warmup, owners)
    T = _horizon(inst, horizon)
    if T is None:
        raise CLIError("give --horizon (the instance has none)")
    names = [p.strip() for p in policies.split(",") if p.strip()]
    from ..online.policies import get_policy

    for p in names:
        get_policy(p)  # fail early on a typo
    _compare_table(inst, T, names, seed, f"{inst.n} jobs, {inst.k} organizations, horizon {T}")


@app.command("trace-info")
def trace_info(
    file: Annotated[Path, typer.Argument(help="SWF trace (.swf or .swf.gz).")],
    format: Fmt = "table",
) -> None:
    """Statistics of an SWF trace."""
    from ..workloads.swf import read_swf

    _check_format(format)
    trace = read_swf(file)
    st = trace.stats()
    if format == "json":
        print(json.dumps(st))
        return
    table = Table(title=str(file), show_header=False)
    table.add_column("field")
    table.add_column("value", justify="right")
    for key, value in st.items():
        if key == "file":
            continue
        if isinstance(value, dict):
            value = ", ".join(f"{k}={v}" for k, v in value.items())
        table.add_row(key, f"{value:,}" if isinstance(value, int) else str(value))
    console.print(table)
    if trace.acknowledge:
        console.print(f"Acknowledge: {trace.acknowledge} (and the Parallel Workloads Archive)")


@app.command()
def generate(
    out: Annotated[Path, typer.Argument(help="Output .swf (or .swf.gz) file.")],
    jobs: Annotated[int, typer.Option(min=1, help="Number of jobs.")] = 1000,
    machines: Annotated[int, typer.Option(min=1, help="Processors of the modelled machine.")] = 128,
    seed: Seed = 0,
) -> None:
    """Write a synthetic SWF trace of the Lublin-Feitelson model."""
    from ..workloads.lublin import lublin_jobs
    from ..workloads.swf import write_swf

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
def policies() -> None:
    """List the online policies."""
    from ..online.policies import POLICIES

    for name, cls in POLICIES.items():
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        console.print(f"[bold]{name}[/bold]  {doc}")
