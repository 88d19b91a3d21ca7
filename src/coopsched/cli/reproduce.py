"""``coopsched reproduce``: the papers' experiments."""

from __future__ import annotations

import importlib
from pathlib import Path
from typing import Annotated

import typer

from ._app import (
    CLIError,
    Seed,
    Split,
    app,
)


@app.command()
def reproduce(
    what: Annotated[
        str,
        typer.Argument(
            help="table1, table2, fig10 (Skowron & Rzadca, Sec. 7), mosp (Pascual et al., Sec. 6), game (Cohen et al., Sec. 8), poa (Cohen et al., Theorems 1, 4, 5) or migration (the price-of-migration study)."
        ),
    ],
    out: Annotated[Path | None, typer.Option(help="Output folder (default results/WHAT).")] = None,
    quick: Annotated[
        bool, typer.Option(help="Small preset: a few windows, minutes on 2 cores.")
    ] = False,
    windows: Annotated[
        int | None,
        typer.Option(
            min=1, help="Windows per trace (default 100); for mosp, instances per cell (50)."
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Local worker processes (default: all cores).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="dask.distributed scheduler address.")
    ] = None,
    traces: Annotated[Path | None, typer.Option(help="Folder with the SWF traces.")] = None,
    split: Split = "zipf",
    seed: Seed = 0,
    metacentrum_machines: Annotated[
        int | None, typer.Option(help="Machines for METACENTRUM (no header).")
    ] = None,
    orgs: Annotated[
        str | None, typer.Option(help="fig10: comma-separated organization counts.")
    ] = None,
    window_sampling: Annotated[
        str, typer.Option(help="table1/2: window starts uniform in 'time' or at a random 'job'.")
    ] = "time",
) -> None:
    """Reproduce a paper's experiments (table1, table2, fig10, mosp, game, poa, migration); resumes."""
    from ..experiments.reproduce import reproduce as run

    if what not in ("table1", "table2", "fig10", "mosp", "migration", "game", "poa"):
        raise CLIError(
            f"unknown reproduction {what!r}; choose table1, table2, fig10, mosp, migration, game or poa"
        )
    studies = {  # what: (module, function, its own options, files written)
        "poa": (
            "poa",
            "reproduce_poa",
            {"seed": seed},
            "summary.md, results.csv, poa.png, rows.jsonl",
        ),
        "game": (
            "game_grid",
            "reproduce_game",
            {"instances": windows, "seed": seed},
            "summary.md, results.csv, organizations.csv, fig7.png, fig8.png, rows.jsonl",
        ),
        "migration": (
            "migration_study",
            "run_study",
            {"traces": traces, "windows": windows, "seed": seed},
            "summary.md, results.csv, migration.png, rows.jsonl",
        ),
        "mosp": (
            "mosp_grid",
            "reproduce_mosp",
            {"instances": windows, "seed": seed},
            "summary.md, results.csv, fig7.png, rows.jsonl",
        ),
    }
    out = out or Path("results") / (what + ("-quick" if quick else ""))
    if what in studies:
        module, function, options, files = studies[what]
        study = getattr(importlib.import_module(f"coopsched.experiments.{module}"), function)
        _, md = study(out, quick=quick, workers=workers, scheduler=scheduler, **options)
        print(md)
        print(f"written to {out}/ ({files})")
        return
    if split not in ("uniform", "zipf"):
        raise CLIError("--split must be 'uniform' or 'zipf'")
    if window_sampling not in ("time", "job"):
        raise CLIError("--window-sampling must be 'time' or 'job'")
    ks = None
    if orgs:
        try:
            ks = tuple(int(x) for x in orgs.split(","))
        except ValueError:
            raise CLIError("--orgs takes comma-separated integers, e.g. 2,4,6") from None
    machines = {"METACENTRUM": metacentrum_machines} if metacentrum_machines else None
    _, md = run(
        what,
        out,
        quick=quick,
        traces=traces,
        workers=workers,
        scheduler=scheduler,
        windows=windows,
        split=split,
        seed=seed,
        machines=machines,
        orgs=ks,
        sampling=window_sampling,
    )
    print(md)
    print(f"written to {out}/ (summary.md, summary.csv, results.csv, rows.jsonl)")
