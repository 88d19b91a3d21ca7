"""What ``coopsched migration`` computes and prints, as package functions: a simulation
with the EF/WPM/ILV/non-wasteful verdicts, or the search for the smallest violation."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

from ..report import Column, Report
from .constructions import hunt as run_hunt
from .engine import RelatedInstance, simulate
from .policies import POLICIES, get_policy
from .properties import PROPERTIES, check_all


def _check_policy(policy: str) -> None:
    if policy not in POLICIES:
        raise ValueError(f"unknown migration policy {policy!r}; choose from {', '.join(POLICIES)}")


def migration_report(path: str | Path, policy: str = "gm", cost: float = 0.0, seed: int = 0):
    """Simulate ``policy`` on the JSON instance at ``path``: one row per job (completion,
    response time, migrations, preemptions) and the verdict of every property."""
    from ..workloads.jsonio import read_instance

    _check_policy(policy)
    inst = RelatedInstance.from_instance(read_instance(path))
    c = Fraction(str(cost))

    def make():
        return get_policy(policy, seed)

    res = simulate(inst, make(), c)
    verdicts = check_all(make, inst, c)
    response = res.response_times()
    rows = [
        {
            "job": inst.job_id(j),
            "org": inst.names[inst.org[j]],
            "release": inst.release[j],
            "work": inst.work[j],
            "priority": str(inst.priority[j]),
            "completion": str(res.completion[j]),
            "response": str(response[j]),
            "migrations": res.migrations[j],
            "preemptions": res.preemptions[j],
        }
        for j in range(inst.n)
    ]
    doc = {
        "policy": policy,
        "cost": cost,
        "jobs": [
            {
                "id": inst.job_id(j),
                "org": r["org"],
                "release": r["release"],
                "work": r["work"],
                "priority": float(inst.priority[j]),
                "completion": r["completion"],
                "completion_float": float(res.completion[j]),
                "response": r["response"],
                "migrations": r["migrations"],
                "preemptions": r["preemptions"],
            }
            for j, r in enumerate(rows)
        ],
        "properties": {
            v.prop: {"holds": v.holds, "applicable": v.applicable, "detail": v.detail}
            for v in verdicts
        },
    }
    speeds = ", ".join(str(x) for x in inst.speeds)
    return Report(
        title=f"{policy} on {inst.n} jobs, {inst.machines} machines (speeds {speeds})",
        columns=[
            Column("job"),
            Column("org", left=True),
            Column("release"),
            Column("work"),
            Column("priority"),
            Column("completion"),
            Column("response"),
            Column("migrations"),
            Column("preemptions"),
        ],
        rows=rows,
        notes=[str(v) for v in verdicts],
        document=doc,
    )


def hunt_report(prop: str, policy: str = "gm", tries: int = 300, seed: int = 0, cost: float = 0.0):
    """The smallest violation of ``prop`` by ``policy`` found among the paper's
    constructions and ``tries`` random instances (:func:`coopsched.migration.constructions.hunt`)."""
    _check_policy(policy)
    if prop not in PROPERTIES:
        raise ValueError(f"prop: takes one of {', '.join(PROPERTIES)}")
    c = run_hunt(policy, prop, tries=tries, seed=seed, policy_seed=seed, cost=Fraction(str(cost)))
    cols = [Column("job"), Column("release"), Column("work"), Column("priority")]
    if c is None:
        return Report(
            title=f"no violation of {prop} by {policy} found "
            f"(paper constructions and {tries} random instances)",
            columns=cols,
            rows=[],
            document={"policy": policy, "property": prop, "found": False},
        )
    inst = c.instance
    rows = [
        {
            "job": j,
            "release": inst.release[j],
            "work": inst.work[j],
            "priority": str(inst.priority[j]),
        }
        for j in range(inst.n)
    ]
    return Report(
        title=f"smallest counterexample found ({c.source})",
        columns=cols,
        rows=rows,
        notes=[f"machine speeds {[str(x) for x in inst.speeds]}", str(c.verdict)],
        document={
            "policy": policy,
            "property": prop,
            "found": True,
            "source": c.source,
            "speeds": [str(x) for x in inst.speeds],
            "jobs": rows,
            "verdict": str(c.verdict),
        },
    )
