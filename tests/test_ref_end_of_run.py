"""REF's one end-of-run convention (#40 item 2; docs/conventions.md, REF): with a horizon
every coalition's value is taken at the horizon; without one, at the grand coalition's last
completion, the schedule's end, where ``Schedule.psi`` takes it. Every path REF runs on
gives the same values with and without a horizon: the sequential kernel (int64 and Python
integers) and, for the same jobs declared rigid with one processor each, the lockstep kernel
and the coalition-by-coalition runs in both engines. (Before, the sequential kernel took the
values at the last event of any coalition: another grand-coalition value than the rigid
paths, e.g. 18,896 against 6,896 on a four-organization instance.)"""

from __future__ import annotations

from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from test_one_core import declared_rigid
from test_rigid import rigid_instances

from coopsched.online.ref import ref_schedule
from coopsched.online.ref.rigid import ref_rigid_schedule
from coopsched.online.rigid import BACKFILL, QUEUE_RULES

RULES = BACKFILL


def _engines(rule: str) -> tuple[str, ...]:
    """REF's paths for ``rule``: the lockstep kernel has no easy-queue yet."""
    both = ("compiled", "python")
    return both if rule in QUEUE_RULES else ("lockstep", *both)


def _sum_psi(s) -> int:
    return sum(int(x) for x in s.psi())


@settings(max_examples=60, deadline=None)
@given(
    inst=small_instances(max_k=4, max_jobs=12, max_release=10, max_size=8),
    rule=st.sampled_from(RULES),
    horizon=st.one_of(st.none(), st.integers(1, 40)),
)
def test_every_ref_path_gives_the_same_values(inst, rule, horizon):
    s, values = ref_schedule(inst, horizon)
    _, py_values = ref_schedule(inst, horizon, exact_python=True)
    assert py_values == values
    one = declared_rigid(inst)
    for engine in _engines(rule):
        r, w = ref_rigid_schedule(one, horizon, rule, coalition_runs=True, engine=engine)
        assert w == values, engine
        assert r.start.tolist() == s.start.tolist(), engine
    # the grand coalition's value is its schedule's psi, summed, at the same end
    assert values[-1] == _sum_psi(s)
    if horizon is None and inst.n:
        end = int((s.start + inst.size).max())
        assert ref_schedule(inst, end)[1] == values  # the end is that horizon


@settings(max_examples=40, deadline=None)
@given(inst=rigid_instances(pins=True), rule=st.sampled_from(RULES))
def test_rigid_ref_paths_agree_without_a_horizon(inst, rule):
    runs = [ref_rigid_schedule(inst, None, rule, engine=e) for e in _engines(rule)]
    values = runs[0][1]
    assert all(w == values for _, w in runs)
    assert values[-1] == _sum_psi(runs[0][0])
