"""Rigid REF acts at events; the paper's Fig. 1 at every time moment (issue 45 item 2;
docs/conventions.md, "REF between events").

The exact reading is ``tests/reference.py``'s ``brute_ref_rigid(every_moment=True)``: every
coalition, every time moment, Eq. (1) with Fractions, the backfilling rules written out
from the docs. The package's REF (``ref_rigid_schedule``) lets a coalition act only at its
events (releases of its members' jobs, completions in its schedule). These tests show
where the two coincide (sequential jobs, ``first-fit``, ``first-fit-queue``), that they do not coincide under
``none`` and EASY (a worked example and the frequency on random instances), and check
``benchmarks/ref_between_events.py``'s simulation of both readings, which measures the
difference on windows of the logs, against the brute force and the package.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from reference import brute_ref_rigid
from test_rigid import RULES, rigid_instances

from coopsched.online.ref.rigid import ref_rigid_schedule
from coopsched.workloads.instance import Instance, make_instance

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))

from ref_between_events import ref_rigid_moments  # noqa: E402

#: Two organizations with two machines each. O0 releases at 1 a job of size 2 on 3
#: processors, then one of size 1 on 2; O1 releases at 1 a job of size 1 on 1 processor.
OVERTAKEN = Instance(
    make_instance([2, 2], [(0, 1, 2), (1, 1, 1), (0, 1, 1)]).organizations,
    np.array([0, 1, 0]),
    np.array([1, 1, 1]),
    np.array([2, 1, 1]),
    np.array([3, 1, 2]),
    requested=np.array([2, 1, 1]),
)


def _random_rigid(rng: np.random.Generator) -> Instance:
    """A small random rigid instance: 1 to 4 organizations with 0 to 3 machines each, up to
    14 jobs released in 0..4, sizes and widths 1 to 4, requested times the size minus 1
    to plus 2 (at least 1)."""
    k = int(rng.integers(1, 5))
    machines = [int(x) for x in rng.integers(0, 4, size=k)]
    machines[0] = max(machines[0], 1) if sum(machines) == 0 else machines[0]
    n = int(rng.integers(0, 15))
    jobs = [
        (int(rng.integers(0, k)), int(rng.integers(0, 5)), int(rng.integers(1, 5)))
        for _ in range(n)
    ]
    base = make_instance(machines, jobs)
    width = rng.integers(1, 5, size=n).astype(np.int64)
    requested = np.maximum(1, base.size + rng.choice([-1, 0, 0, 0, 1, 2], size=n))
    return Instance(
        base.organizations, base.org, base.release, base.size, width, requested=requested
    )


def _differ(count: int, seed: int) -> dict[str, int]:
    """On ``count`` random instances (:func:`_random_rigid`, ``seed``) at horizon 14: per
    rule, on how many the package's REF and the exact reading start some job at another
    time."""
    rng = np.random.default_rng(seed)
    out = dict.fromkeys(RULES, 0)
    for _ in range(count):
        inst = _random_rigid(rng)
        for rule in RULES:
            package = ref_rigid_schedule(inst, 14, rule)[0].start.tolist()
            exact = brute_ref_rigid(inst, 14, rule, every_moment=True)[0]
            out[rule] += package != exact
    return out


def test_a_blocked_organization_is_overtaken_between_events():
    """OVERTAKEN under ``none``. At 1 every key is 0 and O0's job is the older head: its
    3-processor job starts, and O0, still ranked first, shows its 2-processor job, which
    does not fit the one free machine: nothing more starts at 1, and the next event is the
    completion at 3. At 2 the values are v({O0}) = 2 (O0's 2-processor job runs alone
    there: its 3-processor job is too wide), v({O1}) = 1 and v(grand) = 3, so phi = (2, 1)
    while psi = (3, 0): O1's key (1) now beats O0's (-1), and O1's job fits the free
    machine. The paper's Fig. 1, which visits 2, starts it at 2; the package, which does
    not, at 3. Every other rule that can backfill starts it at 1."""
    exact = brute_ref_rigid(OVERTAKEN, 12, "none", every_moment=True)
    package, values = ref_rigid_schedule(OVERTAKEN, 12, "none")
    assert exact[0] == [1, 2, 3]
    assert package.start.tolist() == brute_ref_rigid(OVERTAKEN, 12, "none")[0] == [1, 3, 3]
    assert list(values) != [exact[1][C] for C in range(4)]
    for rule in ("first-fit", "easy", "easy-queue", "first-fit-queue"):
        assert ref_rigid_schedule(OVERTAKEN, 12, rule)[0].start.tolist() == [1, 1, 3]
        assert brute_ref_rigid(OVERTAKEN, 12, rule, every_moment=True)[0] == [1, 1, 3]


@settings(max_examples=60, deadline=None)
@given(inst=rigid_instances(), rule=st.sampled_from(RULES), sequential=st.booleans())
def test_the_readings_coincide_for_sequential_jobs_and_first_fit(inst, rule, sequential):
    """With one processor per job (every rule), or under ``first-fit`` or
    ``first-fit-queue``, a coalition that
    left a job waiting at its last event has no machine that job could use until its next
    event, whatever the ranking: visiting every moment gives the package's schedule and
    values."""
    if sequential:  # rigid, on one processor each: EASY still reads requested times
        ones = np.ones(inst.n, dtype=np.int64)
        inst = Instance(
            inst.organizations, inst.org, inst.release, inst.size, ones, requested=inst.requested
        )
    elif rule not in ("first-fit", "first-fit-queue"):
        rule = "first-fit"
    T = 14
    package, values = ref_rigid_schedule(inst, T, rule)
    exact_starts, exact_values = brute_ref_rigid(inst, T, rule, every_moment=True)
    assert package.start.tolist() == exact_starts
    assert list(values) == [exact_values[C] for C in range(1 << inst.k)]


@settings(max_examples=80, deadline=None)
@given(inst=rigid_instances(), rule=st.sampled_from(RULES))
def test_the_benchmarks_simulation_of_both_readings(inst, rule):
    """``benchmarks/ref_between_events.py``'s lockstep simulation on Python integers:
    at events only it is the package's REF, at every moment the brute force's exact
    reading (schedules and every coalition's value)."""
    T = 14
    package, values = ref_rigid_schedule(inst, T, rule)
    assert ref_rigid_moments(inst, T, rule, every_moment=False) == (
        package.start.tolist(),
        list(values),
    )
    starts, brute = brute_ref_rigid(inst, T, rule, every_moment=True)
    assert ref_rigid_moments(inst, T, rule, every_moment=True) == (
        starts,
        [brute[C] for C in range(1 << inst.k)],
    )


def test_the_benchmarks_simulation_on_the_worked_example():
    """The simulation separates the readings on OVERTAKEN as the brute force does."""
    assert ref_rigid_moments(OVERTAKEN, 12, "none", every_moment=True)[0] == [1, 2, 3]
    assert ref_rigid_moments(OVERTAKEN, 12, "none", every_moment=False)[0] == [1, 3, 3]


@pytest.mark.slow
def test_how_often_the_readings_differ():
    """On 300 random small instances (seed 45) the package's REF and the exact reading
    start some job at another time on 4 under ``none``, 1 under ``easy`` and none under
    ``easy-queue``, ``first-fit`` or ``first-fit-queue``. (docs/conventions.md quotes these counts
    and the next test's; the worked example above is the fast test of the difference.)"""
    assert _differ(300, 45) == {
        "none": 4,
        "first-fit": 0,
        "easy": 1,
        "easy-queue": 0,
        "first-fit-queue": 0,
    }


@pytest.mark.slow
def test_how_often_the_readings_differ_on_3000_instances():
    """The same on 3,000 instances (seed 4545): 44 under ``none``, 5 under ``easy``, 9
    under ``easy-queue``, none under ``first-fit`` or ``first-fit-queue``."""
    counts = _differ(3000, 4545)
    assert counts == {
        "none": 44,
        "first-fit": 0,
        "easy": 5,
        "easy-queue": 9,
        "first-fit-queue": 0,
    }
    page = " ".join(
        (Path(__file__).resolve().parents[1] / "docs/conventions.md").read_text().split()
    )
    assert (
        f"On 3,000 small random instances the two readings give different schedules on "
        f"{counts['none']} under `none`, {counts['easy']} under `easy`, {counts['easy-queue']} "
        "under `easy-queue` and none under `first-fit` or `first-fit-queue`"
    ) in page


def test_the_docs_state_the_size_measured_on_the_logs():
    """docs/conventions.md's figures for the logs, recomputed from the rows of the
    committed ``benchmarks/results-ref-between-events.txt``."""
    root = Path(__file__).resolve().parents[1]
    rows = [
        line.split()
        for line in (root / "benchmarks" / "results-ref-between-events.txt")
        .read_text()
        .splitlines()
        if line and not line.startswith("#") and not line.startswith("log ")
    ]
    page = " ".join((root / "docs" / "conventions.md").read_text().split())
    for rule in ("none", "easy"):
        mine = [r for r in rows if r[2] == rule]
        jobs = sum(int(r[4]) for r in mine)
        moved = sum(int(r[7]) for r in mine)
        differ = sum(r[6] == "yes" for r in mine)
        busy = [r for r in mine if float(r[12]) > 0]
        gap = [abs(float(r[12]) - float(r[11])) / float(r[12]) for r in busy]
        assert (
            f"under `{rule}`, {differ} windows differ and {100 * moved / jobs:.2f} % of the jobs"
            in page
        )
        assert f"{len(mine)} one-day windows" in page
        if rule == "easy":
            rel = max(float(r[8]) for r in mine)
            assert f"by more than {100 * rel:.1f} % of its `phi`" in page
            assert f"by {100 * max(gap):.1f} % at most" in page
        else:
            worst = max(mine, key=lambda r: float(r[10]))
            assert f"({worst[0]}, {worst[1]} organizations)" in page
            assert f"{100 * float(worst[9]):.1f} % of the grand coalition's value" in page
            assert f"moves by {100 * float(worst[8]):.0f} % of its `phi`" in page
            assert f"{float(worst[10]):,.0f} s apart" in page
            assert f"where FIFO is {float(worst[11]):,.0f} s from REF" in page
            assert f"moves by {100 * max(gap):.1f} % at most, {100 * np.mean(gap):.2f} %" in page
            assert f"over the {len(busy)} windows where FIFO" in page
