"""Random MOSP instances as in Pascual et al., Sec. 6.1.

* ``uni``: ``p`` uniform on 1..50 and ``q`` uniform on 1..m, independent;
* ``swf``: jobs of the Lublin-Feitelson model (:mod:`coopsched.workloads.lublin`) with
  sizes below ``m`` (``q <= m - 1``, "the maximum required number of processors is smaller
  than m") and all releases at 0.

Owners are drawn from a Zipf distribution over the ``N`` organizations with exponent
1.4267 (P(organization i) proportional to ``1 / i**1.4267``, i = 1..N). Every cluster has
``m`` processors.
"""

from __future__ import annotations

import numpy as np

from ..workloads.instance import Instance, Organization
from ..workloads.limits import MAX_JOBS, MAX_MACHINES, check_count
from ..workloads.lublin import lublin_jobs
from ..workloads.prepare import zipf_owners

KINDS = ("uni", "swf")


def mosp_instance(kind: str, N: int, n: int, m: int, seed: int = 0) -> Instance:
    """One random instance of the Sec. 6 grid."""
    if N < 1 or n < 0 or m < 1:
        raise ValueError("need N >= 1 organizations, n >= 0 jobs and m >= 1 processors")
    check_count(n, MAX_JOBS, "jobs")
    check_count(N * m, MAX_MACHINES, f"processors in total ({N} clusters of {m})")
    rng = np.random.default_rng(seed)
    if kind == "uni":
        p = rng.integers(1, 51, size=n)
        q = rng.integers(1, m + 1, size=n)
    elif kind == "swf":
        jobs = lublin_jobs(
            n, m, seed=int(rng.integers(2**31)), max_processors=max(1, m - 1), release_zero=True
        )
        p = jobs["run_time"].to_numpy()
        q = jobs["alloc_procs"].to_numpy()
    else:
        raise ValueError(f"unknown instance kind {kind!r}; choose from {', '.join(KINDS)}")
    owner = zipf_owners(n, N, rng)
    orgs = [Organization(f"O{k}", m) for k in range(N)]
    meta = {"kind": kind, "N": N, "n": n, "m": m, "seed": seed}
    return Instance(orgs, owner, np.zeros(n, dtype=np.int64), p, processors=q, meta=meta)
