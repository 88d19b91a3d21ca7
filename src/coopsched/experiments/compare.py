"""Compare online policies on one instance: fairness against REF, efficiency, flow time.

This is what ``coopsched demo`` and ``coopsched compare`` print, and what
:func:`coopsched.compare` returns as a DataFrame: for each policy the unfairness
``dpsi / p_tot`` of Skowron & Rzadca (Sec. 7.2), the resource utilization and the mean
flow time of completed jobs, all at the horizon.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

import numpy as np

from ..online.engine import Policy
from ..online.fairness import fairness
from ..online.policies import get_policy, names, policy_class
from ..online.policies.ref import Ref
from ..workloads.instance import Instance

#: columns of :func:`compare_policies`' rows, in display order
COLUMNS = ("policy", "unfairness", "dpsi", "utilization", "mean_flow", "started", "seconds")


def make_policies(policies: Sequence[str | Policy] | None, seed: int = 0) -> list[Policy]:
    """Policy objects from names (every registered policy when ``None``) or objects.

    A policy built from a name gets ``seed`` when it takes one (REF is deterministic).
    ``policies`` must be a list or tuple (a single string would be read letter by letter);
    anything else is a :class:`TypeError` naming ``policies``.
    """
    if policies is None:
        policies = names()
    elif isinstance(policies, str | bytes):
        raise TypeError(
            f"policies: expected a list of policy names or Policy objects, got the string "
            f"{policies!r} (write [{policies!r}])"
        )
    elif not isinstance(policies, Sequence):
        raise TypeError(
            "policies: expected a list of policy names or Policy objects, got "
            f"{type(policies).__name__}"
        )
    elif not policies:
        raise ValueError("policies: empty; give at least one policy (or None for all)")
    out = []
    named: dict[str, tuple[int, str]] = {}  # a policy's class -> where it was named first
    for i, p in enumerate(policies):
        if isinstance(p, Policy):
            out.append(p)
            continue
        if not isinstance(p, str):
            raise TypeError(f"policies[{i}]: {p!r} is neither a policy name nor a Policy object")
        cls = policy_class(p)
        key = f"{cls.__module__}:{cls.__qualname__}"
        if key in named:
            j, first = named[key]
            raise ValueError(
                f"policies: {p!r} (policies[{i}]) names the policy of {first!r} "
                f"(policies[{j}]) again; name each policy once"
            )
        named[key] = (i, p)
        cls_params = cls.param_names()
        out.append(get_policy(p, **({"seed": seed} if "seed" in cls_params else {})))
    return out


def policy_labels(policies: Sequence[Policy]) -> list[str]:
    """What each policy's results are keyed by: its ``name``, with its parameters when two
    policies share a name (``rand(n_samples=15)``, ``rand(n_samples=75)``); two that share
    both are a :class:`ValueError` (their rows could not be told apart)."""
    names = [p.name for p in policies]
    labels = [
        n
        if names.count(n) == 1
        else f"{n}({', '.join(f'{k}={v!r}' for k, v in p.params().items())})"
        for n, p in zip(names, policies, strict=True)
    ]
    for i, label in enumerate(labels):
        if labels.index(label) != i:
            raise ValueError(
                f"policies[{labels.index(label)}] and policies[{i}] are both {label}: give "
                "each policy once (or another name), so that their results can be told apart"
            )
    return labels


def compare_policies(
    instance: Instance,
    horizon: int,
    policies: Sequence[str | Policy] | None = None,
    seed: int = 0,
    ref_max_k: int = 14,
    backfill: str | None = None,
) -> list[dict]:
    """One row per policy (:data:`COLUMNS`, ``mean_wait``, ``mean_bsld``, ``psi``, ``per_org``:
    :meth:`Schedule.per_org_table` with its ``"all"`` row, and ``treatments``:
    :meth:`Schedule.treatments`, empty for sequential jobs); the fairness columns need REF
    (``None`` when ``k > ref_max_k``, REF being exponential in ``k``). A rigid instance runs
    every policy, REF included, under the backfilling rule ``backfill``
    (:mod:`coopsched.online.rigid`)."""
    from ..workloads.limits import MAX_EXACT, check_horizon, check_seed, check_type

    check_type(instance, Instance, "instance", "an Instance")
    check_seed(seed)
    if horizon is None:
        raise TypeError("horizon: required (seconds); the comparison is made at the horizon")
    horizon = int(check_horizon(horizon, below=MAX_EXACT))  # type: ignore[arg-type]
    pols = make_policies(policies, seed)
    labels = policy_labels(pols)
    rule = None
    if instance.rigid:
        from ..online.ref.rigid import MAX_K_RIGID
        from ..online.rigid import resolve_backfill

        rule = resolve_backfill(instance, backfill)
        ref_max_k = min(ref_max_k, MAX_K_RIGID)
    rows = []
    ref = None
    run_ref = instance.k <= ref_max_k
    warm_up(instance, horizon, pols, run_ref, rule)
    if run_ref:
        t0 = time.perf_counter()
        ref = Ref().run(instance, horizon, backfill=rule)
        ref_seconds = time.perf_counter() - t0
    for pol, label in zip(pols, labels, strict=True):
        if type(pol) is Ref and pol.params() == Ref().params() and ref is not None:
            sched, seconds = ref, ref_seconds
        else:
            t0 = time.perf_counter()
            sched = pol.run(instance, horizon, backfill=rule)
            seconds = time.perf_counter() - t0
        done = sum(sched.completed(horizon))
        ft = sum(sched.flow_time(horizon))
        row = {
            "policy": label,
            "unfairness": None,
            "dpsi": None,
            "utilization": sched.utilization(horizon),
            "mean_flow": ft / done if done else None,
            "started": int(sched.started.sum()),
            "mean_wait": _mean(sched.waits(), sched.waits() >= 0),
            "mean_bsld": _mean(sched.bounded_slowdown(), sched.waits() >= 0),
            "seconds": seconds,
            "psi": sched.psi(horizon),
            "per_org": sched.per_org_table(horizon, overall=True),
            "treatments": sched.treatments(),
        }
        if ref is not None:
            since = int(instance.meta.get("measure_from") or 0)  # after a warm-up
            f = fairness(sched, ref, horizon, since if since < horizon else 0)
            row["unfairness"] = f.ratio
            row["dpsi"] = f.dpsi
        rows.append(row)
    return rows


#: Jobs of the sample :func:`warm_up` runs.
WARM_UP_JOBS = 12


def warm_up(
    instance: Instance,
    horizon: int,
    policies: Sequence[Policy],
    ref: bool = True,
    backfill: str | None = None,
) -> None:
    """Run REF (if ``ref``) and a copy of every policy on the first :data:`WARM_UP_JOBS`
    jobs of ``instance``, the engine deciding as for the whole instance, so that the
    numba kernels the comparison will use are compiled (first run after an install) or
    loaded from numba's cache before anything is timed: the ``seconds`` column then
    measures the policies, not numba. A few milliseconds once the kernels are cached."""
    import copy

    from ..online.engine import engine_decides_as

    keep = np.sort(instance.fifo_order()[:WARM_UP_JOBS])
    sample = Instance(
        organizations=instance.organizations,
        org=instance.org[keep],
        release=instance.release[keep],
        size=instance.size[keep],
        processors=None if instance.processors is None else instance.processors[keep],
        requested=None if instance.requested is None else instance.requested[keep],
        priority=None if instance.priority is None else instance.priority[keep],
        pinned=None if instance.pinned is None else instance.pinned[keep],
        start=None if instance.start is None else instance.start[keep],
        meta=dict(instance.meta),  # what a policy may read there (slurm-fairtree's tree)
    )
    with engine_decides_as(instance):
        if ref:
            Ref().run(sample, horizon, backfill=backfill)
        for pol in policies:
            copy.deepcopy(pol).run(sample, horizon, backfill=backfill)


def _mean(values, mask) -> float | None:
    return float(values[mask].mean()) if mask.any() else None


def comparison_report(
    instance: Instance,
    horizon: int,
    policies: Sequence[str | Policy] | None = None,
    seed: int = 0,
    title: str | None = None,
    backfill: str | None = None,
):
    """:func:`compare_policies` as a :class:`coopsched.report.Report` (what ``coopsched
    compare`` and ``demo`` print)."""
    from ..report import Column, Report, num, pct

    rows = compare_policies(instance, horizon, policies, seed, backfill=backfill)
    notes = []
    if instance.rigid:
        from ..online.rigid import resolve_backfill

        notes.append(
            f"rigid jobs (a job holds its processors at once), backfilling "
            f"{resolve_backfill(instance, backfill)}; wait and bsld (bounded slowdown, 10 s) "
            "over the started jobs"
        )
    per_org = {}  # by policy name: the rows of Schedule.per_org_table, "all" last
    treatments: dict = {}
    for r in rows:
        r.pop("psi")
        per_org[r["policy"]] = r.pop("per_org")
        treatments = r.pop("treatments") or treatments  # the input's: the same for all
    if instance.rigid and rows:
        from ..online.schedule import treatment_line

        notes.append(treatment_line(treatments))
    title = title or f"{instance.n} jobs, {instance.k} organizations, horizon {horizon}"
    notes.append(
        "dpsi/p_tot: average unjustified delay (s) per unit of work against REF, "
        "the exact Shapley-fair schedule (Skowron & Rzadca, Sec. 7.2); 0 = as fair as REF."
    )
    return Report(
        title=title,
        columns=[
            Column("policy", left=True),
            Column("unfairness", "dpsi/p_tot", num(2)),
            Column("utilization", fmt=pct),
            Column("mean_flow", "mean flow", num(0)),
            *(
                [Column("mean_wait", "mean wait", num(0)), Column("mean_bsld", "bsld", num(2))]
                if instance.rigid
                else []
            ),
            Column("started"),
            Column("seconds", fmt=num(3)),
        ],
        rows=rows,
        notes=notes,
        document={
            "title": title,
            "rows": rows,
            "notes": notes,
            "per_org": per_org,
            **({"treatments": treatments} if instance.rigid else {}),
        },
    )


def compare_frame(
    instance: Instance,
    horizon: int | None = None,
    policies: Sequence[str | Policy] | None = None,
    seed: int = 0,
):
    """:func:`compare_policies` as a pandas DataFrame indexed by policy, with one
    ``psi_<org>`` column per organization (``horizon`` defaults to the instance's).

    >>> from coopsched import make_instance
    >>> jobs = [(0, 0, 4), (0, 0, 4), (0, 0, 4), (0, 1, 4), (1, 2, 2), (1, 2, 2)]
    >>> inst = make_instance([1, 1], jobs, names=["a", "b"])
    >>> compare_frame(inst, 8, ["ref", "fifo", "roundrobin"])[["unfairness", "psi_a", "psi_b"]]
                unfairness  psi_a  psi_b
    policy
    ref               0.00     58     14
    fifo              1.75     72      0
    roundrobin        0.50     62     10
    """
    import pandas as pd

    from ..workloads.limits import check_type

    check_type(instance, Instance, "instance", "an Instance")
    if horizon is None:
        horizon = instance.meta.get("horizon")
        if horizon is None:
            raise ValueError("horizon: give one (the instance has none)")
    rows = compare_policies(instance, horizon, policies, seed)
    recs = []
    for r in rows:
        d = {c: r[c] for c in COLUMNS}
        for name, v in zip(instance.names, r["psi"], strict=True):
            d[f"psi_{name}"] = v
        recs.append(d)
    return pd.DataFrame.from_records(recs).set_index("policy")
