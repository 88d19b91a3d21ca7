"""The price of fairness for rigid parallel jobs: ``coopsched reproduce rigid``.

Skowron & Rzadca leave open "the loss of global efficiency" of Shapley-fair scheduling
when jobs are parallel (Sec. 6 end, Sec. 8): Theorem 6.2 bounds it by 1/4 for sequential
jobs only. This study measures it on Parallel Workloads Archive logs of parallel machines
(SDSC-SP2, CTC-SP2, KTH-SP2, HPC2N, CEA-Curie) with LPC-EGEE, whose jobs are all serial, as
the control: windows of ``5e4`` and ``5e5`` s, 5 organizations, uniform and Zipf machine
splits, each job rigid (its processors at once, its requested time; docs/conventions.md,
rigid jobs). For every registered policy under each backfilling rule (``none``,
``first-fit``, ``easy``, the papers' model, where EASY backfills each organization's oldest
job, and ``easy-queue``, the platform's, where it backfills from the whole queue):

* utilization before the horizon (the window's end);
* mean wait and mean bounded slowdown (threshold 10 s) of the window's jobs, **censored at
  the horizon**: a job not started by then counts as starting at the horizon, so a policy
  cannot look better by leaving jobs out (both are lower bounds for such jobs);
* the mean censored wait of the window's wide jobs (more than a tenth of the platform);
* ``dpsi / p_tot`` against REF under the same rule (Sec. 7.2's measure).

The worst case, the rigid counterpart of Theorem 6.2, is the family of
:mod:`coopsched.online.greedy_bound` (ratio ``L / (m (L - 1))``, tested).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import ClassVar

import numpy as np
import pandas as pd

from ..online.fairness import fairness
from ..online.policies import get_policy
from ..online.schedule import Schedule
from ..workloads.prepare import random_windows
from . import study as opt
from .columns import label as column_label
from .columns import resolve_policies
from .study import Study, register_study
from .windows import (
    check_logs,
    default_machines,
    load_trace,
    parse_ints,
    policy_params,
    task_instance,
    trace_files,
)

#: The parallel logs of the study and the sequential control.
TRACES = ("SDSC-SP2", "CTC-SP2", "KTH-SP2", "HPC2N", "CEA-Curie", "LPC-EGEE")
LENGTHS = (50_000, 500_000)
SPLITS = ("uniform", "zipf")
RULES = ("none", "first-fit", "easy", "easy-queue")
#: Their column headings in the summary.
RULE_LABELS = {
    "none": "none",
    "first-fit": "first-fit",
    "easy": "EASY",
    "easy-queue": "EASY, whole queue",
}
#: A job is wide when it needs more than this share of the platform.
WIDE = 0.1


def censored(sched: Schedule, horizon: int) -> dict[str, float]:
    """Mean wait, mean bounded slowdown (10 s) and the wide jobs' mean wait of the jobs
    released before ``horizon``, a job not started by then counted as starting at it."""
    inst = sched.instance
    rel = inst.release
    live = rel < horizon
    start = np.where((sched.start >= 0) & (sched.start < horizon), sched.start, horizon)
    wait = (start - rel)[live].astype(np.float64)
    run = inst.size[live].astype(np.float64)
    bsld = np.maximum(1.0, (wait + run) / np.maximum(run, 10.0))
    wide = (inst.width[live] > WIDE * inst.total_machines) if live.any() else live[live]
    return {
        "wait": float(wait.mean()) if wait.size else 0.0,
        "bsld": float(bsld.mean()) if wait.size else 1.0,
        "wide_wait": float(wait[wide].mean()) if wide.any() else float("nan"),
    }


def evaluate_rigid_window(task: dict) -> dict:
    """One window, rigid jobs: REF under each rule, then every policy under the same rule
    (a sweep task)."""
    inst = task_instance(task, jobs="rigid")
    T = int(inst.meta["horizon"])
    row: dict = {
        "n_jobs": inst.n,
        "org_machines": inst.machines.tolist(),
        "wide_jobs": int((inst.width > WIDE * inst.total_machines).sum()),
        "max_width": int(inst.width.max()) if inst.n else 0,
        "outlived_request": int(inst.meta.get("outlived_request", 0)),
    }
    for rule in task["rules"]:
        t0 = time.perf_counter()
        ref = get_policy("ref").run(inst, T, backfill=rule)
        row[f"seconds_{rule}_ref"] = time.perf_counter() - t0
        row[f"util_{rule}_ref"] = ref.utilization(T)
        row[f"too_wide_{rule}"] = int((ref.info.get("too_wide") or {}).get("count", 0))
        for key, v in censored(ref, T).items():
            row[f"{key}_{rule}_ref"] = v
        for col in task["policies"]:
            name, params = policy_params(col, task["seed"], task["rand_samples"])
            t0 = time.perf_counter()
            sched = get_policy(name, **params).run(inst, T, backfill=rule)
            row[f"seconds_{rule}_{col}"] = time.perf_counter() - t0
            row[f"ratio_{rule}_{col}"] = fairness(sched, ref, T).ratio
            row[f"util_{rule}_{col}"] = sched.utilization(T)
            for key, v in censored(sched, T).items():
                row[f"{key}_{rule}_{col}"] = v
    return row


@register_study
class RigidStudy(Study):
    """The price of Shapley-fairness with rigid jobs and backfilling (module doc)."""

    name = "rigid"
    title = (
        "The price of fairness for rigid parallel jobs (Skowron & Rzadca's open question): "
        "5 parallel PWA logs + LPC-EGEE, every policy under none / first-fit / EASY "
        "(per organization and over the whole queue)"
    )
    files = ("summary.csv", "utilization.png", "fairness.png")
    options = (
        opt.TRACES,
        opt.WINDOWS.but(help="Windows per log and length (default 10)."),
        opt.POLICIES.but(
            help="The policy columns, comma-separated registered names (plug-ins "
            "too) or 'all' (every registered policy but REF, the reference; the default)."
        ),
        opt.StudyOption(
            "logs",
            help="The logs, comma-separated (default SDSC-SP2,CTC-SP2,KTH-SP2,HPC2N,"
            "CEA-Curie,LPC-EGEE).",
        ),
        opt.StudyOption(
            "lengths", help="Window lengths in seconds, comma-separated (50000,500000)."
        ),
    )
    evaluate = staticmethod(evaluate_rigid_window)
    k: ClassVar[int] = 5

    def configure(
        self,
        traces: str | Path | None = None,
        windows: int | None = None,
        policies: str | tuple[str, ...] | None = None,
        logs: str | tuple[str, ...] | None = None,
        lengths: str | tuple[int, ...] | None = None,
    ) -> None:
        self.windows = windows or (2 if self.quick else 10)
        self.policies = resolve_policies(policies or "all", ())
        names = logs.split(",") if isinstance(logs, str) else list(logs or TRACES)
        self.logs = check_logs(names, "logs")
        if lengths is None:
            self.lengths: tuple[int, ...] = (50_000,) if self.quick else LENGTHS
        else:
            self.lengths = parse_ints(lengths, "lengths")
        trace_files(traces, ())  # the folder exists, or an error now (the logs: in tasks)
        self.traces_folder = traces

    def tasks(self) -> list[dict]:
        tasks = []
        files = trace_files(self.traces_folder, self.logs)
        for name in self.logs:
            path = files[name]
            trace = load_trace(path)
            machines = default_machines(name, trace)
            for length in self.lengths:
                starts = random_windows(trace, length, self.windows, seed=self.seed)
                for i, st in enumerate(starts):
                    for split in SPLITS:
                        tasks.append(
                            {
                                "trace": name,
                                "path": path,
                                "start": int(st),
                                "length": length,
                                "k": self.k,
                                "split": split,
                                "seed": self.seed + i,
                                "machines": machines,
                                "policies": list(self.policies),
                                "rules": list(RULES),
                                "rand_samples": 15,
                                "window": i,
                            }
                        )
        return tasks

    def frame(self, rows: list[dict]) -> pd.DataFrame:
        flat = []
        for r in rows:
            t = r["task"]
            d = {key: t[key] for key in ("trace", "start", "length", "split", "seed", "window")}
            d["machines"] = t["machines"]
            d.update({key: v for key, v in r.items() if key != "task"})
            flat.append(d)
        return pd.DataFrame(flat)

    def report(self, df: pd.DataFrame, rows: list[dict], out: Path) -> str:
        return summarize_rigid(df, ("ref", *self.policies), out)


def _long(df: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """One row per window, rule and policy."""
    recs = []
    for _, r in df.iterrows():
        for rule in RULES:
            for col in columns:
                if f"util_{rule}_{col}" not in r or pd.isna(r[f"util_{rule}_{col}"]):
                    continue
                recs.append(
                    {
                        "trace": r["trace"],
                        "length": int(r["length"]),
                        "split": r["split"],
                        "window": int(r["window"]),
                        "rule": rule,
                        "policy": col,
                        "util": r[f"util_{rule}_{col}"],
                        "wait": r[f"wait_{rule}_{col}"],
                        "bsld": r[f"bsld_{rule}_{col}"],
                        "wide_wait": r[f"wide_wait_{rule}_{col}"],
                        "ratio": 0.0 if col == "ref" else r[f"ratio_{rule}_{col}"],
                    }
                )
    return pd.DataFrame(recs)


def summarize_rigid(df: pd.DataFrame, columns: tuple[str, ...], out: Path) -> str:
    """``summary.csv`` (means per log, length, rule and policy), two figures, and the
    Markdown summary with the findings computed from the rows."""
    long = _long(df, columns)
    keys = ["trace", "length", "rule", "policy"]
    stats = (
        long.groupby(keys, sort=False)[["util", "wait", "bsld", "wide_wait", "ratio"]]
        .mean()
        .reset_index()
    )
    stats.to_csv(out / "summary.csv", index=False)
    _plots(long, out)
    windows = long.groupby(["trace", "length", "split"])["window"].nunique()
    lo, hi = int(windows.min()), int(windows.max())
    lines = [
        "# The price of fairness for rigid parallel jobs",
        "",
        "Produced by `coopsched reproduce rigid` (module `coopsched.experiments.rigid_study`).",
        f"{lo if lo == hi else f'{lo} to {hi}'} windows per log, length and machine split "
        "(uniform and Zipf, pooled below), 5 organizations, every job rigid (its processors at "
        "once, its requested time for EASY). Means over windows; waits and bounded slowdowns "
        "censored at the window's end (a job not started counts as starting then).",
        "",
        "## REF against the other policies, per backfilling rule",
        "",
        "`REF util`: REF's utilization; `best util`: the highest mean utilization of any "
        "policy on the same windows and rule (which policy in brackets); `price`: best minus "
        "REF, in points of utilization; `FIFO util`; `REF wait` and `FIFO wait` (s); "
        "`REF bsld`; `wide wait`: REF's mean wait of jobs wider than a tenth of the platform.",
        "",
        "| log | window (s) | rule | REF util | best util | price | FIFO util | REF wait "
        "| FIFO wait | REF bsld | wide wait |",
        "|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    # plain records: (trace, length, rule) -> policy -> the means
    cells: dict[tuple[str, int, str], dict[str, dict[str, float]]] = {}
    for rec in stats.to_dict("records"):
        key = (str(rec["trace"]), int(rec["length"]), str(rec["rule"]))
        cells.setdefault(key, {})[str(rec["policy"])] = {
            m: float(rec[m]) for m in ("util", "wait", "bsld", "wide_wait", "ratio")
        }
    prices = []
    for (trace, length, rule), by in cells.items():
        best = max(by, key=lambda p: by[p]["util"])
        ref, fifo = by["ref"], by.get("fifo")
        price = by[best]["util"] - ref["util"]
        prices.append((trace, length, rule, price, best))
        f_util = f"{fifo['util']:.1%}" if fifo else ""
        f_wait = f"{fifo['wait']:,.0f}" if fifo else ""
        lines.append(
            f"| {trace} | {length:,} | {rule} | {ref['util']:.1%} "
            f"| {by[best]['util']:.1%} ({best}) | {100 * price:+.2f} | {f_util} "
            f"| {ref['wait']:,.0f} | {f_wait} | {ref['bsld']:.1f} | {ref['wide_wait']:,.0f} |"
        )
    worst = max(prices, key=lambda p: p[3])
    lines += [
        "",
        f"Largest price: {100 * worst[3]:.2f} points of utilization ({worst[0]}, "
        f"{worst[1]:,} s windows, {worst[2]}, against {worst[4]}).",
        "",
        "## How backfilling changes REF's utilization",
        "",
        "| log | window (s) | " + " | ".join(RULE_LABELS[r] for r in RULES) + " |",
        "|---|---|" + "---|" * len(RULES),
    ]
    pairs = list(dict.fromkeys((t, n) for t, n, _ in cells))
    for trace, length in pairs:
        row = [cells.get((trace, length, r), {}).get("ref") for r in RULES]
        lines.append(
            f"| {trace} | {length:,} | "
            + " | ".join(f"{c['util']:.1%}" if c else "" for c in row)
            + " |"
        )
    lines += [
        "",
        "## dpsi / p_tot against REF under the same rule (mean)",
        "",
    ]
    cols = [c for c in columns if c != "ref" and any(c in by for by in cells.values())]
    lines.append("| log | window | rule | " + " | ".join(column_label(c) for c in cols) + " |")
    lines.append("|---|---|---|" + "---|" * len(cols))
    for (trace, length, rule), by in cells.items():
        lines.append(
            f"| {trace} | {length:,} | {rule} | "
            + " | ".join(f"{by[c]['ratio']:.1f}" if c in by else "" for c in cols)
            + " |"
        )
    lines += [
        "",
        "![utilization](utilization.png)",
        "",
        "![fairness](fairness.png)",
        "",
        "The worst case (the rigid counterpart of Theorem 6.2): on `m` machines, a 1-processor "
        "job released at 0 and an `m`-processor job released at 1, both of length `L`, take "
        "every greedy policy under every rule to `L / (m (L - 1))` of the best schedule's work "
        "before `L` (`coopsched.online.greedy_bound`, `tests/test_greedy_bound.py`): no constant "
        "bound holds for rigid jobs.",
        "",
    ]
    return "\n".join(lines)


def _plots(long: pd.DataFrame, out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    traces = list(dict.fromkeys(long["trace"]))
    lengths = sorted(long["length"].unique())
    fig, axes = plt.subplots(
        len(lengths), 1, figsize=(max(6, 1.6 * len(traces)), 3.2 * len(lengths)), squeeze=False
    )
    width = 0.8 / len(RULES)
    for ax, length in zip(axes[:, 0], lengths, strict=True):
        sub = long[long.length == length]
        for i, rule in enumerate(RULES):
            g = sub[sub.rule == rule]
            ref = g[g.policy == "ref"].groupby("trace")["util"].mean()
            best = g.groupby(["trace", "policy"])["util"].mean().groupby("trace").max()
            x = np.arange(len(traces)) + (i - (len(RULES) - 1) / 2) * width
            ax.bar(x, [ref.get(t, np.nan) for t in traces], width, label=f"REF, {rule}")
            ax.scatter(x, [best.get(t, np.nan) for t in traces], color="k", marker="_", s=120)
        ax.set_xticks(np.arange(len(traces)), traces)
        ax.set_ylabel("utilization")
        ax.set_ylim(0, 1.05)
        ax.set_title(f"windows of {length:,} s: REF's utilization (bars), best policy's (ticks)")
        ax.legend(fontsize=7, ncol=len(RULES), loc="lower left")
    fig.tight_layout()
    fig.savefig(out / "utilization.png", dpi=110)
    plt.close(fig)

    fig, axes = plt.subplots(1, len(RULES), figsize=(4 * len(RULES), 3.6), sharey=True)
    others = [p for p in dict.fromkeys(long["policy"]) if p != "ref"]
    for ax, rule in zip(axes, RULES, strict=True):
        g = long[(long.rule == rule) & (long.policy != "ref")]
        means = g.groupby("policy")["ratio"].mean().reindex(others)
        ax.barh(range(len(others)), means.to_numpy())
        ax.set_yticks(range(len(others)), [column_label(p) for p in others])
        ax.set_xscale("symlog")
        ax.set_title(f"{rule}: mean dpsi / p_tot vs REF (all windows)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "fairness.png", dpi=110)
    plt.close(fig)
