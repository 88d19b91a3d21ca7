"""REF's coalition values at checkpoints, from one run, equal separate runs to each time."""

from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.policies.ref import ref_schedule


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
