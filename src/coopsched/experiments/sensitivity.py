"""Sensitivity of Skowron & Rzadca's Tables 1 and 2 to how a window of a trace is cut.

The paper (Sec. 7.2-7.3) draws "the start time of the experiment" at random and simulates
the jobs submitted in ``[t_start, t_start + L)``; it does not say what happens to the jobs
submitted before ``t_start`` nor how the start is drawn. This study measures Table 1
(``L = 5e4`` s) and Table 2 (``L = 5e5`` s) under every combination of three window
options, on the same windows and seeds (paired):

* ``state``: what the system holds at the window start. ``empty``: nothing (the reading
  of docs/conventions.md §1 used by ``reproduce table1``); ``warmup``: the jobs of the ``warmup``
  seconds before the window are simulated too, and the metric counts the utilities accrued
  in the window (``online.fairness``); ``backlog``: the log's own state at the window
  start, by the recorded starts (jobs waiting kept, jobs running pinned with their
  remaining run time; ``trace_to_instance(backlog=True)``);
* ``sampling``: window starts uniform in ``time`` or at the submit time of a random ``job``
  (``workloads.prepare.random_windows``);
* ``owners``: jobs dealt to organizations by ``user`` (the paper's main scenario) or each
  job uniformly at ``random`` (the paper's second scenario).

RAND is measured with N = 15 (the paper's) and N = 75 (``rand_n75``).
"""

from __future__ import annotations

import itertools
from pathlib import Path

import numpy as np
import pandas as pd

from ..workloads.prepare import OWNERS, random_windows
from . import paper_values
from . import study as opt
from .columns import label as column_label
from .columns import resolve_policies
from .reproduce import PAPER_TRACES, STANDS_FOR
from .study import Study, register_study
from .windows import (
    check_jobs,
    default_machines,
    evaluate_window,
    fmt,
    load_trace,
    model_sentence,
    rows_frame,
    trace_files,
)

#: Window lengths of the paper's two tables (Sec. 7.3).
LENGTHS = {"table1": 50_000, "table2": 500_000}
#: The policies of Tables 1/2, with a second RAND column at N = 75.
POLICIES = (*paper_values.POLICY_ORDER, "rand_n75")
SAMPLINGS = ("time", "job")


def _state_empty(warmup: int) -> dict:
    return {}


def _state_warmup(warmup: int) -> dict:
    return {"warmup": int(warmup)}


def _state_backlog(warmup: int) -> dict:
    return {"backlog": True}


#: Window start states: name -> function(warmup seconds) -> keyword arguments of
#: ``workloads.prepare.trace_to_instance`` (passed through the task's ``window_options``).
#: A new state registers here; the study, its ``--states`` option and its summary pick it up.
WINDOW_STATES = {"empty": _state_empty, "warmup": _state_warmup, "backlog": _state_backlog}


def variant_name(state: str, sampling: str, owners: str) -> str:
    """``state/sampling/owners``; ``empty/time/user`` is the paper's reading."""
    return f"{state}/{sampling}/{owners}"


def sensitivity_tasks(
    traces_dir: str | Path | None,
    *,
    windows: dict[str, int],
    states: tuple[str, ...],
    samplings: tuple[str, ...] = SAMPLINGS,
    owners: tuple[str, ...] = OWNERS,
    traces: tuple[str, ...] = PAPER_TRACES,
    warmup: int = 50_000,
    k: int = 5,
    split: str = "zipf",
    seed: int = 0,
    rand_samples: int = 15,
    policies: tuple[str, ...] = POLICIES,
    jobs: str = "sequential",
    backfill: str | None = None,
) -> list[dict]:
    """Every (table, trace, window, variant) task; window ``i`` of a trace has the same
    start (per sampling) and seed in every variant. Tasks are ordered window by window
    so that a partial run covers every variant evenly. ``traces_dir``: the folder of the
    logs (:func:`~coopsched.experiments.windows.trace_files`); ``jobs`` and ``backfill``:
    the job model (:class:`~coopsched.experiments.windows.WindowState`)."""
    check_jobs(jobs, backfill)
    files = trace_files(traces_dir, traces)
    tasks = []
    for table, n_windows in windows.items():
        L = LENGTHS[table]
        starts = {}
        for name in traces:
            trace = load_trace(files[name])
            for by in samplings:
                starts[name, by] = random_windows(trace, L, n_windows, seed=seed, by=by)
        for i in range(n_windows):
            for name in traces:
                path = files[name]
                machines = default_machines(name, load_trace(path))
                for state, by, own in itertools.product(states, samplings, owners):
                    opts = dict(WINDOW_STATES[state](warmup))
                    if own != "user":
                        opts["owners"] = own
                    if jobs != "sequential":
                        opts["jobs"] = jobs
                    task = {
                        "table": table,
                        "variant": variant_name(state, by, own),
                        "trace": name,
                        "path": path,
                        "start": int(starts[name, by][i]),
                        "length": L,
                        "k": k,
                        "split": split,
                        "seed": seed + i,
                        "machines": machines,
                        "policies": list(policies),
                        "rand_samples": rand_samples,
                        "window": i,
                    }
                    if opts:
                        task["window_options"] = opts
                    if backfill is not None:
                        task["backfill"] = backfill
                    tasks.append(task)
    return tasks


def summarize_sensitivity(
    df: pd.DataFrame,
    traces: tuple[str, ...],
    png_dir: Path,
    policies: tuple[str, ...] = POLICIES,
    model: str = "",
) -> tuple[pd.DataFrame, str]:
    """Mean and std of ``dpsi/p_tot`` per table, variant, trace and policy; the Markdown
    with the paper's numbers beside ours ("-" for a column without one); one figure per
    table. ``model``: a sentence on the job model (:func:`~.windows.model_sentence`), empty
    for the paper's sequential jobs."""
    recs = []
    for (table, variant, trace), sub in df.groupby(["table", "variant", "trace"], sort=False):
        quiet = int((sub[[f"ratio_{p}" for p in policies]].abs().sum(axis=1) == 0).sum())
        for pol in policies:
            col = sub[f"ratio_{pol}"]
            recs.append(
                {
                    "table": table,
                    "variant": variant,
                    "trace": trace,
                    "policy": pol,
                    "mean": col.mean(),
                    "std": col.std(ddof=1),
                    "windows": len(col),
                    "quiet_windows": quiet,
                }
            )
    stats = pd.DataFrame(recs)
    lines = [
        "# Sensitivity of Tables 1 and 2 to the window options",
        "",
        "dpsi/p_tot (mean, standard deviation in parentheses) of Skowron & Rzadca's Sec. 7.2 "
        "metric, 5 organizations, machines split by Zipf. Variant = state/sampling/owners: "
        "`empty` = nothing in the system at the window start, `warmup` = the jobs of the "
        "preceding warm-up period simulated too and only the utilities accrued in the window "
        "counted, `backlog` = the log's own jobs at the window start (those waiting kept, those "
        "running pinned with their remaining run time); `time` = window starts uniform in time, `job` = at the submit time of a "
        "random job; `user` = users dealt to organizations in turn, `random` = each job to a "
        "uniformly random organization. `empty/time/user` is the reading of "
        "`reproduce table1/table2`. Quiet windows: windows in which no policy departs from "
        "REF (every policy scores 0). METACENTRUM stands in for PIK-IPLEX and HPC2N for "
        "SHARCNET-Whale (not available): only the paper's LPC-EGEE and RICC columns compare "
        "the same logs." + model,
    ]
    for table in stats["table"].unique():
        st = stats[stats.table == table]
        paper = paper_values.TABLE1 if table == "table1" else paper_values.TABLE2
        variants = list(st["variant"].unique())
        n = st.groupby("trace")["windows"].max().to_dict()
        title = "Table 1" if table == "table1" else "Table 2"
        lines += [
            "",
            f"## {title}: windows of {LENGTHS[table]:g} s "
            f"({', '.join(f'{t} {n[t]}' for t in traces if t in n)} windows per variant)",
        ]
        for trace in traces:
            s = st[st.trace == trace]
            if s.empty:
                continue
            lines += [
                "",
                f"### {trace} (paper: {STANDS_FOR[trace]})",
                "",
                "| policy | paper | " + " | ".join(variants) + " |",
                "|---" * (2 + len(variants)) + "|",
            ]
            for pol in policies:
                p = paper.get(STANDS_FOR[trace], {}).get(pol)
                cells = [column_label(pol), f"{p[0]:g} ({p[1]:g})" if p else "-"]
                for v in variants:
                    r = s[(s.variant == v) & (s.policy == pol)].iloc[0]
                    cells.append(f"{fmt(r['mean'])} ({fmt(r['std'])})")
                lines.append("| " + " | ".join(cells) + " |")
            quiet_cells = [
                str(int(s[(s.variant == v)]["quiet_windows"].iloc[0])) + f"/{n[trace]}"
                for v in variants
            ]
            lines.append("| quiet windows | - | " + " | ".join(quiet_cells) + " |")
            order = [_ranking(s[s.variant == v].set_index("policy")["mean"]) for v in variants]
            paper_order = _ranking(
                pd.Series({q: paper[STANDS_FOR[trace]][q][0] for q in paper_values.POLICY_ORDER})
            )
            lines.append(
                "| ranking (fairest first) | " + paper_order + " | " + " | ".join(order) + " |"
            )
        png = png_dir / f"sensitivity-{table}.png"
        _plot(st, traces, paper, png, title, policies)
        lines += ["", f"Figure: `{png.name}`."]
    return stats, "\n".join(lines) + "\n"


_ABBR = {
    "roundrobin": "RR",
    "rand": "R15",
    "rand_n75": "R75",
    "directcontr": "DC",
    "fairshare": "FS",
    "utfairshare": "UFS",
    "currfairshare": "CFS",
}


def _ranking(means: pd.Series) -> str:
    """Policies from the fairest (smallest mean) to the least fair, abbreviated."""
    return " < ".join(
        _ABBR.get(p) or column_label(p) for p in means.sort_values(kind="stable").index
    )


def _plot(st: pd.DataFrame, traces, paper, png: Path, title: str, policies) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [t for t in traces if t in set(st.trace)]
    variants = list(st["variant"].unique())
    fig, axes = plt.subplots(1, len(shown), figsize=(4.2 * len(shown), 4.2), squeeze=False)
    width = 0.8 / (len(variants) + 1)
    x = np.arange(len(policies))
    for ax, trace in zip(axes[0], shown, strict=True):
        s = st[st.trace == trace]
        for j, v in enumerate(variants):
            means = [s[(s.variant == v) & (s.policy == p)]["mean"].iloc[0] for p in policies]
            ax.bar(x + j * width, np.maximum(means, 1e-3), width, label=v)
        pv = [paper.get(STANDS_FOR[trace], {}).get(p, (np.nan,))[0] for p in policies]
        ax.scatter(
            x + len(variants) * width / 2,
            pv,
            color="black",
            marker="_",
            s=200,
            zorder=3,
            label="paper",
        )
        ax.set_yscale("log")
        ax.set_xticks(x + len(variants) * width / 2)
        ax.set_xticklabels([_ABBR.get(p) or column_label(p) for p in policies], fontsize=8)
        ax.set_title(f"{trace} (paper: {STANDS_FOR[trace]})", fontsize=9)
        ax.grid(alpha=0.3, axis="y")
    axes[0][0].set_ylabel(r"mean $\Delta\psi / p_{tot}$ (s, log)")
    axes[0][-1].legend(fontsize=6)
    fig.suptitle(f"{title}: window options (bars) against the paper (black)")
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    plt.close(fig)


@register_study
class Sensitivity(Study):
    """Tables 1 and 2 under every window option (module docstring)."""

    name = "sensitivity"
    title = "Skowron & Rzadca, Tables 1-2 under each window option (state, sampling, owners)"
    files = ("summary.csv", "sensitivity-table1.png", "sensitivity-table2.png")
    options = (
        opt.TRACES,
        opt.WINDOWS,
        opt.StudyOption(
            "long_windows", int, "Windows per trace for Table 2 (default --windows).", min=1
        ),
        opt.StudyOption(
            "states", help="Window start states, comma-separated (empty,warmup,backlog)."
        ),
        opt.WARMUP.but(
            help="Seconds simulated before each window of the warmup state (default 50000)."
        ),
        opt.POLICIES,
        opt.JOBS,
        opt.BACKFILL,
    )
    evaluate = staticmethod(evaluate_window)

    def configure(
        self,
        traces: str | Path | None = None,
        windows: int | None = None,
        long_windows: int | None = None,
        states: str | tuple[str, ...] | None = None,
        warmup: int | None = None,
        policies: str | tuple[str, ...] | None = None,
        jobs: str = "sequential",
        backfill: str | None = None,
    ) -> None:
        self.policies = resolve_policies(policies, POLICIES)
        check_jobs(jobs, backfill)
        self.jobs, self.backfill = jobs, backfill
        short = 3 if self.quick else 100
        self.windows = {"table1": windows or short, "table2": long_windows or windows or short}
        if self.quick and not long_windows:
            self.windows["table2"] = 1
        states = states or tuple(WINDOW_STATES)
        if isinstance(states, str):
            states = tuple(s.strip() for s in states.split(",") if s.strip())
        bad = [s for s in states if s not in WINDOW_STATES]
        if bad or not states:
            raise ValueError(
                f"states: unknown window state(s) {', '.join(bad)}; choose from "
                f"{', '.join(WINDOW_STATES)}"
            )
        self.states = tuple(states)
        self.warmup = 50_000 if warmup is None else int(warmup)
        if self.warmup <= 0:
            raise ValueError("warmup: the warm-up period must be positive")
        trace_files(traces, ())  # the folder exists, or an error now (the logs: in tasks)
        self.traces_dir = traces

    def tasks(self) -> list[dict]:
        return sensitivity_tasks(
            self.traces_dir,
            windows=self.windows,
            states=self.states,
            warmup=self.warmup,
            seed=self.seed,
            policies=self.policies,
            jobs=self.jobs,
            backfill=self.backfill,
        )

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        df = rows_frame(rows)
        df.insert(0, "table", [r["task"]["table"] for r in rows])
        df.insert(1, "variant", [r["task"]["variant"] for r in rows])
        return df

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        model = model_sentence(self.jobs, self.backfill)
        stats, md = summarize_sensitivity(df, PAPER_TRACES, out, self.policies, model)
        stats.to_csv(out / "summary.csv", index=False)
        return md
