"""The ``coopsched`` command line: a thin layer over the package."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Fair scheduling on platforms shared by several organizations.",
)
console = Console()


class CLIError(Exception):
    """An error to report on one line, without a traceback."""


def _load(
    path: Path | None, orgs: int, window_start: int | None, window_length: int | None,
    machines: int | None, split: str, seed: int,
):
    """An instance from a JSON file, an SWF trace, or the built-in synthetic default."""
    from .workloads.generators import synthetic_instance
    from .workloads.jsonio import read_instance
    from .workloads.prepare import trace_to_instance
    from .workloads.swf import read_swf

    if path is None:
        return synthetic_instance(k=orgs, seed=seed)
    name = path.name.lower()
    if name.endswith(".json"):
        return read_instance(path)
    if name.endswith(".swf") or name.endswith(".swf.gz"):
        trace = read_swf(path)
        return trace_to_instance(
            trace, k=orgs, start=window_start, length=window_length, machines=machines,
            split=split, seed=seed,
        )
    raise CLIError(f"{path}: expected a .json instance or a .swf/.swf.gz trace")


def _check_format(format: str) -> None:
    if format not in ("table", "json"):
        raise CLIError("--format must be 'table' or 'json'")


def _mosp_instance(path: Path | None, generate: str, seed: int):
    """A MOSP instance (jobs with ``processors``, releases 0) from JSON or a generator spec."""
    from .mosp.generators import mosp_instance
    from .mosp.schedule import mosp_arrays
    from .workloads.jsonio import read_instance

    if path is not None:
        inst = read_instance(path)
        if inst.processors is None:
            raise CLIError(f"{path}: MOSP jobs need 'processors'")
        if (inst.release != 0).any():
            raise CLIError(f"{path}: MOSP is off-line: every release must be 0")
    else:
        try:
            kind, N, n, m = generate.split(":")
            inst = mosp_instance(kind, int(N), int(n), int(m), seed=seed)
        except ValueError as exc:
            raise CLIError(f"--generate expects KIND:N:n:m, e.g. uni:5:100:128 ({exc})") from None
    mosp_arrays(inst)  # rejects a job wider than its cluster, with the job named
    return inst


def _horizon(inst, horizon: int | None) -> int | None:
    if horizon is not None:
        if horizon <= 0:
            raise CLIError("--horizon must be positive")
        return horizon
    return inst.meta.get("horizon")


Orgs = Annotated[int, typer.Option("--orgs", "-k", min=1, help="Organizations (traces, synthetic).")]
WStart = Annotated[int | None, typer.Option(help="Window start, seconds after the trace's first submit.")]
WLen = Annotated[int | None, typer.Option(help="Window length in seconds (default: whole trace).")]
Machines = Annotated[int | None, typer.Option(help="Machines in total (default: from the trace).")]
Split = Annotated[str, typer.Option(help="Machine split across organizations: uniform or zipf.")]
Seed = Annotated[int, typer.Option(help="Seed for users-to-organizations, machine split, policies.")]
Fmt = Annotated[str, typer.Option("--format", help="table or json.")]


@app.command()
def simulate(
    input: Annotated[Path | None, typer.Argument(help="JSON instance or SWF trace; none: synthetic.")] = None,
    policy: Annotated[str, typer.Option(help="Policy name (see 'coopsched policies').")] = "fifo",
    horizon: Annotated[int | None, typer.Option(help="Stop at this time (default: window length).")] = None,
    orgs: Orgs = 5,
    window_start: WStart = None,
    window_length: WLen = None,
    machines: Machines = None,
    split: Split = "uniform",
    seed: Seed = 0,
    samples: Annotated[int, typer.Option(min=1, help="RAND: sampled orderings N (paper: 15, 75).")] = 15,
    format: Fmt = "table",
) -> None:
    """Simulate one policy and print per-organization results (or the schedule as JSON)."""
    from .online.policies import get_policy

    _check_format(format)
    params = {} if policy.lower() == "ref" else {"seed": seed}  # REF is deterministic
    if policy.lower() == "rand":
        params["n_samples"] = samples
    pol = get_policy(policy, **params)
    inst = _load(input, orgs, window_start, window_length, machines, split, seed)
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
            row["org"], str(row["machines"]), str(row["jobs"]), str(row["started"]),
            str(row["completed"]), f"{row['psi_sp']:,}", f"{row['work']:,}",
            "-" if mf is None else f"{mf:,.0f}",
        )
    console.print(table)
    console.print(f"utilization {sched.utilization(t):.1%}; {len(sched.unstarted)} job(s) not started before t={t}")


def _compare_table(inst, T: int, policies: list[str], seed: int, title: str) -> None:
    from .experiments.compare import compare_policies

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
    workload: Annotated[str, typer.Option(help="bursty (default) or lublin (Lublin-Feitelson model).")] = "bursty",
) -> None:
    """Compare every policy on a built-in synthetic workload (no files needed)."""
    from .workloads.generators import lublin_instance, synthetic_instance

    if workload == "bursty":
        inst = synthetic_instance(k=orgs, seed=seed)
    elif workload == "lublin":
        inst = lublin_instance(k=orgs, seed=seed)
    else:
        raise CLIError("--workload must be 'bursty' or 'lublin'")
    T = inst.meta["horizon"]
    shares = ", ".join(f"{o.name}:{o.machines}" for o in inst.organizations)
    jobs = ", ".join(f"{inst.organizations[u].name}:{int((inst.org == u).sum())}" for u in range(inst.k))
    console.print(f"Synthetic {workload} workload (seed {seed}): {inst.n} jobs, {inst.total_machines} machines.")
    console.print(f"  machines per organization {shares}; jobs per organization {jobs}; horizon {T}.")
    from .experiments.compare import DEFAULT_POLICIES

    _compare_table(inst, T, list(DEFAULT_POLICIES), seed, "Policies compared at the horizon")


@app.command()
def compare(
    input: Annotated[Path | None, typer.Argument(help="JSON instance or SWF trace; none: synthetic.")] = None,
    policies: Annotated[str, typer.Option(help="Comma-separated policy names.")] = ",".join(
        ("ref", "rand", "directcontr", "fairshare", "utfairshare", "currfairshare", "roundrobin", "fifo")
    ),
    horizon: Annotated[int | None, typer.Option(help="Horizon (default: window length).")] = None,
    orgs: Orgs = 5,
    window_start: WStart = None,
    window_length: WLen = 50_000,
    machines: Machines = None,
    split: Split = "uniform",
    seed: Seed = 0,
) -> None:
    """How fair is each policy on this workload? (unfairness against REF, utilization)."""
    inst = _load(input, orgs, window_start, window_length, machines, split, seed)
    T = _horizon(inst, horizon)
    if T is None:
        raise CLIError("give --horizon (the instance has none)")
    names = [p.strip() for p in policies.split(",") if p.strip()]
    from .online.policies import get_policy

    for p in names:
        get_policy(p)  # fail early on a typo
    _compare_table(inst, T, names, seed, f"{inst.n} jobs, {inst.k} organizations, horizon {T}")


@app.command("trace-info")
def trace_info(
    file: Annotated[Path, typer.Argument(help="SWF trace (.swf or .swf.gz).")],
    format: Fmt = "table",
) -> None:
    """Statistics of an SWF trace."""
    from .workloads.swf import read_swf

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
def reproduce(
    what: Annotated[str, typer.Argument(help="table1, table2, fig10 (Skowron & Rzadca, Sec. 7), mosp (Pascual et al., Sec. 6), game (Cohen et al., Sec. 8), poa (Cohen et al., Theorems 1, 4, 5) or migration (the price-of-migration study).")],
    out: Annotated[Path | None, typer.Option(help="Output folder (default results/WHAT).")] = None,
    quick: Annotated[bool, typer.Option(help="Small preset: a few windows, minutes on 2 cores.")] = False,
    windows: Annotated[int | None, typer.Option(min=1, help="Windows per trace (default 100); for mosp, instances per cell (50).")] = None,
    workers: Annotated[int | None, typer.Option(min=1, help="Local worker processes (default: all cores).")] = None,
    scheduler: Annotated[str | None, typer.Option(help="dask.distributed scheduler address.")] = None,
    traces: Annotated[Path | None, typer.Option(help="Folder with the SWF traces.")] = None,
    split: Split = "zipf",
    seed: Seed = 0,
    metacentrum_machines: Annotated[int | None, typer.Option(help="Machines for METACENTRUM (no header).")] = None,
    orgs: Annotated[str | None, typer.Option(help="fig10: comma-separated organization counts.")] = None,
    window_sampling: Annotated[str, typer.Option(help="table1/2: window starts uniform in 'time' or at a random 'job'.")] = "time",
) -> None:
    """Reproduce a paper's experiments (table1, table2, fig10, mosp, game, poa, migration); resumes."""
    from .experiments.reproduce import reproduce as run

    if what not in ("table1", "table2", "fig10", "mosp", "migration", "game", "poa"):
        raise CLIError(f"unknown reproduction {what!r}; choose table1, table2, fig10, mosp, migration, game or poa")
    studies = {  # what: (module, function, its own options, files written)
        "poa": ("poa", "reproduce_poa", {"seed": seed}, "summary.md, results.csv, poa.png, rows.jsonl"),
        "game": ("game_grid", "reproduce_game", {"instances": windows, "seed": seed},
                 "summary.md, results.csv, organizations.csv, fig7.png, fig8.png, rows.jsonl"),
        "migration": ("migration_study", "run_study", {"traces": traces, "windows": windows, "seed": seed},
                      "summary.md, results.csv, migration.png, rows.jsonl"),
        "mosp": ("mosp_grid", "reproduce_mosp", {"instances": windows, "seed": seed},
                 "summary.md, results.csv, fig7.png, rows.jsonl"),
    }
    out = out or Path("results") / (what + ("-quick" if quick else ""))
    if what in studies:
        module, function, options, files = studies[what]
        study = getattr(importlib.import_module(f".experiments.{module}", __package__), function)
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
    _, md = run(what, out, quick=quick, traces=traces, workers=workers, scheduler=scheduler,
                windows=windows, split=split, seed=seed, machines=machines, orgs=ks, sampling=window_sampling)
    print(md)
    print(f"written to {out}/ (summary.md, summary.csv, results.csv, rows.jsonl)")


@app.command()
def mosp(
    input: Annotated[Path | None, typer.Argument(help="JSON instance with job 'processors'; none: --generate.")] = None,
    algorithm: Annotated[str, typer.Option(help="local, molba, ilba or meta (Pascual et al.).")] = "meta",
    alpha: Annotated[float, typer.Option(help="MOLBA's alpha (2 or 3 have guarantees).")] = 2.0,
    generate: Annotated[str, typer.Option(help="Generator spec KIND:N:n:m, KIND uni or swf.")] = "uni:5:100:128",
    seed: Seed = 0,
    format: Fmt = "table",
) -> None:
    """Multi-organization scheduling of rigid parallel jobs: LOCAL, MOLBA, ILBA."""
    from .mosp.algorithms import ALGORITHMS, run
    from .mosp.schedule import check

    if algorithm not in ALGORITHMS:
        raise CLIError(f"--algorithm must be one of {', '.join(ALGORITHMS)}")
    _check_format(format)
    inst = _mosp_instance(input, generate, seed)
    sched = run(inst, algorithm, alpha)
    alpha_used = sched.info.get("alpha")
    rep = check(sched, bound_for={3.0: "molba3", 2.0: "molba2"}.get(alpha_used) if algorithm != "local" else None)
    if format == "json":
        d = sched.to_dict()
        d["valid"] = rep.valid
        print(json.dumps(d))
        return
    table = Table(title=f"{sched.algorithm}: Cmax {sched.makespan}, score {sched.score():.3f}, {len(sched.migrated())} job(s) migrated")
    for col in ("organization", "processors", "jobs", "local Cmax", "Cmax", "gain"):
        table.add_column(col, justify="left" if col == "organization" else "right")
    orgm = sched.org_makespans()
    for k in range(inst.k):
        lm = int(sched.local_makespans[k])
        gain = "-" if lm == 0 else f"{(lm - orgm[k]) / lm:.0%}"
        table.add_row(inst.organizations[k].name, str(inst.machines[k]), str(int((inst.org == k).sum())), str(lm), str(int(orgm[k])), gain)
    console.print(table)
    console.print("valid; no organization's makespan grew" if rep.valid else "PROBLEMS: " + "; ".join(rep.violations))


@app.command()
def game(
    input: Annotated[Path | None, typer.Argument(help="JSON instance with job 'processors'; none: --generate.")] = None,
    action: Annotated[str, typer.Option(help="construct (Sec. 7.1), verify (epsilon of --config), dynamics, or search (worst equilibrium reached from random starts).")] = "construct",
    priority: Annotated[str, typer.Option(help="organizations (Sec. 7) or jobs (Sec. 6).")] = "organizations",
    order: Annotated[str, typer.Option(help="List algorithm: lpt, hf, spt or list.")] = "lpt",
    org_order: Annotated[str | None, typer.Option(help="Organizations from highest priority, e.g. 2,0,1.")] = None,
    config: Annotated[str | None, typer.Option(help="verify/dynamics: cluster of every job, e.g. 0,0,1,2; 'paper' for the proof's equilibrium of theorem4/theorem5.")] = None,
    rebalance: Annotated[str, typer.Option(help="construct: 'list' (the list algorithm) or 'exact' (exact best responses).")] = "list",
    stabilize: Annotated[bool, typer.Option(help="construct: then reapply best responses until no organization improves.")] = False,
    starts: Annotated[int, typer.Option(min=1, help="search: random starting configurations.")] = 50,
    generate: Annotated[str, typer.Option(help="Generator spec KIND:N:n:m, or a paper instance: theorem1, theorem4:X, theorem5:K.")] = "uni:3:8:4",
    seed: Seed = 0,
    format: Fmt = "table",
) -> None:
    """The MOSP game: build an equilibrium, measure epsilon, run best-response dynamics."""
    from .mosp import equilibrium as e
    from .mosp import game as g
    from .mosp import paper_instances as papers

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

    mech = g.Mechanism(priority, order, org_order=ints(org_order, "--org-order") if org_order else None)
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
            raise CLIError(f"--generate: theorem1, theorem4:X (X >= 1) or theorem5:K (K >= 2) ({exc})") from None
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
        out.update({"converged": dyn.converged, "steps": dyn.steps,
                    "cycle": None if dyn.cycle is None else [list(c) for c in dyn.cycle]})
    else:
        found = e.search_equilibria(inst, mech, starts=starts, seed=seed)
        if not found:
            raise CLIError(f"no pure equilibrium reached from {starts} random starts")
        cfg = found[0].config.tolist()
        out.update(equilibria_found=len(found), starts=starts, makespans=sorted({f.makespan for f in found}))
    sched = g.schedule(inst, cfg, mech)
    local = sched.local_makespans
    orgm = sched.org_makespans()
    out["config"] = [int(c) for c in cfg]
    out["makespan"] = sched.makespan
    out["organizations"] = [{"name": inst.names[k], "local": int(local[k]), "cost": int(orgm[k])} for k in range(inst.k)]
    out["selfishness_violations"] = g.selfishness_violations(sched)
    if format == "json":
        print(json.dumps(out))
        return
    table = Table(title=f"{action}: priority to {priority} ({order})", caption=f"global Cmax {sched.makespan}")
    for col in ("organization", "local Cmax", "cost (Cmax)", "gain"):
        table.add_column(col, justify="left" if col == "organization" else "right")
    for k in range(inst.k):
        gain = "-" if local[k] == 0 else f"{(local[k] - orgm[k]) / local[k]:.0%}"
        table.add_row(inst.names[k], str(local[k]), str(orgm[k]), gain)
    console.print(table)
    print(f"configuration (cluster of each job): {out['config']}")
    if out.get("epsilon") is not None:
        print(f"epsilon-approximate pure equilibrium for epsilon = {out['epsilon']:.4f} (exact best responses)")
    elif out.get("epsilon_note"):
        print(f"epsilon not computed: {out['epsilon_note']}")
    if action == "construct" and stabilize:
        print("stabilized: " + ("a pure equilibrium" if out["converged"] else "best responses cycle" if out["cycle"]
                                else "no equilibrium within the rounds") + f" after {out['improving_moves']} improving move(s)")
    if action == "search":
        print(f"{out['equilibria_found']} distinct pure equilibria reached from {starts} random starts; "
              f"makespans {out['makespans']}; the worst is shown")
    if action == "dynamics":
        print("best-response dynamics: " + ("converged" if out["converged"] else "cycle" if out["cycle"] else "no convergence")
              + f" after {out['steps']} improving move(s)")
    print(f"selfishness restriction (Sec. 4): {len(out['selfishness_violations'])} violation(s)")


@app.command()
def migration(
    input: Annotated[Path | None, typer.Argument(help="JSON instance (job 'priority', organization 'speeds').")] = None,
    policy: Annotated[str, typer.Option(help="gm, fcfs-fastest, fcfs-random, priority-fastest, preemptive-priority.")] = "gm",
    cost: Annotated[float, typer.Option(min=0, help="Delay per migration (the paper: 0).")] = 0.0,
    hunt: Annotated[str | None, typer.Option(help="Search the smallest violation of ef, wpm, ilv or non-wasteful.")] = None,
    tries: Annotated[int, typer.Option(min=0, help="--hunt: random instances to try.")] = 300,
    seed: Seed = 0,
    format: Fmt = "table",
) -> None:
    """Related machines with preemption/migration: completion times and the EF/WPM/ILV verdicts."""
    from fractions import Fraction

    from .migration.constructions import hunt as run_hunt
    from .migration.engine import RelatedInstance
    from .migration.engine import simulate as msim
    from .migration.policies import POLICIES
    from .migration.policies import get_policy as mpolicy
    from .migration.properties import PROPERTIES, check_all
    from .workloads.jsonio import read_instance

    if policy not in POLICIES:
        raise CLIError(f"unknown migration policy {policy!r}; choose from {', '.join(POLICIES)}")
    _check_format(format)
    if hunt is not None:
        if hunt not in PROPERTIES:
            raise CLIError(f"--hunt takes one of {', '.join(PROPERTIES)}")
        c = run_hunt(policy, hunt, tries=tries, seed=seed, policy_seed=seed, cost=Fraction(str(cost)))
        if c is None:
            print(f"no violation of {hunt} by {policy} found (paper constructions and {tries} random instances)")
            return
        inst = c.instance
        print(f"smallest counterexample found ({c.source}):")
        print(f"  machine speeds {[str(x) for x in inst.speeds]}")
        for j in range(inst.n):
            print(f"  job {j}: release {inst.release[j]}, work {inst.work[j]}, priority {inst.priority[j]}")
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
        print(json.dumps({
            "policy": policy, "cost": cost,
            "jobs": [{"id": j, "org": inst.names[inst.org[j]], "release": inst.release[j], "work": inst.work[j],
                      "priority": float(inst.priority[j]), "completion": str(res.completion[j]),
                      "completion_float": float(res.completion[j]), "migrations": res.migrations[j],
                      "preemptions": res.preemptions[j]} for j in range(inst.n)],
            "properties": {v.prop: {"holds": v.holds, "applicable": v.applicable, "detail": v.detail} for v in verdicts},
        }))
        return
    table = Table(title=f"{policy} on {inst.n} jobs, {inst.machines} machines (speeds {', '.join(str(x) for x in inst.speeds)})")
    for col in ("job", "org", "release", "work", "priority", "completion", "migrations", "preemptions"):
        table.add_column(col, justify="left" if col == "org" else "right")
    for j in range(inst.n):
        table.add_row(str(j), inst.names[inst.org[j]], str(inst.release[j]), str(inst.work[j]), str(inst.priority[j]),
                      str(res.completion[j]), str(res.migrations[j]), str(res.preemptions[j]))
    console.print(table)
    for v in verdicts:
        print(v)


@app.command()
def generate(
    out: Annotated[Path, typer.Argument(help="Output .swf (or .swf.gz) file.")],
    jobs: Annotated[int, typer.Option(min=1, help="Number of jobs.")] = 1000,
    machines: Annotated[int, typer.Option(min=1, help="Processors of the modelled machine.")] = 128,
    seed: Seed = 0,
) -> None:
    """Write a synthetic SWF trace of the Lublin-Feitelson model."""
    from .workloads.lublin import lublin_jobs
    from .workloads.swf import write_swf

    df = lublin_jobs(jobs, machines, seed=seed)
    write_swf(out, df, {"Version": "2.2", "Computer": "Lublin-Feitelson model (coopsched)",
                        "MaxProcs": str(machines), "MaxNodes": str(machines), "Note": f"seed {seed}"})
    print(f"wrote {jobs} jobs to {out}")


@app.command()
def policies() -> None:
    """List the online policies."""
    from .online.policies import POLICIES

    for name, cls in POLICIES.items():
        doc = (cls.__doc__ or "").strip().splitlines()[0]
        console.print(f"[bold]{name}[/bold]  {doc}")


def main(argv: list[str] | None = None) -> int:
    """Entry point: one-line errors, non-zero exits, no tracebacks for bad input."""
    from .online.engine import PolicyError
    from .workloads.instance import InstanceError
    from .workloads.swf import SWFError

    cmd = typer.main.get_command(app)
    try:
        cmd.main(args=argv, prog_name="coopsched", standalone_mode=False)
    except (CLIError, SWFError, InstanceError, PolicyError, ValueError, KeyError, OSError) as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"error: {msg}", file=sys.stderr)
        return 1
    except Exception as exc:  # the CLI framework's own usage errors, exits and aborts
        if hasattr(exc, "format_message"):
            print(f"error: {exc.format_message()}", file=sys.stderr)
            return 2
        if type(exc).__name__ == "Abort":
            print("aborted", file=sys.stderr)
            return 130
        if hasattr(exc, "exit_code"):
            return int(exc.exit_code)
        raise
    return 0


if __name__ == "__main__":
    sys.exit(main())


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
