"""The price of migration: a study the migration paper only announces (its Sec. 6).

Greedy Migration (GM) is fair (EF, WPM, ILV) when migrating costs nothing. Here each
migration delays the moved job by a fixed ``cost`` (it holds the new machine without
progressing). On multi-organization instances cut from a real trace we measure, for GM
at several costs and for the non-migrating policies, the mean response time of each
organization and the number of EF violations (pairs ``j < k`` with ``d_j > d_k``).

Set-up (stated, seeded): windows of ``length`` seconds (default 5e4) from the trace
(default LPC-EGEE, its 70 machines), each starting at the submit time of a random job
and holding at least 200 jobs (busy periods, where migration matters), ``k`` organizations (users dealt as in docs/conventions.md §1), organization
``u`` has priority ``v0 = u + 1``, each machine's speed drawn uniformly from {1, 2, 3, 4}.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pandas as pd

from ..migration.engine import RelatedInstance, simulate
from ..migration.policies import get_policy
from ..migration.properties import ef_violations
from ..workloads.prepare import random_windows, trace_to_instance
from . import study as opt
from .study import Study, register_study
from .windows import load_trace, trace_files

SPEEDS = (1, 2, 3, 4)


@dataclass
class StudySpec:
    """The set-up of ``reproduce migration``: the trace and its windows, the organizations and
    machines, the migration costs (s) and the non-migrating policies compared with Greedy
    Migration."""

    trace: str = "LPC-EGEE"
    windows: int = 20
    length: int = 50_000
    k: int = 5
    machines: int = 70
    costs: tuple[int, ...] = (0, 1, 10, 60, 300, 1800)
    policies: tuple[str, ...] = (
        "fcfs-fastest",
        "fcfs-random",
        "priority-fastest",
        "preemptive-priority",
    )
    seed: int = 0
    min_jobs: int = 200
    sampling: str = "job"  # windows anchored at random jobs: busy periods, where migration matters


def related_instance(task: dict) -> RelatedInstance:
    """The related-machines instance of one task: its trace window, with machine speeds drawn from
    the task's seed."""
    trace = load_trace(task["path"])
    inst = trace_to_instance(
        trace,
        k=task["k"],
        start=task["start"],
        length=task["length"],
        machines=task["machines"],
        seed=task["seed"],
    )
    rng = random.Random(task["seed"])
    speeds = tuple(Fraction(rng.choice(SPEEDS)) for _ in range(inst.total_machines))
    return RelatedInstance(
        speeds=speeds,
        machine_org=tuple(int(x) for x in inst.machine_owner()),
        release=tuple(int(x) for x in inst.release),
        work=tuple(int(x) for x in inst.size),
        priority=tuple(Fraction(int(u) + 1) for u in inst.org),
        org=tuple(int(x) for x in inst.org),
        names=tuple(inst.names),
    )


def evaluate(task: dict) -> dict:
    """One window: GM at every cost, the non-migrating policies once (a sweep task)."""
    inst = related_instance(task)
    runs = [("gm", c) for c in task["costs"]] + [(p, 0) for p in task["policies"]]
    results: list[dict] = []
    out = {"n_jobs": inst.n, "results": results}
    for name, cost in runs:
        res = simulate(inst, get_policy(name, task["seed"]), cost)
        resp = np.array([float(d - r) for d, r in zip(res.completion, inst.release, strict=True)])
        org = np.array(inst.org)
        per_org = [
            float(resp[org == u].mean()) if (org == u).any() else None for u in range(task["k"])
        ]
        results.append(
            {
                "policy": name,
                "cost": cost,
                "mean_response": float(resp.mean()),
                "per_org": per_org,
                "ef_violations": len(ef_violations(res)),
                "migrations": int(sum(res.migrations)),
            }
        )
    return out


def tasks(spec: StudySpec, traces_dir: str | Path | None) -> list[dict]:
    """One task per random window of the trace."""
    path = trace_files(traces_dir, (spec.trace,))[spec.trace]
    trace = load_trace(path)
    starts = random_windows(
        trace, spec.length, spec.windows, seed=spec.seed, min_jobs=spec.min_jobs, by=spec.sampling
    )
    return [
        {
            "path": path,
            "trace": spec.trace,
            "start": int(st),
            "length": spec.length,
            "k": spec.k,
            "machines": spec.machines,
            "seed": spec.seed + i,
            "costs": list(spec.costs),
            "policies": list(spec.policies),
            "window": i,
        }
        for i, st in enumerate(starts)
    ]


def frame(rows: list[dict], k: int) -> pd.DataFrame:
    """One row per window, policy and migration cost: mean response times (overall and per
    organization), envy-freeness violations and migrations."""
    recs = []
    for r in rows:
        for x in r["results"]:
            d = {
                "window": r["task"]["window"],
                "n_jobs": r["n_jobs"],
                "policy": x["policy"],
                "cost": x["cost"],
                "mean_response": x["mean_response"],
                "ef_violations": x["ef_violations"],
                "migrations": x["migrations"],
            }
            for u in range(k):
                d[f"org{u}_response"] = x["per_org"][u]
            recs.append(d)
    return pd.DataFrame(recs)


def plot(df: pd.DataFrame, spec: StudySpec, png: Path) -> None:
    """Write ``migration.png``: response times against the migration cost, GM beside the non-
    migrating policies."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    gm = df[df.policy == "gm"].groupby("cost").mean(numeric_only=True)
    others = df[df.policy != "gm"].groupby("policy").mean(numeric_only=True)
    xs = np.array(spec.costs, dtype=float)
    xplot = np.where(xs == 0, 0.3, xs)  # cost 0 drawn at 0.3 on the log axis
    fig, axes = plt.subplots(1, 3, figsize=(15, 4.3))
    ax = axes[0]
    for u in range(spec.k):
        ax.plot(xplot, gm[f"org{u}_response"], marker="o", label=f"GM, org {u} (v0={u + 1})")
    ax.plot(xplot, gm["mean_response"], color="black", lw=2, marker="s", label="GM, all jobs")
    for pol in others.index:
        ax.axhline(others.loc[pol, "mean_response"], ls="--", lw=1, color="gray")
        ax.text(
            xplot[-1], others.loc[pol, "mean_response"], pol, fontsize=7, va="bottom", ha="right"
        )
    ax.set_xscale("log")
    ax.set_xlabel("migration cost (s; 0 drawn at 0.3)")
    ax.set_ylabel("mean response time (s)")
    ax.set_title("GM per organization; dashed: non-migrating, all jobs")
    ax.legend(fontsize=7)
    ax = axes[1]
    ax.plot(xplot, gm["ef_violations"], marker="o", color="C3", label="GM")
    for i, pol in enumerate(others.index):
        ax.axhline(others.loc[pol, "ef_violations"], ls="--", lw=1, color=f"C{i + 4}", label=pol)
    ax.set_xscale("log")
    ax.set_yscale("symlog", linthresh=1)
    ax.set_ylim(bottom=0)
    ax.set_xlabel("migration cost (s)")
    ax.set_ylabel("EF violations (pairs) per window")
    ax.legend(fontsize=7)
    ax.set_title("Envy-freeness")
    ax = axes[2]
    ax.plot(xplot, gm["migrations"], marker="o")
    ax.set_xscale("log")
    ax.set_xlabel("migration cost (s)")
    ax.set_ylabel("migrations per window (GM)")
    ax.set_title("Migrations")
    fig.suptitle(
        f"Price of migration on {spec.trace} windows of {spec.length:g} s, {spec.k} organizations, "
        f"speeds uniform in {set(SPEEDS)}"
    )
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def summarize(df: pd.DataFrame, spec: StudySpec) -> str:
    """The study's ``summary.md``: the means over windows per policy and migration cost."""
    gm = df[df.policy == "gm"].groupby("cost").mean(numeric_only=True)
    others = df[df.policy != "gm"].groupby("policy").mean(numeric_only=True)
    orgs = [f"org{u}_response" for u in range(spec.k)]
    lines = [
        "# The price of migration (GM with a migration delay vs non-migrating policies)",
        "",
        f"{df['window'].nunique()} windows of {spec.length:g} s from {spec.trace} (starting at random jobs, at least "
        f"{spec.min_jobs} jobs each; {spec.machines} machines, speeds "
        f"uniform in {{1, 2, 3, 4}}), {spec.k} organizations, priority v0 = index + 1; mean over windows. "
        "Response time = completion - release (s). Plot: `migration.png`.",
        "",
        "| policy | cost (s) | mean response | "
        + " | ".join(f"org {u} (v0={u + 1})" for u in range(spec.k))
        + " | EF violations | migrations |",
        "|---" * (5 + spec.k) + "|",
    ]
    for c, row in gm.iterrows():
        lines.append(
            f"| GM | {c} | {row['mean_response']:,.0f} | "
            + " | ".join(f"{row[o]:,.0f}" for o in orgs)
            + f" | {row['ef_violations']:.1f} | {row['migrations']:.0f} |"
        )
    for pol, row in others.iterrows():
        lines.append(
            f"| {pol} | - | {row['mean_response']:,.0f} | "
            + " | ".join(f"{row[o]:,.0f}" for o in orgs)
            + f" | {row['ef_violations']:.1f} | 0 |"
        )
    return "\n".join(lines) + "\n"


@register_study
class PriceOfMigration(Study):
    """GM with a migration delay against the non-migrating policies (beyond the paper)."""

    name = "migration"
    title = "Migration and fairness: the price of migration (GM with a migration delay)"
    files = ("migration.png",)
    options = (opt.TRACES, opt.WINDOWS.but(help="Windows of the trace (default 20)."))
    evaluate = staticmethod(evaluate)

    def configure(self, traces: str | Path | None = None, windows: int | None = None) -> None:
        self.spec = StudySpec(seed=self.seed)
        if self.quick:
            s = self.spec
            s.windows, s.costs, s.length, s.min_jobs = 2, (0, 60, 600), 10_000, 50
        if windows:
            self.spec.windows = windows
        trace_files(traces, ())  # the folder exists, or an error now (the log: in tasks)
        self.traces_dir = traces

    def tasks(self) -> list[dict]:
        return tasks(self.spec, self.traces_dir)

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        return frame(rows, self.spec.k)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        plot(df, self.spec, out / "migration.png")
        return summarize(df, self.spec)
