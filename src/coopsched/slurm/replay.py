"""Replay a plan on a throwaway Slurm cluster on loopback (docs/slurm.md).

:func:`replay` writes the configuration of :mod:`.plan` into a temporary state folder,
starts munged, MariaDB, slurmdbd, slurmctld and slurmd there with ``scripts/slurm/cluster.sh``
(all on 127.0.0.1, on free ports), creates the accounts and shares with ``sacctmgr``,
submits every job at its scaled submit time, captures ``sacct`` at the window's end, and
stops every daemon it started (``finally``: also on an error, Ctrl-C or SIGTERM). It
samples the machine's load every few seconds: other processes delay Slurm's loops.

The output folder holds ``sacct.txt`` (the capture on the log's clock, which
:func:`coopsched.workloads.sacct.read_sacct` and ``coopsched audit`` read), ``sacct_real.txt``
(as captured), ``orgs.toml`` (the audit's mapping: each account's machines),
``sshare.txt``, ``sacctmgr_assoc.txt``, ``slurm.conf`` and ``replay.json`` (the settings,
the speed, the origin, the submission lags, the load, the planned jobs).
"""

from __future__ import annotations

import json
import math
import os
import secrets
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from datetime import UTC
from pathlib import Path

from .plan import (
    CAPTURE_FORMAT,
    ReplayPlan,
    map_capture,
    mapping_toml,
    node_names,
    sacctmgr_commands,
    sbatch_args,
    slurm_conf,
    slurmdbd_conf,
)


class SlurmUnavailable(RuntimeError):
    """Slurm cannot be run here (not root, packages missing, a daemon did not start)."""


def cluster_script() -> Path:
    """``scripts/slurm/cluster.sh`` of the source tree (``COOPSCHED_SLURM_SCRIPT``
    overrides it)."""
    given = os.environ.get("COOPSCHED_SLURM_SCRIPT")
    if given:
        return Path(given)
    return Path(__file__).resolve().parents[3] / "scripts" / "slurm" / "cluster.sh"


def unavailable() -> str | None:
    """Why a replay cannot run here, or ``None`` when it can (root, the packages)."""
    script = cluster_script()
    if not script.is_file():
        return f"{script} is missing (a replay runs from a clone of the repository)"
    if os.geteuid() != 0:
        return "a replay needs root (it starts munged, MariaDB and Slurm's daemons)"
    r = subprocess.run(["bash", str(script), "check"], capture_output=True, text=True, timeout=30)
    if r.returncode != 0:
        return (r.stdout + r.stderr).strip() or f"cluster.sh check exited {r.returncode}"
    return None


def free_ports(n: int) -> list[int]:
    """``n`` distinct free TCP ports on 127.0.0.1 (bound, read, released)."""
    socks, ports = [], []
    try:
        for _ in range(n):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.0.1", 0))
            socks.append(s)
            ports.append(s.getsockname()[1])
    finally:
        for s in socks:
            s.close()
    return ports


@dataclass
class Submission:
    """One ``sbatch``: the job's name, planned and actual real offsets (s), Slurm's id."""

    name: str
    planned: float
    sent: float
    job_id: str
    error: str = ""


@dataclass
class ReplayResult:
    """What :func:`replay` did: its output folder, the origin (Unix seconds of the window's
    start), the wall time, every submission, the load samples, the cluster's folder."""

    out: Path
    origin: int
    wall_seconds: float
    submissions: list[Submission]
    load: list[tuple[float, float]]  # (real offset s, 1-minute load average)
    state: Path | None = None  # the cluster's folder (removed after the replay)

    @property
    def failed(self) -> list[Submission]:
        """The submissions ``sbatch`` refused."""
        return [s for s in self.submissions if s.error]

    def lag(self) -> dict[str, float]:
        """How late the submissions were sent, real seconds (max, mean)."""
        d = [s.sent - s.planned for s in self.submissions]
        return {"max": max(d, default=0.0), "mean": sum(d) / len(d) if d else 0.0}


class _Cluster:
    """The daemons of one replay, started and stopped through ``cluster.sh``."""

    def __init__(self, plan: ReplayPlan, say: Callable[[str], None]) -> None:
        self.script = cluster_script()
        self.state = Path(tempfile.mkdtemp(prefix="coopsched-slurm-"))
        self.say = say
        nodes = plan.scheduling.nodes
        ctld, dbd, db, *slurmd = free_ports(3 + nodes)
        ports = {"ctld": ctld, "slurmd": slurmd, "dbd": dbd, "db": db}
        password = "replay-" + secrets.token_hex(6)
        etc = self.state / "etc"
        etc.mkdir()
        self.conf = slurm_conf(plan, str(self.state), ports)
        (etc / "slurm.conf").write_text(self.conf)
        (etc / "slurmdbd.conf").write_text(slurmdbd_conf(str(self.state), ports, password))
        (etc / "slurmdbd.conf").chmod(0o600)
        (self.state / "ports").write_text(
            f"DBPORT={db}\nDBPASS={password}\nNODES='{' '.join(node_names(plan))}'\n"
        )
        self.env = dict(os.environ, SLURM_CONF=str(etc / "slurm.conf"), TZ="UTC")
        self.started = False

    def script_step(self, step: str, timeout: float) -> None:
        self.started = True
        r = subprocess.run(
            ["bash", str(self.script), step, str(self.state)],
            env=self.env,
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        if r.returncode != 0:
            raise SlurmUnavailable(
                f"cluster.sh {step} failed (exit {r.returncode}): "
                + " | ".join((r.stderr or r.stdout).strip().splitlines()[-6:])
            )

    def run(self, args: list[str], timeout: float = 30) -> str:
        r = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout)
        if r.returncode != 0:
            raise SlurmUnavailable(f"{' '.join(args[:4])} ...: {(r.stderr or r.stdout).strip()}")
        return r.stdout

    def stop(self, keep: bool = False) -> None:
        if self.started:
            try:
                self.script_step("stop", 120)
            except (SlurmUnavailable, subprocess.TimeoutExpired) as e:
                self.say(f"warning: stopping the cluster: {e}")
        if not keep:
            shutil.rmtree(self.state, ignore_errors=True)


def replay(
    plan: ReplayPlan,
    out: str | Path,
    *,
    base: int = 0,
    drain: float = 0.0,
    progress: Callable[[str], None] | None = None,
    keep_state: bool = False,
) -> ReplayResult:
    """Replay ``plan`` on a loopback Slurm and write the capture into ``out``.

    ``base``: the window's start on the log's clock (Unix seconds when the log says when it
    started), what real time 0 of the replay maps to. ``drain``: real seconds to wait past
    the window's end before the capture (0: the capture is the window as the audit sees it).
    Raises :class:`SlurmUnavailable` when Slurm cannot run here (say why).
    """
    say = progress or (lambda _m: None)
    why = unavailable()
    if why is not None:
        raise SlurmUnavailable(why)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    cluster = _Cluster(plan, say)
    t_begin = time.monotonic()
    restore = _terminate_as_interrupt()
    load: list[tuple[float, float]] = []
    stop_load = threading.Event()
    try:
        say(f"starting munged, MariaDB and slurmdbd in {cluster.state}")
        cluster.script_step("db", 240)
        for cmd in sacctmgr_commands(plan):
            cluster.run(cmd)
        say("starting slurmctld and slurmd")
        cluster.script_step("ctld", 150)
        boot = _boot_time(cluster)
        # the decay thread recomputes usage and priorities every PriorityCalcPeriod from
        # slurmctld's start: start the replay on such a tick, so that ticks fall at log
        # times 0, P, 2P, ... (the model's calc_phase 0)
        period = plan.scheduling.calc_period * 60
        origin = boot + period * math.ceil((time.time() + 2 - boot) / period)
        say(
            f"submitting {len(plan.jobs)} jobs over {plan.real_seconds:,.0f} s "
            f"({plan.speed:g} log s per s)"
        )

        def sample() -> None:
            while not stop_load.wait(5.0):
                load.append((round(time.time() - origin, 1), os.getloadavg()[0]))

        threading.Thread(target=sample, daemon=True).start()
        subs = _submit_all(plan, cluster, origin, say)
        end = origin + plan.real_seconds + drain
        while (left := end - time.time()) > 0:
            time.sleep(min(left, 10.0))
        say("capturing sacct")
        stop_load.set()
        start_day = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(origin - 120))
        env_epoch = dict(cluster.env, SLURM_TIME_FORMAT="%s")
        wanted = {s.job_id for s in subs if s.job_id}
        for _ in range(30):  # slurmctld sends job records to slurmdbd asynchronously
            raw = subprocess.run(
                [
                    "sacct",
                    "-a",
                    "-X",
                    "-P",
                    "-S",
                    start_day,
                    "-E",
                    "now",
                    f"--format={CAPTURE_FORMAT}",
                ],
                env=env_epoch,
                capture_output=True,
                text=True,
                timeout=120,
                check=True,
            ).stdout
            listed = {line.split("|", 1)[0] for line in raw.splitlines()[1:]}
            if wanted <= listed:
                break
            time.sleep(1)
        else:
            say(f"warning: {len(wanted - listed)} submitted jobs are not in sacct's capture")
        (out / "sacct_real.txt").write_text(raw)
        (out / "sacct.txt").write_text(map_capture(raw, origin, plan.speed, base))
        (out / "sshare.txt").write_text(cluster.run(["sshare", "-a", "-l", "-P"]))
        (out / "sacctmgr_assoc.txt").write_text(
            cluster.run(
                ["sacctmgr", "-P", "show", "assoc", "format=Cluster,Account,ParentName,User,Share"]
            )
        )
        version = cluster.run(["sinfo", "-V"]).strip()
        log = cluster.state / "log" / "slurmctld.log"
        if log.is_file():
            shutil.copy(log, out / "slurmctld.log")
    finally:
        stop_load.set()
        say("stopping every daemon")
        cluster.stop(keep=keep_state)
        restore()
    wall = time.monotonic() - t_begin
    result = ReplayResult(out, origin, wall, subs, load, cluster.state)
    (out / "slurm.conf").write_text(cluster.conf)
    (out / "orgs.toml").write_text(mapping_toml(plan))
    meta = {
        "slurm": version,
        "speed": plan.speed,
        "horizon": plan.horizon,
        "base": base,
        "origin": origin,
        "slurmctld_boot": boot,
        "calc_phase": 0,  # log seconds: PriorityCalcPeriod ticks at 0, P, 2P, ... of the window
        "real_seconds": plan.real_seconds,
        "drain": drain,
        "wall_seconds": round(wall, 1),
        "machines": plan.machines,
        "accounts": plan.accounts,
        "account_machines": [int(m) for m in plan.instance.machines],
        "fairshare_shares": plan.shares(),
        "scheduling": _jsonable(asdict(plan.scheduling)),
        "submission_lag_s": result.lag(),
        "failed_submissions": [asdict(s) for s in result.failed],
        "load_1min": load,
        "load_1min_mean": round(sum(x for _, x in load) / len(load), 2) if load else None,
        "jobs": [asdict(j) for j in plan.jobs],
        "submissions": [[s.name, round(s.sent - s.planned, 3), s.job_id] for s in subs],
        "instance_meta": _jsonable(plan.instance.meta),
    }
    (out / "replay.json").write_text(json.dumps(meta, indent=1) + "\n")
    return result


def _boot_time(cluster: _Cluster) -> int:
    """slurmctld's start (Unix seconds), from ``scontrol show config``'s ``BOOT_TIME``."""
    from datetime import datetime

    for line in cluster.run(["scontrol", "show", "config"]).splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "BOOT_TIME":
            when = datetime.strptime(value.strip(), "%Y-%m-%dT%H:%M:%S")
            return int(when.replace(tzinfo=UTC).timestamp())  # TZ=UTC in its env
    raise SlurmUnavailable("scontrol show config gave no BOOT_TIME")


def _terminate_as_interrupt() -> Callable[[], None]:
    """Until the returned function is called, SIGTERM raises KeyboardInterrupt (so that the
    ``finally`` that stops the daemons runs); a no-op outside the main thread or where a
    handler is already set (the command line's)."""
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    previous = signal.getsignal(signal.SIGTERM)
    if previous not in (signal.SIG_DFL, None):
        return lambda: None

    def on_term(signum, frame):
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, on_term)

    def restore() -> None:
        signal.signal(signal.SIGTERM, previous)

    return restore


def _jsonable(x):
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, list | tuple):
        return [_jsonable(v) for v in x]
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if hasattr(x, "item"):
        return x.item()
    return x


def _submit_all(
    plan: ReplayPlan, cluster: _Cluster, origin: int, say: Callable[[str], None]
) -> list[Submission]:
    """Send every job at ``origin + submit`` (real), up to 4 ``sbatch`` at once."""
    subs: list[Submission] = []
    lock = threading.Lock()

    def send(job) -> None:
        sent = time.time() - origin
        try:
            r = subprocess.run(
                sbatch_args(job), env=cluster.env, capture_output=True, text=True, timeout=60
            )
            jid, err = r.stdout.strip(), (r.stderr.strip() if r.returncode else "")
        except subprocess.TimeoutExpired:
            jid, err = "", "sbatch timed out"
        with lock:
            subs.append(Submission(job.name, job.submit, sent, jid, err))

    with ThreadPoolExecutor(max_workers=4) as pool:
        shown = 0.0
        for job in plan.jobs:
            wait = origin + job.submit - time.time()
            if wait > 0:
                time.sleep(wait)
            pool.submit(send, job)
            if job.submit - shown >= 60:
                shown = job.submit
                say(f"  t = {job.submit:,.0f} s of {plan.real_seconds:,.0f}")
    bad = [s for s in subs if s.error]
    if bad:
        say(f"warning: {len(bad)} submissions failed, first: {bad[0].name}: {bad[0].error}")
    subs.sort(key=lambda s: s.planned)
    return subs
