"""Schedules out of coopsched: SWF with the waits filled in, Batsim's ``out_jobs.csv``,
and a Gantt chart per organization (``docs/formats.md``).

Only the jobs that started before the horizon are written to SWF and Batsim files; how
many were left out is said in the SWF header and returned by both writers.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from .schedule import Schedule

#: The columns of Batsim's ``out_jobs.csv``, in Batsim's order.
BATSIM_COLUMNS = (
    "job_id",
    "workload_name",
    "profile",
    "submission_time",
    "requested_number_of_resources",
    "requested_time",
    "success",
    "final_state",
    "starting_time",
    "execution_time",
    "finish_time",
    "waiting_time",
    "turnaround_time",
    "stretch",
    "allocated_resources",
    "consumed_energy",
    "metadata",
)


def _started(schedule: Schedule) -> np.ndarray:
    """The started jobs of a schedule (a :class:`TypeError` naming ``schedule`` for anything
    else)."""
    from ..workloads.limits import check_type

    check_type(schedule, Schedule, "schedule", "a Schedule")
    return np.flatnonzero(schedule.in_coalition & (schedule.start >= 0))


def write_schedule_swf(schedule: Schedule, path: str | Path) -> int:
    """Write the started jobs as SWF (PWA format 2.2) with the wait times filled in.

    One line per job: job number ``j + 1``, submit = release, wait = start - release, run
    time = size, processors allocated and requested (1 for sequential jobs, ``q`` for a
    rigid job, written once), requested time for rigid jobs that have one, status 1, user
    and group = organization index + 1, partition = index + 1 of the organization whose
    machine ran a sequential job (-1 for rigid jobs). The header names the policy, the organizations and the jobs
    left out (not started before the horizon). Returns that count.
    """
    import pandas as pd

    from ..workloads.swf import write_swf

    idx = _started(schedule)  # checks its argument first
    inst = schedule.instance
    owner = inst.machine_owner()
    width = inst.width[idx]
    cols = {
        "job": idx + 1,
        "submit": inst.release[idx],
        "wait": schedule.start[idx] - inst.release[idx],
        "run_time": inst.size[idx],
        "alloc_procs": width,
        "req_procs": width,
        "status": 1,
        "user": inst.org[idx] + 1,
        "group": inst.org[idx] + 1,
        # a rigid job spans machines of several owners: -1 (unknown), as SWF allows
        "partition": -1 if inst.rigid else owner[schedule.machine[idx]] + 1,
    }
    if inst.requested is not None:
        cols["req_time"] = inst.requested[idx]
    jobs = pd.DataFrame(cols)
    left_out = int(len(schedule.unstarted))
    header = {
        "Version": "2.2",
        "Computer": f"coopsched schedule of policy {schedule.policy}",
        "MaxProcs": str(int(sum(inst.machines[u] for u in schedule.coalition))),
        "MaxJobs": str(len(idx)),
        "Note": "user and group = organization index + 1; partition = owner of the machine + 1",
        "Organizations": ", ".join(
            f"{u + 1}={inst.names[u]}:{int(inst.machines[u])}" for u in schedule.coalition
        ),
    }
    if schedule.horizon is not None:
        header["Horizon"] = str(schedule.horizon)
    if left_out:
        header["Excluded"] = f"{left_out} job(s) not started before the horizon"
    write_swf(path, jobs, header)
    return left_out


def batsim_frame(schedule: Schedule, workload_name: str = "w0"):
    """The started jobs as Batsim's ``out_jobs.csv`` table (a pandas DataFrame).

    Every job runs to completion in the model, so ``success`` is 1, ``final_state``
    ``COMPLETED_SUCCESSFULLY``; ``requested_number_of_resources`` is the job's processors
    (one row per job, rigid ones included), ``requested_time`` its requested time (the
    size when it has none) and ``allocated_resources`` its machines in Batsim's interval
    notation (``0-3 7``; :meth:`Schedule.allocation` for rigid jobs);
    ``consumed_energy`` is -1 (not modelled) and ``metadata`` the organization's name.
    """
    import pandas as pd

    idx = _started(schedule)  # checks its argument first
    inst = schedule.instance
    start = schedule.start[idx]
    size = inst.size[idx]
    rel = inst.release[idx]
    finish = start + size
    ids = [str(inst.ids[j]) for j in idx] if inst.ids is not None else [str(j) for j in idx]
    ptr, machines = schedule.allocation()
    allocated = [_intervals(machines[ptr[j] : ptr[j + 1]]) for j in idx]
    requested = size
    if inst.requested is not None:
        requested = np.where(inst.requested[idx] >= 1, inst.requested[idx], size)
    df = pd.DataFrame(
        {
            "job_id": ids,
            "workload_name": workload_name,
            "profile": "delay",
            "submission_time": rel,
            "requested_number_of_resources": inst.width[idx],
            "requested_time": requested,
            "success": 1,
            "final_state": "COMPLETED_SUCCESSFULLY",
            "starting_time": start,
            "execution_time": size,
            "finish_time": finish,
            "waiting_time": start - rel,
            "turnaround_time": finish - rel,
            "stretch": (finish - rel) / size,
            "allocated_resources": allocated,
            "consumed_energy": -1,
            "metadata": np.array(inst.names, dtype=object)[inst.org[idx]],
        }
    )
    return df[list(BATSIM_COLUMNS)]


def _intervals(ids: np.ndarray) -> str:
    """Machine numbers in Batsim's notation: sorted, runs as ``a-b``, space-separated."""
    out = []
    xs = sorted(int(x) for x in ids)
    i = 0
    while i < len(xs):
        j = i
        while j + 1 < len(xs) and xs[j + 1] == xs[j] + 1:
            j += 1
        out.append(str(xs[i]) if i == j else f"{xs[i]}-{xs[j]}")
        i = j + 1
    return " ".join(out)


def write_batsim_jobs(schedule: Schedule, path: str | Path, workload_name: str = "w0") -> int:
    """Write :func:`batsim_frame` as CSV (evalys and Batsim's tools read it); returns the
    number of jobs left out (not started before the horizon)."""
    batsim_frame(schedule, workload_name).to_csv(path, index=False)
    return int(len(schedule.unstarted))


def plot_gantt(
    schedule: Schedule,
    path: str | Path | None = None,
    *,
    title: str | None = None,
    width: float = 12.0,
):
    """A Gantt chart: time on the x axis, machine on the y axis, one colour per
    organization (the job's owner), machines grouped by the organization contributing
    them. Jobs are drawn as one ``PolyCollection`` per organization, so thousands of jobs
    render quickly. Saved to ``path`` (PNG, SVG, PDF by suffix) when given; returns the
    matplotlib figure.
    """
    import matplotlib

    if path is not None:
        matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt
    from matplotlib.collections import PolyCollection
    from matplotlib.patches import Patch

    idx = _started(schedule)  # checks its argument first
    inst = schedule.instance
    M = int(inst.total_machines)
    height = min(12.0, 2.0 + 0.12 * max(M, 1))
    fig, ax = plt.subplots(figsize=(width, height))
    cmap = plt.get_cmap("tab10" if inst.k <= 10 else "tab20")
    handles = []
    start = schedule.start[idx]
    end = start + inst.size[idx]
    # one rectangle per job and run of consecutive machines (a rigid job is drawn once,
    # over its machines: Schedule.allocation)
    ptr, ids = schedule.allocation()
    rect_job, lo, hi = [], [], []
    for x, j in enumerate(idx.tolist()):
        ms = np.sort(ids[ptr[j] : ptr[j + 1]])
        cut = np.flatnonzero(np.diff(ms) != 1) + 1
        for run in np.split(ms, cut):
            rect_job.append(x)
            lo.append(run[0])
            hi.append(run[-1])
    rj = np.array(rect_job, dtype=np.int64)
    ylo, yhi = np.array(lo, dtype=float), np.array(hi, dtype=float)
    for u in schedule.coalition:
        sel = inst.org[idx][rj] == u if len(rj) else np.zeros(0, dtype=bool)
        colour = cmap(u % cmap.N)
        if sel.any():
            x0, x1 = start[rj[sel]], end[rj[sel]]
            a, b = ylo[sel], yhi[sel]
            verts = np.stack(
                [
                    np.stack([x0, a - 0.4], 1),
                    np.stack([x0, b + 0.4], 1),
                    np.stack([x1, b + 0.4], 1),
                    np.stack([x1, a - 0.4], 1),
                ],
                1,
            ).astype(float)
            many = len(x0) > 2000
            ax.add_collection(
                PolyCollection(
                    list(verts),
                    facecolors=colour,
                    edgecolors="none" if many else "black",
                    linewidths=0 if many else 0.3,
                )
            )
        handles.append(Patch(color=colour, label=inst.names[u]))
    # machines grouped by the organization contributing them, in the order that numbers them
    # (Instance.canonical_order)
    blocks = inst.canonical_order()
    blocks = blocks[inst.machines[blocks] > 0]
    sizes = inst.machines[blocks]
    bounds = np.cumsum(sizes)
    for b in bounds[:-1]:
        ax.axhline(b - 0.5, color="grey", linewidth=0.5)
    t_max = float(end.max()) if len(idx) else 1.0
    if schedule.horizon is not None:
        # jobs running past the horizon are cut at 1.2 x the horizon: one long job must not
        # squeeze the measured window into a corner of the chart
        t_max = max(min(t_max, 1.2 * float(schedule.horizon)), float(schedule.horizon))
        ax.axvline(schedule.horizon, color="red", linewidth=0.8, linestyle="--")
    ax.set_xlim(0, t_max)
    ax.set_ylim(-0.5, max(M, 1) - 0.5)
    ax.invert_yaxis()
    ax.set_xlabel("time")
    ax.set_ylabel("machine")
    # the organization contributing each block of machines, on the right-hand axis
    owners = ax.twinx()
    owners.set_ylim(ax.get_ylim())
    lows = bounds - sizes
    owners.set_yticks([(lo + hi - 1) / 2 for lo, hi in zip(lows, bounds, strict=True)])
    owners.set_yticklabels([inst.names[u] for u in blocks])
    owners.tick_params(length=0)
    if M <= 40:
        ax.set_yticks(range(M))
    ax.set_title(title or f"{schedule.policy}: {len(idx)} jobs on {M} machines")
    ax.legend(
        handles=handles,
        title="job owner",
        loc="upper left",
        bbox_to_anchor=(1.05, 1.0),
        fontsize="small",
        borderaxespad=0,
    )
    fig.tight_layout()
    if path is not None:
        fig.savefig(path, dpi=120)
        plt.close(fig)
    return fig
