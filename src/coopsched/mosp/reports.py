"""What ``coopsched mosp`` and ``coopsched game`` compute and print, as package functions.

Instance specifications (``uni:5:100:128``, ``theorem4:3``) are parsed here, the
actions of the game command run here, and the results come back as
:class:`coopsched.report.Report` objects; the CLI only renders them.
"""

from __future__ import annotations

from pathlib import Path

from ..report import Column, Report
from ..workloads.instance import Instance, InstanceError
from . import equilibrium as eq
from . import game as g
from . import paper_instances as papers
from .algorithms import ALGORITHMS, run
from .construction import construct_equilibrium
from .generators import mosp_instance
from .schedule import check, mosp_arrays

ACTIONS = ("construct", "verify", "dynamics", "search")

#: Largest game the ``game`` command takes on, in ``N**2 * n`` (N organizations, n jobs):
#: the Sec. 7.1 construction lets each organization in turn try every job of its own on
#: every cluster, and every action builds or checks such configurations. Measured on this
#: project's 2-core machine (under load, so upper bounds): ``--generate theorem5:32``
#: (8.4e6 steps) 13 s, ``theorem5:64`` (1.3e8) 224 s, ``theorem4:8`` (3.2e7) 23 s.
#: Documented in docs/game.md.
MAX_GAME_STEPS = 5 * 10**7


def check_game_size(organizations: int, jobs: int, what: str) -> None:
    """Refuse a game larger than :data:`MAX_GAME_STEPS` before building it, with the
    estimate (``what`` names the instance in the message)."""
    steps = organizations * organizations * jobs
    if steps > MAX_GAME_STEPS:
        raise ValueError(
            f"{what}: {organizations:,} organizations and {jobs:,} jobs make "
            f"{steps:,} steps (organizations^2 x jobs); the game command's limit is "
            f"{MAX_GAME_STEPS:,} steps (a minute or more of computing at the limit)"
        )


def parse_ints(text: str, what: str) -> list[int]:
    """Comma-separated integers, e.g. ``2,0,1`` (``what`` names the option in errors)."""
    try:
        return [int(x) for x in text.split(",")]
    except ValueError:
        raise ValueError(f"{what} takes comma-separated integers") from None


def instance_from_spec(spec: str, seed: int = 0) -> Instance:
    """A random MOSP instance from ``KIND:N:n:m`` (Pascual et al., Sec. 6.1).

    >>> instance_from_spec("uni:2:5:4").n
    5
    """
    try:
        kind, N, n, m = spec.split(":")
        return mosp_instance(kind, int(N), int(n), int(m), seed=seed)
    except ValueError as exc:
        raise ValueError(f"spec: expects KIND:N:n:m, e.g. uni:5:100:128 ({exc})") from None


def load_mosp_instance(path: str | Path | None, spec: str, seed: int = 0) -> Instance:
    """A MOSP instance (jobs with ``processors``, releases 0) from JSON or a spec."""
    from ..workloads.jsonio import read_instance

    if path is not None:
        inst = read_instance(path)
        if inst.processors is None:
            raise InstanceError(f"{path}: MOSP jobs need 'processors'")
        if (inst.release != 0).any():
            raise InstanceError(f"{path}: MOSP is off-line: every release must be 0")
    else:
        inst = instance_from_spec(spec, seed)
    mosp_arrays(inst)  # rejects a job wider than its cluster, with the job named
    return inst


def _gain(local: int, cost: int) -> float | None:
    """Relative makespan gain of cooperating (``None`` for an organization without jobs)."""
    return None if local == 0 else (local - cost) / local


def _pct0(x: float) -> str:
    return f"{x:.0%}"


def mosp_report(inst: Instance, algorithm: str, alpha: float = 2.0) -> Report:
    """Run a MOSP algorithm (Pascual et al.) and check it; one row per organization."""
    if algorithm not in ALGORITHMS:
        raise ValueError(f"algorithm: must be one of {', '.join(ALGORITHMS)}")
    sched = run(inst, algorithm, alpha)
    alpha_used = sched.info.get("alpha")
    rep = check(
        sched,
        bound_for=None
        if algorithm == "local" or alpha_used is None
        else {3.0: "molba3", 2.0: "molba2"}.get(float(alpha_used)),
    )
    doc = sched.to_dict()
    doc["valid"] = rep.valid
    orgm = sched.org_makespans()
    local = sched.local_makespans
    assert local is not None  # every algorithm's schedule records them
    rows = []
    for k in range(inst.k):
        lm = int(local[k])
        rows.append(
            {
                "organization": inst.organizations[k].name,
                "processors": int(inst.machines[k]),
                "jobs": int((inst.org == k).sum()),
                "local_cmax": lm,
                "cmax": int(orgm[k]),
                "gain": _gain(lm, int(orgm[k])),
            }
        )
    return Report(
        title=f"{sched.algorithm}: Cmax {sched.makespan}, score {sched.score():.3f}, "
        f"{len(sched.migrated())} job(s) migrated",
        columns=[
            Column("organization", left=True),
            Column("processors"),
            Column("jobs"),
            Column("local_cmax", "local Cmax"),
            Column("cmax", "Cmax"),
            Column("gain", fmt=_pct0),
        ],
        rows=rows,
        notes=[
            "valid; no organization's makespan grew"
            if rep.valid
            else "PROBLEMS: " + "; ".join(rep.violations)
        ],
        document=doc,
    )


def game_instance(path: str | Path | None, spec: str, seed: int = 0):
    """``(instance, mechanism or None, the paper's configuration or None)`` from a JSON
    file, a ``KIND:N:n:m`` spec, or a paper instance ``theorem1``, ``theorem4:X``,
    ``theorem5:K`` (Cohen et al.)."""
    if path is None and spec.startswith("theorem"):
        name, _, arg = spec.partition(":")
        try:
            if name == "theorem1":
                inst, mech = papers.theorem1()
                return inst, mech, None
            if name == "theorem4":
                check_game_size(*papers.theorem4_size(int(arg)), f"spec={spec}")
                t4 = papers.theorem4(int(arg))
                return t4.instance, None, t4.worst_config
            if name == "theorem5":
                check_game_size(*papers.theorem5_size(int(arg)), f"spec={spec}")
                t5 = papers.theorem5(int(arg))
                return t5.instance, None, t5.fig6c_config
            raise ValueError(f"unknown paper instance {name!r}")
        except ValueError as exc:
            if "limit" in str(exc):
                raise
            raise ValueError(
                f"spec: theorem1, theorem4:X (X >= 1) or theorem5:K (K >= 2) ({exc})"
            ) from None
    if path is None:
        parts = spec.split(":")
        if len(parts) == 4 and all(x.strip().isdigit() for x in parts[1:]):
            check_game_size(int(parts[1]), int(parts[2]), f"spec={spec}")
    inst = load_mosp_instance(path, spec, seed)
    check_game_size(inst.k, inst.n, str(path) if path is not None else f"spec={spec}")
    return inst, None, None


def game_report(
    inst: Instance,
    mech: g.Mechanism,
    action: str = "construct",
    *,
    config: list[int] | None = None,
    rebalance: str = "list",
    stabilize: bool = False,
    starts: int = 50,
    seed: int = 0,
) -> Report:
    """One action of the MOSP game (Cohen et al.): ``construct`` an equilibrium (Sec. 7.1),
    ``verify`` the epsilon of ``config``, run best-response ``dynamics``, or ``search``
    the worst equilibrium reached from random starts."""
    if action not in ACTIONS:
        raise ValueError(f"action: must be {', '.join(ACTIONS[:-1])} or {ACTIONS[-1]}")
    if rebalance not in ("list", "exact"):
        raise ValueError("rebalance: must be 'list' or 'exact'")
    if config is not None and len(config) != inst.n:
        raise ValueError(f"config: needs {inst.n} clusters, one per job")
    cfg = config
    out: dict = {"action": action, "priority": mech.kind, "order": mech.order}
    notes: list[str] = []
    if action == "construct":
        e = construct_equilibrium(inst, mech, rebalance=rebalance, stabilize=stabilize)
        cfg = e.config.tolist()
        out.update(rebalance=rebalance, **{k: v for k, v in e.info.items() if k != "rebalance"})
        try:
            out["epsilon"], _ = eq.epsilon(inst, cfg, mech)
        except ValueError as exc:  # too many distinct jobs for exact best responses
            out["epsilon"], out["epsilon_note"] = None, str(exc)
    elif action == "verify":
        cfg = cfg if cfg is not None else inst.org.tolist()
        out["epsilon"], out["per_agent"] = eq.epsilon(inst, cfg, mech)
    elif action == "dynamics":
        dyn = eq.best_response_dynamics(inst, mech, cfg)
        cfg = dyn.config.tolist()
        out.update(
            converged=dyn.converged,
            steps=dyn.steps,
            cycle=None if dyn.cycle is None else [list(c) for c in dyn.cycle],
        )
    else:
        found = eq.search_equilibria(inst, mech, starts=starts, seed=seed)
        if not found:
            raise ValueError(f"no pure equilibrium reached from {starts} random starts")
        cfg = found[0].config.tolist()
        out.update(
            equilibria_found=len(found),
            starts=starts,
            makespans=sorted({f.makespan for f in found}),
        )
    sched = g.schedule(inst, cfg, mech)
    local = sched.local_makespans
    assert local is not None  # the game's schedules record them
    orgm = sched.org_makespans()
    out["config"] = [int(c) for c in cfg]
    out["makespan"] = sched.makespan
    out["organizations"] = [
        {"name": inst.names[k], "local": int(local[k]), "cost": int(orgm[k])} for k in range(inst.k)
    ]
    out["selfishness_violations"] = g.selfishness_violations(sched)
    notes.append(f"global Cmax {sched.makespan}")
    notes.append(f"configuration (cluster of each job): {out['config']}")
    if out.get("epsilon") is not None:
        notes.append(
            f"epsilon-approximate pure equilibrium for epsilon = {out['epsilon']:.4f} "
            "(exact best responses)"
        )
    elif out.get("epsilon_note"):
        notes.append(f"epsilon not computed: {out['epsilon_note']}")
    if action == "construct" and stabilize:
        state = (
            "a pure equilibrium"
            if out["converged"]
            else "best responses cycle"
            if out["cycle"]
            else "no equilibrium within the rounds"
        )
        notes.append(f"stabilized: {state} after {out['improving_moves']} improving move(s)")
    if action == "search":
        notes.append(
            f"{out['equilibria_found']} distinct pure equilibria reached from {starts} random "
            f"starts; makespans {out['makespans']}; the worst is shown"
        )
    if action == "dynamics":
        state = "converged" if out["converged"] else "cycle" if out["cycle"] else "no convergence"
        notes.append(f"best-response dynamics: {state} after {out['steps']} improving move(s)")
    notes.append(
        f"selfishness restriction (Sec. 4): {len(out['selfishness_violations'])} violation(s)"
    )
    rows = [
        {
            "organization": inst.names[k],
            "local_cmax": int(local[k]),
            "cost": int(orgm[k]),
            "gain": _gain(int(local[k]), int(orgm[k])),
        }
        for k in range(inst.k)
    ]
    return Report(
        title=f"{action}: priority to {mech.kind} ({mech.order})",
        columns=[
            Column("organization", left=True),
            Column("local_cmax", "local Cmax"),
            Column("cost", "cost (Cmax)"),
            Column("gain", fmt=_pct0),
        ],
        rows=rows,
        notes=notes,
        document=out,
    )
