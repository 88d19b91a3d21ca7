"""``coopsched migration``: related machines, migration and fairness."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from ._app import (
    CLIError,
    Fmt,
    Seed,
    Table,
    _check_format,
    app,
    console,
)


@app.command()
def migration(
    input: Annotated[
        Path | None, typer.Argument(help="JSON instance (job 'priority', organization 'speeds').")
    ] = None,
    policy: Annotated[
        str,
        typer.Option(help="gm, fcfs-fastest, fcfs-random, priority-fastest, preemptive-priority."),
    ] = "gm",
    cost: Annotated[float, typer.Option(min=0, help="Delay per migration (the paper: 0).")] = 0.0,
    hunt: Annotated[
        str | None,
        typer.Option(help="Search the smallest violation of ef, wpm, ilv or non-wasteful."),
    ] = None,
    tries: Annotated[int, typer.Option(min=0, help="--hunt: random instances to try.")] = 300,
    seed: Seed = 0,
    format: Fmt = "table",
) -> None:
    """Related machines with preemption/migration: completion times and the EF/WPM/ILV verdicts."""
    from fractions import Fraction

    from ..migration.constructions import hunt as run_hunt
    from ..migration.engine import RelatedInstance
    from ..migration.engine import simulate as msim
    from ..migration.policies import POLICIES
    from ..migration.policies import get_policy as mpolicy
    from ..migration.properties import PROPERTIES, check_all
    from ..workloads.jsonio import read_instance

    if policy not in POLICIES:
        raise CLIError(f"unknown migration policy {policy!r}; choose from {', '.join(POLICIES)}")
    _check_format(format)
    if hunt is not None:
        if hunt not in PROPERTIES:
            raise CLIError(f"--hunt takes one of {', '.join(PROPERTIES)}")
        c = run_hunt(
            policy, hunt, tries=tries, seed=seed, policy_seed=seed, cost=Fraction(str(cost))
        )
        if c is None:
            print(
                f"no violation of {hunt} by {policy} found (paper constructions and {tries} random instances)"
            )
            return
        inst = c.instance
        print(f"smallest counterexample found ({c.source}):")
        print(f"  machine speeds {[str(x) for x in inst.speeds]}")
        for j in range(inst.n):
            print(
                f"  job {j}: release {inst.release[j]}, work {inst.work[j]}, priority {inst.priority[j]}"
            )
        print(f"  {c.verdict}")
        return
    if input is None:
        raise CLIError("give a JSON instance, or --hunt PROPERTY")
    inst = RelatedInstance.from_instance(read_instance(input))

    def make():
        return mpolicy(policy, seed)

    res = msim(inst, make(), Fraction(str(cost)))
    verdicts = check_all(make, inst, Fraction(str(cost)))
    if format == "json":
        print(
            json.dumps(
                {
                    "policy": policy,
                    "cost": cost,
                    "jobs": [
                        {
                            "id": j,
                            "org": inst.names[inst.org[j]],
                            "release": inst.release[j],
                            "work": inst.work[j],
                            "priority": float(inst.priority[j]),
                            "completion": str(res.completion[j]),
                            "completion_float": float(res.completion[j]),
                            "migrations": res.migrations[j],
                            "preemptions": res.preemptions[j],
                        }
                        for j in range(inst.n)
                    ],
                    "properties": {
                        v.prop: {"holds": v.holds, "applicable": v.applicable, "detail": v.detail}
                        for v in verdicts
                    },
                }
            )
        )
        return
    table = Table(
        title=f"{policy} on {inst.n} jobs, {inst.machines} machines (speeds {', '.join(str(x) for x in inst.speeds)})"
    )
    for col in (
        "job",
        "org",
        "release",
        "work",
        "priority",
        "completion",
        "migrations",
        "preemptions",
    ):
        table.add_column(col, justify="left" if col == "org" else "right")
    for j in range(inst.n):
        table.add_row(
            str(j),
            inst.names[inst.org[j]],
            str(inst.release[j]),
            str(inst.work[j]),
            str(inst.priority[j]),
            str(res.completion[j]),
            str(res.migrations[j]),
            str(res.preemptions[j]),
        )
    console.print(table)
    for v in verdicts:
        print(v)
