"""Grouping invariance (issue 42, item 3): FIFO's schedule of a log does not depend on how its
jobs are grouped into organizations, under the rules that look at the queue in submission
order: ``none`` and ``easy-queue`` (EASY over the whole queue). (Under ``easy`` and
``first-fit``, which consider only each organization's oldest job, it does:
benchmarks/results-grouping.txt.)"""

from __future__ import annotations

import dataclasses

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.policies import get_policy
from coopsched.workloads.instance import Instance, Organization

#: The rules whose FIFO schedule must not depend on the grouping.
INVARIANT_RULES = ("none", "easy-queue", "first-fit-queue")


@st.composite
def logs_and_groupings(draw):
    k = draw(st.integers(1, 6))
    machines = draw(st.lists(st.integers(0, 3), min_size=k, max_size=k))
    if sum(machines) == 0:
        machines[0] = 1
    M = sum(machines)
    n = draw(st.integers(1, 16))
    release = sorted(draw(st.lists(st.integers(0, 20), min_size=n, max_size=n)))
    size = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    width = draw(st.lists(st.integers(1, M), min_size=n, max_size=n))
    extra = draw(st.lists(st.integers(0, 5), min_size=n, max_size=n))
    org = draw(st.lists(st.integers(0, k - 1), min_size=n, max_size=n))
    g = draw(st.integers(1, k))
    to = draw(st.lists(st.integers(0, g - 1), min_size=k, max_size=k))
    inst = Instance(
        [Organization(f"o{u}", m) for u, m in enumerate(machines)],
        np.array(org),
        np.array(release),
        np.array(size),
        np.array(width),
        requested=np.array(size) + np.array(extra),
    )
    return inst, np.array(to), g


def regroup(inst: Instance, to: np.ndarray, g: int) -> Instance:
    """``inst`` with organization ``u`` folded into ``to[u]`` (machines summed; a group
    without an organization gets none)."""
    mach = np.bincount(to, weights=inst.machines, minlength=g).astype(int)
    orgs = [Organization(f"g{i}", int(m)) for i, m in enumerate(mach)]
    return dataclasses.replace(inst, organizations=orgs, org=to[inst.org])


@settings(max_examples=200, deadline=None)
@given(logs_and_groupings())
def test_fifo_starts_do_not_depend_on_the_grouping(case):
    inst, to, g = case
    fifo = get_policy("fifo")
    T = 60
    for rule in INVARIANT_RULES:
        a = fifo.run(inst, T, backfill=rule).start
        b = fifo.run(regroup(inst, to, g), T, backfill=rule).start
        assert a.tolist() == b.tolist(), rule
    seq = dataclasses.replace(inst, processors=None, requested=None)
    assert fifo.run(seq, T).start.tolist() == fifo.run(regroup(seq, to, g), T).start.tolist()


def test_per_organization_easy_depends_on_the_grouping():
    """The papers' rule (backfilling each organization's oldest job) on 2 machines: a wide
    job blocks; its owner's later narrow job backfills only when it is its own organization."""
    inst = Instance(
        [Organization("a", 1), Organization("b", 1)],
        np.array([0, 1, 1]),
        np.array([0, 1, 1]),
        np.array([10, 5, 2]),
        np.array([1, 2, 1]),
        requested=np.array([10, 5, 2]),
    )
    fifo = get_policy("fifo")
    apart = fifo.run(inst, 60, backfill="easy").start.tolist()
    together = fifo.run(regroup(inst, np.array([0, 0]), 1), 60, backfill="easy").start.tolist()
    assert apart == together == [0, 10, 15]  # the narrow job is behind its owner's wide one
    # grouped as its own organization, the narrow job backfills beside the reservation
    own = dataclasses.replace(
        inst, organizations=[*inst.organizations, Organization("c", 0)], org=np.array([0, 1, 2])
    )
    assert fifo.run(own, 60, backfill="easy").start.tolist() == [0, 10, 1]
