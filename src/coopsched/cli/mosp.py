"""MOSP commands: ``mosp`` (Pascual et al.) and ``game`` (Cohen et al.)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from typer.core import TyperCommand

from ._app import (
    OUTPUT,
    CLIError,
    Fmt,
    Seed,
    _check_format,
    _given,
    _refuse,
    _show,
    app,
    in_flags,
    panelled,
)

#: The panels of ``game --help``: the instance, the mechanism, what to do with it, output.
GAME_PANELS = {
    **dict.fromkeys(("generate", "seed"), "Instance"),
    **dict.fromkeys(("priority", "order", "org_order"), "Mechanism"),
    **dict.fromkeys(("action", "config", "rebalance", "stabilize", "starts"), "Action"),
    "format": OUTPUT,
}

#: The library names the generator spec ``spec`` (:mod:`coopsched.mosp.reports`).
_GENERATE = {"spec": "--generate"}


@app.command()
def mosp(
    input: Annotated[
        Path | None, typer.Argument(help="JSON instance with job 'processors'; none: --generate.")
    ] = None,
    algorithm: Annotated[
        str, typer.Option(help="local, molba, ilba or meta (Pascual et al.).")
    ] = "meta",
    alpha: Annotated[float, typer.Option(help="MOLBA's alpha (2 or 3 have guarantees).")] = 2.0,
    generate: Annotated[
        str, typer.Option(help="Generator spec KIND:N:n:m, KIND uni or swf.")
    ] = "uni:5:100:128",
    seed: Seed = 0,
    format: Fmt = "table",
) -> None:
    """Multi-organization scheduling of rigid parallel jobs: LOCAL, MOLBA, ILBA."""
    from ..mosp.reports import load_mosp_instance, mosp_report

    _check_format(format)
    inst = in_flags(load_mosp_instance, "spec", _GENERATE)(input, generate, seed)
    _show(in_flags(mosp_report, "algorithm")(inst, algorithm, alpha), format)


@app.command(cls=panelled(GAME_PANELS, TyperCommand))
def game(
    input: Annotated[
        Path | None, typer.Argument(help="JSON instance with job 'processors'; none: --generate.")
    ] = None,
    action: Annotated[
        str,
        typer.Option(
            help="construct (Sec. 7.1), verify (epsilon of --config), dynamics, or search (worst equilibrium reached from random starts)."
        ),
    ] = "construct",
    priority: Annotated[
        str, typer.Option(help="organizations (Sec. 7) or jobs (Sec. 6).")
    ] = "organizations",
    order: Annotated[str, typer.Option(help="List algorithm: lpt, hf, spt or list.")] = "lpt",
    org_order: Annotated[
        str | None, typer.Option(help="Organizations from highest priority, e.g. 2,0,1.")
    ] = None,
    config: Annotated[
        str | None,
        typer.Option(
            help="verify/dynamics: cluster of every job, e.g. 0,0,1,2; 'paper' for the proof's equilibrium of theorem4/theorem5."
        ),
    ] = None,
    rebalance: Annotated[
        str,
        typer.Option(
            help="construct: 'list' (the list algorithm) or 'exact' (exact best responses)."
        ),
    ] = "list",
    stabilize: Annotated[
        bool,
        typer.Option(help="construct: then reapply best responses until no organization improves."),
    ] = False,
    starts: Annotated[
        int, typer.Option(min=1, help="search: random starting configurations.")
    ] = 50,
    generate: Annotated[
        str,
        typer.Option(
            help="Generator spec KIND:N:n:m, or a paper instance: theorem1, theorem4:X, theorem5:K."
        ),
    ] = "uni:3:8:4",
    seed: Seed = 0,
    format: Fmt = "table",
) -> None:
    """The MOSP game: build an equilibrium, measure epsilon, run best-response dynamics."""
    from ..mosp.game import Mechanism
    from ..mosp.reports import game_instance, game_report, parse_ints

    _check_format(format)
    _refuse(
        _given(*(("rebalance", "stabilize") if action != "construct" else ())), f"--action {action}"
    )
    _refuse(_given("starts") if action != "search" else [], f"--action {action}")
    _refuse(_given("config") if action in ("construct", "search") else [], f"--action {action}")
    inst, mech, paper_config = in_flags(game_instance, "spec", _GENERATE)(input, generate, seed)
    if mech is None:
        orders = parse_ints(org_order, "--org-order") if org_order else None
        mech = Mechanism(priority, order, org_order=orders)
    cfg = None
    if config == "paper":
        if paper_config is None:
            raise CLIError("--config paper needs --generate theorem4:X or theorem5:K")
        cfg = paper_config.tolist()
    elif config:
        cfg = parse_ints(config, "--config")
    report = in_flags(game_report, "action|rebalance|config")(
        inst,
        mech,
        action,
        config=cfg,
        rebalance=rebalance,
        stabilize=stabilize,
        starts=starts,
        seed=seed,
    )
    _show(report, format)
