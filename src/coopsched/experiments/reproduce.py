"""Reproduction of Skowron & Rzadca, Sec. 7: Table 1, Table 2 and Figure 10.

Each window of a trace becomes a 5-organization instance (docs/conventions.md §1); REF's
schedule is computed once and every other policy's ``dpsi / p_tot`` is measured against
it at the horizon. Traces: LPC-EGEE and RICC as in the paper; PIK-IPLEX and
SHARCNET-Whale are not available here, so METACENTRUM and HPC2N stand in for them.
Machine counts: LPC-EGEE 70 and RICC 8192 (paper), HPC2N its header's MaxProcs (240),
METACENTRUM (no header) the log's peak of concurrently used processors (604) unless
given. Results: ``rows.jsonl`` (one line per window, the resume state), ``results.csv``,
``summary.md`` (ours beside the paper's numbers) and, for Figure 10, ``fig10.png``.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ..online.fairness import fairness
from ..online.policies import get_policy, policy_class
from ..online.policies.ref import Ref
from ..workloads.prepare import (
    OWNERS,
    peak_concurrency,
    random_windows,
    trace_machines,
    trace_to_instance,
)
from ..workloads.swf import SWFTrace, read_swf
from . import paper_values
from .columns import label as column_label
from .columns import resolve_policies
from .study import Study, register_study

TRACE_FILES = {
    "LPC-EGEE": "LPC-EGEE-2004-1.2-cln.swf.gz",
    "RICC": "RICC-2010-2.swf.gz",
    "METACENTRUM": "METACENTRUM-2009-2.swf.gz",
    "HPC2N": "HPC2N-2002-2.2-cln.swf.gz",
    # not in the paper: further PWA logs (header MaxProcs as machine count)
    "KTH-SP2": "KTH-SP2-1996-2.1-cln.swf.gz",
    "SDSC-SP2": "SDSC-SP2-1998-4.2-cln.swf.gz",
    "CTC-SP2": "CTC-SP2-1996-3.1-cln.swf.gz",
    "SDSC-Par": "SDSC-Par-1996-3.1-cln.swf.gz",
    "CEA-Curie": "CEA-Curie-2011-2.1-cln.swf.gz",
}
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


def find_traces(traces: str | Path | None = None) -> Path:
    """The trace folder: the argument, ``$COOPSCHED_TRACES``, or ``../shared/traces``."""
    if traces is not None:  # asked for: that folder or an error, never another one
        folder = Path(traces)
        if not folder.is_dir():
            raise FileNotFoundError(f"--traces {folder}: no such folder")
        if not (folder / TRACE_FILES["LPC-EGEE"]).exists():
            raise FileNotFoundError(
                f"--traces {folder}: no {TRACE_FILES['LPC-EGEE']} there (the folder must hold "
                f"{', '.join(TRACE_FILES.values())})"
            )
        return folder
    candidates = [os.environ.get("COOPSCHED_TRACES"), "../shared/traces", "shared/traces"]
    for c in candidates:
        if c and (Path(c) / TRACE_FILES["LPC-EGEE"]).exists():
            return Path(c)
    raise FileNotFoundError(
        "the SWF traces were not found; pass --traces DIR (a folder with "
        f"{', '.join(TRACE_FILES.values())}) or set COOPSCHED_TRACES"
    )


_TRACE_CACHE: dict[str, SWFTrace] = {}


def load_trace(path: str) -> SWFTrace:
    """Read a trace once per process."""
    tr = _TRACE_CACHE.get(path)
    if tr is None:
        tr = _TRACE_CACHE[path] = read_swf(path)
    return tr


def default_machines(name: str, trace: SWFTrace) -> int:
    if name == "METACENTRUM" and trace.max_procs is None:
        return peak_concurrency(trace)
    return trace_machines(trace)


def policy_params(name: str, seed: int, rand_samples: int) -> tuple[str, dict]:
    """The registry name and parameters of a policy column: ``seed`` for the policies that
    take one, RAND's N from ``rand_samples``; ``rand_n75`` names RAND with N = 75 (a second
    RAND column)."""
    n_samples = rand_samples
    if name.startswith("rand_n"):
        n_samples = int(name[len("rand_n") :])
        name = "rand"
    accepted = policy_class(name).param_names()
    params: dict = {"seed": seed} if "seed" in accepted else {}
    if "n_samples" in accepted:  # RAND's N (Sec. 7.1: 15 or 75)
        params["n_samples"] = n_samples
    return name, params


def evaluate_window(task: dict) -> dict:
    """One window: REF once, then ``dpsi/p_tot`` and utilization of every policy (a sweep
    task). ``task["variants"]`` (optional) maps a label to ``[policy, params]``: more runs of
    a policy with other parameters, reported under that label.

    Optional task key ``window_options``: keyword arguments of
    ``workloads.prepare.trace_to_instance`` (``warmup``: seconds simulated before the
    measured window, the metric then counting the utilities accrued in the window, see
    ``online.fairness``; ``owners``: ``user`` or ``random``; ``backlog``: the log's own
    state at the window start). The horizon and the start of the measured window come from
    the instance's ``meta``."""
    trace = load_trace(task["path"])
    L = task["length"]
    inst = trace_to_instance(
        trace,
        k=task["k"],
        start=task["start"],
        length=L,
        machines=task["machines"],
        split=task["split"],
        seed=task["seed"],
        **task.get("window_options", {}),
    )
    T = int(inst.meta["horizon"])
    W = int(inst.meta.get("measure_from") or 0)
    row: dict = {"n_jobs": inst.n, "machines": inst.machines.tolist()}
    if W:
        row["n_window_jobs"] = int((inst.release >= W).sum())
        row["n_warmup_jobs"] = inst.n - row["n_window_jobs"]
    if "backlog" in inst.meta:  # trace jobs in the system at the window start
        row["backlog_waiting"] = inst.meta["backlog"]["waiting"]
        row["backlog_running"] = inst.meta["backlog"]["running"]
    t0 = time.perf_counter()
    ref = Ref().run(inst, T)
    row["seconds_ref"] = time.perf_counter() - t0
    row["p_tot"] = sum(ref.work(T)) - sum(ref.work(W))
    row["util_ref"] = ref.utilization(T)
    runs: list[tuple[str, str, dict[str, Any]]] = [
        (col, *policy_params(col, task["seed"], task["rand_samples"])) for col in task["policies"]
    ]
    for label, (policy, extra) in task.get("variants", {}).items():
        name, params = policy_params(policy, task["seed"], task["rand_samples"])
        runs.append((label, name, {**params, **dict(extra)}))
    for col, name, params in runs:
        t0 = time.perf_counter()
        sched = get_policy(name, **params).run(inst, T)
        row[f"seconds_{col}"] = time.perf_counter() - t0
        f = fairness(sched, ref, T, W)
        row[f"ratio_{col}"] = f.ratio
        row[f"dpsi_{col}"] = f.dpsi
        row[f"util_{col}"] = sched.utilization(T)
    return row


@dataclass
class WindowState:
    """How the windows of a trace study are cut and filled (docs/reproduction.md, the
    sensitivity section): starts drawn uniformly in ``time`` or at a random ``job``'s
    submit; the system at the start ``empty``, filled by ``warmup`` seconds of the log
    simulated before it, or holding the log's own ``backlog`` (waiting jobs kept, running
    ones pinned); jobs dealt to organizations by ``user`` or at ``random``."""

    sampling: str = "time"
    warmup: int = 0
    owners: str = "user"
    backlog: bool = False

    def __post_init__(self) -> None:
        if self.sampling not in ("time", "job"):
            raise ValueError("window sampling must be 'time' or 'job'")
        if self.warmup < 0:
            raise ValueError("the warm-up period must be 0 or positive")
        if self.owners not in OWNERS:
            raise ValueError(f"owners must be one of {', '.join(OWNERS)}")
        if self.warmup and self.backlog:
            raise ValueError(
                "--warmup and --backlog are two ways to fill the system at the window start: "
                "choose one"
            )
        self.warmup, self.backlog = int(self.warmup), bool(self.backlog)

    def options(self) -> dict:
        """The non-default window options (``trace_to_instance`` keywords)."""
        opts: dict = {}
        if self.warmup:
            opts["warmup"] = self.warmup
        if self.backlog:
            opts["backlog"] = True
        if self.owners != "user":
            opts["owners"] = self.owners
        return opts

    def describe(self) -> str:
        """One sentence for a summary."""
        return (
            f"window starts drawn by {self.sampling}, jobs dealt to organizations by "
            f"{self.owners}, "
            + (
                f"{self.warmup:g} s of warm-up simulated before each window "
                "(utilities accrued in the window)."
                if self.warmup
                else "the log's own jobs waiting (kept) and running (pinned) at each window start."
                if self.backlog
                else "empty system at each window start."
            )
        )


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

    def window_options(self) -> dict:
        """The non-default window options (``trace_to_instance`` keywords)."""
        return WindowState(self.sampling, self.warmup, self.owners, self.backlog).options()


def table_tasks(spec: TableSpec, traces_dir: Path) -> list[dict]:
    tasks = []
    opts = spec.window_options()
    for name in spec.traces:
        path = str(traces_dir / TRACE_FILES[name])
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
            if opts:
                tasks[-1]["window_options"] = opts
    return tasks


def rows_frame(rows: list[dict]) -> pd.DataFrame:
    flat = []
    for r in rows:
        t = r["task"]
        d = {
            key: t[key]
            for key in ("trace", "start", "length", "k", "split", "seed", "machines", "window")
        }
        d.update({key: v for key, v in r.items() if key not in ("task", "machines")})
        flat.append(d)
    return pd.DataFrame(flat)


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
        + WindowState(spec.sampling, spec.warmup, spec.owners, spec.backlog).describe()
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
            cells.append(f"{_fmt(s['mean'])} ({_fmt(s['std'])})")
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
            cells.append(f"{_fmt(col.mean())} ({_fmt(col.std(ddof=1))})" if len(col) else "-")
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


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.1f}"
    return f"{x:.3g}"


# ---------------------------------------------------------------------------- Figure 10


@dataclass
class Fig10Spec:
    orgs: tuple[int, ...] = (2, 3, 4, 5, 6, 7, 8, 9, 10)
    windows: int = 100
    length: int = 50_000
    split: str = "zipf"
    seed: int = 0
    rand_samples: int = 15
    policies: tuple[str, ...] = POLICIES
    window: WindowState = field(default_factory=WindowState)


def fig10_tasks(spec: Fig10Spec, traces_dir: Path) -> list[dict]:
    path = str(traces_dir / TRACE_FILES["LPC-EGEE"])
    trace = load_trace(path)
    starts = random_windows(
        trace, spec.length, spec.windows, seed=spec.seed, by=spec.window.sampling
    )
    opts = spec.window.options()
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
            **({"window_options": opts} if opts else {}),
        }
        for k in spec.orgs
        for i, st in enumerate(starts)
    ]


def summarize_fig10(df: pd.DataFrame, spec: Fig10Spec, png: Path) -> tuple[pd.DataFrame, str]:
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
        cells = [str(k)] + [_fmt(s[s.policy == p]["mean"].iloc[0]) for p in spec.policies]
        cells.append(f"{s['ref_seconds'].iloc[0]:.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return stats, "\n".join(lines) + "\n"


# ---------------------------------------------------------------------------- studies


class _TraceTable(Study):
    """Table 1 or 2: ``dpsi/p_tot`` of every policy on random windows of four traces."""

    files = ("summary.csv",)
    options = (
        "traces",
        "windows",
        "split",
        "machines",
        "sampling",
        "warmup",
        "owners",
        "policies",
        "backlog",
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
    ) -> None:
        if split not in ("uniform", "zipf"):
            raise ValueError("split must be 'uniform' or 'zipf'")
        WindowState(sampling, warmup, owners, backlog)  # checks them
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
        )
        if self.quick:
            self.spec.windows = 4
        if windows:
            self.spec.windows = windows
        self.traces_dir = find_traces(traces)

    def tasks(self) -> list[dict]:
        return table_tasks(self.spec, self.traces_dir)

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        return rows_frame(rows)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        stats, md = summarize_table(df, self.spec)
        stats.to_csv(out / "summary.csv", index=False)
        return md


@register_study
class Table1(_TraceTable):
    name = "table1"
    title = "Skowron & Rzadca, Table 1: 100 windows of 5e4 s x 4 traces"
    length = 50_000


@register_study
class Table2(_TraceTable):
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
        "traces",
        "windows",
        "split",
        "orgs",
        "policies",
        "sampling",
        "warmup",
        "owners",
        "backlog",
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
    ) -> None:
        if split not in ("uniform", "zipf"):
            raise ValueError("split must be 'uniform' or 'zipf'")
        self.spec = Fig10Spec(
            split=split,
            seed=self.seed,
            policies=resolve_policies(policies, POLICIES),
            window=WindowState(sampling, warmup, owners, bool(backlog)),
        )
        if self.quick:
            self.spec.orgs, self.spec.windows = (2, 4, 6), 3
        if orgs:
            self.spec.orgs = parse_ints(orgs, "orgs")
        if windows:
            self.spec.windows = windows
        self.traces_dir = find_traces(traces)

    def tasks(self) -> list[dict]:
        return fig10_tasks(self.spec, self.traces_dir)

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        return rows_frame(rows)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        stats, md = summarize_fig10(df, self.spec, out / "fig10.png")
        stats.to_csv(out / "summary.csv", index=False)
        return md


def parse_ints(value: tuple[int, ...] | str, what: str) -> tuple[int, ...]:
    """``"2,4,6"`` or ``(2, 4, 6)`` as a tuple of positive integers."""
    try:
        ints = tuple(int(x) for x in (value.split(",") if isinstance(value, str) else value))
    except ValueError:
        raise ValueError(f"{what} takes comma-separated integers, e.g. 2,4,6") from None
    if not ints or min(ints) < 1:
        raise ValueError(f"{what} takes positive integers, e.g. 2,4,6")
    return ints
