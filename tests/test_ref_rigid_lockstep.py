"""REF for rigid jobs in lockstep (coopsched.online.ref.rigid_kernel) against the
coalition-by-coalition path (each coalition in the compiled rigid engine, itself tested
against the Python engine and the brute-force definition in test_rigid.py): identical
schedules, values and checkpoint values, under every rule, with pinned jobs, horizons
and interchangeable organizations, whichever way the lockstep kernel ranks."""

from __future__ import annotations

import contextlib
import time

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st

import coopsched.online.ref.rigid as ref_rigid
from coopsched.online.checker import check_schedule
from coopsched.online.ref.rigid import MAX_K_COALITIONS, MAX_K_RIGID, ref_rigid_schedule
from coopsched.online.rigid import BACKFILL
from coopsched.workloads.instance import Instance, Organization, make_instance

RULES = BACKFILL


@st.composite
def lockstep_instances(draw, max_k: int = 6, max_jobs: int = 24):
    """Rigid instances of up to ``max_k`` organizations: many jobs over few release times
    (queues, reservations, exact ties), widths up to 4 (some too wide for a coalition or
    the platform), requested times around the run times, pinned queue heads, and
    sometimes idle organizations with equal machines (twins)."""
    base = draw(small_instances(max_k, max_jobs, max_release=5, max_size=5))
    k, n = base.k, base.n
    q = np.array(draw(st.lists(st.integers(1, 4), min_size=n, max_size=n)), dtype=np.int64)
    slack = draw(st.lists(st.sampled_from([-2, -1, 0, 0, 1, 3]), min_size=n, max_size=n))
    requested = np.maximum(1, base.size + np.array(slack, dtype=np.int64))
    pinned = None
    if n and draw(st.booleans()):
        # pinned jobs head their organizations' queues: the first jobs of some of them
        pinned = np.zeros(n, bool)
        order = base.fifo_order()
        for u in draw(st.sets(st.integers(0, k - 1))):
            own = order[base.org[order] == u]
            if len(own) and base.release[own[0]] == base.release.min():
                pinned[own[0]] = True
    orgs = list(base.organizations)
    idle = draw(st.lists(st.integers(1, 2), max_size=2))
    orgs += [Organization(f"idle{j}", m) for j, m in enumerate(idle)]
    return Instance(orgs, base.org, base.release, base.size, q, requested=requested, pinned=pinned)


def _same(a, va, b, vb) -> None:
    assert a.start.tolist() == b.start.tolist()
    assert va == vb
    assert a.info.get("checkpoint_values") == b.info.get("checkpoint_values")


@contextlib.contextmanager
def _lockstep(mode: int = 0, pool: int | None = None):
    """The lockstep kernel ranking by ``mode`` (0 the cheaper, 1 Eq. (1), 2 the float
    potential) with pools of ``pool`` entries to start with."""
    old = ref_rigid._LOCKSTEP_MODE, ref_rigid._LOCKSTEP_POOL
    ref_rigid._LOCKSTEP_MODE, ref_rigid._LOCKSTEP_POOL = mode, pool
    try:
        yield
    finally:
        ref_rigid._LOCKSTEP_MODE, ref_rigid._LOCKSTEP_POOL = old


_LOCKSTEP_CASES = {
    "inst": lockstep_instances(),
    "rule": st.sampled_from(RULES),
    "horizon": st.one_of(st.none(), st.integers(1, 30)),
    "cps": st.lists(st.integers(0, 30), max_size=3),
}


@settings(max_examples=25, deadline=None)
@given(**_LOCKSTEP_CASES)
def test_lockstep_equals_coalition_by_coalition_few(inst, rule, horizon, cps):
    """The default set's share of the slow test below (25 examples of its 300)."""
    test_lockstep_equals_coalition_by_coalition.hypothesis.inner_test(inst, rule, horizon, cps)


@pytest.mark.slow
@settings(max_examples=300, deadline=None)
@given(**_LOCKSTEP_CASES)
def test_lockstep_equals_coalition_by_coalition(inst, rule, horizon, cps):
    cps = [c for c in cps if horizon is None or c <= horizon] or None
    a, va = ref_rigid_schedule(inst, horizon, rule, cps, coalition_runs=True, engine="compiled")
    b, vb = ref_rigid_schedule(inst, horizon, rule, cps, coalition_runs=True, engine="lockstep")
    assert a.info["engine"] == "coalitions" and b.info["engine"] == "lockstep"
    _same(a, va, b, vb)
    assert b.info["simulated_coalitions"] == a.info["simulated_coalitions"]
    assert b.info["too_wide"] == a.info["too_wide"]
    assert check_schedule(b) == []


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(
    inst=lockstep_instances(),
    rule=st.sampled_from(RULES),
    horizon=st.one_of(st.none(), st.integers(1, 30)),
    mode=st.sampled_from([1, 2]),
    pool=st.sampled_from([None, 1, 3]),
)
def test_lockstep_ranks_alike_by_eq1_or_the_potential_and_grows_its_pools(
    inst, rule, horizon, mode, pool
):
    """Eq. (1) on exact values everywhere, or the float potential wherever it proves the
    order, give the same schedule; pools of one or three entries grow (the kernel stops
    and resumes) to the same schedule."""
    cps = [c for c in (0, 3) if horizon is None or c <= horizon]
    a, va = ref_rigid_schedule(inst, horizon, rule, cps, coalition_runs=True, engine="compiled")
    with _lockstep(mode, pool):
        b, vb = ref_rigid_schedule(inst, horizon, rule, cps, coalition_runs=True)
    _same(a, va, b, vb)
    assert b.info["engine"] == "lockstep"
    if mode == 1:
        assert b.info["potential_events"] == 0
    if mode == 2 and b.info["rankings"]:
        assert b.info["potential_events"] > 0
    if pool is not None and b.info["entries_peak"] > pool:
        assert b.info["pool_growths"] > 0


def _symmetric(k: int, n_per_org: int, seed: int) -> Instance:
    """``k`` organizations with equal machines whose jobs are alike: many exact ties of
    ``phi - psi`` between distinct non-zero keys, which floats cannot prove."""
    rng = np.random.default_rng(seed)
    jobs = [(u, int(rng.integers(0, 3)), int(rng.integers(2, 6))) for u in range(k)]
    jobs += [
        (int(rng.integers(0, k)), int(rng.integers(0, 12)), int(rng.integers(1, 6)))
        for _ in range(k * n_per_org)
    ]
    base = make_instance([2] * k, sorted(jobs, key=lambda j: j[1]))
    q = rng.integers(1, 4, size=base.n)
    return Instance(
        base.organizations, base.org, base.release, base.size, q, requested=base.size + 1
    )


@pytest.mark.parametrize("rule", RULES)
def test_lockstep_takes_unproven_float_rankings_from_eq1(rule):
    """Interchangeable busy organizations tie exactly: the float potential cannot order
    them, and those rankings come from Eq. (1) on exact values; the schedules stay those
    of the coalition-by-coalition path."""
    inst = _symmetric(5, 3, 1)
    a, va = ref_rigid_schedule(inst, 40, rule, coalition_runs=True, engine="compiled")
    with _lockstep(2):
        b, vb = ref_rigid_schedule(inst, 40, rule, coalition_runs=True)
    _same(a, va, b, vb)
    assert b.info["float_unproven"] > 0


def _wide_k(k: int, seed: int) -> Instance:
    """``k`` busy organizations (every one with jobs, so no twins) on 1 or 2 machines each."""
    rng = np.random.default_rng(seed)
    jobs = [(u, int(rng.integers(0, 4)), int(rng.integers(1, 6))) for u in range(k)]
    jobs += [
        (int(rng.integers(0, k)), int(rng.integers(0, 8)), int(rng.integers(1, 6)))
        for _ in range(k)
    ]
    base = make_instance(rng.integers(1, 3, size=k).tolist(), sorted(jobs, key=lambda j: j[1]))
    q = rng.integers(1, 5, size=base.n)
    requested = np.maximum(1, base.size + rng.integers(-1, 3, size=base.n))
    return Instance(base.organizations, base.org, base.release, base.size, q, requested=requested)


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["easy", "easy-queue"])
def test_lockstep_beyond_the_coalition_limit_equals_the_definition_run_slowly(monkeypatch, rule):
    """k = 13 (above the coalition-by-coalition limit of 12): the lockstep kernel equals the
    coalition-by-coalition path, allowed here for once, under the per-organization and the
    whole-queue EASY."""
    inst = _wide_k(MAX_K_COALITIONS + 1, 5)
    t0 = time.process_time()
    b, vb = ref_rigid_schedule(inst, 20, rule, [5, 10], engine="lockstep")
    assert time.process_time() - t0 < 10
    with pytest.raises(ValueError, match="limit of 12"):
        ref_rigid_schedule(inst, 20, rule, engine="compiled")
    monkeypatch.setattr(ref_rigid, "MAX_K_COALITIONS", MAX_K_COALITIONS + 1)
    a, va = ref_rigid_schedule(inst, 20, rule, [5, 10], engine="compiled")
    _same(a, va, b, vb)
    assert b.info["simulated_coalitions"] == 2**inst.k - 1


def test_lockstep_limit_and_fallback():
    """Beyond MAX_K_RIGID organizations rigid REF is refused; where the lockstep bound fails
    (values that may pass 2^62) ``auto`` runs coalition by coalition, ``lockstep`` refuses."""
    k = MAX_K_RIGID + 1
    base = make_instance([1] * k, [(u, 0, 3) for u in range(k)])
    inst = Instance(base.organizations, base.org, base.release, base.size, np.full(k, 2))
    with pytest.raises(ValueError, match=f"limit of {MAX_K_RIGID}"):
        ref_rigid_schedule(inst, 10, "first-fit")
    big = make_instance([10**4, 10**4], [(0, 0, 10**9), (1, 5, 10**9)])
    huge = Instance(big.organizations, big.org, big.release, big.size, [2, 3])
    with pytest.raises(ValueError, match="2\\^62"):
        ref_rigid_schedule(huge, 10**8, "first-fit", engine="lockstep")
    s, _ = ref_rigid_schedule(huge, 10**8, "first-fit")
    assert s.info["engine"] == "coalitions"


def _backfilling_queue(k: int, seed: int) -> Instance:
    """``k`` organizations on 2 machines each whose wide jobs block and whose later narrow
    ones backfill past their own organization's waiting jobs (easy-queue's gaps)."""
    rng = np.random.default_rng(seed)
    jobs = [
        (int(rng.integers(0, k)), int(rng.integers(0, 6)), int(rng.integers(1, 7)))
        for _ in range(5 * k)
    ]
    base = make_instance([2] * k, sorted(jobs, key=lambda j: j[1]))
    q = rng.choice([1, 1, 2, 3, 2 * k], size=base.n)
    requested = np.maximum(1, base.size + rng.integers(-1, 3, size=base.n))
    return Instance(base.organizations, base.org, base.release, base.size, q, requested=requested)


@pytest.mark.parametrize("horizon", [None, 9])
@pytest.mark.parametrize(
    ("rule", "heads"), [("easy-queue", "easy"), ("first-fit-queue", "first-fit")]
)
def test_the_whole_queue_rules_run_in_lockstep_as_coalition_by_coalition(horizon, rule, heads):
    """easy-queue and first-fit-queue in lockstep: later jobs of a waiting organization
    start first (the kernel's gaps, counted), and the schedule, values and checkpoint
    values are those of REF coalition by coalition (each coalition in the engine's rule)."""
    inst = _backfilling_queue(4, 3)
    a, va = ref_rigid_schedule(inst, horizon, rule, [4], engine="compiled")
    b, vb = ref_rigid_schedule(inst, horizon, rule, [4], engine="lockstep")
    _same(a, va, b, vb)
    assert a.info["engine"] == "coalitions" and b.info["engine"] == "lockstep"
    assert b.info["backfill"] == rule and b.info["later_starts"] > 0
    assert check_schedule(b) == []
    # the per-organization rule is another schedule here (its candidates are queue heads)
    c, _ = ref_rigid_schedule(inst, horizon, heads, [4], engine="lockstep")
    assert c.start.tolist() != b.start.tolist()


def test_the_whole_queue_rule_needs_requested_times_in_lockstep():
    inst = _backfilling_queue(2, 1)
    req = inst.requested.copy()
    req[0] = -1  # unknown
    bad = Instance(inst.organizations, inst.org, inst.release, inst.size, inst.width, requested=req)
    with pytest.raises(ValueError, match="backfill='easy-queue' reads requested times"):
        ref_rigid_schedule(bad, 10, "easy-queue", engine="lockstep")
