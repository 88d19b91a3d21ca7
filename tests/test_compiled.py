"""The compiled engine gives the Python engine's schedules, start by start and machine by machine."""

import dataclasses
import random
import subprocess
import sys
import warnings

import numpy as np
import pytest
from conftest import small_instances
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import psi_job

from coopsched.online.backends import compiled_names
from coopsched.online.compiled import CompiledFallback, int64_bounds, mt_state, randbelow
from coopsched.online.engine import simulate
from coopsched.online.kernels import group_order, sort_row
from coopsched.online.policies import get_policy
from coopsched.online.policies.baselines import Fifo
from coopsched.online.policies.rand import Rand
from coopsched.workloads.instance import make_instance

# every policy of the declared table except RAND, which needs prepare() (tested below)
KERNELS = [name for name in compiled_names() if name != "rand"]


def both(inst, policy, horizon=None, members=None, **params):
    a = simulate(inst, get_policy(policy, **params), horizon, members, compiled=False)
    b = simulate(inst, get_policy(policy, **params), horizon, members, compiled=True)
    assert a.info["engine"] == "python" and b.info["engine"] == "compiled"
    return a, b


def same(a, b):
    assert a.start.tolist() == b.start.tolist()
    assert a.machine.tolist() == b.machine.tolist()


# ties are the point: few release times, few sizes, many jobs per time
tied = small_instances(max_k=5, max_jobs=30, max_release=4, max_size=4)


@settings(max_examples=150, deadline=None)
@given(
    inst=tied,
    policy=st.sampled_from(KERNELS),
    horizon=st.one_of(st.none(), st.integers(1, 25)),
    seed=st.integers(0, 2**40),
    data=st.data(),
)
def test_compiled_equals_python(inst, policy, horizon, seed, data):
    members = data.draw(st.one_of(st.none(), st.sets(st.integers(0, inst.k - 1), min_size=1)))
    a, b = both(inst, policy, horizon, members, seed=seed)
    same(a, b)


@settings(max_examples=80, deadline=None)
@given(
    inst=small_instances(max_k=5, max_jobs=40, max_release=6, max_size=6),
    horizon=st.one_of(st.none(), st.integers(1, 30)),
    n=st.integers(1, 20),
    seed=st.integers(0, 1000),
    sub_policy=st.sampled_from(["fifo", "fifo", "roundrobin"]),
    data=st.data(),
)
def test_compiled_rand_equals_python(inst, horizon, n, seed, sub_policy, data):
    """RAND's grand coalition, also inside a coalition (``members``: its sub-instance);
    FIFO coalitions are scheduled inside the kernel, others are handed to it."""
    members = data.draw(st.sets(st.integers(0, inst.k - 1), min_size=1))
    sub = inst.restrict(members)
    runs = []
    for flag in (False, True):
        pol = Rand(n_samples=n, seed=seed, sub_policy=sub_policy)
        pol.prepare(sub, horizon)
        runs.append(simulate(sub, pol, horizon, compiled=flag))
    same(*runs)
    assert runs[1].info["engine"] == "compiled"


@st.composite
def pinned_anywhere(draw, **kw):
    """An instance with pinned jobs released at any time: each organization's first jobs in
    submission order may be pinned (the condition :meth:`Instance.validate` checks), so
    pinned starts overtake other organizations' older jobs, and FIFO's queue has holes."""
    inst = draw(small_instances(**kw))
    pinned = np.zeros(inst.n, dtype=bool)
    free_seen: set[int] = set()
    for j in inst.fifo_order():
        u = int(inst.org[j])
        if u not in free_seen and draw(st.booleans()):
            pinned[j] = True
        else:
            free_seen.add(u)
    return dataclasses.replace(inst, pinned=pinned)


@settings(max_examples=200, deadline=None)
@given(
    inst=pinned_anywhere(max_k=5, max_jobs=30, max_release=4, max_size=4),
    policy=st.sampled_from(KERNELS),
    horizon=st.one_of(st.none(), st.integers(1, 25)),
    seed=st.integers(0, 2**40),
    data=st.data(),
)
def test_compiled_equals_python_with_pinned_jobs(inst, policy, horizon, seed, data):
    """Pinned jobs (an audited window's backlog) start first in both engines, identically."""
    members = data.draw(st.one_of(st.none(), st.sets(st.integers(0, inst.k - 1), min_size=1)))
    a, b = both(inst, policy, horizon, members, seed=seed)
    same(a, b)


@settings(max_examples=80, deadline=None)
@given(
    inst=pinned_anywhere(max_k=5, max_jobs=40, max_release=6, max_size=6),
    horizon=st.one_of(st.none(), st.integers(1, 30)),
    n=st.integers(1, 20),
    seed=st.integers(0, 1000),
    sub_policy=st.sampled_from(["fifo", "roundrobin"]),
)
def test_compiled_rand_equals_python_with_pinned_jobs(inst, horizon, n, seed, sub_policy):
    runs = []
    for flag in (False, True):
        pol = Rand(n_samples=n, seed=seed, sub_policy=sub_policy)
        pol.prepare(inst, horizon)
        runs.append(simulate(inst, pol, horizon, compiled=flag))
    same(*runs)
    assert runs[1].info["engine"] == "compiled"


def test_pinned_jobs_no_longer_force_the_python_engine():
    """A large instance with pinned jobs runs compiled by default (no fallback, no warning)."""
    inst = make_instance([2, 1], [(0, 0, 5), (1, 0, 7), (0, 1, 2), (1, 3, 1)])
    inst = dataclasses.replace(inst, pinned=np.array([False, True, False, False]))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p in KERNELS:
            s = simulate(inst, get_policy(p), compiled=True)
            assert s.info["engine"] == "compiled" and "fallback" not in s.info
            assert s.start[1] == 0


def test_compiled_rand_through_run_is_the_default():
    rng = np.random.default_rng(7)
    jobs = [
        (int(rng.integers(0, 5)), int(rng.integers(0, 60)), int(rng.integers(1, 30)))
        for _ in range(300)
    ]
    inst = make_instance([2, 1, 3, 1, 1], jobs)
    s = Rand(n_samples=15, seed=3).run(inst, 120)
    assert s.info["engine"] == "compiled"
    pol = Rand(n_samples=15, seed=3)
    pol.prepare(inst, 120)
    same(s, simulate(inst, pol, 120, compiled=False))


@settings(max_examples=40, deadline=None)
@given(inst=tied, seed=st.integers(0, 100), t=st.integers(0, 40))
def test_directcontr_state_after_compiled_run(inst, seed, t):
    """The compiled run leaves DIRECTCONTR's contribution estimates as the Python run does."""
    pa, pb = get_policy("directcontr", seed=seed), get_policy("directcontr", seed=seed)
    same(simulate(inst, pa, compiled=False), simulate(inst, pb, compiled=True))
    assert [pa.phi(v, t) for v in range(inst.k)] == [pb.phi(v, t) for v in range(inst.k)]


def test_roundrobin_state_after_compiled_run():
    inst = make_instance([1, 1, 1], [(0, 0, 1), (2, 0, 1), (1, 3, 1)])
    pa, pb = get_policy("roundrobin"), get_policy("roundrobin")
    simulate(inst, pa, compiled=False)
    simulate(inst, pb, compiled=True)
    # the canonical order is O0, O2 (first jobs at release 0), O1: O1, served last, is at 2
    assert inst.canonical_order().tolist() == [0, 2, 1]
    assert pa._last == pb._last == 2


@pytest.mark.parametrize("seed", [0, 1, 12345, -7, 2**70])
def test_randbelow_continues_pythons_stream(seed):
    """The kernel's draws are ``random.Random(seed).randrange(n)``, n of every bit length."""
    mt = mt_state(seed)
    ref = random.Random(seed)
    ns = [1, 2, 3, 5, 64, 65, 70, 1000, 8192, 2**31 - 1, 2**32 - 1] * 80
    assert [randbelow(mt, n) for n in ns] == [ref.randrange(n) for n in ns]


def test_user_subclass_runs_in_python():
    class Newest(Fifo):
        name = "newest"

        def select(self, view):
            c = view.candidates()
            return max(c, key=view.head_position)

    inst = make_instance([1], [(0, 0, 2), (0, 0, 2)])
    s = simulate(inst, Newest())
    assert s.info["engine"] == "python"
    with pytest.raises(ValueError, match="no compiled rule"):
        simulate(inst, Newest(), compiled=True)


@pytest.mark.parametrize(
    "policy,size",
    [("fifo", 2**60), ("fairshare", 2**60), ("utfairshare", 2**31), ("directcontr", 2**31)],
)
def test_no_silent_int64_wrap_falls_back_to_python(policy, size):
    """Sizes beyond int64's reach: the exact Python path runs, and says so."""
    inst = make_instance([2, 1], [(0, 0, size), (1, 0, size), (0, 1, 3), (1, 5, size)])
    with pytest.warns(CompiledFallback, match="not exact"):
        s = simulate(inst, get_policy(policy), compiled=True)
    assert s.info["engine"] == "python" and "fallback" in s.info
    same(s, simulate(inst, get_policy(policy), compiled=False))


def test_fallback_message_names_the_job_that_causes_it():
    """The reason given for the fallback names the largest job, which is what pushes the
    completion times beyond int64's reach, not only the event times."""
    inst = make_instance([2, 1], [(0, 0, 2**60), (1, 3, 5)])
    with pytest.warns(CompiledFallback, match=f"largest job {2**60} s"):
        s = simulate(inst, get_policy("fifo"), compiled=True)
    assert "last release 3 s" in s.info["fallback"]


def test_small_sizes_stay_compiled():
    inst = make_instance([2, 1], [(0, 0, 5), (1, 0, 7)])
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for p in KERNELS:
            assert simulate(inst, get_policy(p), compiled=True).info["engine"] == "compiled"


def test_default_engine_small_cold_python_then_warm_compiled():
    """By default a small instance runs in Python until a numba kernel has been loaded
    (a short command never pays numba's start-up), then compiled."""
    code = (
        "from coopsched.online.engine import simulate\n"
        "from coopsched.online.policies import get_policy\n"
        "from coopsched.workloads.instance import make_instance\n"
        "inst = make_instance([1, 1], [(0, 0, 2), (1, 0, 3)])\n"
        "a = simulate(inst, get_policy('fifo')).info['engine']\n"
        "simulate(inst, get_policy('fifo'), compiled=True)\n"
        "b = simulate(inst, get_policy('fifo')).info['engine']\n"
        "print(a, b)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["python", "compiled"]


@settings(max_examples=100, deadline=None)
@given(inst=tied, policy=st.sampled_from(KERNELS), data=st.data())
def test_int64_bound_bounds_every_event(inst, policy, data):
    """The greedy bound t_end >= every completion, and psi_sp <= Mc * t_end^2 / 2."""
    members = data.draw(st.sets(st.integers(0, inst.k - 1), min_size=1))
    s = simulate(inst, get_policy(policy), members=members)
    keep = s.in_coalition
    Mc = int(inst.machines[sorted(members)].sum())
    if not keep.any() or Mc == 0:
        return
    rel, size = inst.release[keep], inst.size[keep]
    t_end = int(rel.max()) + -(-int(size.sum()) // Mc) + int(size.max())
    assert (s.start[keep] + size).max() <= t_end
    assert sum(s.psi(t_end)) <= Mc * t_end * (t_end + 1) // 2
    assert int64_bounds(policy, rel, size, inst.total_machines, Mc, 3, None) is None


@settings(max_examples=50, deadline=None)
@given(inst=tied, horizon=st.one_of(st.none(), st.integers(1, 25)))
def test_fifo_starts_python_fallback_agrees(inst, horizon):
    """The exact Python version of fifo_starts (used when int64 could wrap) is the kernel's."""
    from coopsched.online.kernels import _fifo_python, fifo_starts

    order = inst.fifo_order()
    r, p, m = inst.release[order], inst.size[order], inst.total_machines
    if inst.n == 0:
        return
    fast = fifo_starts(r, p, m, horizon)
    assert _fifo_python(r, p, m, horizon).tolist() == fast.tolist()


def test_rand_with_huge_sizes_is_exact():
    """Sizes near 2^62: RAND's coalitions and grand coalition run with Python integers."""
    big = 2**62
    inst = make_instance([1, 1, 1], [(0, 0, big), (1, 0, big), (2, 0, 3), (0, 1, 2), (1, 2, 5)])
    with pytest.warns(CompiledFallback):
        s = Rand(n_samples=4, seed=1).run(inst, 50)
    assert s.info["engine"] == "python"
    pol = Rand(n_samples=4, seed=1)
    pol.prepare(inst, 50)
    same(s, simulate(inst, pol, 50, compiled=False))
    assert (s.start >= 0).all()  # three machines free at 0, the rest start by t = 3
    psi = [0, 0, 0]
    for j in range(inst.n):
        psi[inst.org[j]] += psi_job(int(s.start[j]), int(inst.size[j]), 50)
    assert s.psi(50) == psi and max(psi) > 2**10


@settings(max_examples=100, deadline=None)
@given(
    inst=small_instances(max_k=3, max_jobs=40, max_release=8, max_size=6),
    horizon=st.one_of(st.none(), st.integers(1, 25)),
    m=st.integers(1, 5),
)
def test_fifo_events_are_the_step_events_of_fifo_starts(inst, horizon, m):
    """RAND's coalitions: the running count's merged events straight from the FIFO loop."""
    from coopsched.online.kernels import fifo_events, fifo_starts
    from coopsched.online.utilities import step_events

    order = inst.fifo_order()
    r, p = inst.release[order], inst.size[order]
    s = fifo_starts(r, p, m, horizon)
    times, delta = step_events(s[s >= 0], p[s >= 0])
    out_t = np.full(2 * inst.n + 1, -7, dtype=np.int64)
    out_d = np.zeros(2 * inst.n + 1, dtype=np.int32)
    count, started = fifo_events(r, p, m, horizon, out_t, out_d)
    assert out_t[:count].tolist() == times.tolist()
    assert out_d[:count].tolist() == delta.tolist()
    assert started == int((s >= 0).sum()) and (s[:started] >= 0).all()
    assert (out_t[count:] == -7).all()


@settings(max_examples=300, deadline=None)
@given(
    a=st.one_of(st.integers(0, 2**62 - 1), st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**62 - 1])),
    c=st.one_of(st.integers(0, 2**62 - 1), st.sampled_from([0, 1, 2**31 - 1, 2**31, 2**62 - 1])),
    b=st.one_of(st.integers(0, 2**31 - 1), st.sampled_from([0, 1, 2**31 - 1])),
    d=st.one_of(st.integers(0, 2**31 - 1), st.sampled_from([0, 1, 2**31 - 1])),
)
def test_two_word_product_comparison(a, b, c, d):
    """The fair shares' ``num * machines`` comparisons past int64, exactly."""
    from coopsched.online.compiled import _mul_lt

    assert _mul_lt(np.int64(a), np.int64(b), np.int64(c), np.int64(d)) == (a * b < c * d)
    assert _mul_lt(np.int64(a), np.int64(b), np.int64(a), np.int64(b)) is False


def test_fair_share_with_products_past_int64_stays_compiled():
    """A month of seconds on thousands of machines: psi_sp * machines passes 2^63 but each
    factor fits, so UTFAIRSHARE and FAIRSHARE run compiled, as in Python."""
    rng = np.random.default_rng(3)
    jobs = [
        (
            int(rng.integers(0, 3)),
            int(rng.integers(0, 100_000)),
            int(rng.integers(10**6, 3 * 10**6)),
        )
        for _ in range(6000)
    ]
    inst = make_instance([3000, 2000, 3192], jobs)
    for p in ("utfairshare", "fairshare", "currfairshare"):
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            a, b = both(inst, p, 2_600_000)
        same(a, b)
    assert max(a.psi(2_600_000)) * 3192 > 2**63  # the products did pass int64


@settings(max_examples=300, deadline=None)
@given(
    keys=st.lists(st.integers(0, 2**20), min_size=0, max_size=400)
    | st.lists(st.integers(0, 2**20), min_size=33, max_size=400),
    small=st.booleans(),
    lo=st.integers(0, 5),
    pad=st.integers(0, 5),
)
def test_sort_row_sorts_the_segment_and_nothing_else(keys, small, lo, pad):
    """The engine's in-place sort of the machines freed at one time (insertion sort up to
    32 keys, an LSD radix sort through two scratch rows beyond, its digits as wide as the
    rows allow) against numpy's; only the segment and the scratch rows change."""
    if small:
        keys = [x % 40 for x in keys]
    h = np.full((6, lo + len(keys) + pad), 7, dtype=np.int64)
    h[1, lo : lo + len(keys)] = keys
    want = h.copy()
    want[1, lo : lo + len(keys)] = np.sort(keys)
    sort_row(h, 1, lo, lo + len(keys), 3)  # scratch rows 3 and 4
    assert (h[:3] == want[:3]).all() and (h[5:] == want[5:]).all()


@settings(max_examples=200, deadline=None)
@given(keys=st.lists(st.integers(0, 6), max_size=200), extra=st.integers(0, 3))
def test_group_order_is_a_stable_sort_by_key(keys, extra):
    """The engine's queues: positions grouped by key, each group in increasing position,
    against numpy's stable argsort; the bounds are the groups' cumulative counts."""
    k = 7 + extra
    a = np.array(keys, dtype=np.int64)
    order, ptr = group_order(a, k)
    assert order.tolist() == np.argsort(a, kind="stable").tolist()
    assert ptr.tolist() == [0, *np.cumsum(np.bincount(a, minlength=k)).tolist()]
