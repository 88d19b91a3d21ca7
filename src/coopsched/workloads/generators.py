"""Synthetic multi-organization workloads (no files needed).

:func:`synthetic_instance` is the built-in default of ``coopsched demo``: organizations
with unequal machine counts (Zipf split), each submitting jobs in bursts (users send
jobs in consecutive blocks, as the paper observes of real traces, Sec. 7.2), with
heavy-tailed (log-normal) run times. It is a stand-in for a real trace, not a model of
any particular one.
"""

from __future__ import annotations

import numpy as np

from .instance import Instance, Organization
from .limits import check_int, check_seed
from .prepare import split_machines


def synthetic_instance(
    k: int = 5,
    machines: int = 20,
    jobs: int = 400,
    horizon: int = 20_000,
    *,
    split: str = "zipf",
    load: float = 1.1,
    seed: int = 0,
) -> Instance:
    """A bursty ``k``-organization workload on ``machines`` identical machines.

    ``load`` is the offered work over the capacity ``machines * horizon``; jobs arrive
    in bursts of geometric length at uniformly random burst times in ``[0, horizon)``;
    sizes are log-normal (sigma 1.2), scaled to reach ``load``, at least 1.
    """
    check_int(k, "k", 1)
    check_seed(seed)
    rng = np.random.default_rng(seed)
    shares = split_machines(machines, k, split, rng=rng)
    raw = rng.lognormal(0.0, 1.2, size=jobs)
    target_work = load * machines * horizon
    sizes = np.maximum(1, np.rint(raw * target_work / raw.sum())).astype(np.int64)
    # Bursts: each burst belongs to one organization (activity skewed across orgs).
    activity = rng.dirichlet(np.full(k, 0.8))
    release = np.empty(jobs, dtype=np.int64)
    owner = np.empty(jobs, dtype=np.int64)
    j = 0
    while j < jobs:
        burst = min(jobs - j, int(rng.geometric(1 / 8)))
        t = int(rng.integers(0, horizon))
        u = int(rng.choice(k, p=activity))
        gaps = rng.integers(0, 30, size=burst)
        release[j : j + burst] = t + np.cumsum(gaps)
        owner[j : j + burst] = u
        j += burst
    order = np.argsort(release, kind="stable")
    orgs = [Organization(f"O{u}", shares[u]) for u in range(k)]
    meta = {"source": "synthetic", "seed": seed, "horizon": horizon}
    return Instance(orgs, owner[order], release[order], sizes[order], meta=meta)


def lublin_instance(
    k: int = 5, machines: int = 32, jobs: int = 300, *, split: str = "zipf", seed: int = 0
) -> Instance:
    """An online instance from the Lublin-Feitelson model (:mod:`coopsched.workloads.lublin`).

    Parallel jobs become sequential copies (as for traces, docs/conventions.md §1); each job's owner
    is drawn from Zipf(1.4267) over the ``k`` organizations; machines split by ``split``.
    The horizon is the last submit time.
    """
    from .lublin import lublin_jobs
    from .prepare import zipf_owners

    check_int(k, "k", 1)
    check_int(jobs, "jobs", 1)
    check_int(machines, "machines", 1)
    check_seed(seed)
    df = lublin_jobs(jobs, machines, seed=seed)
    rng = np.random.default_rng(seed + 1)
    owners = zipf_owners(jobs, k, rng)
    shares = split_machines(machines, k, split, rng=rng)
    q = df["alloc_procs"].to_numpy()
    release = np.repeat(df["submit"].to_numpy() - int(df["submit"].min()), q)
    size = np.repeat(df["run_time"].to_numpy(), q)
    orgs = [Organization(f"O{u}", shares[u]) for u in range(k)]
    meta = {"source": "lublin", "seed": seed, "horizon": int(release.max()) + 1}
    return Instance(orgs, np.repeat(owners, q), release, size, meta=meta)
