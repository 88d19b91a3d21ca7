"""Issue 11, item 2: every policy's reported utilities are exact at any horizon and size.

Every registered policy runs (through its public ``run``) on small instances whose
releases, sizes and horizons are near and past 2^63; what the schedule reports
(``psi``, ``work``, ``flow_time``, ``completed``, the fairness metric against REF) must
equal a pure-Python recomputation from its start times, or the run must be refused with
a clear error. A wrapped int64 (a wrong number) fails.
"""

from __future__ import annotations

import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import psi_job, work_job

from coopsched.online.fairness import fairness
from coopsched.online.policies import POLICIES, get_policy
from coopsched.online.utilities import psi_sp, work_done
from coopsched.workloads.instance import InstanceError, make_instance

BIG = 2**63


def recompute(inst, start, t):
    """psi_sp, work, flow time and completed jobs per organization, in Python ints."""
    k = inst.k
    psi, work, flow, done = [0] * k, [0] * k, [0] * k, [0] * k
    for j in range(inst.n):
        u, s, p, r = int(inst.org[j]), int(start[j]), int(inst.size[j]), int(inst.release[j])
        psi[u] += psi_job(s, p, t)
        work[u] += work_job(s, p, t)
        if s >= 0 and s + p <= t:
            flow[u] += s + p - r
            done[u] += 1
    return psi, work, flow, done


@st.composite
def huge_cases(draw):
    inst = draw(small_instances(max_k=3, max_jobs=6, max_release=6, max_size=6))
    shift = draw(st.sampled_from([0, 2**31, 2**62 - 2**20, 2**62, BIG - 2**40]))
    jobs = []
    for u, r, p in zip(inst.org.tolist(), inst.release.tolist(), inst.size.tolist(), strict=True):
        if draw(st.booleans()):
            p = draw(st.sampled_from([2**32 + p, 2**62 + p, BIG - 1 - 2**41 - p]))
        jobs.append((u, min(r + shift, BIG - 1), p))
    horizon = draw(
        st.sampled_from(
            [None, shift + 10, 2**62 - 1, 2**62 + 7, BIG - 1, BIG + 5, 2**80, 4 * 10**9]
        )
    )
    return make_instance(inst.machines.tolist(), jobs), horizon


def check_valid(inst, start):
    """Starts after releases; each organization's jobs start in FIFO order."""
    order = sorted(range(inst.n), key=lambda j: (int(inst.release[j]), j))
    for u in range(inst.k):
        seq = [int(start[j]) for j in order if int(inst.org[j]) == u]
        ran = [s for s in seq if s >= 0]
        assert seq[: len(ran)] == ran == sorted(ran)
    for j in range(inst.n):
        assert int(start[j]) < 0 or int(start[j]) >= int(inst.release[j])


@settings(max_examples=60, deadline=None)
@given(case=huge_cases())
@pytest.mark.filterwarnings("ignore:REF. values may exceed")
def test_every_policy_reports_exact_utilities_at_huge_times(case):
    inst, horizon = case
    runs = {}
    for name in sorted(POLICIES):
        try:
            s = get_policy(name).run(inst, horizon)
        except (InstanceError, ValueError) as err:  # a clear refusal is allowed
            assert str(err)
            continue
        runs[name] = s
        check_valid(inst, s.start)
        t = s._at(None)
        if horizon is not None:
            assert t == horizon
        psi, work, flow, done = recompute(inst, s.start.tolist(), t)
        assert s.psi() == psi, name
        assert s.work() == work, name
        assert s.flow_time() == flow, name
        assert s.completed() == done, name
        assert sum(psi) == s.value()
    if "ref" in runs and horizon is not None:
        ref = runs["ref"]
        psi_ref, work_ref, _, _ = recompute(inst, ref.start.tolist(), horizon)
        for s in runs.values():
            f = fairness(s, ref, horizon)
            psi, _, _, _ = recompute(inst, s.start.tolist(), horizon)
            assert f.dpsi == sum(abs(a - b) for a, b in zip(psi, psi_ref, strict=True))
            assert f.p_tot == sum(work_ref)


@pytest.mark.parametrize("t", [0, 5, 2**31, 2**62 - 1, 2**62, BIG - 1, BIG, 2**70])
def test_utilities_switch_to_python_integers_before_overflow(t):
    """Terms past 2^63 (a running job's q (t - s)) are summed exactly, never wrapped."""
    import numpy as np

    org = np.array([0, 0, 1], dtype=np.int64)
    start = np.array([0, 1, 0], dtype=np.int64)
    size = np.array([BIG - 1, 3, 2**62], dtype=np.int64)
    expect_psi = [psi_job(0, BIG - 1, t) + psi_job(1, 3, t), psi_job(0, 2**62, t)]
    expect_work = [work_job(0, BIG - 1, t) + work_job(1, 3, t), work_job(0, 2**62, t)]
    assert psi_sp(org, start, size, t, 2) == expect_psi
    assert work_done(org, start, size, t, 2) == expect_work


# ------------------------------------------------------------------ ValueCurve (RAND's values)


@st.composite
def curve_cases(draw):
    """Started jobs (with ties) shifted towards 2^63, and evaluation times around them."""
    n = draw(st.integers(0, 12))
    shift = draw(st.sampled_from([0, 2**31, 2**62 - 2**20, 2**62, BIG - 2**40, BIG + 9]))
    jobs = []
    for _ in range(n):
        s = shift + draw(st.integers(0, 8))
        p = draw(st.one_of(st.integers(1, 6), st.sampled_from([2**32, 2**62 + 1, BIG - 2**41])))
        jobs.append((s, p))
    times = draw(
        st.lists(
            st.one_of(
                st.integers(0, 20).map(lambda d: shift + d),
                st.sampled_from([0, 2**32, 2**62, BIG - 1, BIG, BIG + 2**40, 2**64 + 3, 2**80]),
            ),
            min_size=1,
            max_size=6,
        )
    )
    return jobs, times


def _arrays(jobs):
    import numpy as np

    wide = any(s + p >= BIG or s >= BIG for s, p in jobs)
    dt = object if wide else np.int64
    return (
        np.array([s for s, _ in jobs], dtype=dt).reshape(-1),
        np.array([p for _, p in jobs], dtype=dt).reshape(-1),
    )


@settings(max_examples=300, deadline=None)
@given(case=curve_cases())
def test_value_curve_is_exact_near_and_past_2_63(case):
    """The modular evaluation (uint64 prefix sums, exact while the value bound is below
    2^64) and the Python-integer last resort give the pure-Python values, at any time."""
    from coopsched.online.utilities import ValueCurve

    jobs, times = case
    start, size = _arrays(jobs)
    curve = ValueCurve(start, size)
    for t in times:
        assert curve.psi(t) == sum(psi_job(s, p, t) for s, p in jobs), t
        assert curve.work(t) == sum(work_job(s, p, t) for s, p in jobs), t


def test_value_curve_wraps_internally_but_answers_exactly():
    """Prefix sums of a month of starts wrap past 2^64 (the case that used to need object
    arrays) while psi stays small: int64 storage, exact answers, no Python integers."""
    import numpy as np

    from coopsched.online.utilities import ValueCurve

    rng = np.random.default_rng(5)
    n = 4000
    start = np.sort(rng.integers(2**40, 2**40 + 10**6, n))
    size = rng.integers(1, 10**5, n)
    curve = ValueCurve(start, size)
    assert not curve.python_ints and curve._D2.dtype == np.uint64
    # the true D2 (sum x(x-1)/2 over starts) is far past 2^64: the sums did wrap
    assert sum(int(x) * (int(x) - 1) // 2 for x in start[:100]) > 2**64
    for t in (2**40, 2**40 + 5 * 10**5, 2**40 + 2 * 10**6):
        ps = sum(psi_job(int(s), int(p), t) for s, p in zip(start, size, strict=True))
        assert curve.psi(t) == ps
        assert curve.work(t) == sum(
            work_job(int(s), int(p), t) for s, p in zip(start, size, strict=True)
        )
    assert not curve.python_ints


def test_value_curve_values_past_2_64_use_python_integers_and_say_so():
    """When psi itself may pass 2^64 the bound check refuses the residue: exact integers."""
    import numpy as np

    from coopsched.online.utilities import ValueCurve

    start = np.array([0, 0, 3], dtype=np.int64)
    size = np.array([2**40, 2**40, 7], dtype=np.int64)
    curve = ValueCurve(start, size)
    t = 2**38
    assert curve.psi(t) == sum(
        psi_job(s, p, t) for s, p in zip([0, 0, 3], [2**40, 2**40, 7], strict=True)
    )
    assert curve.psi(t) > 2**64 and curve.python_ints
