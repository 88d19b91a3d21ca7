"""What a replay runs: a window of an SWF log as a rigid instance fitted to a platform, or an
instance file (docs/slurm.md)."""

from __future__ import annotations

from pathlib import Path

from ..workloads.instance import Instance, Organization
from .plan import PlanError, fit_widths


def replay_source(
    path: str | Path,
    *,
    start: int | None = None,
    length: int | None = None,
    machines: int | None = None,
    k: int = 4,
    split: str = "zipf",
    seed: int = 0,
    widths: str = "scale",
) -> tuple[Instance, int]:
    """The rigid instance to replay and its start on the log's clock (Unix seconds when the
    log says when it started, else the log's own seconds).

    SWF (``.swf``, ``.swf.gz``): the jobs submitted in ``[start, start + length)`` (``start``
    from the log's first submit), users dealt to ``k`` organizations over the whole log (so
    that a user belongs to the same organization in every window: tuning on one window and
    checking on the next needs it), the platform's
    ``machines`` (default: the log's) split ``uniform`` or ``zipf`` with ``seed``
    (:func:`coopsched.workloads.prepare.trace_to_instance`), widths fitted to the platform
    with ``widths`` (:func:`.plan.fit_widths`). Anything else is an instance file (JSON, with
    processors and requested times), replayed whole from 0."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith((".swf", ".swf.gz")):
        from ..workloads.prepare import trace_machines, trace_to_instance
        from ..workloads.swf import read_swf

        if length is None:
            raise PlanError("a window of a log needs its length (--length, log seconds)")
        trace = read_swf(p)
        log_machines = trace_machines(trace)
        inst = trace_to_instance(
            trace,
            k=k,
            start=start,
            length=length,
            machines=machines or log_machines,
            split=split,
            seed=seed,
            jobs="rigid",
        )
        inst = _deal_over_log(trace, inst, k, seed)
        inst = fit_widths(inst, log_machines, widths)
        base = int(inst.meta["window_start"]) + int(trace.unix_start_time or 0)
        return inst, base
    if start is not None or length is not None:
        raise PlanError(
            "--start and --length cut a window of an SWF log; an instance is replayed whole"
        )
    from ..workloads.jsonio import read_instance

    return read_instance(p), 0


def _deal_over_log(trace, inst: Instance, k: int, seed: int) -> Instance:
    """``inst`` (a window of ``trace`` from ``trace_to_instance``, jobs in log order) with
    every user dealt to an organization over the whole log: the log's distinct users,
    sorted, shuffled with ``seed``, dealt in turn."""
    import numpy as np

    cols = trace.columns
    submit = cols["submit"]
    t0 = int(inst.meta["window_start"])
    t1 = t0 + int(inst.meta["window_length"])
    idx = np.flatnonzero((submit >= t0) & (submit < t1))
    if len(idx) != inst.n:  # pragma: no cover - trace_to_instance keeps exactly these
        raise PlanError("the window's jobs do not match the log's")
    users = np.unique(cols["user"])
    perm = np.random.default_rng(seed).permutation(len(users))
    org_of = np.empty(len(users), dtype=np.int64)
    org_of[perm] = np.arange(len(users)) % k
    org = org_of[np.searchsorted(users, cols["user"][idx])]
    return Instance(
        list(inst.organizations),
        org,
        inst.release,
        inst.size,
        inst.processors,
        meta=dict(inst.meta, owners="user (dealt over the whole log)"),
        requested=inst.requested,
    )


def _demo(machines: tuple[int, int], jobs: list[tuple[int, ...]], horizon: int) -> Instance:
    """A small instance of organizations ``a`` and ``b`` with ``machines``, one job a row:
    ``(organization, release, size, processors, requested)``."""
    import numpy as np

    org, release, size, width, requested = (np.array(c) for c in zip(*jobs, strict=True))
    return Instance(
        [Organization("a", machines[0]), Organization("b", machines[1])],
        org,
        release,
        size,
        width,
        requested=requested,
        meta={"horizon": horizon},
    )


def backfill_demo() -> Instance:
    """Three jobs on 8 processors (speed 60): A (6 processors) runs; B (4) waits for A, the
    head of the queue with a reservation at A's expected end; C (2, a long limit) fits now
    and, at the reservation, in the processors B leaves (EASY's "extra"), so EASY starts it
    at once. Slurm 22.05 on one node starts it only with B: its reservation holds the node.
    (The jobs are in different organizations, so that C is its organization's oldest.)"""
    return _demo((4, 4), [(0, 0, 1200, 6, 1200), (1, 60, 60, 4, 60), (0, 120, 600, 2, 36000)], 2400)


def willrun_demo(far: bool = False) -> Instance:
    """Four jobs on 4 processors (speed 60, one node each; docs/slurm.md, sixth departure):
    A (2 processors, limit 2 h) runs from 0; B (1, limit 2 h) from 20 min; W (3) waits from
    30 min with a reservation at A's expected end (2 h, EASY's shadow, nothing extra); C
    (1, limit 1 h) arrives at 70 min and would end at 2 h 10: EASY keeps it waiting. Slurm
    22.05 estimates W's start at B's expected end (2 h 20), which falls in the same batch of
    its will-run test as A's (:mod:`coopsched.slurm.backfill`), and backfills C at once,
    which delays W. ``far``: B's limit is 4 h, beyond that batch: Slurm's estimate is
    EASY's, and C waits."""
    b_limit = 14400 if far else 7200
    jobs = [(0, 0, 6600, 2, 7200), (1, 1200, 6600, 1, b_limit), (0, 1800, 1800, 3, 3600)]
    return _demo((2, 2), [*jobs, (1, 4200, 3000, 1, 3600)], 12000)


def charge_demo() -> Instance:
    """Four jobs on 3 processors (speed 60, one node each, shares 1 and 1, fair share;
    docs/slurm.md, first departure; ``PriorityCalcPeriod`` ticks every log hour, a minute
    or two after each whole hour): a runs 2 processors from 5 to 55 min, between two
    ticks, so Slurm 22.05 never charges it; b runs 1 from 30 min to 2 h 15 min, running at
    the tick after 1 h, which charges it about 30 min (read from the next tick on). At
    2 h 9 min b submits a job of all 3 processors and at 2 h 10 min a does; both wait for
    b's first job. Slurm reads b's usage only (a has none) and runs a's job first; by the
    exact usage at the last tick a has more (100 processor-minutes against about 91), and
    b's job, older too, goes first."""
    jobs = [(0, 300, 3000, 2, 3600), (1, 1800, 6300, 1, 7200), (1, 7740, 600, 3, 3600)]
    return _demo((2, 1), [*jobs, (0, 7800, 600, 3, 3600)], 9600)
