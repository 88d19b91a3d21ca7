"""MOSP commands: ``mosp`` (Pascual et al.) and ``game`` (Cohen et al.)."""

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
    _mosp_instance,
    app,
    console,
)


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
    from ..mosp.algorithms import ALGORITHMS, run
    from ..mosp.schedule import check

    if algorithm not in ALGORITHMS:
        raise CLIError(f"--algorithm must be one of {', '.join(ALGORITHMS)}")
    _check_format(format)
    inst = _mosp_instance(input, generate, seed)
    sched = run(inst, algorithm, alpha)
    alpha_used = sched.info.get("alpha")
    rep = check(
        sched,
        bound_for={3.0: "molba3", 2.0: "molba2"}.get(alpha_used) if algorithm != "local" else None,
    )
    if format == "json":
        d = sched.to_dict()
        d["valid"] = rep.valid
        print(json.dumps(d))
        return
    table = Table(
        title=f"{sched.algorithm}: Cmax {sched.makespan}, score {sched.score():.3f}, {len(sched.migrated())} job(s) migrated"
    )
    for col in ("organization", "processors", "jobs", "local Cmax", "Cmax", "gain"):
        table.add_column(col, justify="left" if col == "organization" else "right")
    orgm = sched.org_makespans()
    for k in range(inst.k):
        lm = int(sched.local_makespans[k])
        gain = "-" if lm == 0 else f"{(lm - orgm[k]) / lm:.0%}"
        table.add_row(
            inst.organizations[k].name,
            str(inst.machines[k]),
            str(int((inst.org == k).sum())),
            str(lm),
            str(int(orgm[k])),
            gain,
        )
    console.print(table)
    console.print(
        "valid; no organization's makespan grew"
        if rep.valid
        else "PROBLEMS: " + "; ".join(rep.violations)
    )


@app.command()
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
    from ..mosp import equilibrium as e
    from ..mosp import game as g
    from ..mosp import paper_instances as papers

    if action not in ("construct", "verify", "dynamics", "search"):
        raise CLIError("--action must be construct, verify, dynamics or search")
    if rebalance not in ("list", "exact"):
        raise CLIError("--rebalance must be 'list' or 'exact'")
    _check_format(format)

    def ints(text: str, what: str) -> list[int]:
        try:
            return [int(x) for x in text.split(",")]
        except ValueError:
            raise CLIError(f"{what} takes comma-separated integers") from None

    mech = g.Mechanism(
        priority, order, org_order=ints(org_order, "--org-order") if org_order else None
    )
    paper_config = None
    if input is None and generate.startswith("theorem"):
        name, _, arg = generate.partition(":")
        try:
            if name == "theorem1":
                inst, mech = papers.theorem1()
                priority = "jobs"
            elif name == "theorem4":
                t4 = papers.theorem4(int(arg))
                inst, paper_config = t4.instance, t4.worst_config
            elif name == "theorem5":
                t5 = papers.theorem5(int(arg))
                inst, paper_config = t5.instance, t5.fig6c_config
            else:
                raise ValueError(f"unknown paper instance {name!r}")
        except ValueError as exc:
            raise CLIError(
                f"--generate: theorem1, theorem4:X (X >= 1) or theorem5:K (K >= 2) ({exc})"
            ) from None
    else:
        inst = _mosp_instance(input, generate, seed)
    cfg = None
    if config == "paper":
        if paper_config is None:
            raise CLIError("--config paper needs --generate theorem4:X or theorem5:K")
        cfg = paper_config.tolist()
    elif config:
        cfg = ints(config, "--config")
        if len(cfg) != inst.n:
            raise CLIError(f"--config needs {inst.n} clusters, one per job")
    out: dict = {"action": action, "priority": priority, "order": order}
    if action == "construct":
        eq = g.construct_equilibrium(inst, mech, rebalance=rebalance, stabilize=stabilize)
        cfg = eq.config.tolist()
        out.update(rebalance=rebalance, **{k: v for k, v in eq.info.items() if k != "rebalance"})
        try:
            out["epsilon"], _ = e.epsilon(inst, cfg, mech)
        except ValueError as exc:  # too many distinct jobs for exact best responses
            out["epsilon"], out["epsilon_note"] = None, str(exc)
    elif action == "verify":
        cfg = cfg if cfg is not None else inst.org.tolist()
        out["epsilon"], out["per_agent"] = e.epsilon(inst, cfg, mech)
    elif action == "dynamics":
        dyn = e.best_response_dynamics(inst, mech, cfg)
        cfg = dyn.config.tolist()
        out.update(
            {
                "converged": dyn.converged,
                "steps": dyn.steps,
                "cycle": None if dyn.cycle is None else [list(c) for c in dyn.cycle],
            }
        )
    else:
        found = e.search_equilibria(inst, mech, starts=starts, seed=seed)
        if not found:
            raise CLIError(f"no pure equilibrium reached from {starts} random starts")
        cfg = found[0].config.tolist()
        out.update(
            equilibria_found=len(found),
            starts=starts,
            makespans=sorted({f.makespan for f in found}),
        )
    sched = g.schedule(inst, cfg, mech)
    local = sched.local_makespans
    orgm = sched.org_makespans()
    out["config"] = [int(c) for c in cfg]
    out["makespan"] = sched.makespan
    out["organizations"] = [
        {"name": inst.names[k], "local": int(local[k]), "cost": int(orgm[k])} for k in range(inst.k)
    ]
    out["selfishness_violations"] = g.selfishness_violations(sched)
    if format == "json":
        print(json.dumps(out))
        return
    table = Table(
        title=f"{action}: priority to {priority} ({order})", caption=f"global Cmax {sched.makespan}"
    )
    for col in ("organization", "local Cmax", "cost (Cmax)", "gain"):
        table.add_column(col, justify="left" if col == "organization" else "right")
    for k in range(inst.k):
        gain = "-" if local[k] == 0 else f"{(local[k] - orgm[k]) / local[k]:.0%}"
        table.add_row(inst.names[k], str(local[k]), str(orgm[k]), gain)
    console.print(table)
    print(f"configuration (cluster of each job): {out['config']}")
    if out.get("epsilon") is not None:
        print(
            f"epsilon-approximate pure equilibrium for epsilon = {out['epsilon']:.4f} (exact best responses)"
        )
    elif out.get("epsilon_note"):
        print(f"epsilon not computed: {out['epsilon_note']}")
    if action == "construct" and stabilize:
        print(
            "stabilized: "
            + (
                "a pure equilibrium"
                if out["converged"]
                else "best responses cycle"
                if out["cycle"]
                else "no equilibrium within the rounds"
            )
            + f" after {out['improving_moves']} improving move(s)"
        )
    if action == "search":
        print(
            f"{out['equilibria_found']} distinct pure equilibria reached from {starts} random starts; "
            f"makespans {out['makespans']}; the worst is shown"
        )
    if action == "dynamics":
        print(
            "best-response dynamics: "
            + ("converged" if out["converged"] else "cycle" if out["cycle"] else "no convergence")
            + f" after {out['steps']} improving move(s)"
        )
    print(f"selfishness restriction (Sec. 4): {len(out['selfishness_violations'])} violation(s)")
