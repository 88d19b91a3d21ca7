"""REF's coalition values at checkpoints, from one run, equal separate runs to each time."""

import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pinned import pinned_instances

from coopsched.online.ref import ref_schedule
from coopsched.workloads.instance import make_instance


@settings(max_examples=60, deadline=None)
@given(
    inst=small_instances(max_k=3, max_jobs=10),
    T=st.integers(1, 25),
    data=st.data(),
    utility=st.sampled_from(["psi_sp", "work"]),
)
def test_checkpoint_values_equal_runs_to_each_time(inst, T, data, utility):
    cps = data.draw(st.lists(st.integers(0, T), max_size=5))
    s, v = ref_schedule(inst, T, utility=utility, checkpoints=cps)
    got = dict(zip(s.info.get("checkpoints", []), s.info.get("checkpoint_values", []), strict=True))
    assert sorted(got) == sorted(set(cps))
    for c in set(cps):
        _, vc = ref_schedule(inst, c, utility=utility) if c > 0 else (None, [0] * (1 << inst.k))
        assert got[c] == vc
    if T in got:
        assert got[T] == v


@settings(max_examples=30, deadline=None)
@given(
    inst=pinned_instances(max_k=3, max_jobs=8, max_release=5, max_size=5),
    T=st.integers(1, 15),
    data=st.data(),
)
def test_checkpoints_with_pinned_jobs_and_python_integers(inst, T, data):
    """With pinned jobs, checkpoint values equal separate runs to each time, in the
    compiled kernel and on Python integers."""
    cps = data.draw(st.lists(st.integers(0, T), min_size=1, max_size=4))
    s, _ = ref_schedule(inst, T, checkpoints=cps)
    p, _ = ref_schedule(inst, T, checkpoints=cps, exact_python=True)
    assert s.info["checkpoint_values"] == p.info["checkpoint_values"]
    for c, row in zip(s.info["checkpoints"], s.info["checkpoint_values"], strict=True):
        _, vc = ref_schedule(inst, c) if c > 0 else (None, [0] * (1 << inst.k))
        assert row == vc


def test_checkpoints_far_beyond_the_last_event_are_exact():
    """Values at checkpoints past 2^63 (long after the last event) come in Python
    integers from the final records; the kernel itself stays int64."""
    inst = make_instance([1, 1], [(0, 0, 5), (1, 0, 3), (0, 2, 4), (1, 3, 2)])
    T = 2**62 + 7
    cps = [0, 2, 4, 9, 10**6, 2**40, T]
    s, v = ref_schedule(inst, T, checkpoints=cps)
    assert not s.info["python_integers"]
    rows = dict(zip(s.info["checkpoints"], s.info["checkpoint_values"], strict=True))
    assert rows[T] == v and max(v) > 2**63
    for c in cps[1:]:
        _, vc = ref_schedule(inst, c)
        assert rows[c] == vc
        assert rows[c][3] == sum(s.psi(c))
    p, _ = ref_schedule(inst, T, checkpoints=cps, exact_python=True)
    assert p.info["checkpoint_values"] == s.info["checkpoint_values"]


def test_checkpoints_are_checked():
    inst = make_instance([1], [(0, 0, 3)])
    with pytest.raises(ValueError, match="horizon"):
        ref_schedule(inst, checkpoints=[1])
    with pytest.raises(ValueError, match=r"\[0, horizon"):
        ref_schedule(inst, 5, checkpoints=[6])
    with pytest.raises(ValueError, match=r"\[0, horizon"):
        ref_schedule(inst, 5, checkpoints=[-1])
