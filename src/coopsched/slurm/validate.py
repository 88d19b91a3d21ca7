"""coopsched's models against a real Slurm's schedule of the same jobs (docs/slurm.md).

:func:`replayed_instance` reads a replay's capture (``sacct.txt``, with the project's sacct
reader) into a rigid instance whose ``start`` is Slurm's schedule: releases are Slurm's
recorded submit times (a job missing from the capture, accepted by sbatch in the last seconds
but not yet in Slurm's database, waits from its planned submit time), run times the recorded ``End - Start``, requested times the recorded
time limits, all on the log's clock. A job still running or pending at the capture has no
end yet; its run time is its planned ``sleep`` (the job is a ``sleep``, so that is what it
runs). :func:`compare` simulates that instance under the models (FIFO and SLURM-CLASSIC
with the replay's parameters, EASY backfilling) and under REF, and measures the agreement.
"""

from __future__ import annotations

import csv
import io
import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..workloads.instance import Instance, Organization
from .plan import CAPTURE_FORMAT, PlanError, map_capture, whole_minutes


def remap(out: str | Path) -> None:
    """Write ``sacct.txt`` again from ``sacct_real.txt`` and ``replay.json``."""
    out = Path(out)
    meta = json.loads((out / "replay.json").read_text())
    raw = (out / "sacct_real.txt").read_text()
    (out / "sacct.txt").write_text(
        map_capture(raw, int(meta["origin"]), float(meta["speed"]), int(meta["base"]))
    )


def replayed_instance(out: str | Path) -> tuple[Instance, int, dict]:
    """The replay in ``out`` as a rigid instance with Slurm's starts, its horizon (log s),
    and its ``replay.json``."""
    from ..audit import load_log

    out = Path(out)
    meta = json.loads((out / "replay.json").read_text())
    log = load_log(out / "sacct.txt", timezone="UTC")
    if isinstance(log, Instance):  # pragma: no cover - sacct.txt is never JSON
        raise PlanError(f"{out / 'sacct.txt'}: not a sacct capture")
    speed, base, T = float(meta["speed"]), int(meta["base"]), int(meta["horizon"])
    planned = {j["name"]: j for j in meta["jobs"]}
    by_id = {jid: name for name, _lag, jid in meta["submissions"] if jid}
    accounts = list(meta["accounts"])
    acc = {a: i for i, a in enumerate(accounts)}
    rows = log.jobs
    n = len(rows)
    org = np.zeros(n, dtype=np.int64)
    release = np.zeros(n, dtype=np.int64)
    size = np.zeros(n, dtype=np.int64)
    width = np.zeros(n, dtype=np.int64)
    req = np.zeros(n, dtype=np.int64)
    start = np.full(n, -1, dtype=np.int64)
    index = np.zeros(n, dtype=np.int64)
    arrival = np.zeros(n, dtype=np.int64)  # Slurm's job id: the order it received them
    for r, (jid, sub, st, en, limit, account) in enumerate(
        zip(
            rows["job"].astype(str),
            rows["submit"],
            rows["start"],
            rows["end"],
            rows["requested"],
            rows["account"],
            strict=True,
        )
    ):
        name = by_id.get(jid)
        if name is None:
            raise PlanError(f"{out / 'sacct.txt'}: job {jid} is not one the replay submitted")
        job = planned[name]
        index[r] = job["index"]
        arrival[r] = int(jid) if jid.isdigit() else r
        org[r] = acc[str(account)]
        release[r] = int(sub) - base
        width[r] = job["processors"]
        req[r] = int(limit) if int(limit) > 0 else round(job["limit"] * 60 * speed)
        if int(st) >= 0:
            start[r] = int(st) - base
        if int(st) >= 0 and int(en) >= 0:
            size[r] = max(1, int(en) - int(st))
        else:
            size[r] = round(job["sleep"] * speed)
    # a job sbatch accepted but slurmctld had not yet sent to slurmdbd when sacct was read
    # (submitted in the window's last seconds): waiting, at its planned submit time
    listed = set(index.tolist())
    missing = [j for j in meta["jobs"] if j["index"] not in listed]
    if missing:
        org = np.concatenate([org, [acc[j["account"]] for j in missing]])
        release = np.concatenate([release, [round(j["submit"] * speed) for j in missing]])
        size = np.concatenate([size, [round(j["sleep"] * speed) for j in missing]])
        width = np.concatenate([width, [j["processors"] for j in missing]])
        req = np.concatenate([req, [round(j["limit"] * 60 * speed) for j in missing]])
        start = np.concatenate([start, np.full(len(missing), -1)])
        index = np.concatenate([index, [j["index"] for j in missing]])
        top = int(arrival.max(initial=0))
        arrival = np.concatenate([arrival, top + 1 + np.arange(len(missing))])
    # jobs in Slurm's order: by submit time, then by job id (the order slurmctld received
    # them: jobs sent at one instant by parallel sbatch calls may arrive in another order
    # than planned, and Slurm breaks equal priorities by submit time, then job id)
    order = np.lexsort((arrival, release))
    orgs = [
        Organization(a, int(m)) for a, m in zip(accounts, meta["account_machines"], strict=True)
    ]
    inst = Instance(
        orgs,
        org[order],
        release[order],
        size[order],
        width[order],
        ids=index[order].tolist(),
        meta={"source": str(out / "sacct.txt"), "horizon": T, "not_in_capture": len(missing)},
        start=start[order],
        requested=req[order],
    )
    return inst, T, meta


#: The models compared with a replay: FIFO, SLURM-CLASSIC as it integrates usage (each
#: event, exactly), SLURM-CLASSIC reading usage at Slurm's PriorityCalcPeriod ticks, the two
#: last with EASY over the whole queue (the engine's ``easy-queue`` rule) instead of each
#: organization's oldest job, and the last with usage charged as Slurm 22.05 charges it, at
#: the ticks slurmctld's log shows (:class:`~coopsched.slurm.charged.SlurmCharged`,
#: :func:`tick_phase`).
MODELS = (
    "fifo",
    "slurm-classic-exact",
    "slurm-classic",
    "fifo-whole-queue",
    "slurm-classic-whole-queue",
    "slurm-classic-charged-whole-queue",
)

#: slurmctld's log line written when the decay thread starts (its ticks follow every
#: PriorityCalcPeriod from then; priority/multifactor only)
DECAY_START = "_read_last_decay_ran"


def tick_phase(out: str | Path, meta: dict) -> int:
    """The log time (seconds, modulo the period) of the ticks at which the replay's Slurm
    charged usage: the decay thread starts (``DECAY_START`` in ``slurmctld.log``, written
    in UTC) and charges at that whole second plus every ``PriorityCalcPeriod`` (its clock
    is read with ``time()``). The replay's ``calc_phase`` (0: the origin is a whole number
    of periods after slurmctld's boot, a second or two before the thread starts) when the
    log has no such line (``priority/basic``)."""
    from datetime import UTC, datetime

    period = int(meta["scheduling"]["calc_period"]) * 60
    path = Path(out) / "slurmctld.log"
    lines = path.read_text(errors="replace").splitlines() if path.is_file() else []
    for line in lines:
        if DECAY_START in line and line.startswith("["):
            when = datetime.strptime(line[1:20], "%Y-%m-%dT%H:%M:%S").replace(tzinfo=UTC)
            real = (int(when.timestamp()) - int(meta["origin"])) % period
            return round(real * float(meta["speed"]))
    return int(meta.get("calc_phase", 0))


def as_slurm_minutes(seconds: float, speed: float) -> float:
    """A log duration as the replay's Slurm took it (``plan.minutes_string`` of its real
    length: whole minutes, rounded up), back on the log's clock."""
    return whole_minutes(seconds / speed) * 60 * speed


def model_policy(name: str, meta: dict, phase: int | None = None):
    """A model of a replay's scheduler (:data:`MODELS`), with the replay's settings on the
    log's clock: ``fifo``; ``slurm-classic-exact`` (half-life, shares, weights, max age;
    usage read at every event); ``slurm-classic`` (the same, read at the ticks of
    ``PriorityCalcPeriod``, ``calc_phase`` from the replay, 0 when it started on a tick);
    ``slurm-classic-charged-whole-queue`` (usage charged at the ticks as Slurm does, at
    ``phase``: :func:`tick_phase`, the replay's ``calc_phase`` if not given)."""
    from ..online.policies import get_policy

    if name in ("fifo", "fifo-whole-queue"):
        return get_policy("fifo")
    if name not in MODELS:
        raise ValueError(f"unknown model {name!r}; choose from {', '.join(MODELS)}")
    sch = meta["scheduling"]
    kwargs: dict = {"half_life": float(sch["half_life"])}
    if sch.get("shares") is not None:
        kwargs["shares"] = [float(s) for s in sch["shares"]]
    if int(sch.get("age_weight", 0)):
        kwargs["fs_weight"] = int(sch["fs_weight"])
        kwargs["age_weight"] = int(sch["age_weight"])
        kwargs["max_age"] = float(sch["max_age"])
    if name != "slurm-classic-exact":
        kwargs["calc_period"] = float(sch["calc_period"]) * 60 * float(meta["speed"])
        kwargs["calc_phase"] = float(meta.get("calc_phase", 0))
    if name == "slurm-classic-charged-whole-queue":
        from .charged import SlurmCharged

        if phase is not None:
            kwargs["calc_phase"] = float(phase)
        # the durations as Slurm took them: whole real minutes, rounded up (plan.py)
        for key in ("half_life", "max_age"):
            if key in kwargs and math.isfinite(kwargs[key]):
                kwargs[key] = as_slurm_minutes(kwargs[key], float(meta["speed"]))
        return SlurmCharged(**kwargs)
    return get_policy("slurm-classic", **kwargs)


def initial_priorities(out: str | Path) -> dict[int, int]:
    """Each job's priority when Slurm received it (``InitPrio`` in ``slurmctld.log``), by
    Slurm job id."""
    path = Path(out) / "slurmctld.log"
    text = path.read_text(errors="replace") if path.is_file() else ""
    return {int(j): int(p) for j, p in re.findall(r"JobId=(\d+) InitPrio=(\d+)", text)}


def factor_agreement(out: str | Path, name: str, tol: float = 0.01) -> tuple[int, int]:
    """How many jobs' fair-share factor at submission the model ``name`` (of
    :data:`MODELS`) gives within ``tol`` of Slurm's, of how many jobs have one: Slurm's is
    ``InitPrio / PriorityWeightFairshare`` (a fair-share replay without an age weight:
    ``(0, 0)`` otherwise). The model is fed Slurm's own schedule
    (:func:`recorded_factors`), so only how usage is charged and read is compared."""
    out = Path(out)
    inst, _T, meta = replayed_instance(out)
    sch = meta["scheduling"]
    prio = initial_priorities(out)
    if not sch.get("fairshare") or int(sch.get("age_weight", 0)) or not prio:
        return 0, 0
    assert inst.ids is not None  # replayed_instance sets it
    row = {int(i): r for r, i in enumerate(inst.ids)}
    index = {j["name"]: int(j["index"]) for j in meta["jobs"]}
    asked = [
        (row[index[n]], prio[int(jid)] / float(sch["fs_weight"]))
        for n, _lag, jid in meta["submissions"]
        if jid and int(jid) in prio and index[n] in row
    ]
    got = recorded_factors(out, name, [int(inst.release[r]) for r, _ in asked])
    good = sum(
        abs(f[int(inst.org[r])] - slurm) <= tol for (r, slurm), f in zip(asked, got, strict=True)
    )
    return good, len(asked)


def recorded_factors(out: str | Path, name: str, times: list[int]) -> list[list[float]]:
    """Every account's fair-share factor under the model ``name`` (of :data:`MODELS`) at
    each of ``times`` (log seconds of the window), the model fed Slurm's own schedule: each
    job's processors from its recorded start to its end, on the first free machines (at
    one time: completions, then starts, then the factors read)."""
    import heapq

    from ..online.view import SimView

    out = Path(out)
    inst, _T, meta = replayed_instance(out)
    assert inst.start is not None  # replayed_instance sets it
    policy = model_policy(name, meta, tick_phase(out, meta))
    k = inst.k
    machines = [int(o.machines) for o in inst.organizations]
    view = SimView(k, tuple(range(k)), machines, [u for u in range(k) for _ in range(machines[u])])
    policy.reset(view)
    events = [(t, 2, i) for i, t in enumerate(times)]  # (time, completions first, row)
    for r in map(int, np.flatnonzero(inst.start >= 0)):
        s = int(inst.start[r])
        events += [(s, 1, r), (s + int(inst.size[r]), 0, r)]
    free = list(range(inst.total_machines))
    held: dict[int, list[int]] = {}
    factors: list[list[float]] = [[] for _ in times]
    for t, kind, r in sorted(events):  # r: an int row (or query)
        view.t = t
        if kind == 0:
            for m in held.pop(r):
                policy.on_complete(view, int(inst.org[r]), m, int(inst.size[r]))
                heapq.heappush(free, m)
        elif kind == 1:
            held[r] = [heapq.heappop(free) for _ in range(int(inst.width[r]))]
            for m in held[r]:
                policy.on_start(view, int(inst.org[r]), m)
        else:
            factors[r] = [policy.factor(view, u) for u in range(k)]
    return factors


def account_factors(out: str | Path, real: list[int]) -> dict[int, dict[str, float]]:
    """:func:`recorded_factors` of ``slurm-classic-charged-whole-queue`` (the model Slurm's
    priorities match) at each of ``real`` (Slurm's Unix seconds), by account name."""
    meta = json.loads((Path(out) / "replay.json").read_text())
    speed, origin = float(meta["speed"]), int(meta["origin"])
    got = recorded_factors(
        out, "slurm-classic-charged-whole-queue", [round((t - origin) * speed) for t in real]
    )
    return {t: dict(zip(meta["accounts"], f, strict=True)) for t, f in zip(real, got, strict=True)}


@dataclass
class Comparison:
    """One schedule (a model's or Slurm's) of a replay against Slurm's and REF."""

    replay: str
    schedule: str
    jobs: int
    agree: float  # share of jobs whose start is within ``tolerance`` of Slurm's
    agree_exact: float
    utilization: float
    utilization_slurm: float
    unfairness: float  # dpsi / p_tot against REF
    psi_diff: list[float]  # per account, (psi - psi_slurm) / psi_slurm
    tolerance: int


def compare(out: str | Path, models: tuple[str, ...] = MODELS) -> list[Comparison]:
    """Slurm's schedule of the replay in ``out``, and each model's, against each other and
    REF (EASY backfilling, the replay's instance). The tolerance of "agrees" is one
    scheduling interval: ``bf_interval`` real seconds on the log's clock."""
    from ..audit.game import recorded_schedule
    from ..online.fairness import fairness
    from ..online.policies import get_policy

    out = Path(out)
    inst, T, meta = replayed_instance(out)
    tol = int(round(float(meta["scheduling"]["bf_interval"]) * float(meta["speed"])))
    slurm = recorded_schedule(inst, T)
    ref = get_policy("ref").run(inst, T, backfill="easy")
    s_start = np.where(slurm.start >= 0, slurm.start, -1)
    psi_s = slurm.psi(T)
    rows = []
    scheds = [("slurm", slurm)]
    phase = tick_phase(out, meta)
    for m in models:
        rule = "easy-queue" if m.endswith("-whole-queue") else "easy"
        scheds.append((m, model_policy(m, meta, phase).run(inst, T, backfill=rule)))
    for name, sched in scheds:
        st = np.where((sched.start >= 0) & (sched.start < T), sched.start, -1)
        both = (st >= 0) & (s_start >= 0)
        same = (st < 0) & (s_start < 0)
        agree = same | (both & (np.abs(st - s_start) <= tol))
        exact = same | (both & (st == s_start))
        psi = sched.psi(T)
        rows.append(
            Comparison(
                out.name,
                name,
                inst.n,
                float(agree.mean()),
                float(exact.mean()),
                sched.utilization(T),
                slurm.utilization(T),
                fairness(sched, ref, T).ratio,
                [(a - b) / b if b else math.nan for a, b in zip(psi, psi_s, strict=True)],
                tol,
            )
        )
    return rows


def write_schedule(out: str | Path) -> Path:
    """``schedule.json`` in ``out``: the replay as a JSON schedule (Slurm's starts, every
    job's run time, the accounts' machines), which ``coopsched audit schedule.json
    --horizon T`` audits whole (the audit of ``sacct.txt`` leaves out the jobs still running
    or pending at the capture: their run time is not in sacct yet)."""
    from ..workloads.jsonio import write_instance

    inst, _T, _meta = replayed_instance(out)
    path = Path(out) / "schedule.json"
    write_instance(inst, path)
    return path


def write_validation(folder: str | Path, windows: dict, speed: float) -> str:
    """Compare every replay folder under ``folder`` and write ``validation.csv`` and
    ``validation.md`` there (with the fair-share factors against Slurm's, and its backfill
    starts by what allows them: :func:`factor_table`,
    :func:`~coopsched.slurm.backfill.backfill_table`); returns the markdown."""
    from .backfill import backfill_table

    folder = Path(folder)
    table = []
    for out in sorted(p for p in folder.iterdir() if (p / "replay.json").is_file()):
        remap(out)
        write_schedule(out)
        meta = json.loads((out / "replay.json").read_text())
        for c in compare(out):
            table.append((c, meta))
    buf = io.StringIO()
    w = csv.writer(buf)
    w.writerow(
        [
            "replay",
            "schedule",
            "jobs",
            "agree",
            "agree_exact",
            "tolerance_s",
            "utilization",
            "utilization_slurm",
            "unfairness",
            "psi_diff",
            "load_1min_mean",
        ]
    )
    for c, meta in table:
        w.writerow(
            [
                c.replay,
                c.schedule,
                c.jobs,
                f"{c.agree:.4f}",
                f"{c.agree_exact:.4f}",
                c.tolerance,
                f"{c.utilization:.4f}",
                f"{c.utilization_slurm:.4f}",
                f"{c.unfairness:.2f}",
                " ".join(f"{x:+.4f}" for x in c.psi_diff),
                meta.get("load_1min_mean"),
            ]
        )
    (folder / "validation.csv").write_text(buf.getvalue())
    md = [
        "| replay | schedule | jobs | starts within 1 interval | exact | utilization (Slurm's) "
        "| unfairness vs REF | psi diff per account | load |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for c, meta in table:
        md.append(
            f"| {c.replay} | {c.schedule} | {c.jobs} | {c.agree:.1%} | {c.agree_exact:.1%} | "
            f"{c.utilization:.3f} ({c.utilization_slurm:.3f}) | {c.unfairness:,.1f} | "
            + " ".join(f"{x:+.1%}" for x in c.psi_diff)
            + f" | {meta.get('load_1min_mean')} |"
        )
    md += ["", summary_table(table), "", factor_table(folder), "", backfill_table(folder)]
    text = "\n".join(md) + "\n"
    (folder / "validation.md").write_text(text)
    return text


#: The usage models whose fair-share factors are checked against Slurm's (factor_table).
FACTOR_MODELS = ("slurm-classic", "slurm-classic-charged-whole-queue")


def factor_table(folder: str | Path) -> str:
    """One line per fair-share replay under ``folder``: how many jobs' fair-share factor at
    submission each of :data:`FACTOR_MODELS` gives within 0.01 of Slurm's
    (:func:`factor_agreement`)."""
    head = ["replay", *(f"{m}: factor within 0.01 of Slurm's" for m in FACTOR_MODELS)]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for path in sorted(p for p in Path(folder).iterdir() if (p / "replay.json").is_file()):
        got = [factor_agreement(path, m) for m in FACTOR_MODELS]
        if got[0][1]:
            out.append(
                "| "
                + " | ".join([path.name, *(f"{a} of {n} ({a / n:.0%})" for a, n in got)])
                + " |"
            )
    return "\n".join(out)


def summary_table(table: list[tuple[Comparison, dict]]) -> str:
    """One line per replay: Slurm's unfairness and utilization, then each model's share of
    starts within one interval and its unfairness (docs/slurm.md)."""
    replays: dict[str, dict[str, Comparison]] = {}
    loads: dict[str, object] = {}
    for c, meta in table:
        replays.setdefault(c.replay, {})[c.schedule] = c
        loads[c.replay] = meta.get("load_1min_mean")
    head = (
        ["replay", "jobs", "Slurm: unfairness (utilization)"]
        + [f"{m}: within 1 interval, unfairness" for m in MODELS]
        + ["load"]
    )
    out = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, rows in replays.items():
        s = rows["slurm"]
        cells = [name, str(s.jobs), f"{s.unfairness:,.0f} ({s.utilization:.3f})"]
        cells += [
            f"{rows[m].agree:.0%}, {rows[m].unfairness:,.0f}" if m in rows else "-" for m in MODELS
        ]
        out.append("| " + " | ".join(cells + [str(loads[name])]) + " |")
    return "\n".join(out)


__all__ = [
    "CAPTURE_FORMAT",
    "MODELS",
    "Comparison",
    "compare",
    "account_factors",
    "factor_agreement",
    "recorded_factors",
    "initial_priorities",
    "remap",
    "replayed_instance",
    "tick_phase",
    "write_validation",
]
