"""From an SWF trace to a multi-organization instance (Skowron & Rzadca, Sec. 7.2).

Follows docs/conventions.md §1, "Traces to instances":

* window: jobs submitted in ``[t0, t0 + L)``, times shifted so that ``t0`` becomes 0;
* a job on ``q > 1`` processors becomes ``q`` sequential jobs (same release, size, user);
* users to organizations: the distinct user ids of the window (user -1 is one user),
  sorted, shuffled with the seed and dealt to the ``k`` organizations in turn
  (``owners="user"``, the paper's main scenario); or every trace job dealt to an
  organization uniformly at random (``owners="random"``, the paper's second scenario,
  Sec. 7.2: "the jobs are uniformly distributed between organizations");
* warm-up (beyond the paper): with ``warmup=W`` the jobs submitted in ``[t0 - W, t0)``
  are simulated too, so that the measured window ``[t0, t0 + L)`` does not start with an
  empty system; times are shifted so that ``t0 - W`` becomes 0, the horizon is ``W + L``
  and ``meta["measure_from"] = W`` (see :func:`coopsched.online.fairness.fairness` for
  what is measured);
* the log's own state (beyond the paper): with ``backlog=True`` the window starts with
  the jobs the log itself still held at ``t0``, by their recorded start (submit + wait,
  SWF fields 2 and 3; :mod:`coopsched.workloads.backlog`, the audit's rule): a job
  submitted before ``t0`` and still waiting is released at 0 with its whole run time, in
  submission order; a job running at ``t0`` is released at 0 with its remaining run time
  ``start + run - t0`` and is *pinned* (every engine starts it first, as far as the
  machines allow); a parallel job running on ``q`` processors becomes ``q`` pinned
  sequential jobs, like any job on ``q`` processors. Jobs submitted before ``t0`` whose
  wait is unknown (field 3 = -1) cannot be placed: they are left out and counted in
  ``meta["backlog"]``. The horizon is ``L`` and everything is measured from 0 (the
  backlog's execution in the window counts, as in the audit);
* machines: the trace's machine count split uniformly or by Zipf (exponent 1.4267),
  each organization at least one machine, the order of the shares shuffled with the seed.

Everything is seeded: the same arguments give the same instance, byte for byte.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .backlog import window_jobs
from .instance import Instance, InstanceError, Organization
from .limits import MAX_EXACT, MAX_JOBS, MAX_MACHINES
from .swf import SWFTrace

ZIPF_EXPONENT = 1.4267
#: How trace jobs are dealt to organizations (Sec. 7.2's two scenarios).
OWNERS = ("user", "random")

#: Machine counts used in the paper's experiments (Sec. 7.2), by trace-name prefix.
PAPER_MACHINES = {"LPC-EGEE": 70, "RICC": 8192, "PIK-IPLEX": 2560, "SHARCNET": 3072}


@dataclass(frozen=True)
class Window:
    """A window of a trace: jobs submitted in ``[start, start + length)``."""

    start: int
    length: int


def zipf_owners(
    n: int, N: int, rng: np.random.Generator, exponent: float = ZIPF_EXPONENT
) -> np.ndarray:
    """Owners of ``n`` jobs drawn from Zipf over ``N`` organizations: P(i) proportional to
    ``1 / i**exponent``, i = 1..N (Iosup et al.'s exponent 1.4267, as Pascual et al. Sec. 6.1
    and Cohen et al. Sec. 8 use)."""
    w = 1.0 / np.arange(1, N + 1) ** exponent
    return rng.choice(N, size=n, p=w / w.sum()).astype(np.int64)


def split_machines(
    total: int,
    k: int,
    split: str = "uniform",
    *,
    exponent: float = ZIPF_EXPONENT,
    rng: np.random.Generator | None = None,
) -> list[int]:
    """Split ``total`` machines across ``k`` organizations.

    ``uniform``: ``total // k`` each, the remainder one by one to the first shares;
    ``zipf``: share of the i-th organization proportional to ``1 / i**exponent``,
    rounded by largest remainder. Every organization gets at least one machine; with
    ``rng`` the order of the shares is shuffled.
    """
    if k < 1:
        raise InstanceError("the number of organizations must be at least 1")
    if total > MAX_MACHINES:
        raise InstanceError(f"machines: {total:,} is more than the limit of {MAX_MACHINES:,}")
    if total < k:
        raise InstanceError(f"{total} machines cannot give each of {k} organizations one machine")
    if split == "uniform":
        shares = [total // k + (1 if i < total % k else 0) for i in range(k)]
    elif split == "zipf":
        w = 1.0 / np.arange(1, k + 1, dtype=np.float64) ** exponent
        spare = total - k  # one machine each first
        ideal = w / w.sum() * spare
        base = np.floor(ideal).astype(np.int64)
        rest = spare - int(base.sum())
        order = np.argsort(-(ideal - base), kind="stable")
        base[order[:rest]] += 1
        shares = (base + 1).tolist()
    else:
        raise InstanceError(f"unknown machine split {split!r} (use 'uniform' or 'zipf')")
    if rng is not None:
        perm = rng.permutation(k)
        shares = [shares[i] for i in perm]
    return [int(s) for s in shares]


def trace_machines(trace: SWFTrace, machines: int | None = None) -> int:
    """The machine count to use for a trace.

    An explicit ``machines`` wins; then the paper's count for LPC-EGEE (70) and RICC
    (8192); then the header's ``MaxProcs``. A trace with none of these (the METACENTRUM
    copy has no header) needs ``machines``.
    """
    if machines is not None:
        if machines < 1:
            raise InstanceError("machines must be at least 1")
        if machines > MAX_MACHINES:
            raise InstanceError(
                f"machines: {machines:,} is more than the limit of {MAX_MACHINES:,}"
            )
        return int(machines)
    name = trace.path.rsplit("/", 1)[-1]
    for prefix, count in PAPER_MACHINES.items():
        if name.startswith(prefix):
            return count
    if trace.max_procs and trace.max_procs > 0:
        if trace.max_procs > MAX_MACHINES:
            raise InstanceError(
                f"{trace.path}: header MaxProcs {trace.max_procs:,} is more than the limit of "
                f"{MAX_MACHINES:,}; give the number of machines explicitly"
            )
        return int(trace.max_procs)
    raise InstanceError(
        f"{trace.path}: the header has no MaxProcs; give the number of machines explicitly"
    )


def trace_to_instance(
    trace: SWFTrace,
    *,
    k: int = 5,
    start: int | None = None,
    length: int | None = None,
    machines: int | None = None,
    split: str = "uniform",
    exponent: float = ZIPF_EXPONENT,
    seed: int = 0,
    relative_start: bool = True,
    warmup: int = 0,
    owners: str = "user",
    backlog: bool = False,
    jobs: str = "sequential",
) -> Instance:
    """Cut a window from a trace and turn it into a ``k``-organization instance.

    ``jobs``: ``"sequential"`` (the paper's split, Sec. 7.2: a job on ``q`` processors
    becomes ``q`` one-processor copies; the default of the reproductions) or ``"rigid"``
    (one job on ``q`` processors, with its requested time, SWF field 9, where the log has
    one; docs/conventions.md, rigid jobs).

    ``start`` is relative to the first submit time when ``relative_start`` (default),
    absolute otherwise; ``None`` means the beginning. ``length`` ``None`` means the whole
    trace. The horizon of the instance (``meta['horizon']``) is ``warmup + length``; the
    measured window begins at ``meta['measure_from'] = warmup`` (0 without warm-up).
    ``owners``: ``"user"`` (users dealt in turn) or ``"random"`` (each trace job to a
    uniformly random organization; the copies of a parallel job share it).
    ``backlog``: start from the log's own state at the window start (module docstring;
    ``meta['backlog']`` counts the trace jobs waiting and running at ``t0`` and those left
    out for an unknown wait); exclusive with ``warmup``.
    """
    if owners not in OWNERS:
        raise InstanceError(f"unknown job ownership {owners!r} (use 'user' or 'random')")
    if warmup < 0:
        raise InstanceError("the warm-up period must be 0 or positive")
    if warmup and length is None:
        raise InstanceError("a warm-up period needs a window length")
    if warmup and backlog:
        raise InstanceError(
            "a warm-up period and the log's backlog are two ways to fill the system at the "
            "window start: choose one"
        )
    if jobs not in JOB_MODELS:
        raise InstanceError(f"jobs: {jobs!r}; choose from {', '.join(JOB_MODELS)}")
    model = jobs
    cols = trace.columns  # numpy arrays: no pandas on the way to an instance (start-up)
    submit = cols["submit"]
    if len(submit) == 0:
        raise InstanceError(f"{trace.path}: the trace has no runnable job")
    first = int(submit.min())
    if start is not None and not 0 <= start < MAX_EXACT:
        raise InstanceError(f"the window start must be in [0, 2^53), got {start}")
    if length is not None and not 0 < length < MAX_EXACT:
        raise InstanceError(f"the window length must be in [1, 2^53), got {length}")
    t0 = first if start is None else (first + int(start) if relative_start else int(start))
    t1 = None if length is None else t0 + int(length)
    base = t0 - int(warmup)  # time 0 of the instance
    run_time = cols["run_time"]
    pinned = None
    backlog_meta = None
    if backlog:
        wj, backlog_meta = _backlog_jobs(trace, t0, t1)
        idx, rel_job, size_job, pin_job = wj.idx, wj.release, wj.size, wj.pinned
    else:
        mask = submit >= base
        if t1 is not None:
            mask &= submit < t1
        idx = np.flatnonzero(mask)
        rel_job, size_job, pin_job = submit[idx] - base, run_time[idx], None
    sel = {c: cols[c][idx] for c in ("user", "processors", "req_time")}
    rng = np.random.default_rng(seed)
    total = trace_machines(trace, machines)
    shares = split_machines(total, k, split, exponent=exponent, rng=rng)
    if owners == "user":
        users = np.unique(sel["user"])
        perm = rng.permutation(len(users))
        user_org = {int(users[i]): pos % k for pos, i in enumerate(perm)}
        owner_per_job = np.array([user_org[int(u)] for u in sel["user"]], dtype=np.int64)
    else:
        owner_per_job = rng.integers(0, k, size=len(idx)).astype(np.int64)
    q = sel["processors"]
    if model == "rigid":
        return _rigid_instance(
            trace,
            sel,
            owner_per_job,
            rel_job,
            size_job,
            pin_job,
            shares,
            k,
            t0,
            length,
            warmup,
            owners,
            split,
            seed,
            backlog_meta,
        )
    n_seq = int(q.sum())
    if n_seq > MAX_JOBS:
        raise InstanceError(
            f"{trace.path}: the window holds {n_seq:,} sequential jobs (a job on q processors "
            f"counts q), more than the limit of {MAX_JOBS:,}; choose a shorter window"
        )
    rel = np.repeat(rel_job, q)
    size = np.repeat(size_job, q)
    owner = np.repeat(owner_per_job, q)
    if pin_job is not None:
        pinned = np.repeat(pin_job, q)
    orgs = [Organization(f"O{u}", shares[u]) for u in range(k)]
    meta = {
        "source": trace.path,
        "window_start": t0,
        "window_length": length,
        "horizon": None if length is None else int(warmup) + int(length),
        "warmup": int(warmup),
        "measure_from": int(warmup),
        "owners": owners,
        "split": split,
        "seed": seed,
        "trace_jobs": len(idx),
    }
    if backlog_meta is not None:
        meta["backlog"] = backlog_meta
    return Instance(orgs, owner, rel, size, meta=meta, pinned=pinned)


def _backlog_jobs(trace: SWFTrace, t0: int, t1: int | None):
    """The window's jobs with the log's own state at ``t0`` (module docstring), and the
    counts of ``meta['backlog']``. A wait below -1 is an error naming file, line and field."""
    jobs = trace.columns
    submit = jobs["submit"].astype(np.int64)
    wait = jobs["wait"].astype(np.int64)
    line = jobs["line"].astype(np.int64)
    before = submit < t0
    bad = np.flatnonzero(wait < -1)
    if bad.size:
        i = bad[0]
        raise InstanceError(
            f"{trace.path}:{line[i]}: field 3 (wait): {wait[i]} is negative (the job would "
            "start before its submit time)"
        )
    known = wait >= 0
    start = np.where(known, submit + np.maximum(wait, 0), -1)
    keep = known | ~before
    end_t1 = int(submit.max()) + 1 if t1 is None else t1
    wj = window_jobs(submit, start, jobs["run_time"].astype(np.int64), line, t0, end_t1, keep)
    counts = {
        "waiting": wj.waiting,
        "running": wj.running,
        "wait unknown": int((before & ~known).sum()),
    }
    return wj, counts


def random_windows(
    trace: SWFTrace, length: int, count: int, *, seed: int = 0, min_jobs: int = 1, by: str = "time"
) -> list[int]:
    """``count`` random window starts (relative to the first submit) of a trace.

    ``by="time"``: starts uniform over the trace's submit span (so that a window fits);
    ``by="job"``: each window starts at the submit time of a uniformly chosen job, which
    samples busy periods more often. Windows with fewer than ``min_jobs`` jobs are
    redrawn (up to 100 tries each).
    """
    if by not in ("time", "job"):
        raise ValueError("window sampling must be 'time' or 'job'")
    submit = np.sort(trace.columns["submit"])
    first, last = int(submit[0]), int(submit[-1])
    hi = max(first + 1, last - length + 1)
    rng = np.random.default_rng(seed)
    starts = []
    eligible = submit[submit < hi]
    for _ in range(count):
        for _try in range(100):
            t0 = (
                int(rng.integers(first, hi))
                if by == "time"
                else int(eligible[rng.integers(len(eligible))])
            )
            nj = np.searchsorted(submit, t0 + length) - np.searchsorted(submit, t0)
            if nj >= min_jobs:
                break
        starts.append(t0 - first)
    return starts


def peak_concurrency(trace: SWFTrace) -> int:
    """Most processors in use at once in the log (start = submit + wait, end = start + run).

    A data-derived lower bound on the machine size, for traces whose header lacks
    ``MaxProcs`` (the METACENTRUM copy). Unknown waits (-1) count as 0.
    """
    j = trace.columns
    start = j["submit"] + np.maximum(j["wait"], 0)
    end = start + j["run_time"]
    q = j["processors"]
    times = np.concatenate([start, end])
    delta = np.concatenate([q, -q])
    order = np.lexsort((delta, times))  # at equal times, ends (negative) first
    return int(np.cumsum(delta[order]).max())


#: The two job models of a trace (``--jobs``).
JOB_MODELS = ("sequential", "rigid")


def _rigid_instance(
    trace,
    sel,
    owner,
    rel,
    size,
    pinned,
    shares,
    k,
    t0,
    length,
    warmup,
    owners,
    split,
    seed,
    backlog_meta,
) -> Instance:
    """The window as rigid jobs: one job per trace job, ``processors`` its width,
    ``requested`` its requested time (field 9). A job without one (field 9 <= 0) requests
    the longest requested time of the whole log, as a batch system gives a job without a
    time limit its partition's limit; they are counted in ``meta["requested_filled"]``."""
    req = sel["req_time"].astype(np.int64)
    all_req = trace.columns["req_time"].astype(np.int64)
    longest = int(all_req.max()) if len(all_req) and all_req.max() >= 1 else -1
    missing = req < 1
    requested = np.where(missing, longest, req)
    meta = {
        "source": trace.path,
        "window_start": t0,
        "window_length": length,
        "horizon": None if length is None else int(warmup) + int(length),
        "warmup": int(warmup),
        "measure_from": int(warmup),
        "owners": owners,
        "split": split,
        "seed": seed,
        "trace_jobs": len(req),
        "jobs": "rigid",
        "outlived_request": int(((requested >= 1) & (size > requested)).sum()),
        "requested_filled": {"jobs": int(missing.sum()), "with": longest},
    }
    if backlog_meta is not None:
        meta["backlog"] = backlog_meta
    orgs = [Organization(f"O{u}", shares[u]) for u in range(k)]
    return Instance(
        orgs,
        owner,
        rel,
        size,
        sel["processors"].astype(np.int64),
        meta=meta,
        pinned=pinned,
        requested=requested,
    )
