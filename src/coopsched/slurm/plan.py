"""The pure parts of a replay on a real Slurm (docs/slurm.md): time scaling, the job plan,
Slurm's configuration, the accounts' commands, and the map from Slurm's clock back to the
log's.

A replay runs a rigid instance (a log's window, or an instance file) at ``speed`` log
seconds per real second. Slurm keeps whole seconds for submit, start and end, and whole
minutes for time limits, so the plan quantizes every job once, up front:

* submit: at real offset ``release / speed`` (the driver sleeps until then; Slurm records
  the second it received the job);
* run time: ``sleep`` of ``max(1, round(size / speed))`` real seconds;
* time limit: ``max(1, ceil(requested / speed / 60))`` real minutes (a job that outlived its
  request in the log sleeps no longer than its limit).

:meth:`ReplayPlan.quantized` is the instance the replay can reproduce at best: those
quantized times mapped back to the log's clock. The model is compared with Slurm on the
capture itself (:mod:`.validate`), so the quantization costs fidelity to the log, not to the
comparison.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..workloads.instance import Instance

#: Slurm's defaults that a replay sets explicitly, and what they become (docs/slurm.md).
DEFAULT_HALF_LIFE = 7 * 86400
DEFAULT_MAX_AGE = 7 * 86400
#: ``PriorityWeightFairshare`` when fair share is on: large, so that the integer priority
#: (weight x factor, truncated) separates factors that differ in the fifth decimal.
DEFAULT_FS_WEIGHT = 1_000_000
#: Each account's ``Fairshare`` is its share times this (the root user's own association,
#: share 1, is the accounts' sibling; against 100 x machines it weighs little).
SHARE_SCALE = 100
#: How widths are fitted to a smaller platform than the log's.
WIDTH_RULES = ("scale", "drop")


class PlanError(ValueError):
    """A replay that cannot be planned (bad speed, bad parameter, no job)."""


def slurm_name(name: str) -> str:
    """An account name Slurm accepts (lower case, letters, digits and ``_``), from an
    organization's name; ``o_`` is put in front of one that does not start with a letter."""
    s = re.sub(r"[^a-z0-9_]", "_", str(name).lower())
    if not s or not s[0].isalpha():
        s = "o_" + s
    return s[:60]


def duration(seconds: float) -> str:
    """Seconds as a Slurm time string ``D-HH:MM:SS`` (whole seconds, rounded up)."""
    s = int(math.ceil(seconds))
    if s < 0:
        raise PlanError(f"a duration must be >= 0 seconds, got {seconds}")
    d, s = divmod(s, 86400)
    h, s = divmod(s, 3600)
    m, s = divmod(s, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}"


def whole_minutes(seconds: float) -> int:
    """Seconds in whole minutes, rounded up, at least 1 (what :func:`minutes_string`
    writes)."""
    return max(1, int(math.ceil(seconds / 60)))


def minutes_string(seconds: float) -> str:
    """Seconds as a Slurm ``days-hr:min:00`` string in whole minutes (rounded up, at least
    1): the form ``PriorityDecayHalfLife`` and ``PriorityMaxAge`` take."""
    m = whole_minutes(seconds)
    d, m = divmod(m, 1440)
    h, m = divmod(m, 60)
    return f"{d}-{h:02d}:{m:02d}:00"


@dataclass(frozen=True)
class Scheduling:
    """The Slurm settings a replay uses: what an operator sets (log seconds; the plan
    divides by the speed) and the scheduler's own loop parameters (real seconds)."""

    fairshare: bool = True
    half_life: float = DEFAULT_HALF_LIFE  # PriorityDecayHalfLife, log s (inf: no decay)
    fs_weight: int = DEFAULT_FS_WEIGHT  # PriorityWeightFairshare
    age_weight: int = 0  # PriorityWeightAge
    max_age: float = DEFAULT_MAX_AGE  # PriorityMaxAge, log s
    shares: tuple[float, ...] | None = None  # per organization (default: machines)
    fair_tree: bool = False  # PriorityFlags without NO_FAIR_TREE
    calc_period: int = 1  # PriorityCalcPeriod, real minutes (Slurm's minimum)
    bf_interval: int = 1  # real s (Slurm's minimum)
    bf_resolution: int = 1  # real s (Slurm's minimum)
    reserve: int = 1  # bf_job_part_count_reserve: 1 = EASY, 0 = every job (Slurm's default)
    sched_interval: int = 1  # main loop's full pass, real s
    nodes: int = 1  # the platform as this many nodes of equal CPUs, one slurmd each

    def check(self) -> None:
        """Raise :class:`PlanError` for a setting Slurm would refuse or that means nothing."""
        if not self.fairshare and (self.age_weight or self.shares is not None):
            raise PlanError("age weight and shares need fair share (priority/multifactor)")
        if not (self.half_life >= 0):
            raise PlanError(f"half-life must be >= 0 s (or inf), got {self.half_life}")
        if self.fs_weight < 0 or self.age_weight < 0:
            raise PlanError("priority weights must be >= 0")
        if self.fs_weight > 2**31 or self.age_weight > 2**31:
            raise PlanError("priority weights must be below 2^31 (Slurm's priority is 32 bits)")
        if not (0 < self.max_age < math.inf):
            raise PlanError(f"max age must be a positive number of seconds, got {self.max_age}")
        for name in ("calc_period", "bf_interval", "bf_resolution", "sched_interval"):
            if getattr(self, name) < 1:
                raise PlanError(f"{name} must be at least 1")
        if self.reserve < 0:
            raise PlanError("reserve must be >= 0")
        if not 1 <= self.nodes <= 256:
            raise PlanError(f"nodes must be between 1 and 256, got {self.nodes}")


@dataclass(frozen=True)
class PlannedJob:
    """One job of the replay: ``name`` (``j<index>``, Slurm's job name), its account, real
    submit offset (s, may be fractional), ``sleep`` (real s), ``limit`` (real minutes),
    processors."""

    index: int
    name: str
    account: str
    submit: float
    sleep: int
    limit: int
    processors: int


@dataclass
class ReplayPlan:
    """A rigid instance scaled to real time, with the Slurm settings to replay it under.

    ``speed``: log seconds per real second. ``horizon``: the window's length (log s); the
    replay captures at ``horizon / speed`` real seconds plus ``drain`` (real s; 0: capture at
    the window's end, as the audit measures it).
    """

    instance: Instance
    speed: float
    horizon: int
    scheduling: Scheduling = field(default_factory=Scheduling)
    accounts: list[str] = field(default_factory=list)
    jobs: list[PlannedJob] = field(default_factory=list)

    @classmethod
    def build(
        cls,
        inst: Instance,
        speed: float,
        horizon: int | None = None,
        scheduling: Scheduling | None = None,
    ) -> ReplayPlan:
        """Quantize ``inst`` (rigid, every job with a requested time) at ``speed``."""
        if not (speed > 0 and math.isfinite(speed)):
            raise PlanError(
                f"speed must be a positive number of log seconds per second, got {speed}"
            )
        if not inst.rigid:
            raise PlanError("a replay needs rigid jobs (processors per job)")
        if inst.n == 0:
            raise PlanError("the window holds no job")
        req = inst.requested
        if req is None or (req < 1).any():
            raise PlanError(
                "every job needs a requested time (Slurm's time limit; EASY backfilling reads it)"
            )
        sch = scheduling or Scheduling()
        sch.check()
        if sch.shares is not None and len(sch.shares) != inst.k:
            raise PlanError(f"shares: one per organization ({inst.k}), got {len(sch.shares)}")
        T = int(horizon if horizon is not None else inst.meta.get("horizon") or 0)
        if T <= 0:
            T = int((inst.release + inst.size).max())
        if inst.total_machines % sch.nodes:
            raise PlanError(
                f"nodes: {sch.nodes} nodes cannot split {inst.total_machines} processors equally"
            )
        names = [slurm_name(o.name) for o in inst.organizations]
        if len(set(names)) != len(names):
            raise PlanError(f"organization names clash as Slurm accounts: {names}")
        order = np.lexsort((np.arange(inst.n), inst.release))
        jobs = []
        for i in order.tolist():
            limit = limit_minutes(int(req[i]), speed)
            sleep = min(sleep_seconds(int(inst.size[i]), speed), limit * 60)
            jobs.append(
                PlannedJob(
                    index=i,
                    name=f"j{i}",
                    account=names[int(inst.org[i])],
                    submit=float(inst.release[i]) / speed,
                    sleep=sleep,
                    limit=limit,
                    processors=int(inst.width[i]),
                )
            )
        return cls(inst, float(speed), T, sch, names, jobs)

    @property
    def machines(self) -> int:
        """The platform's processors (the instance's machines)."""
        return int(self.instance.total_machines)

    @property
    def real_seconds(self) -> float:
        """The replay's length in real seconds (the window at the speed)."""
        return self.horizon / self.speed

    def shares(self) -> list[int]:
        """Each account's Slurm ``Fairshare``: its share (default: its machines) times
        :data:`SHARE_SCALE`, rounded, at least 1."""
        raw = self.scheduling.shares
        base = [float(m) for m in self.instance.machines] if raw is None else list(raw)
        return [max(1, round(b * SHARE_SCALE)) for b in base]

    def quantized(self) -> Instance:
        """The instance the replay reproduces at best: every job's run time and time limit
        after Slurm's quantization, on the log's clock (releases unchanged)."""
        inst = self.instance
        size = np.zeros(inst.n, dtype=np.int64)
        req = np.zeros(inst.n, dtype=np.int64)
        for j in self.jobs:
            size[j.index] = round(j.sleep * self.speed)
            req[j.index] = round(j.limit * 60 * self.speed)
        return Instance(
            list(inst.organizations),
            inst.org,
            inst.release,
            size,
            inst.processors,
            meta=dict(inst.meta, horizon=self.horizon, quantized_at=self.speed),
            requested=req,
        )

    def to_log(self, real_offset: float) -> int:
        """A real offset from the replay's origin (s) on the log's clock (s from the
        window's start)."""
        return round(real_offset * self.speed)


def sleep_seconds(size: int, speed: float) -> int:
    """A run time of ``size`` log seconds as a whole number of real seconds, at least 1."""
    return max(1, round(size / speed))


def limit_minutes(requested: int, speed: float) -> int:
    """A requested time of ``requested`` log seconds as a Slurm time limit in whole real
    minutes (rounded up, at least 1)."""
    return max(1, math.ceil(requested / speed / 60 - 1e-9))


def fit_widths(inst: Instance, log_machines: int, rule: str = "scale") -> Instance:
    """Fit a rigid window of a ``log_machines``-processor log to the instance's platform.

    ``scale``: a job on ``q`` processors gets ``max(1, round(q * M / log_machines))`` (a
    machine-wide job stays machine-wide, the parallel load keeps its share of the
    platform); ``drop``: jobs wider than the platform are left out (counted in
    ``meta["dropped_wide"]``). Nothing changes when the log is no larger."""
    if rule not in WIDTH_RULES:
        raise PlanError(f"width rule {rule!r}: choose from {', '.join(WIDTH_RULES)}")
    M = int(inst.total_machines)
    if not inst.rigid or log_machines <= M:
        return inst
    q = inst.width
    keep = np.ones(inst.n, dtype=bool)
    if rule == "scale":
        q = np.maximum(1, np.floor(q * M / log_machines + 0.5)).astype(np.int64)
        q = np.minimum(q, M)
    else:
        keep = q <= M
    meta = dict(inst.meta, widths=f"{rule} {log_machines} -> {M}")
    if rule == "drop":
        meta["dropped_wide"] = int((~keep).sum())
    return Instance(
        list(inst.organizations),
        inst.org[keep],
        inst.release[keep],
        inst.size[keep],
        q[keep],
        meta=meta,
        requested=None if inst.requested is None else inst.requested[keep],
    )


# --- configuration -----------------------------------------------------------------


def slurm_conf(plan: ReplayPlan, state: str, ports: dict[str, Any]) -> str:
    """The ``slurm.conf`` of the replay's one-node cluster (all under ``state``)."""
    sch = plan.scheduling
    longest = max(j.limit for j in plan.jobs)
    bf = [
        f"bf_interval={sch.bf_interval}",
        f"bf_resolution={sch.bf_resolution}",
        f"bf_window={min(43200, max(longest + 1, 2))}",
        f"bf_job_part_count_reserve={sch.reserve}",
        "bf_continue",
        "bf_max_job_test=1000",
        f"sched_interval={sch.sched_interval}",
        "default_queue_depth=1000",
        "sched_min_interval=0",
    ]
    lines = [
        "# coopsched replay cluster: one node on loopback (generated by coopsched.slurm.plan)",
        "ClusterName=coopsched",
        "SlurmctldHost=localhost(127.0.0.1)",
        "SlurmUser=root",
        f"SlurmctldPort={ports['ctld']}",
        f"SlurmdPort={ports['slurmd'][0]}",
        "AuthType=auth/munge",
        f"AuthInfo=socket={state}/munge/munge.socket",
        f"StateSaveLocation={state}/ctld",
        f"SlurmdSpoolDir={state}/d/%n",
        f"SlurmctldPidFile={state}/run/slurmctld.pid",
        f"SlurmdPidFile={state}/run/slurmd-%n.pid",
        f"SlurmctldLogFile={state}/log/slurmctld.log",
        f"SlurmdLogFile={state}/log/slurmd-%n.log",
        "ProctrackType=proctrack/linuxproc",
        "TaskPlugin=task/none",
        "JobAcctGatherType=jobacct_gather/none",
        "SchedulerType=sched/backfill",
        "SchedulerParameters=" + ",".join(bf),
        "SelectType=select/cons_tres",
        "SelectTypeParameters=CR_CPU",
        "ReturnToService=2",
        "SlurmdParameters=config_overrides",
        "MpiDefault=none",
        "MinJobAge=86400",
        "MaxJobCount=100000",
        "KillWait=5",
        "OverTimeLimit=1",
        "AccountingStorageType=accounting_storage/slurmdbd",
        "AccountingStorageHost=127.0.0.1",
        f"AccountingStoragePort={ports['dbd']}",
        # for slurmdbd connections, the munge socket (Slurm reads it from here, not AuthInfo)
        f"AccountingStoragePass={state}/munge/munge.socket",
        "AccountingStorageEnforce=associations",
        "JobCompType=jobcomp/none",
        *priority_lines(plan),
        *node_lines(plan, ports["slurmd"]),
        f"PartitionName=batch Nodes={','.join(node_names(plan))} Default=YES MaxTime=INFINITE "
        "State=UP",
    ]
    return "\n".join(lines) + "\n"


def node_names(plan: ReplayPlan) -> list[str]:
    """The nodes' names: ``n1`` ... ``nN`` (``--nodes``)."""
    return [f"n{i + 1}" for i in range(plan.scheduling.nodes)]


def node_lines(plan: ReplayPlan, ports: list[int]) -> list[str]:
    """One ``NodeName`` line per node, each on loopback with its own slurmd port and an
    equal share of the platform's CPUs (declared: ``config_overrides``)."""
    names = node_names(plan)
    if len(ports) < len(names):
        raise PlanError(f"{len(names)} nodes need {len(names)} slurmd ports, got {len(ports)}")
    cpus = plan.machines // len(names)
    return [
        f"NodeName={n} NodeHostname=localhost NodeAddr=127.0.0.1 Port={p} CPUs={cpus} State=UNKNOWN"
        for n, p in zip(names, ports, strict=False)
    ]


def priority_lines(plan: ReplayPlan) -> list[str]:
    """The priority lines of ``slurm.conf``, times divided by the speed (real time)."""
    sch = plan.scheduling
    if not sch.fairshare:
        return ["PriorityType=priority/basic"]
    hl = "0" if math.isinf(sch.half_life) else minutes_string(sch.half_life / plan.speed)
    lines = [
        "PriorityType=priority/multifactor",
        f"PriorityDecayHalfLife={hl}",
        f"PriorityCalcPeriod={sch.calc_period}",
        f"PriorityWeightFairshare={sch.fs_weight}",
        f"PriorityWeightAge={sch.age_weight}",
        f"PriorityMaxAge={minutes_string(sch.max_age / plan.speed)}",
        "PriorityWeightJobSize=0",
        "PriorityWeightPartition=0",
        "PriorityWeightQOS=0",
        "PriorityFavorSmall=NO",
    ]
    if math.isinf(sch.half_life):
        lines.append("PriorityUsageResetPeriod=NONE")
    if not sch.fair_tree:
        lines.append("PriorityFlags=NO_FAIR_TREE")
    return lines


def operator_lines(sch: Scheduling) -> list[str]:
    """The ``slurm.conf`` lines an operator sets for ``sch`` on the real platform (log
    time, not scaled)."""
    if not sch.fairshare:
        return ["PriorityType=priority/basic"]
    hl = "0" if math.isinf(sch.half_life) else minutes_string(sch.half_life)
    return [
        "PriorityType=priority/multifactor",
        f"PriorityDecayHalfLife={hl}",
        f"PriorityWeightFairshare={sch.fs_weight}",
        f"PriorityWeightAge={sch.age_weight}",
        f"PriorityMaxAge={minutes_string(sch.max_age)}",
    ]


def slurmdbd_conf(state: str, ports: dict[str, Any], password: str) -> str:
    """The accounting daemon's configuration (MariaDB on 127.0.0.1)."""
    return (
        "\n".join(
            [
                "# coopsched replay accounting daemon (generated by coopsched.slurm.plan)",
                "AuthType=auth/munge",
                f"AuthInfo=socket={state}/munge/munge.socket",
                "DbdHost=localhost",
                "DbdAddr=127.0.0.1",
                f"DbdPort={ports['dbd']}",
                "SlurmUser=root",
                f"LogFile={state}/log/slurmdbd.log",
                f"PidFile={state}/run/slurmdbd.pid",
                "StorageType=accounting_storage/mysql",
                "StorageHost=127.0.0.1",
                f"StoragePort={ports['db']}",
                "StorageUser=slurm",
                f"StoragePass={password}",
                "StorageLoc=coopsched_acct",
            ]
        )
        + "\n"
    )


def sacctmgr_commands(plan: ReplayPlan) -> list[list[str]]:
    """The ``sacctmgr -i`` commands that create the cluster, one account per organization
    with its ``Fairshare``, and the submitting user (root) in every account."""
    cmds = [["sacctmgr", "-i", "add", "cluster", "coopsched"]]
    for name, share in zip(plan.accounts, plan.shares(), strict=True):
        cmds.append(
            ["sacctmgr", "-i", "add", "account", name, "Cluster=coopsched", f"Fairshare={share}"]
        )
    cmds.append(
        [
            "sacctmgr",
            "-i",
            "add",
            "user",
            "root",
            "Account=" + ",".join(plan.accounts),
            "Cluster=coopsched",
        ]
    )
    return cmds


def operator_share_commands(names: list[str], shares: list[float]) -> list[str]:
    """``sacctmgr modify account ... set fairshare=...`` for each account (whole numbers,
    scaled so that the smallest positive share is at least 1 x :data:`SHARE_SCALE`)."""
    out = []
    for name, s in zip(names, shares, strict=True):
        out.append(
            f"sacctmgr -i modify account {name} set fairshare={max(1, round(s * SHARE_SCALE))}"
        )
    return out


def sbatch_args(job: PlannedJob) -> list[str]:
    """The ``sbatch`` command line of one planned job."""
    return [
        "sbatch",
        "--parsable",
        "-J",
        job.name,
        "-A",
        job.account,
        "-n",
        str(job.processors),
        "-t",
        str(job.limit),
        "--chdir=/tmp",
        "-o",
        "/dev/null",
        "-e",
        "/dev/null",
        "--wrap",
        f"exec sleep {job.sleep}",
    ]


# --- back to the log's clock -------------------------------------------------------

#: The sacct columns a replay captures (``-X -P``, ``SLURM_TIME_FORMAT=%s``).
CAPTURE_FORMAT = (
    "JobID,JobName,User,Account,Group,Partition,Submit,Start,End,AllocCPUS,State,Timelimit"
)


def map_capture(text: str, origin: int, speed: float, base: int = 0) -> str:
    """A ``sacct -X -P`` capture taken with epoch times, on the log's clock.

    Every time ``t`` (Unix seconds; ``Unknown``/``None`` kept) becomes
    ``base + round((t - origin) * speed)``; ``Timelimit`` (real) becomes the log's
    (times ``speed``). The result is what :func:`coopsched.workloads.sacct.read_sacct`
    reads (epoch-second times: ``base`` is the window's start on the log's clock, as Unix
    seconds when the log says when it started)."""
    from ..workloads.sacct import timelimit_seconds

    lines = text.splitlines()
    if not lines:
        raise PlanError("empty sacct capture")
    head = lines[0].split("|")
    times = [i for i, h in enumerate(head) if h in ("Submit", "Start", "End", "Eligible")]
    limit = head.index("Timelimit") if "Timelimit" in head else -1
    out = [lines[0]]
    for line in lines[1:]:
        if not line.strip():
            continue
        f = line.split("|")
        for i in times:
            if i < len(f) and f[i].isdigit():
                f[i] = str(base + round((int(f[i]) - origin) * speed))
        if 0 <= limit < len(f):
            s = timelimit_seconds(f[limit])
            if s is not None and s > 0:
                f[limit] = duration(s * speed)
        out.append("|".join(f))
    return "\n".join(out) + "\n"


def mapping_toml(plan: ReplayPlan) -> str:
    """An audit mapping (``--mapping``): each organization, its account and its machines
    (the contributions stay the instance's whatever Slurm's shares are)."""
    rows = []
    for org, name in zip(plan.instance.organizations, plan.accounts, strict=True):
        rows += [
            "[[organization]]",
            f'name = "{name}"',
            f'accounts = ["{name}"]',
            f"machines = {int(org.machines)}",
            "",
        ]
    return "\n".join(rows)
