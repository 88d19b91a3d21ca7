"""The rigid-job rules docs/conventions.md states beyond the papers ("Rigid jobs and
backfilling", "DIRECTCONTR"), each pinned on a small instance where the other reading would
give another schedule (issue 45 item 3). Public API only (``simulate``, ``Instance``,
``get_policy``, DIRECTCONTR's ``phi``), in both engines, so that a rewrite of the engine that
changes one of these rules fails here and the page must be changed with it.

Each test names the reading it rules out and what that reading would have given.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from coopsched import Instance, make_instance
from coopsched.online.checker import check_schedule
from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy

ENGINES = ("python", "compiled")


def rigid(machines, jobs, q, requested=None) -> Instance:
    """An instance of rigid jobs: ``jobs`` are ``(org, release, size)``, ``q`` processors."""
    base = make_instance(machines, jobs)
    return Instance(
        base.organizations,
        base.org,
        base.release,
        base.size,
        np.asarray(q),
        requested=None if requested is None else np.asarray(requested),
    )


def run(inst: Instance, policy: str, rule: str, engine: str, **params):
    sched = simulate(inst, get_policy(policy, **params), backfill=rule, engine=engine)
    assert sched.info["engine"] == engine
    assert check_schedule(sched) == []
    return sched


# ------------------------------------------------------------------ too-wide releases
# Two organizations with 2 machines each (4 in all). At 0, a (O1, 2 processors, 3 s) and
# b (O0, 1 processor, 100 s) start. At 3, a completes: O0 has used 3 processor-seconds, O1 6.
# c (O0, 4 processors) and d (O1, 1 processor) arrive: FAIRSHARE picks O0 (3 < 6), c does not
# fit (3 machines free) and under `none` nothing more starts. At 10 O0 has used 10 and O1
# still 6. w (O1, 5 processors: wider than the platform) is released at 10.
WIDE = rigid(
    [2, 2],
    [(1, 0, 3), (0, 0, 100), (0, 3, 5), (1, 3, 50), (1, 10, 1)],
    [2, 1, 4, 1, 5],
)


@pytest.mark.parametrize("engine", ENGINES)
def test_the_release_of_a_too_wide_job_is_an_event(engine):
    """w never starts, but its release is an event: FAIRSHARE picks again at 10, now O1
    (6 < 10), and d starts at 10. Were the release not an event, nothing would happen
    before b completes at 100 and d would start at 100."""
    s = run(WIDE, "fairshare", "none", engine)
    assert s.start.tolist() == [0, 0, 100, 10, -1]
    assert s.info["too_wide"]["count"] == 1
    # without w, the instance's next event after 3 is b's completion at 100
    without = rigid([2, 2], [(1, 0, 3), (0, 0, 100), (0, 3, 5), (1, 3, 50)], [2, 1, 4, 1])
    assert run(without, "fairshare", "none", engine).start.tolist() == [0, 0, 150, 100]


def test_a_release_too_wide_for_a_coalition_is_an_event_in_that_coalition():
    """The same in a coalition's own schedule (``members``): x (O0, 3 processors) is too
    wide for {O0, O1} (2 machines) but not for the platform (3 machines with O2), and its
    release at 10 makes FAIRSHARE pick again there."""
    inst = rigid(
        [1, 1, 1],
        [(1, 0, 3), (0, 0, 100), (0, 3, 5), (1, 3, 50), (0, 10, 1)],
        [1, 1, 2, 1, 3],
    )
    for engine in ENGINES:
        s = simulate(inst, get_policy("fairshare"), members=[0, 1], backfill="none", engine=engine)
        assert s.info["too_wide"] == {"count": 1, "machines": 2, "first": [4]}
        # O1 has used 3, O0 3 at 3 (a tie: O0's c is older and does not fit); at 10 O0 has
        # used 10: O1's d starts at the too-wide release
        assert s.start.tolist() == [0, 0, 100, 10, -1]


def test_refs_coalitions_treat_a_release_too_wide_for_them_as_an_event():
    """REF's coalition {O0, O1} has 3 machines; jobs 3 and 4 (5 and 4 processors) are too
    wide for it but not for the platform (5 machines). Job 3's release at 4 is an event in
    the coalition: REF ranks again and O1's job 2 starts at 4, and the coalition is worth
    296 at 20 (with no event there, 258: the definition written out with that reading, as
    ``tests/reference.py``'s ``brute_ref_rigid`` is). The audit's phi, which takes every
    coalition's value from inside REF's run on the whole instance, is the Shapley value of
    the values REF gives each coalition alone."""
    import dataclasses

    import coopsched
    from coopsched.online.shapley import shapley

    base = make_instance([1, 2, 2], [(0, 2, 4), (0, 2, 3), (1, 3, 5), (0, 4, 3), (0, 6, 7)])
    inst = Instance(
        base.organizations, base.org, base.release, base.size, np.array([1, 3, 2, 5, 4])
    )
    T = 20
    for engine in ENGINES:
        s = simulate(inst, get_policy("ref"), T, members=[0, 1], backfill="none", engine=engine)
        assert s.start.tolist() == [2, 9, 4, -1, -1]
        assert sum(s.psi(T)) == 296
    values = [0] * 8
    for C in range(1, 7):
        members = [u for u in range(3) if C >> u & 1]
        values[C] = sum(
            simulate(inst, get_policy("ref"), T, members=members, backfill="none").psi(T)
        )
    recorded = simulate(inst, get_policy("fifo"), T, backfill="none")
    values[7] = sum(recorded.psi(T))
    report = coopsched.audit(
        dataclasses.replace(inst, start=recorded.start),
        horizon=T,
        backfill="none",
        with_counterfactuals=False,
        points=0,
    )
    assert [Fraction(o.phi_exact) for o in report.organizations] == shapley(values)


# --------------------------------------------------------- requested time reached exactly
# O0 and O1 have 2 machines each. A (O0, 2 processors, requested 10) starts at 0 and runs
# 100 s. At 10 (exactly A's start + requested time) B (O0, all 4 machines) and C (O1, 2
# processors, requested 1) arrive; FIFO picks B, which does not fit.
REACHED = rigid([2, 2], [(0, 0, 100), (0, 10, 5), (1, 10, 1)], [2, 4, 2], requested=[10, 5, 1])


@pytest.mark.parametrize("engine", ENGINES)
def test_a_job_at_exactly_its_requested_time_is_already_past_it(engine):
    """At ``t = start + requested`` a job that has not completed is past its requested
    time, expected at ``t + 1``: B's shadow time is 11, and C (ending by 11) backfills at 10.
    Read as "due at t", the shadow time would be 10, C could neither end by it nor fit in
    the 0 extra machines, and it would wait for A's completion at 100."""
    s = run(REACHED, "fifo", "easy", engine)
    assert s.start.tolist() == [0, 100, 10]
    if engine == "python":  # the engine's record of the reservation: (t, job, S, extra, ...)
        assert s.info["blocked"][0][:4] == (10, 1, 11, 0)


# ------------------------------------------------------------------- EASY's backfilling
# O0, O1 and O2 have 2 machines each (6). A (O0, 3 processors, requested 100) starts at 0.
# At 1, B (O0, all 6 machines) is FIFO's pick and gets a reservation at 100 with 0 extra
# machines; C1, C2 (O1) and D (O2), one processor and 5 s requested each, end by then.
REPEAT = rigid(
    [2, 2, 2],
    [(0, 0, 100), (0, 1, 5), (1, 1, 5), (1, 1, 5), (2, 1, 5)],
    [3, 6, 1, 1, 1],
    requested=[100, 5, 5, 5, 5],
)


@pytest.mark.parametrize("engine", ENGINES)
def test_easy_repeats_its_picks_until_no_organization_can_backfill(engine):
    """After the reservation the policy is asked again after every backfilled start, and an
    organization's next job becomes its candidate: C1, C2 and D all start at 1. One pass
    over the organizations' oldest jobs would start C1 and D, and C2 only at C1's end (6)."""
    s = run(REPEAT, "fifo", "easy", engine)
    assert s.start.tolist() == [0, 100, 1, 1, 1]
    if engine == "python":  # one reservation, and the three beside it in FIFO's order
        assert s.info["blocked"][0] == (1, 1, 100, 0, (2, 3, 4))


# O0 and O1 have 2 machines each. A (O0, 2 processors, requested 10) runs from 0. At 1 B
# (O0, 3 processors) gets a reservation at 10 with 1 extra machine (4 free then, 3 needed).
# C1 (O1, 1 processor, requested 2) ends by 10; C2 (O1, 1 processor, requested 50) does not.
SPARE = rigid(
    [2, 2],
    [(0, 0, 10), (0, 1, 5), (1, 1, 2), (1, 1, 50)],
    [2, 3, 1, 1],
    requested=[10, 5, 2, 50],
)


@pytest.mark.parametrize("engine", ENGINES)
def test_a_backfilled_job_ending_by_the_shadow_time_leaves_the_extra_machines(engine):
    """C1 ends by the shadow time, so it does not use up the extra machine (its machine is
    free again at 10); C2, which runs past it, takes the extra machine: both start at 1 and
    B still starts at 10. Had C1 used up the extra machine, C2 would wait for the next event
    (C1's completion at 3)."""
    s = run(SPARE, "fifo", "easy", engine)
    assert s.start.tolist() == [0, 10, 1, 1]
    if engine == "python":
        assert s.info["blocked"][0] == (1, 1, 10, 1, (2, 3))


# -------------------------------------------------------- DIRECTCONTR with wide jobs
@pytest.mark.parametrize("engine", ENGINES)
def test_directcontr_credits_each_processor_to_its_machines_owner(engine):
    """A job on ``q`` processors holds ``q`` machines; each of its unit parts is credited to
    the owner of the machine it runs on: with every machine taken (O0 owns 2 of 3, O1 one),
    O0's contribution is twice O1's and together they are the job's ``psi_sp``, which its
    owner O1 receives as utility."""
    inst = rigid([2, 1], [(1, 0, 4)], [3], requested=[4])
    for seed in range(5):
        pol = get_policy("directcontr", seed=seed)
        s = simulate(inst, pol, backfill="easy", engine=engine)
        t = 9
        one = 4 * (t - 0) - 4 * 3 // 2  # psi_sp of one unit-wide part of size 4 started at 0
        assert s.psi(t) == [0, 3 * one]
        assert [pol.phi(v, t) for v in range(2)] == [2 * one, one]


@pytest.mark.parametrize("engine", ENGINES)
def test_directcontr_draws_a_wide_jobs_machines_uniformly_from_the_free_ones(engine):
    """The ``q`` machines of a job are drawn from the free ones at random (seeded), without
    regard to their owners: every ``q``-subset equally likely. Two machines each for O0 and
    O1 and one job on 2 processors: the machines come from both owners with probability
    4/6. Over 600 seeds the share is within 4.4 binomial standard deviations of it (a rule
    drawing from one owner first would give 0, one machine per owner 1)."""
    inst = rigid([2, 2], [(0, 0, 3)], [2], requested=[3])
    split = 0
    seeds = 600
    for seed in range(seeds):
        pol = get_policy("directcontr", seed=seed)
        simulate(inst, pol, backfill="easy", engine=engine)
        split += pol.phi(0, 5) == pol.phi(1, 5)
    p = 4 / 6
    sd = (seeds * p * (1 - p)) ** 0.5
    assert abs(split - seeds * p) <= 4.4 * sd, (split, seeds)
