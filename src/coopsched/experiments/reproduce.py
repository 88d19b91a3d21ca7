"""Reproduction of Skowron & Rzadca, Sec. 7: Table 1, Table 2 and Figure 10.

Each window of a trace becomes a 5-organization instance (docs/conventions.md §1); REF's
schedule is computed once and every other policy's ``dpsi / p_tot`` is measured against
it at the horizon. Traces: LPC-EGEE and RICC as in the paper; PIK-IPLEX and
SHARCNET-Whale are not available here, so METACENTRUM and HPC2N stand in for them.
Machine counts: LPC-EGEE 70 and RICC 8192 (paper), HPC2N its header's MaxProcs (240),
METACENTRUM (no header) the log's peak of concurrently used processors (604) unless
given. Results: ``rows.jsonl`` (one line per window, the resume state), ``results.csv``,
``summary.md`` (ours beside the paper's numbers) and, for Figure 10, ``fig10.png``.

Beyond the paper, ``jobs="rigid"`` keeps each job on its processors at once (REF and
every policy under the backfilling rule ``backfill``); the default ``"sequential"`` is
the paper's split. What the trace studies share (the logs, the window options, one
window's measure) lives in :mod:`coopsched.experiments.windows`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from ..workloads.prepare import random_windows
from . import paper_values
from . import study as opt
from .columns import label as column_label
from .columns import resolve_policies
from .study import Study, register_study
from .windows import (  # noqa: F401 (evaluate_window, policy_params: used from here before)
    WindowState,
    default_machines,
    evaluate_window,
    fmt,
    load_trace,
    parse_ints,
    policy_params,
    rows_frame,
    trace_files,
)

#: The four traces of Tables 1 and 2 (the paper's two, and two stand-ins).
PAPER_TRACES = ("LPC-EGEE", "RICC", "METACENTRUM", "HPC2N")
#: Which of our traces stands for which of the paper's.
STANDS_FOR = {
    "LPC-EGEE": "LPC-EGEE",
    "RICC": "RICC",
    "METACENTRUM": "PIK-IPLEX",
    "HPC2N": "SHARCNET-Whale",
}
POLICIES = paper_values.POLICY_ORDER


@dataclass
class TableSpec:
    """Settings of a Table 1/2 run."""

    length: int
    traces: tuple[str, ...] = PAPER_TRACES
    windows: int = 100
    k: int = 5
    split: str = "zipf"
    seed: int = 0
    rand_samples: int = 15
    machines: dict[str, int] = field(default_factory=dict)
    policies: tuple[str, ...] = POLICIES
    sampling: str = "time"
    warmup: int = 0
    owners: str = "user"
    backlog: bool = False
    jobs: str = "sequential"
    backfill: str | None = None

    def window(self) -> WindowState:
        """How the windows are cut and filled, and the job model."""
        return WindowState(
            self.sampling, self.warmup, self.owners, self.backlog, self.jobs, self.backfill
        )

    def window_options(self) -> dict:
        """The non-default window options (``trace_to_instance`` keywords)."""
        return self.window().options()


def table_tasks(spec: TableSpec, traces: str | Path | None) -> list[dict]:
    """Every window of every trace (``traces``: the folder of the logs, see
    :func:`~coopsched.experiments.windows.trace_files`)."""
    tasks = []
    opts = spec.window().task_options()
    files = trace_files(traces, spec.traces)
    for name in spec.traces:
        path = files[name]
        trace = load_trace(path)
        machines = spec.machines.get(name) or default_machines(name, trace)
        starts = random_windows(trace, spec.length, spec.windows, seed=spec.seed, by=spec.sampling)
        for i, st in enumerate(starts):
            tasks.append(
                {
                    "trace": name,
                    "path": path,
                    "start": int(st),
                    "length": spec.length,
                    "k": spec.k,
                    "split": spec.split,
                    "seed": spec.seed + i,
                    "machines": machines,
                    "policies": list(spec.policies),
                    "rand_samples": spec.rand_samples,
                    "window": i,
                }
            )
            tasks[-1].update(opts)
    return tasks


def summarize_table(df: pd.DataFrame, spec: TableSpec) -> tuple[pd.DataFrame, str]:
    """Mean and std per trace and policy, and the Markdown beside the paper's table."""
    paper = (
        paper_values.TABLE1
        if spec.length == 50_000
        else paper_values.TABLE2
        if spec.length == 500_000
        else None
    )
    recs = []
    for name in spec.traces:
        sub = df[df["trace"] == name]
        for pol in spec.policies:
            col = sub[f"ratio_{pol}"]
            recs.append(
                {
                    "trace": name,
                    "policy": pol,
                    "mean": col.mean(),
                    "std": col.std(ddof=1),
                    "windows": len(col),
                    "zero_windows": int((col == 0).sum()),
                }
            )
    stats = pd.DataFrame(recs)
    label = {50_000: "Table 1", 500_000: "Table 2"}.get(spec.length, f"duration {spec.length}")
    lines = [
        f"# {label}: dpsi/p_tot, {spec.k} organizations, windows of {spec.length:g} s",
        "",
        f"Ours: mean (standard deviation) over {spec.windows} random windows per trace, "
        f"machines split by {spec.split}, RAND with N={spec.rand_samples}, "
        + spec.window().describe()
        + " Paper: Skowron & Rzadca, 'Non-monetary fair scheduling', "
        f"{label if paper else 'no published counterpart'}.",
        "",
    ]
    header = (
        "| policy | " + " | ".join(f"{n} ours | {STANDS_FOR[n]} paper" for n in spec.traces) + " |"
    )
    lines += [header, "|---" * (1 + 2 * len(spec.traces)) + "|"]
    for pol in spec.policies:
        cells = [column_label(pol)]
        for name in spec.traces:
            s = stats[(stats.trace == name) & (stats.policy == pol)].iloc[0]
            cells.append(f"{fmt(s['mean'])} ({fmt(s['std'])})")
            p = paper.get(STANDS_FOR[name], {}).get(pol) if paper else None
            cells.append(f"{p[0]:g} ({p[1]:g})" if p else "-")
        lines.append("| " + " | ".join(cells) + " |")
    busy = df[df[[f"ratio_{p}" for p in spec.policies]].abs().sum(axis=1) > 0]
    lines += [
        "",
        "Ours over the windows with contention only (where some policy departs from REF):",
        "",
        "| policy | "
        + " | ".join(f"{n} ({int((busy.trace == n).sum())} windows)" for n in spec.traces)
        + " |",
        "|---" * (1 + len(spec.traces)) + "|",
    ]
    for pol in spec.policies:
        cells = [column_label(pol)]
        for name in spec.traces:
            col = busy[busy.trace == name][f"ratio_{pol}"]
            cells.append(f"{fmt(col.mean())} ({fmt(col.std(ddof=1))})" if len(col) else "-")
        lines.append("| " + " | ".join(cells) + " |")
    lines += [
        "",
        "METACENTRUM stands in for PIK-IPLEX and HPC2N for SHARCNET-Whale (neither is "
        "available here): their columns compare different workloads and only the ranking "
        "of the policies is comparable.",
        "",
        "Windows where no policy departs from REF (no contention: every policy scores 0): "
        + ", ".join(f"{n} {_quiet_windows(df, n, spec.policies)}" for n in spec.traces)
        + f" of {spec.windows}.",
    ]
    return stats, "\n".join(lines) + "\n"


def _quiet_windows(df: pd.DataFrame, trace: str, policies) -> int:
    sub = df[df["trace"] == trace]
    return int((sub[[f"ratio_{p}" for p in policies]].abs().sum(axis=1) == 0).sum())


# ---------------------------------------------------------------------------- Figure 10


@dataclass
class Fig10Spec:
    """The set-up of ``reproduce fig10`` (Skowron & Rzadca, Figure 10): numbers of organizations,
    windows, their length, the split of the machines and the policies."""

    orgs: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10)
    windows: int = 100
    length: int = 50_000
    split: str = "zipf"
    seed: int = 0
    rand_samples: int = 15
    policies: tuple[str, ...] = POLICIES
    window: WindowState = field(default_factory=WindowState)


def fig10_tasks(spec: Fig10Spec, traces: str | Path | None) -> list[dict]:
    """Every window for every number of organizations (``traces``: the folder of the
    logs, see :func:`~coopsched.experiments.windows.trace_files`)."""
    path = trace_files(traces, ("LPC-EGEE",))["LPC-EGEE"]
    trace = load_trace(path)
    starts = random_windows(
        trace, spec.length, spec.windows, seed=spec.seed, by=spec.window.sampling
    )
    opts = spec.window.task_options()
    return [
        {
            "trace": "LPC-EGEE",
            "path": path,
            "start": int(st),
            "length": spec.length,
            "k": k,
            "split": spec.split,
            "seed": spec.seed + i,
            "machines": 70,
            "policies": list(spec.policies),
            "rand_samples": spec.rand_samples,
            "window": i,
            **opts,
        }
        for k in spec.orgs
        for i, st in enumerate(starts)
    ]


def summarize_fig10(df: pd.DataFrame, spec: Fig10Spec, png: Path) -> tuple[pd.DataFrame, str]:
    """Figure 10 (``png``) and its table: each policy's unfairness ``dpsi / p_tot`` against
    the number of organizations."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    recs = []
    for k in spec.orgs:
        sub = df[df["k"] == k]
        for pol in spec.policies:
            col = sub[f"ratio_{pol}"]
            n = len(col)
            recs.append(
                {
                    "k": k,
                    "policy": pol,
                    "mean": col.mean(),
                    "std": col.std(ddof=1),
                    "ci95": 1.96 * col.std(ddof=1) / np.sqrt(n) if n > 1 else np.nan,
                    "windows": n,
                    "ref_seconds": sub["seconds_ref"].mean(),
                }
            )
    stats = pd.DataFrame(recs)
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, pol in enumerate(spec.policies):
        s = stats[stats.policy == pol]
        x = s["k"] + (i - len(spec.policies) / 2) * 0.06  # small offsets keep the bars apart
        low = np.minimum(s["ci95"].fillna(0), s["mean"])  # the measure is >= 0: clip the bar at 0
        ax.errorbar(
            x,
            s["mean"],
            yerr=[low, s["ci95"].fillna(0)],
            marker="o",
            capsize=3,
            label=column_label(pol),
        )
    ax.set_xlabel("number of organizations")
    ax.set_ylabel(r"$\Delta\psi / p_{tot}$ (s)")
    ax.set_ylim(bottom=0)
    ax.set_title(f"LPC-EGEE, windows of {spec.length:g} s ({spec.windows} per point, 95% CI)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(png, dpi=120)
    plt.close(fig)
    lines = [
        "# Figure 10: unfairness against the number of organizations (LPC-EGEE)",
        "",
        f"Ours: mean dpsi/p_tot over {spec.windows} windows of {spec.length:g} s per point, "
        f"machines split by {spec.split}, {spec.window.describe()} Plot in `{png.name}`. "
        "The paper gives Figure 10 "
        "only as a plot (no numbers): unfairness grows with the number of organizations and "
        "DIRECTCONTR stays below FAIRSHARE.",
        "",
        "| k | " + " | ".join(column_label(p) for p in spec.policies) + " | REF seconds |",
        "|---" * (len(spec.policies) + 2) + "|",
    ]
    for k in spec.orgs:
        s = stats[stats.k == k]
        cells = [str(k)] + [fmt(s[s.policy == p]["mean"].iloc[0]) for p in spec.policies]
        cells.append(f"{s['ref_seconds'].iloc[0]:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return stats, "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- studies


class _TraceTable(Study):
    """Table 1 or 2: ``dpsi/p_tot`` of every policy on random windows of four traces."""

    files = ("summary.csv",)
    options = (
        opt.TRACES,
        opt.WINDOWS,
        opt.SPLIT,
        opt.MACHINES,
        opt.SAMPLING,
        opt.WARMUP,
        opt.OWNERS,
        opt.POLICIES,
        opt.BACKLOG,
        opt.JOBS,
        opt.BACKFILL,
    )
    evaluate = staticmethod(evaluate_window)
    length: ClassVar[int] = 50_000

    def configure(
        self,
        traces: str | Path | None = None,
        windows: int | None = None,
        split: str = "zipf",
        machines: dict[str, int] | None = None,
        sampling: str = "time",
        warmup: int = 0,
        owners: str = "user",
        policies: str | tuple[str, ...] | None = None,
        backlog: bool = False,
        jobs: str = "sequential",
        backfill: str | None = None,
    ) -> None:
        if split not in ("uniform", "zipf"):
            raise ValueError("split: must be 'uniform' or 'zipf'")
        WindowState(sampling, warmup, owners, backlog, jobs, backfill)  # checks them
        self.spec = TableSpec(
            length=self.length,
            split=split,
            seed=self.seed,
            machines=machines or {},
            sampling=sampling,
            warmup=int(warmup),
            owners=owners,
            policies=resolve_policies(policies, POLICIES),
            backlog=bool(backlog),
            jobs=jobs,
            backfill=backfill,
        )
        if self.quick:
            self.spec.windows = 4
        if windows:
            self.spec.windows = windows
        trace_files(traces, ())  # the folder exists, or an error now (the logs: in tasks)
        self.traces_folder = traces

    def tasks(self) -> list[dict]:
        return table_tasks(self.spec, self.traces_folder)

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        return rows_frame(rows)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        stats, md = summarize_table(df, self.spec)
        stats.to_csv(out / "summary.csv", index=False)
        return md


@register_study
class Table1(_TraceTable):
    """``reproduce table1``: Skowron & Rzadca's Table 1, windows of 5e4 s on four traces."""

    name = "table1"
    title = "Skowron & Rzadca, Table 1: 100 windows of 5e4 s x 4 traces"
    length = 50_000


@register_study
class Table2(_TraceTable):
    """``reproduce table2``: Skowron & Rzadca's Table 2, windows of 5e5 s on four traces."""

    name = "table2"
    title = "Skowron & Rzadca, Table 2: 100 windows of 5e5 s x 4 traces"
    length = 500_000


@register_study
class Fig10(Study):
    """Figure 10: ``dpsi/p_tot`` on LPC-EGEE as the number of organizations grows."""

    name = "fig10"
    title = "Skowron & Rzadca, Figure 10: LPC-EGEE, 2..10 organizations"
    files = ("summary.csv", "fig10.png")
    options = (
        opt.TRACES,
        opt.WINDOWS.but(help="Windows per organization count (default 100)."),
        opt.SPLIT,
        opt.StudyOption("orgs", help="Comma-separated organization counts (default 2,...,10)."),
        opt.POLICIES,
        opt.SAMPLING,
        opt.WARMUP,
        opt.OWNERS,
        opt.BACKLOG,
        opt.JOBS,
        opt.BACKFILL,
    )
    evaluate = staticmethod(evaluate_window)

    def configure(
        self,
        traces: str | Path | None = None,
        windows: int | None = None,
        split: str = "zipf",
        orgs: tuple[int, ...] | str | None = None,
        policies: str | tuple[str, ...] | None = None,
        sampling: str = "time",
        warmup: int = 0,
        owners: str = "user",
        backlog: bool = False,
        jobs: str = "sequential",
        backfill: str | None = None,
    ) -> None:
        if split not in ("uniform", "zipf"):
            raise ValueError("split: must be 'uniform' or 'zipf'")
        self.spec = Fig10Spec(
            split=split,
            seed=self.seed,
            policies=resolve_policies(policies, POLICIES),
            window=WindowState(sampling, warmup, owners, bool(backlog), jobs, backfill),
        )
        if self.quick:
            self.spec.orgs, self.spec.windows = (2, 4, 6), 3
        if orgs:
            self.spec.orgs = parse_ints(orgs, "orgs")
        if windows:
            self.spec.windows = windows
        trace_files(traces, ())  # the folder exists, or an error now (the log: in tasks)
        self.traces_folder = traces

    def tasks(self) -> list[dict]:
        return fig10_tasks(self.spec, self.traces_folder)

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        return rows_frame(rows)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        stats, md = summarize_fig10(df, self.spec, out / "fig10.png")
        stats.to_csv(out / "summary.csv", index=False)
        return md
