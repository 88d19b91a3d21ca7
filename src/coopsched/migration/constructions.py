"""The paper's impossibility constructions, and a search for counterexamples.

* :func:`prop1` -- Prop. 1 (EF), two machines of speeds 1 and 2, large ``X``;
* :func:`prop2` -- Prop. 2 (WPM), same machines (job 4 gains by being released later);
* :func:`prop3` -- Prop. 3 (ILV), ``n`` identical machines.

Props. 1 and 2 have two cases, by where the policy puts the first job; :func:`for_policy`
asks the policy (by simulating the first job alone) and builds the matching instance.
:func:`hunt` tries the constructions and seeded random instances and returns the
smallest counterexample it finds.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from ..workloads.limits import MAX_SAMPLES, check_count
from .engine import MigrationPolicy, RelatedInstance, simulate
from .policies import get_policy
from .properties import Verdict, check_ef, check_ilv, check_non_wasteful, check_wpm


def prop1(X: int = 40, first_on_slow: bool = True) -> RelatedInstance:
    """Prop. 1: EF fails for every busy scheduler without migration (jobs 4 and 5)."""
    if first_on_slow:
        jobs = [(0, X), (1, X), (X // 2 + 1, X), (X, X), (X + 1, X + 2)]
    else:
        jobs = [(0, X), (1, X - 1), (X // 2, X + 2), (X, X), (X + 1, X + 1)]
    return RelatedInstance.make([1, 2], [(r, t, 1) for r, t in jobs])


def prop2(X: int = 40, first_on_slow: bool = True) -> RelatedInstance:
    """Prop. 2: WPM fails -- job 4 finishes earlier if released at X+2 instead of X."""
    jobs = [(0, X), (1, X if first_on_slow else X - 1), (X // 2 + 2, X), (X, X), (X + 1, 2)]
    return RelatedInstance.make([1, 2], [(r, t, 1) for r, t in jobs])


def prop3(n: int = 3) -> RelatedInstance:
    """Prop. 3: ILV fails on ``n`` identical machines (job n+1 waits for low jobs)."""
    jobs = [(i, 2 * n - i, 1) for i in range(1, n + 1)] + [(n + 1, 3 * n, 2)]
    return RelatedInstance.make([1] * n, jobs)


def first_on_slow(policy: MigrationPolicy) -> bool:
    """Does the policy put a lone first job on the slow machine (speeds 1 and 2)?"""
    res = simulate(RelatedInstance.make([1, 2], [(0, 10, 1)]), policy)
    return res.segments[0][1] == 0


def for_policy(
    make_policy: Callable[[], MigrationPolicy], prop: str, X: int = 40, n: int = 3
) -> RelatedInstance:
    """The paper's instance for ``prop`` and this policy."""
    if prop == "ef":
        return prop1(X, first_on_slow(make_policy()))
    if prop == "wpm":
        return prop2(X, first_on_slow(make_policy()))
    if prop in ("ilv", "non-wasteful"):
        return prop3(n)
    raise ValueError(f"unknown property {prop!r}")


def verdict(
    make_policy: Callable[[], MigrationPolicy], inst: RelatedInstance, prop: str, cost=0
) -> Verdict:
    """Whether ``prop`` (``ef``, ``wpm``, ``ilv`` or ``non-wasteful``) holds for the policy
    ``make_policy`` builds on ``inst``, with a migration delay ``cost``."""
    if prop == "ef":
        return check_ef(simulate(inst, make_policy(), cost))
    if prop == "wpm":
        return check_wpm(make_policy, inst, cost=cost)
    if prop == "ilv":
        return check_ilv(make_policy, inst, cost=cost)
    if prop == "non-wasteful":
        return check_non_wasteful(simulate(inst, make_policy(), cost))
    raise ValueError(f"unknown property {prop!r}; choose ef, wpm, ilv or non-wasteful")


@dataclass
class Counterexample:
    """An instance on which a property fails, the verdict, and where it came from."""

    instance: RelatedInstance
    verdict: Verdict
    source: str

    def size(self) -> tuple:
        """The instance's size as a sort key (jobs, machines, total work, last release): smaller
        first."""
        inst = self.instance
        return (inst.n, inst.machines, sum(inst.work), max(inst.release, default=0))


def random_instance(rng: random.Random, max_jobs: int = 6) -> RelatedInstance:
    """A small random instance: 1 to 3 machines of speeds 1 to 3, 2 to ``max_jobs`` jobs."""
    machines = rng.randint(1, 3)
    speeds = [rng.choice([1, 2, 3]) for _ in range(machines)]
    jobs = [
        (rng.randint(0, 8), rng.randint(1, 8), rng.choice([1, 1, 2, 3]))
        for _ in range(rng.randint(2, max_jobs))
    ]
    return RelatedInstance.make(speeds, jobs)


def hunt(
    policy: str,
    prop: str,
    *,
    tries: int = 300,
    seed: int = 0,
    max_jobs: int = 6,
    policy_seed: int = 0,
    cost=0,
) -> Counterexample | None:
    """Smallest violation of ``prop`` by ``policy`` among the constructions and ``tries``
    random instances (None: none found)."""
    check_count(tries, MAX_SAMPLES, "random instances to try")

    def make() -> MigrationPolicy:
        return get_policy(policy, policy_seed)

    found: list[Counterexample] = []
    for X in (4, 6, 8, 12, 20, 40):
        for n in (2, 3, 4):
            try:
                inst = for_policy(make, prop, X, n)
            except ValueError:
                raise
            v = verdict(make, inst, prop, cost)
            if not v.holds and v.applicable:
                found.append(Counterexample(inst, v, f"paper construction (X={X}, n={n})"))
    rng = random.Random(seed)
    for i in range(tries):
        inst = random_instance(rng, max_jobs)
        v = verdict(make, inst, prop, cost)
        if not v.holds and v.applicable:
            found.append(Counterexample(inst, v, f"random instance #{i} (seed {seed})"))
    return min(found, key=lambda c: c.size()) if found else None
