"""Skowron & Rzadca Sec. 4: the axioms of a strategy-resilient utility, Theorem 4.1,
Proposition 4.2, and the manipulations (splitting, merging, delaying)."""

import itertools
from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.axioms import (
    UTILITIES,
    check_axioms,
    manipulation_rows,
    neg_flow_time,
    prop42_identity,
    psi_sp,
    theorem41_constants,
    theorem41_form,
    work,
)

jobs_st = st.lists(st.tuples(st.integers(0, 12), st.integers(1, 6)), max_size=6)


def test_psi_sp_satisfies_the_three_axioms():
    assert set(check_axioms(psi_sp, t=6).values()) == {"holds"}
    assert set(check_axioms(psi_sp, t=4, max_jobs=2, max_p=4).values()) == {"holds"}


@pytest.mark.parametrize(
    "K1,K2,K3,ok",
    [
        (lambda t: t, 1, 0, True),  # psi_sp
        (lambda t: 3 * t, 3, 7, True),  # 3 psi_sp + 7
        (lambda t: 2 * t, 1, 0, False),  # K1 != K2 t: a unit part at t-1 is worth more
        (1, lambda t: t, 0, False),  # the constants as printed after Theorem 4.1 (typo)
    ],
)
def test_theorem41_form_meets_the_axioms_iff_K1_is_K2_t(K1, K2, K3, ok):
    res = check_axioms(theorem41_form(K1, K2, K3), t=6)
    assert (set(res.values()) == {"holds"}) == ok
    assert res["3 strategy-resistance"] == "holds"  # every form resists splitting


def test_other_utilities_break_axioms():
    assert check_axioms(work)["1 start times"] != "holds"  # delaying a done job costs 0
    res = check_axioms(neg_flow_time)
    assert all(v != "holds" for v in res.values())
    assert set(UTILITIES) >= {"psi_sp", "-flow time"}


@settings(max_examples=200, deadline=None)
@given(jobs=jobs_st, t=st.integers(1, 15))
def test_theorem41_psi_sp_is_the_form_with_its_own_constants(jobs, t):
    """Theorem 4.1: a utility meeting the axioms is the form with the constants read off
    it; for psi_sp those are K1 = t, K2 = 1, K3 = 0 (the paper prints K1 = 1, K2 = t)."""
    K1, K2, K3 = theorem41_constants(psi_sp, t)
    assert (t, 1, 0) == (K1, K2, K3)
    assert theorem41_form(K1, K2, K3)(jobs, t) == psi_sp(jobs, t)
    scaled = theorem41_form(lambda x: 3 * x, 3, 7)
    assert theorem41_constants(scaled, t) == (3 * t + 0, 3, 7)  # K1 read as psi({(0,1)}) - K3
    assert scaled(jobs, t) == 3 * psi_sp(jobs, t) + 7
    if jobs and t > 2:
        assert theorem41_form(1, t, 0)(jobs, t) != psi_sp(jobs, t) or all(s >= t for s, _ in jobs)


@settings(max_examples=200, deadline=None)
@given(
    jobs=jobs_st,
    s=st.integers(0, 12),
    p1=st.integers(1, 5),
    p2=st.integers(1, 5),
    d=st.integers(0, 6),
    t=st.integers(1, 20),
)
def test_manipulations_never_help_under_psi_sp(jobs, s, p1, p2, d, t):
    merged = psi_sp([*jobs, (s, p1 + p2)], t)
    assert psi_sp([*jobs, (s, p1), (s + p1, p2)], t) == merged  # split / merge: equal
    assert psi_sp([*jobs, (s + d, p1 + p2)], t) <= merged  # delaying never helps


def test_fair_share_is_not_enough_split_example():
    """One job of size 2 has flow time 2; split in two it has 3 (psi_sp unchanged)."""
    assert neg_flow_time([(0, 2)], 4) == -2
    assert neg_flow_time([(0, 1), (1, 1)], 4) == -3
    assert psi_sp([(0, 2)], 4) == psi_sp([(0, 1), (1, 1)], 4) == 7
    rows = {r["manipulation"].split(" ")[0]: r for r in manipulation_rows()}
    split = rows["split"]
    assert split["honest"]["flow"] == 2 and split["manipulated"]["flow"] == 3
    assert split["honest"]["psi_sp"] == split["manipulated"]["psi_sp"]
    for r in manipulation_rows():
        assert r["manipulated"]["psi_sp"] <= r["honest"]["psi_sp"]  # never helps
    assert any(r["manipulated"]["flow"] < r["honest"]["flow"] for r in manipulation_rows())


@settings(max_examples=200, deadline=None)
@given(
    p=st.integers(1, 5),
    jobs=st.lists(st.tuples(st.integers(0, 10), st.integers(0, 10)), min_size=1, max_size=6),
)
def test_prop42_identity(p, jobs):
    """psi_sp = n(pt + (p^2+p)/2) - p sum(r) - p F for equal sizes, all done by t."""
    triples = [(r + w, p, r) for r, w in jobs]  # start = release + wait
    t = max(s for s, _, _ in triples) + p + 3
    a, b = prop42_identity(triples, t)
    assert a == b


def test_prop42_max_psi_sp_iff_min_flow_time():
    """Every order of 5 equal jobs on 2 machines (list schedules): psi_sp is maximal
    exactly on the schedules of minimal total flow time."""
    p, releases, t = 2, [0, 0, 1, 3, 3], 40
    results = []
    for order in itertools.permutations(range(5)):
        free = [0, 0]
        triples = []
        for j in order:
            m = min(range(2), key=lambda i: free[i])
            s = max(free[m], releases[j])
            free[m] = s + p
            triples.append((s, p, releases[j]))
        F = sum(s + p - r for s, p, r in triples)
        results.append((psi_sp(triples, t), F))
    best = max(a for a, _ in results)
    fmin = min(f for _, f in results)
    assert {f for a, f in results if a == best} == {fmin}
    assert {a for a, f in results if f == fmin} == {best}
    assert len({f for _, f in results}) > 1  # the orders do differ


def test_prop42_needs_equal_sizes():
    with pytest.raises(ValueError):
        prop42_identity([(0, 1, 0), (0, 2, 0)], 5)
    # with unequal sizes the two objectives disagree: ordering short-first minimises flow
    # time, psi_sp is the same for both orders on one machine
    short_first = [(0, 1, 0), (1, 3, 0)]
    long_first = [(0, 3, 0), (3, 1, 0)]
    assert psi_sp(short_first, 10) == psi_sp(long_first, 10)
    assert neg_flow_time(short_first, 10) > neg_flow_time(long_first, 10)
    assert Fraction(psi_sp(short_first, 10)) == psi_sp(short_first, 10)


def test_docs_print_the_computed_tables():
    """docs/online.md shows the tables this code computes, not typed ones."""
    from pathlib import Path

    from coopsched.online.axioms import axiom_table, manipulation_table

    doc = (Path(__file__).parents[1] / "docs" / "online.md").read_text()
    assert axiom_table() in doc
    assert manipulation_table() in doc
