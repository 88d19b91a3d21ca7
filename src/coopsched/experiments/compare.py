"""Compare online policies on one instance: fairness against REF, efficiency, flow time.

This is what ``coopsched demo`` and ``coopsched compare`` print: for each policy the
unfairness ``dpsi / p_tot`` of Skowron & Rzadca (Sec. 7.2), the resource utilization and
the mean flow time of completed jobs, all at the horizon.
"""

from __future__ import annotations

import time

from ..online.fairness import fairness
from ..online.policies import get_policy
from ..online.policies.ref import Ref
from ..workloads.instance import Instance

DEFAULT_POLICIES = (
    "ref",
    "rand",
    "directcontr",
    "fairshare",
    "utfairshare",
    "currfairshare",
    "roundrobin",
    "fifo",
)


def compare_policies(
    instance: Instance,
    horizon: int,
    policies: tuple[str, ...] = DEFAULT_POLICIES,
    seed: int = 0,
    ref_max_k: int = 14,
) -> list[dict]:
    """One row per policy; the fairness columns need REF (skipped when ``k > ref_max_k``)."""
    rows = []
    ref = None
    if instance.k <= ref_max_k:
        t0 = time.perf_counter()
        ref = Ref().run(instance, horizon)
        ref_seconds = time.perf_counter() - t0
    for name in policies:
        if name == "ref" and ref is not None:
            sched, seconds = ref, ref_seconds
        else:
            params = {} if name in ("ref",) else {"seed": seed}
            t0 = time.perf_counter()
            sched = get_policy(name, **params).run(instance, horizon)
            seconds = time.perf_counter() - t0
        done = sum(sched.completed(horizon))
        ft = sum(sched.flow_time(horizon))
        row = {
            "policy": name,
            "unfairness": None,
            "dpsi": None,
            "utilization": sched.utilization(horizon),
            "mean_flow": ft / done if done else None,
            "started": int(sched.started.sum()),
            "seconds": seconds,
            "psi": sched.psi(horizon),
        }
        if ref is not None:
            since = int(instance.meta.get("measure_from") or 0)  # after a warm-up
            f = fairness(sched, ref, horizon, since if since < horizon else 0)
            row["unfairness"] = f.ratio
            row["dpsi"] = f.dpsi
        rows.append(row)
    return rows
