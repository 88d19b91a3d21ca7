"""``coopsched migration``: related machines, migration and fairness."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from ._app import (
    CLIError,
    Fmt,
    Seed,
    _check_format,
    _show,
    app,
    in_flags,
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
    from ..migration.reports import hunt_report, migration_report

    _check_format(format)
    if hunt is not None:
        hunted = in_flags(hunt_report, "prop", {"prop": "--hunt"})
        _show(hunted(hunt, policy, tries, seed, cost), format)
        return
    if input is None:
        raise CLIError("give a JSON instance, or --hunt PROPERTY")
    _show(migration_report(input, policy, cost, seed), format)
