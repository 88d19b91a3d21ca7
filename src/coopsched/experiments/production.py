"""The production fair-share schedulers against Shapley fairness (a study beyond the papers).

Slurm's classic factor and Fair Tree, Maui's windowed fair share and HTCondor's
effective user priority (:mod:`coopsched.online.policies`) next to the paper's
FAIRSHARE family, DIRECTCONTR and RAND, on random windows of six PWA logs: the
unfairness ``dpsi / p_tot`` against REF (Skowron & Rzadca, Sec. 7.2) and the
utilization of every policy, windows of 5e4 and 5e5 s, 5 organizations, both machine
splits. On a subset of windows, SLURM-CLASSIC and HTCONDOR also run with half-lives
from 0 (the no-memory limit) through 1 h ... 30 days to infinity (no decay): the
half-life curve ``halflife.png``. Each window is one task of the shared runner
(:func:`~coopsched.experiments.windows.evaluate_window`: REF once, then every run).
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..workloads.prepare import random_windows
from . import study as opt
from .columns import label as column_label
from .columns import resolve_policies
from .study import Study, register_study
from .windows import (
    WindowState,
    default_machines,
    evaluate_window,
    fmt,
    load_trace,
    rows_frame,
    trace_files,
)

PRODUCTION = ("slurmclassic", "slurmfairtree", "maui", "htcondor")
BASELINES = ("fairshare", "utfairshare", "currfairshare", "directcontr", "rand")
POLICIES = PRODUCTION + BASELINES
TRACES = ("LPC-EGEE", "RICC", "HPC2N", "METACENTRUM", "KTH-SP2", "SDSC-SP2")
LENGTHS = (50_000, 500_000)
SPLITS = ("uniform", "zipf")
#: Half-lives of the curve (seconds): the two limits and 1 h .. 30 days.
HALF_LIVES = (0.0, 3600.0, 4 * 3600.0, 86400.0, 3 * 86400.0, 7 * 86400.0, 30 * 86400.0, math.inf)
SWEPT = ("slurmclassic", "htcondor")
#: Long windows (5e5 s) per split and how many of them run the half-life sweep, for the
#: traces where each such window is expensive (RICC: about 200,000 jobs per window).
LONG_CAP = {"RICC": (3, 1)}


def half_life_label(policy: str, h: float) -> str:
    """Column label of a half-life variant, e.g. ``slurmclassic@3600``."""
    return f"{policy}@{'inf' if math.isinf(h) else int(h)}"


def _hl_text(h: float) -> str:
    if math.isinf(h):
        return "inf"
    if h == 0:
        return "0"
    if h % 86400 == 0:
        return f"{int(h // 86400)} d"
    return f"{h / 3600:g} h"


@register_study
class Production(Study):
    """Unfairness and utilization of Slurm, Maui and HTCondor fair share against REF."""

    name = "production"
    title = "Beyond the papers: Slurm/Maui/HTCondor fair share against Shapley fairness"
    files = ("summary.csv", "unfairness.png", "halflife.png")
    options = (
        opt.TRACES,
        opt.WINDOWS.but(help="Windows per trace, length and split (default 20 and 10)."),
        opt.SPLIT.but(help="Machine split: uniform or zipf (default both)."),
        opt.MACHINES,
        opt.SAMPLING.but(help="Window starts uniform in 'time' or at a random 'job' (default)."),
        opt.POLICIES,
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
        split: str | None = None,
        machines: dict[str, int] | None = None,
        sampling: str = "job",
        policies: str | tuple[str, ...] | None = None,
        warmup: int = 0,
        owners: str = "user",
        backlog: bool = False,
        jobs: str = "sequential",
        backfill: str | None = None,
    ) -> None:
        self.policies = resolve_policies(policies, POLICIES)
        if split is not None and split not in SPLITS:
            raise ValueError("split: must be 'uniform' or 'zipf'")
        self.window = WindowState(sampling, warmup, owners, bool(backlog), jobs, backfill)
        self.splits = (split,) if split else SPLITS
        self.sampling = sampling
        self.machines = machines or {}
        self.traces: tuple[str, ...] = TRACES
        # windows per (trace, length, split); the long windows cost ten times more
        self.windows = {50_000: 20, 500_000: 10}
        self.sweep_windows = {50_000: 20, 500_000: 3}
        # RICC's 5e5-s windows hold about 200,000 sequential jobs each: fewer of them
        self.long_cap = dict(LONG_CAP)
        if self.quick:
            self.long_cap = {}
            self.traces = ("KTH-SP2", "SDSC-SP2")
            self.windows = {50_000: 1, 500_000: 1}
            self.sweep_windows = {50_000: 1, 500_000: 1}
        if windows:
            self.windows = {L: windows for L in LENGTHS}
            self.sweep_windows = {L: min(windows, n) for L, n in self.sweep_windows.items()}
        trace_files(traces, ())  # the folder exists, or an error now (the logs: in tasks)
        self.traces_folder = traces

    def tasks(self) -> list[dict]:
        sweep = {
            half_life_label(p, h): [p, {"half_life": "inf" if math.isinf(h) else h}]
            for p in SWEPT
            for h in HALF_LIVES
        }
        tasks = []
        opts = self.window.task_options()
        files = trace_files(self.traces_folder, self.traces)
        for name in self.traces:
            path = files[name]
            trace = load_trace(path)
            m = self.machines.get(name) or default_machines(name, trace)
            for L in LENGTHS:
                count, sweeps = self.windows[L], self.sweep_windows[L]
                if L == 500_000 and name in self.long_cap:
                    count, sweeps = (min(count, c) for c in self.long_cap[name])
                starts = random_windows(trace, L, count, seed=self.seed, by=self.sampling)
                for split in self.splits:
                    for i, st in enumerate(starts):
                        tasks.append(
                            {
                                "trace": name,
                                "path": path,
                                "start": int(st),
                                "length": L,
                                "k": 5,
                                "split": split,
                                "seed": self.seed + i,
                                "machines": m,
                                "policies": list(self.policies),
                                "rand_samples": 15,
                                "window": i,
                                "variants": sweep if i < sweeps else {},
                            }
                        )
                        tasks[-1].update(opts)
        # the expensive windows last, so that a run cut short has finished the rest
        tasks.sort(key=lambda t: t["length"] == 500_000 and t["trace"] in self.long_cap)
        return tasks

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        return rows_frame(rows)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        stats = summary_stats(df, self.traces, self.policies)
        stats.to_csv(out / "summary.csv", index=False)
        plot_unfairness(stats, self.traces, out / "unfairness.png", self.policies)
        curve = half_life_curve(df)
        plot_half_life(curve, df, out / "halflife.png")
        return summary_markdown(df, stats, curve, self)


def summary_stats(df: pd.DataFrame, traces, policies: tuple[str, ...] = POLICIES) -> pd.DataFrame:
    """Mean and std of ``dpsi/p_tot`` and mean utilization per trace, length, split, policy."""
    recs = []
    for (trace, L, split), sub in df.groupby(["trace", "length", "split"]):
        for pol in policies:
            col = sub[f"ratio_{pol}"]
            recs.append(
                {
                    "trace": trace,
                    "length": L,
                    "split": split,
                    "policy": pol,
                    "mean": col.mean(),
                    "std": col.std(ddof=1),
                    "util": sub[f"util_{pol}"].mean(),
                    "util_ref": sub["util_ref"].mean(),
                    "windows": len(col),
                    "contended": int(
                        (sub[[f"ratio_{p}" for p in policies]].abs().sum(axis=1) > 0).sum()
                    ),
                }
            )
    stats = pd.DataFrame(recs)
    order = {t: i for i, t in enumerate(traces)}
    return stats.sort_values(
        ["length", "split", "trace"], key=lambda c: c.map(order) if c.name == "trace" else c
    ).reset_index(drop=True)


def mean_ranks(df: pd.DataFrame, policies: tuple[str, ...] = POLICIES) -> pd.DataFrame:
    """Per length: each policy's mean rank (1 = fairest) over the windows with contention."""
    cols = [f"ratio_{p}" for p in policies]
    busy = df[df[cols].abs().sum(axis=1) > 0]
    out = []
    for L, sub in busy.groupby("length"):
        ranks = sub[cols].rank(axis=1, method="average")
        out.append(
            {"length": L, "windows": len(sub)} | {p: ranks[f"ratio_{p}"].mean() for p in policies}
        )
    return pd.DataFrame(out)


def half_life_curve(df: pd.DataFrame) -> pd.DataFrame:
    """Mean ``dpsi/p_tot`` of the swept policies per half-life, length, over the windows
    that ran the sweep, as a ratio to FAIRSHARE's mean on the same windows."""
    recs = []
    key = half_life_label(SWEPT[0], HALF_LIVES[0])
    if f"ratio_{key}" not in df:
        return pd.DataFrame()
    swept = df[df[f"ratio_{key}"].notna()]
    for L, sub in swept.groupby("length"):
        base = _mean(sub, "ratio_fairshare")
        for p in SWEPT:
            for h in HALF_LIVES:
                col = sub[f"ratio_{half_life_label(p, h)}"]
                recs.append(
                    {
                        "length": L,
                        "policy": p,
                        "half_life": h,
                        "mean": col.mean(),
                        "relative_to_fairshare": col.mean() / base if base else np.nan,
                        "windows": len(col),
                        "fairshare_mean": base,
                        "currfairshare_mean": _mean(sub, "ratio_currfairshare"),
                    }
                )
    return pd.DataFrame(recs)


def _mean(df: pd.DataFrame, col: str) -> float:
    """The mean of a column, NaN when the run did not measure it (``--policies``)."""
    return df[col].mean() if col in df else np.nan


def plot_unfairness(
    stats: pd.DataFrame, traces, png: Path, policies: tuple[str, ...] = POLICIES
) -> None:
    """Write ``unfairness.png``: the mean ``dpsi / p_tot`` of each policy per trace, one panel per
    window length and split."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    combos = [
        (L, s) for L in LENGTHS for s in SPLITS if ((stats.length == L) & (stats.split == s)).any()
    ]
    fig, axes = plt.subplots(len(combos), 1, figsize=(10, 3.2 * max(1, len(combos))), squeeze=False)
    width = 0.8 / len(policies)
    present = [t for t in traces if t in set(stats.trace)]
    for ax, (L, s) in zip(axes[:, 0], combos, strict=True):
        sub = stats[(stats.length == L) & (stats.split == s)]
        x = np.arange(len(present))
        for i, pol in enumerate(policies):
            vals = [
                sub[(sub.trace == t) & (sub.policy == pol)]["mean"].iloc[0]
                if ((sub.trace == t) & (sub.policy == pol)).any()
                else np.nan
                for t in present
            ]
            ax.bar(x + (i - len(policies) / 2 + 0.5) * width, vals, width, label=column_label(pol))
        ax.set_xticks(x, present)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_ylabel(r"$\Delta\psi / p_{tot}$ (s)")
        ax.set_title(f"windows of {L:g} s, {s} machine split (mean over windows)")
        ax.grid(alpha=0.3, axis="y")
    axes[0, 0].legend(fontsize=7, ncol=5)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def plot_half_life(curve: pd.DataFrame, df: pd.DataFrame, png: Path) -> None:
    """Write ``halflife.png``: the unfairness of the decayed-usage policies against their half-
    life."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    lengths = sorted(set(curve.length)) if len(curve) else []
    fig, axes = plt.subplots(
        1, max(1, len(lengths)), figsize=(6 * max(1, len(lengths)), 4), squeeze=False
    )
    finite = [h for h in HALF_LIVES if 0 < h < math.inf]
    for ax, L in zip(axes[0], lengths, strict=False):
        sub = curve[curve.length == L]
        for p, marker in zip(SWEPT, "os", strict=True):
            s = sub[(sub.policy == p) & sub.half_life.isin(finite)]
            ax.plot(s.half_life / 3600, s["mean"], marker=marker, label=column_label(p))
            for h, ls in ((0.0, ":"), (math.inf, "--")):
                v = sub[(sub.policy == p) & (sub.half_life == h)]["mean"].iloc[0]
                ax.axhline(
                    v, ls=ls, lw=1, color=ax.lines[-1].get_color() if h == 0 else "gray", alpha=0.7
                )
        ax.axhline(sub["fairshare_mean"].iloc[0], color="black", lw=1, label="FAIRSHARE")
        ax.axhline(sub["currfairshare_mean"].iloc[0], color="red", lw=1, label="CURRFAIRSHARE")
        ax.set_xscale("log")
        ax.set_xlabel("half-life (hours)")
        ax.set_ylabel(r"mean $\Delta\psi / p_{tot}$ (s)")
        ax.set_title(
            f"windows of {L:g} s ({int(sub['windows'].iloc[0])} windows)\n"
            "dotted: half-life 0, dashed: no decay"
        )
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


def _caps(study: Any) -> str:
    caps = [f"{t}: {c[0]}" for t, c in study.long_cap.items() if t in study.traces]
    return f" ({', '.join(caps)} of 5e5 s)" if caps else ""


def summary_markdown(df: pd.DataFrame, stats: pd.DataFrame, curve: pd.DataFrame, study: Any) -> str:
    """The study's ``summary.md``: unfairness and utilization per trace, split and policy, and the
    half-life curve."""
    lines = [
        "# Production fair-share schedulers against Shapley fairness",
        "",
        "Unfairness `dpsi / p_tot` (seconds of unjustified delay per unit of work, against "
        "REF; Skowron & Rzadca, Sec. 7.2) and utilization, 5 organizations. Windows per "
        f"trace and split: {study.windows[50_000]} of 5e4 s and {study.windows[500_000]} of "
        f"5e5 s{_caps(study)}, starts drawn by {study.sampling} (seed {study.seed}); the same windows for "
        "both splits. Production policies with their defaults: SLURM-CLASSIC and "
        "SLURM-FAIRTREE half-life 7 days, MAUI 8 windows of 12 h without decay, HTCONDOR "
        "half-life 1 day. RAND with N=15."
        + (f" Windows: {study.window.describe()}" if study.window.options() else ""),
        "",
    ]
    for L in LENGTHS:
        for split in SPLITS:
            sub = stats[(stats.length == L) & (stats.split == split)]
            if sub.empty:
                continue
            traces = list(dict.fromkeys(sub.trace))
            lines += [
                f"## Windows of {L:g} s, {split} split: mean (std) of dpsi/p_tot",
                "",
                "| policy | " + " | ".join(traces) + " |",
                "|---" * (1 + len(traces)) + "|",
            ]
            for pol in study.policies:
                cells = [column_label(pol)]
                for t in traces:
                    s = sub[(sub.trace == t) & (sub.policy == pol)].iloc[0]
                    cells.append(f"{fmt(s['mean'])} ({fmt(s['std'])})")
                lines.append("| " + " | ".join(cells) + " |")
            cont = ", ".join(
                f"{t} {int(sub[sub.trace == t]['contended'].iloc[0])}/{int(sub[sub.trace == t]['windows'].iloc[0])}"
                for t in traces
            )
            lines += ["", f"Windows where some policy departs from REF: {cont}.", ""]
            lines += [
                "Utilization (mean over windows, %; REF in the first row):",
                "",
                "| policy | " + " | ".join(traces) + " |",
                "|---" * (1 + len(traces)) + "|",
                "| REF | "
                + " | ".join(f"{100 * sub[sub.trace == t]['util_ref'].iloc[0]:.2f}" for t in traces)
                + " |",
            ]
            for pol in study.policies:
                cells = [column_label(pol)] + [
                    f"{100 * sub[(sub.trace == t) & (sub.policy == pol)]['util'].iloc[0]:.2f}"
                    for t in traces
                ]
                lines.append("| " + " | ".join(cells) + " |")
            lines.append("")
    ranks = mean_ranks(df, study.policies)
    if len(ranks):
        lines += [
            "## Mean rank over the windows with contention (1 = closest to REF)",
            "",
            "| length | windows | " + " | ".join(column_label(p) for p in study.policies) + " |",
            "|---" * (2 + len(study.policies)) + "|",
        ]
        for _, r in ranks.iterrows():
            lines.append(
                f"| {r['length']:g} | {int(r['windows'])} | "
                + " | ".join(f"{r[p]:.2f}" for p in study.policies)
                + " |"
            )
        lines.append("")
    if len(curve):
        lines += [
            "## Unfairness against the half-life (`halflife.png`)",
            "",
            "Mean dpsi/p_tot over the windows that ran the sweep (all traces and splits); "
            "half-life 0 is the no-memory limit, inf no decay.",
            "",
            "| length | policy | windows | "
            + " | ".join(_hl_text(h) for h in HALF_LIVES)
            + " | FAIRSHARE | CURRFAIRSHARE |",
            "|---" * (5 + len(HALF_LIVES)) + "|",
        ]
        for (length, policy), sub in curve.groupby(["length", "policy"], sort=True):
            vals = " | ".join(fmt(sub[sub.half_life == h]["mean"].iloc[0]) for h in HALF_LIVES)
            lines.append(
                f"| {length:g} | {column_label(str(policy))} | {int(sub['windows'].iloc[0])} | {vals} | "
                f"{fmt(sub['fairshare_mean'].iloc[0])} | {fmt(sub['currfairshare_mean'].iloc[0])} |"
            )
        lines.append("")
    lines += [
        "Traces: LPC-EGEE (70 machines) and RICC (8192) as in the paper; HPC2N (240), "
        "METACENTRUM (604, its peak concurrency), KTH-SP2 (100) and SDSC-SP2 (128) with "
        "their header's processor count. "
        + (
            "Parallel jobs become sequential copies (Skowron & Rzadca, Sec. 7.2)."
            if study.window.jobs == "sequential"
            else "Parallel jobs stay rigid (their processors at once), with backfilling as "
            "stated above."
        ),
    ]
    return "\n".join(lines) + "\n"
