"""What the trace studies share: their logs, how a window is cut, and how one is measured.

* :func:`trace_files`: the study's logs by short name (``LPC-EGEE``, ``SDSC-SP2``: the
  aliases of :data:`coopsched.workloads.archive.LOGS`), found by the one locator
  (:func:`coopsched.workloads.archive.trace_path`) in the ``traces`` folder, else in
  ``$COOPSCHED_TRACES`` and the download cache; never downloaded;
* :class:`WindowState`: how the windows are drawn and filled, and the job model (``jobs``
  sequential or rigid, ``backfill``);
* :func:`task_instance`: the instance of one window (a sweep task's);
* :func:`evaluate_window`: one window, REF once and every policy against it (the sweep
  task of Tables 1 and 2, Figure 10, the sensitivity and production studies);
* :func:`rows_frame`, :func:`default_machines`, :func:`policy_params`,
  :func:`parse_ints`, :func:`fmt`: the small helpers of their tables.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ..online.fairness import fairness
from ..online.policies import get_policy, policy_class
from ..online.policies.ref import Ref
from ..online.rigid import BACKFILL
from ..workloads.archive import (
    ArchiveError,
    alias_names,
    by_alias,
    load_trace,
    trace_path,
)
from ..workloads.instance import Instance
from ..workloads.prepare import OWNERS, peak_concurrency, trace_machines, trace_to_instance
from ..workloads.swf import SWFTrace

#: The job models of a trace study (``trace_to_instance(jobs=...)``).
JOBS = ("sequential", "rigid")


def trace_files(traces: str | Path | None, names: Iterable[str]) -> dict[str, str]:
    """The file of every log in ``names`` (short names, e.g. ``LPC-EGEE``).

    ``traces`` given: that folder, or an error (never another folder); otherwise
    ``$COOPSCHED_TRACES`` and the cache of ``coopsched fetch``. A missing log is a
    :class:`FileNotFoundError` naming it and the ``traces`` parameter."""
    logs = []
    for name in names:
        try:
            logs.append(by_alias(name))
        except KeyError as exc:
            raise ValueError(f"traces: {exc.args[0]}") from None
    if traces is not None:
        folder = Path(traces)
        if not folder.is_dir():
            raise FileNotFoundError(f"traces: {folder}: no such folder")
    files: dict[str, str] = {}
    missing = []
    for log in logs:
        try:
            if traces is None:
                files[log.alias] = str(trace_path(log.name, download=False))
            else:
                files[log.alias] = str(trace_path(log.name, folder=traces))
        except ArchiveError:
            missing.append(log.filename)
    if missing and traces is not None:
        raise FileNotFoundError(
            f"traces: {traces}: no {', '.join(missing)} there (the folder must hold "
            f"{', '.join(log.filename for log in logs)})"
        )
    if missing:
        raise FileNotFoundError(
            f"the SWF traces were not found ({', '.join(missing)}); pass traces=DIR (a "
            "folder with them), set COOPSCHED_TRACES, or download them with "
            "'coopsched fetch NAME'"
        )
    return files


def check_logs(names: Iterable[str], parameter: str) -> tuple[str, ...]:
    """``names`` as a tuple, each a registered log's short name, else a ``ValueError``
    naming ``parameter``."""
    names = tuple(names)
    known = alias_names()
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(
            f"{parameter}: unknown log(s) {', '.join(unknown)}; choose from {', '.join(known)}"
        )
    return names


def default_machines(name: str, trace: SWFTrace) -> int:
    """The machines of a log: its header's ``MaxProcs``; for METACENTRUM (no header) the
    log's peak of concurrently used processors."""
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


def task_instance(task: dict, **options: Any) -> Instance:
    """The instance of a sweep task's window: the log at ``task["path"]`` cut at ``start``
    for ``length`` seconds, its jobs dealt to ``k`` organizations owning ``machines``
    (``split``, ``seed``); ``options``: more keyword arguments of
    ``workloads.prepare.trace_to_instance``."""
    return trace_to_instance(
        load_trace(task["path"]),
        k=task["k"],
        start=task["start"],
        length=task["length"],
        machines=task["machines"],
        split=task["split"],
        seed=task["seed"],
        **options,
    )


def evaluate_window(task: dict) -> dict:
    """One window: REF once, then ``dpsi/p_tot`` and utilization of every policy (a sweep
    task). ``task["variants"]`` (optional) maps a label to ``[policy, params]``: more runs of
    a policy with other parameters, reported under that label.

    Optional task key ``window_options``: keyword arguments of
    ``workloads.prepare.trace_to_instance`` (``warmup``: seconds simulated before the
    measured window, the metric then counting the utilities accrued in the window, see
    ``online.fairness``; ``owners``: ``user`` or ``random``; ``backlog``: the log's own
    state at the window start; ``jobs``: ``rigid`` for rigid jobs). Optional task key
    ``backfill``: the backfilling rule of rigid jobs (REF and every policy; absent: EASY
    when every job has a requested time, else first-fit), reported in the row as
    ``backfill``. The horizon and the start of the measured window come from the
    instance's ``meta``."""
    inst = task_instance(task, **task.get("window_options", {}))
    T = int(inst.meta["horizon"])
    W = int(inst.meta.get("measure_from") or 0)
    row: dict = {"n_jobs": inst.n, "machines": inst.machines.tolist()}
    if W:
        row["n_window_jobs"] = int((inst.release >= W).sum())
        row["n_warmup_jobs"] = inst.n - row["n_window_jobs"]
    if "backlog" in inst.meta:  # trace jobs in the system at the window start
        row["backlog_waiting"] = inst.meta["backlog"]["waiting"]
        row["backlog_running"] = inst.meta["backlog"]["running"]
    run_options: dict[str, Any] = {}
    if inst.rigid:
        from ..online.rigid import resolve_backfill

        run_options["backfill"] = row["backfill"] = resolve_backfill(inst, task.get("backfill"))
    t0 = time.perf_counter()
    ref = Ref().run(inst, T, **run_options)
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
        sched = get_policy(name, **params).run(inst, T, **run_options)
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
    ones pinned); jobs dealt to organizations by ``user`` or at ``random``; each job
    ``sequential`` (the paper's split into one-processor jobs) or ``rigid`` (its processors
    at once) under the backfilling rule ``backfill`` (rigid jobs only; ``None``: EASY when
    every job has a requested time, else first-fit)."""

    sampling: str = "time"
    warmup: int = 0
    owners: str = "user"
    backlog: bool = False
    jobs: str = "sequential"
    backfill: str | None = None

    def __post_init__(self) -> None:
        if self.sampling not in ("time", "job"):
            raise ValueError("sampling: window sampling must be 'time' or 'job'")
        if self.warmup < 0:
            raise ValueError("warmup: the warm-up period must be 0 or positive")
        if self.owners not in OWNERS:
            raise ValueError(f"owners: must be one of {', '.join(OWNERS)}")
        if self.warmup and self.backlog:
            raise ValueError(
                "warmup= and backlog= are two ways to fill the system at the window start: "
                "choose one"
            )
        check_jobs(self.jobs, self.backfill)
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
        if self.jobs != "sequential":
            opts["jobs"] = self.jobs
        return opts

    def task_options(self) -> dict:
        """What a window's task carries: ``window_options`` (when not the defaults) and
        ``backfill`` (when given)."""
        out: dict = {}
        opts = self.options()
        if opts:
            out["window_options"] = opts
        if self.backfill is not None:
            out["backfill"] = self.backfill
        return out

    def describe(self) -> str:
        """One sentence for a summary (two when the jobs are rigid)."""
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
            + model_sentence(self.jobs, self.backfill)
        )


def check_jobs(jobs: str, backfill: str | None) -> None:
    """``jobs`` is a job model and ``backfill`` a rule, given for rigid jobs only."""
    if jobs not in JOBS:
        raise ValueError(f"jobs: {jobs!r}; choose from {', '.join(JOBS)}")
    if backfill is None:
        return
    if backfill not in BACKFILL:
        raise ValueError(f"backfill: {backfill!r}; choose from {', '.join(BACKFILL)}")
    if jobs != "rigid":
        raise ValueError(
            "backfill: applies to rigid jobs only (jobs=rigid): with sequential jobs every "
            "rule gives the same schedule"
        )


def model_sentence(jobs: str, backfill: str | None) -> str:
    """`` Jobs rigid ...`` for a summary (with a leading space), or nothing for the paper's
    sequential jobs."""
    if jobs != "rigid":
        return ""
    rule = (
        f"under the backfilling rule {backfill}"
        if backfill
        else "under the backfilling rule easy where every job has a requested time, "
        "first-fit otherwise"
    )
    return (
        " Jobs rigid (a job on q processors takes q machines at once, not the paper's split "
        f"into q one-processor jobs), REF and every policy {rule}."
    )


def rows_frame(rows: list[dict]) -> pd.DataFrame:
    """The rows of :func:`evaluate_window` with their task's trace, window and settings."""
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


def parse_ints(value: tuple[int, ...] | str, what: str) -> tuple[int, ...]:
    """``"2,4,6"`` or ``(2, 4, 6)`` as a tuple of positive integers (``what``: the
    parameter, named in the error)."""
    try:
        ints = tuple(int(x) for x in (value.split(",") if isinstance(value, str) else value))
    except ValueError:
        raise ValueError(f"{what}: takes comma-separated integers, e.g. 2,4,6") from None
    if not ints or min(ints) < 1:
        raise ValueError(f"{what}: takes positive integers, e.g. 2,4,6")
    return ints


def fmt(x: float | None) -> str:
    """A mean or deviation in a table: ``-`` for none, thousands without decimals, then
    one decimal, then three significant digits."""
    if x is None or (isinstance(x, float) and np.isnan(x)):
        return "-"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    if abs(x) >= 1:
        return f"{x:.1f}"
    return f"{x:.3g}"
