"""One core (#40 item 1): sequential jobs are the one-processor case of rigid jobs.

An instance whose jobs all have one processor gives, for every registered policy, identical
starts, machines and ``psi`` whether its jobs are declared sequential or rigid, under every
backfilling rule, in the Python engine and in the compiled one (docs/conventions.md, rigid
jobs: with one processor per job every rule reduces to the greedy step). Both declarations
run through the same loop (``online/core.py``, ``online/compiled.py``); these tests catch a
branch of either that treats ``q = 1`` differently (DIRECTCONTR once freed machines in start
order for rigid jobs and in machine order for sequential ones).
"""

from __future__ import annotations

import numpy as np
import pytest
from conftest import small_instances, trace_path
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.backends import compiled_names
from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy, names
from coopsched.online.rigid import BACKFILL
from coopsched.workloads.instance import Instance, make_instance

RULES = BACKFILL
NAMES = names()
COMPILED = set(compiled_names())


def declared_rigid(inst: Instance, requested: bool = True) -> Instance:
    """The same jobs declared rigid, one processor each (requested times for EASY)."""
    return Instance(
        inst.organizations,
        inst.org,
        inst.release,
        inst.size,
        np.ones(inst.n, np.int64),
        requested=inst.size + 1 if requested else None,
        pinned=inst.pinned,
    )


def _policy(name: str, seed: int):
    return get_policy(name, seed=seed) if "seed" in get_policy(name).params() else get_policy(name)


def assert_same(inst: Instance, name: str, rule: str, horizon, seed: int, engine: str) -> None:
    a = simulate(inst, _policy(name, seed), horizon, engine=engine)
    b = simulate(declared_rigid(inst), _policy(name, seed), horizon, backfill=rule, engine=engine)
    where = (name, rule, horizon, seed, engine)
    assert a.start.tolist() == b.start.tolist(), where
    assert a.machine.tolist() == b.machine.tolist(), where
    assert a.psi() == b.psi(), where


def engines(name: str) -> tuple[str, ...]:
    return ("python", "compiled") if name in COMPILED else ("python",)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40, deadline=None)
@given(
    inst=small_instances(max_k=3, max_jobs=9, max_release=6, max_size=5),
    rule=st.sampled_from(RULES),
    horizon=st.one_of(st.none(), st.integers(1, 25)),
    seed=st.integers(0, 2**32 - 1),
)
def test_one_processor_jobs_declared_sequential_or_rigid_agree(name, inst, rule, horizon, seed):
    for engine in engines(name):
        assert_same(inst, name, rule, horizon, seed, engine)


def test_directcontr_frees_machines_in_machine_order_for_rigid_jobs_too():
    """An instance found by a seeded search (1 of 20,000) on which the earlier package's rigid
    loop gave DIRECTCONTR other starts (its machines freed at t = 4 went back in start order,
    the sequential loop's in machine order): [4, 1, 5, 0, 0, 4, 2] against
    [4, 1, 4, 0, 0, 5, 2]."""
    jobs = [(1, 4, 1), (1, 1, 3), (1, 4, 1), (1, 0, 1), (0, 0, 1), (0, 4, 2), (0, 2, 1)]
    inst = make_instance([1, 1], jobs)
    for engine in ("python", "compiled"):
        assert simulate(inst, _policy("directcontr", 0), engine=engine).start.tolist() == [
            4,
            1,
            4,
            0,
            0,
            5,
            2,
        ]
        for seed in range(4):
            assert_same(inst, "directcontr", "easy", None, seed, engine)


def _random_instance(rng: np.random.Generator) -> Instance:
    k = int(rng.integers(1, 4))
    machines = rng.integers(0, 3, size=k).tolist()
    if sum(machines) == 0:
        machines[0] = 1
    n = int(rng.integers(0, 10))
    jobs = [
        (int(rng.integers(0, k)), int(rng.integers(0, 6)), int(rng.integers(1, 5)))
        for _ in range(n)
    ]
    return make_instance(machines, jobs)


@pytest.mark.slow
def test_ten_thousand_random_instances_agree_for_every_policy():
    """10,000 seeded instances (k <= 3, n <= 9), every registered policy, a rule and a horizon
    drawn for each, both engines where the policy compiles."""
    rng = np.random.default_rng(40)
    for _ in range(10_000):
        inst = _random_instance(rng)
        rule = RULES[int(rng.integers(0, len(RULES)))]
        horizon = None if rng.random() < 0.5 else int(rng.integers(1, 25))
        seed = int(rng.integers(0, 2**32))
        for name in NAMES:
            for engine in engines(name):
                assert_same(inst, name, rule, horizon, seed, engine)


@pytest.mark.slow
@pytest.mark.parametrize("engine", ["compiled", "python"])
def test_directcontr_on_a_100k_job_log_agrees(engine):
    """DIRECTCONTR on the first 100,000 one-processor jobs of LPC-EGEE (5 organizations,
    users dealt in turn), declared sequential or rigid: the same schedule and psi (the
    earlier package, f8f5774, gave 14,546 other starts here, in both engines)."""
    from coopsched.workloads.prepare import trace_to_instance
    from coopsched.workloads.swf import read_swf

    tr = read_swf(trace_path("LPC-EGEE-2004-1.2-cln.swf.gz"))
    inst = trace_to_instance(tr, k=5, seed=3)
    keep = np.argsort(inst.release, kind="stable")[:100_000]
    keep.sort()
    inst = Instance(inst.organizations, inst.org[keep], inst.release[keep], inst.size[keep])
    assert inst.n == 100_000
    assert_same(inst, "directcontr", "easy", None, 1, engine)
