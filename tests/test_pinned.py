"""Pinned jobs (running when an audited window opens, CONVENTIONS 5) in every engine."""

import dataclasses

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import brute_ref

from coopsched.online.checker import check_schedule
from coopsched.online.policies import get_policy, names
from coopsched.online.ref import ref_schedule
from coopsched.workloads.instance import InstanceError, make_instance


@st.composite
def pinned_instances(draw, **kw):
    """A small instance where some jobs released at 0 are pinned (each org's first ones)."""
    inst = draw(small_instances(**kw))
    pinned = np.zeros(inst.n, dtype=bool)
    order = inst.fifo_order()
    free_seen = set()
    for j in order:
        u = int(inst.org[j])
        if inst.release[j] == 0 and u not in free_seen and draw(st.booleans()):
            pinned[j] = True
        else:
            free_seen.add(u)
    return dataclasses.replace(inst, pinned=pinned)


@settings(max_examples=80, deadline=None)
@given(inst=pinned_instances(max_k=3, max_jobs=8, max_release=5, max_size=5), T=st.integers(1, 10))
def test_ref_with_pinned_jobs_matches_brute_force(inst, T):
    s, values = ref_schedule(inst, T)
    bs, bm, bv = brute_ref(inst, T)
    assert s.start.tolist() == bs
    assert s.machine.tolist() == bm
    assert values == [bv[C] for C in range(1 << inst.k)]
    assert check_schedule(s) == []


@settings(max_examples=40, deadline=None)
@given(inst=pinned_instances(max_k=3, max_jobs=10), T=st.integers(1, 20))
def test_every_policy_starts_pinned_jobs_first(inst, T):
    for name in names():
        sched = get_policy(name).run(inst, T)
        assert check_schedule(sched) == [], name
        if inst.k > 1:
            sub = get_policy(name).run(inst, T, members=[0])
            assert check_schedule(sub) == [], name


def test_checker_catches_an_unpinned_job_overtaking_a_pinned_one():
    inst = make_instance([1, 1], [(0, 0, 5), (1, 0, 3)])
    inst = dataclasses.replace(inst, pinned=np.array([False, True]))
    from coopsched.online.schedule import Schedule

    bad = Schedule(inst, np.array([0, 5]), np.array([0, 1]), "x")
    # machine 1 is free, so the greedy rule is also broken; the pinned rule names it
    assert any(v.rule == "pinned" for v in check_schedule(bad))
    one = dataclasses.replace(make_instance([1], [(0, 0, 5), (0, 0, 3)]), pinned=None)
    ok = dataclasses.replace(one, pinned=np.array([True, False]))
    good = get_policy("fifo").run(ok, 10)
    assert good.start.tolist() == [0, 5]


def test_pinned_jobs_beat_the_policy_in_every_coalition():
    # org 1's pinned job would lose on FIFO (org 0's job is first in input order)
    inst = make_instance([1, 0], [(0, 0, 4), (1, 0, 4)])
    pin = dataclasses.replace(inst, pinned=np.array([False, True]))
    for name in ("fifo", "ref", "fairshare", "roundrobin"):
        assert get_policy(name).run(pin, 10).start.tolist() == [4, 0], name


def test_a_pinned_job_behind_an_unpinned_one_is_rejected():
    inst = make_instance([1], [(0, 0, 4), (0, 1, 4)])
    with pytest.raises(InstanceError, match="pinned"):
        dataclasses.replace(inst, pinned=np.array([False, True]))


@settings(max_examples=60, deadline=None)
@given(
    inst=pinned_instances(max_k=3, max_jobs=8, max_release=5, max_size=5),
    T=st.integers(1, 10),
    utility=st.sampled_from(["psi_sp", "work"]),
    method=st.sampled_from(["direct", "potential", "float"]),
)
def test_ref_pinned_jobs_in_every_kernel_path(inst, T, utility, method):
    """Pinned starts are the same whichever way the Shapley values are computed, and on
    the exact Python-integer path (the same kernel run as Python)."""
    s, values = ref_schedule(inst, T, utility=utility, shapley=method)
    bs, bm, bv = brute_ref(inst, T, utility)
    assert s.start.tolist() == bs
    assert s.machine.tolist() == bm
    assert values == [bv[C] for C in range(1 << inst.k)]
    p, vp = ref_schedule(inst, T, utility=utility, shapley=method, exact_python=True)
    assert p.info["python_integers"]
    assert p.start.tolist() == bs and vp == values


@settings(max_examples=30, deadline=None)
@given(
    inst=pinned_instances(max_k=3, max_jobs=8, max_release=5, max_size=5),
    T=st.integers(1, 10),
    shift=st.sampled_from([2**62 - 3, 2**63 - 64]),
)
def test_ref_pinned_jobs_near_2_63(inst, T, shift):
    """Released ``shift`` later (up to 2^63), pinned jobs still start first: starts shift,
    values stay (the two-word kernel with pinned starts)."""
    later = make_instance(
        inst.machines.tolist(),
        [(u, r + shift, p) for u, r, p in zip(inst.org, inst.release, inst.size, strict=True)],
    )
    later = dataclasses.replace(later, pinned=inst.pinned)
    s, values = ref_schedule(later, shift + T)
    bs, _, bv = brute_ref(inst, T)
    assert s.start.tolist() == [x + shift if x >= 0 else -1 for x in bs]
    assert values == [bv[C] for C in range(1 << inst.k)]
