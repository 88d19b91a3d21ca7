"""An independent, plain simulation of FIFO with EASY backfilling over the whole queue (issue
42, item 1), written from the rule's statement, not from the engines:

* time is integer seconds; the platform has ``M`` identical machines; a job wider than ``M``
  never starts (it is left out at its release);
* starts happen only at events (releases and completions); at an event, completions free
  their machines first, then the released jobs join the queue, ordered by release, then
  input order (FIFO);
* the queue's first job starts while it fits; when it does not, it gets a reservation:
  walking the running jobs by expected end ``max(start + requested, t + 1)``, the shadow
  time ``S`` is the first expected end at which enough machines are free (every job
  expected then counted), ``extra`` the machines left over at ``S``; then every other
  queued job, in queue order, starts if it fits now and ends by ``S`` (``t + requested <=
  S``) or uses at most ``extra`` machines (a job running past ``S`` uses ``extra`` up);
  nothing more starts at that event.

The engines' rule ``easy-queue`` under FIFO is this rule whatever the grouping of the jobs
into organizations: the policy reserves for the oldest queue head, which is the queue's
first job, and backfills among the organizations that have a candidate, each showing its
oldest candidate, so in global submission order; a candidate only stops being one as the
free and extra machines fall, so asking again after each start is the single pass above.
With every job its own organization the papers' per-organization ``easy`` is this rule too
(each queue holds one job).
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.checker import check_schedule
from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy
from coopsched.workloads.instance import Instance, Organization


def _fifo_events(release, size, width, M, step) -> list[int]:
    """The plain event loop both references share: at each event, completions free their
    machines, the released jobs join the queue (release, then input order; a job wider than
    ``M`` is left out), then ``step(t, queue, running, start, free)`` starts jobs (removing
    them from ``queue``, appending them to ``running``, writing ``start``) and returns the
    machines left free. Every job's start (``-1``: never)."""
    n = len(release)
    start = [-1] * n
    order = sorted(range(n), key=lambda j: (release[j], j))
    pending = [j for j in order if width[j] <= M]
    queue: list[int] = []
    running: list[int] = []
    free = M
    times = sorted(set(release))
    while times:
        t = times.pop(0)
        for j in [j for j in running if start[j] + size[j] == t]:
            running.remove(j)
            free += width[j]
        while pending and release[pending[0]] == t:
            queue.append(pending.pop(0))
        free = step(t, queue, running, start, free)
        times = sorted(set(times) | {start[j] + size[j] for j in running})
        if pending:
            times = sorted(set(times) | {release[pending[0]]})
    return start


def fifo_whole_queue_easy(
    release: list[int], size: list[int], width: list[int], requested: list[int], M: int
) -> list[int]:
    """Every job's start (``-1``: never, too wide), by the rule of the module's doc."""

    def step(t, queue, running, start, free):
        while queue and width[queue[0]] <= free:
            j = queue.pop(0)
            start[j], free = t, free - width[j]
            running.append(j)
        if queue:  # the first job does not fit: a reservation, then the whole queue
            q = width[queue[0]]
            ends = sorted(max(start[j] + requested[j], t + 1) for j in running)
            shadow = extra = None
            for e in ends:
                done = sum(width[j] for j in running if max(start[j] + requested[j], t + 1) <= e)
                if done + free >= q:
                    shadow, extra = e, free + done - q
                    break
            assert shadow is not None and extra is not None
            for j in list(queue[1:]):
                if width[j] <= free and (t + requested[j] <= shadow or width[j] <= extra):
                    queue.remove(j)
                    start[j], free = t, free - width[j]
                    running.append(j)
                    if t + requested[j] > shadow:
                        extra -= width[j]
        return free

    return _fifo_events(release, size, width, M, step)


def fifo_whole_queue_first_fit(
    release: list[int], size: list[int], width: list[int], requested: list[int], M: int
) -> list[int]:
    """Every job's start (``-1``: never, too wide) under first-fit over the whole queue:
    at each event every queued job, in queue order, starts if it fits the machines left
    (``requested`` is not read)."""

    def step(t, queue, running, start, free):
        for j in list(queue):
            if width[j] <= free:
                queue.remove(j)
                start[j], free = t, free - width[j]
                running.append(j)
        return free

    return _fifo_events(release, size, width, M, step)


@st.composite
def rigid_logs(draw):
    M = draw(st.integers(1, 6))
    n = draw(st.integers(1, 14))
    release = draw(st.lists(st.integers(0, 15), min_size=n, max_size=n))
    size = draw(st.lists(st.integers(1, 9), min_size=n, max_size=n))
    width = draw(st.lists(st.integers(1, M + 1), min_size=n, max_size=n))  # some too wide
    # requested times, some shorter than the run (a job outliving its walltime)
    requested = [
        max(1, s + d)
        for s, d in zip(
            size, draw(st.lists(st.integers(-3, 6), min_size=n, max_size=n)), strict=True
        )
    ]
    return release, size, width, requested, M


def per_job_instance(release, size, width, requested, M) -> Instance:
    """Every job its own organization (the first holds the machines)."""
    n = len(release)
    return Instance(
        [Organization(f"j{i}", M if i == 0 else 0) for i in range(n)],
        np.arange(n),
        np.array(release),
        np.array(size),
        np.array(width),
        requested=np.array(requested),
    )


@pytest.mark.parametrize("engine", ["python", "compiled"])
@settings(max_examples=150, deadline=None)
@given(case=rigid_logs())
def test_reference_equals_the_engines_with_one_job_per_organization(engine, case):
    release, size, width, requested, M = case
    want = fifo_whole_queue_easy(release, size, width, requested, M)
    inst = per_job_instance(release, size, width, requested, M)
    horizon = max(release) + sum(size) + 1
    got = simulate(inst, get_policy("fifo"), horizon, backfill="easy", engine=engine).start
    assert got.tolist() == want


@st.composite
def grouped_logs(draw):
    """A log of :func:`rigid_logs` with its jobs grouped into ``k`` organizations at random
    (the machines shared out at random too)."""
    release, size, width, requested, M = draw(rigid_logs())
    k = draw(st.integers(1, 4))
    org = draw(st.lists(st.integers(0, k - 1), min_size=len(release), max_size=len(release)))
    owner = draw(st.lists(st.integers(0, k - 1), min_size=M, max_size=M))
    machines = np.bincount(owner, minlength=k)
    inst = Instance(
        [Organization(f"o{u}", int(m)) for u, m in enumerate(machines)],
        np.array(org),
        np.array(release),
        np.array(size),
        np.array(width),
        requested=np.array(requested),
    )
    return inst, (release, size, width, requested, M)


@pytest.mark.parametrize("engine", ["python", "compiled"])
@settings(max_examples=150, deadline=None)
@given(case=grouped_logs())
def test_reference_equals_the_whole_queue_rule_on_any_grouping(engine, case):
    inst, log = case
    want = fifo_whole_queue_easy(*log)
    horizon = max(log[0]) + sum(log[1]) + 1
    s = simulate(inst, get_policy("fifo"), horizon, backfill="easy-queue", engine=engine)
    assert s.start.tolist() == want
    if engine == "python":  # the records of where the rule stopped, checked too
        assert check_schedule(s) == []


@pytest.mark.parametrize("engine", ["python", "compiled"])
@settings(max_examples=150, deadline=None)
@given(case=grouped_logs(), pin=st.booleans())
def test_reference_equals_whole_queue_first_fit_on_any_grouping(engine, case, pin):
    """``first-fit-queue`` under FIFO is the plain whole-queue first-fit above, whatever the
    grouping, with or without requested times; its schedules pass the checker, and
    relabelled ``first-fit`` (each organization's oldest job only) they fail it wherever a
    later job went ahead of its organization's older one."""
    inst, log = case
    want = fifo_whole_queue_first_fit(*log)
    if pin:
        inst = dataclasses.replace(inst, requested=None)
    horizon = max(log[0]) + sum(log[1]) + 1
    s = simulate(inst, get_policy("fifo"), horizon, backfill="first-fit-queue", engine=engine)
    assert s.start.tolist() == want
    assert check_schedule(s) == []


def test_whole_queue_first_fit_starts_a_later_job_that_fits():
    """One organization, 2 machines: job 1 (2 processors) waits for job 0; job 2 (1
    processor) fits beside job 0 and starts at once under ``first-fit-queue``, while the
    per-organization ``first-fit`` holds it behind job 1; the checker tells them apart."""
    inst = Instance(
        [Organization("a", 2)],
        np.array([0, 0, 0]),
        np.array([0, 1, 1]),
        np.array([10, 5, 20]),
        np.array([1, 2, 1]),
    )
    for engine in ("python", "compiled"):
        fifo = get_policy("fifo")
        got = simulate(inst, fifo, backfill="first-fit-queue", engine=engine).start.tolist()
        assert got == [0, 21, 1]
        assert simulate(inst, fifo, backfill="first-fit", engine=engine).start.tolist() == [
            0,
            10,
            15,
        ]
    s = simulate(inst, get_policy("fifo"), backfill="first-fit-queue")
    assert check_schedule(s) == []
    wrong = dataclasses.replace(s, info={**s.info, "backfill": "first-fit"})
    assert {v.rule for v in check_schedule(wrong)} >= {"fifo"}


def test_the_whole_queue_rule_backfills_a_later_job_of_the_reserved_organization():
    """One organization, 2 machines: the wide job 1 waits for job 0; the narrow job 2 of
    the same organization ends before the shadow time and backfills (FIFO within the
    organization no longer holds), which the papers' ``easy`` never does."""
    inst = Instance(
        [Organization("a", 2)],
        np.array([0, 0, 0]),
        np.array([0, 1, 1]),
        np.array([10, 5, 2]),
        np.array([1, 2, 1]),
        requested=np.array([10, 5, 2]),
    )
    for engine in ("python", "compiled"):
        fifo = get_policy("fifo")
        assert simulate(inst, fifo, backfill="easy-queue", engine=engine).start.tolist() == [
            0,
            10,
            1,
        ]
        assert simulate(inst, fifo, backfill="easy", engine=engine).start.tolist() == [0, 10, 15]
    s = simulate(inst, get_policy("fifo"), backfill="easy-queue", engine="python")
    assert check_schedule(s) == []
    assert {
        v.rule for v in check_schedule(dataclasses.replace(s, info={**s.info, "backfill": "easy"}))
    } >= {"fifo"}


def test_simulate_accepts_the_whole_queue_rule_and_refuses_a_wrong_name(tmp_path, capsys):
    import json

    from coopsched.cli import main

    doc = {
        "organizations": [{"name": "a", "machines": 2}],
        "jobs": [
            {"org": "a", "release": 0, "size": 10, "processors": 1, "requested": 10},
            {"org": "a", "release": 1, "size": 5, "processors": 2, "requested": 5},
            {"org": "a", "release": 1, "size": 2, "processors": 1, "requested": 2},
        ],
    }
    path = tmp_path / "i.json"
    path.write_text(json.dumps(doc))
    assert main(["simulate", str(path), "--backfill", "easy-queue", "--format", "json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["backfill"] == "easy-queue"
    # job 2 backfilled at 1: a wait of 0 beside job 1's 9
    assert out["overall"]["mean_wait"] == pytest.approx(3)
    assert main(["simulate", str(path), "--backfill", "easyqueue"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error:") and "easy-queue" in err


def test_the_checker_knows_the_whole_queue_rule():
    """2 machines, one organization: job 0 (1 processor) runs to 10, job 1 (2 processors)
    reserves for 10, jobs 2 (requested 20: past the shadow, no spare machine) and 3
    (requested 2) wait. The rule backfills job 3 only, past the older job 2."""
    inst = Instance(
        [Organization("a", 2)],
        np.zeros(4, dtype=np.int64),
        np.array([0, 1, 1, 1]),
        np.array([10, 5, 20, 2]),
        np.array([1, 2, 1, 1]),
        requested=np.array([10, 5, 20, 2]),
    )
    s = simulate(inst, get_policy("fifo"), backfill="easy-queue", engine="python")
    assert s.start.tolist() == [0, 10, 15, 1] and check_schedule(s) == []
    assert s.info["blocked"][0] == (1, 1, 10, 0, (3,))

    def variant(start, blocked=None):
        return dataclasses.replace(s, start=np.array(start), info={**s.info, "blocked": blocked})

    # without records (a compiled schedule): job 3 not backfilled though it could be
    assert "easy-reservation" in {v.rule for v in check_schedule(variant([0, 10, 15, 12]))}
    # job 2 backfilled past the shadow time without a spare machine (the reserved job late)
    bad = check_schedule(variant([0, 21, 1, 3], [(1, 1, 10, 0, (2,)), (3, 1, 10, 0, ())]))
    assert "easy-reservation" in {v.rule for v in bad}
    # job 3 started before the older job 2 without being recorded as a backfill
    bad = check_schedule(variant([0, 10, 15, 1], [(1, 1, 10, 0, ()), (3, 1, 10, 0, ())]))
    assert "fifo" in {v.rule for v in bad}
    # the reserved job itself listed as backfilled
    bad = check_schedule(variant([0, 10, 15, 1], [(1, 1, 10, 0, (1, 3))]))
    assert "blocked" in {v.rule for v in bad}


def test_exact_and_sampled_audits_run_on_the_whole_queue_rule():
    """The audit's counterfactual world under easy-queue: exact (REF by coalition: phi
    adds up to the recorded total) and sampled, both stating the rule; the sampled game
    simulates its coalitions under it (the same seed gives another estimate than under
    the per-organization rule, on a log where the two rules' schedules differ)."""
    import coopsched

    rng = np.random.default_rng(3)
    k, n = 3, 30
    inst = Instance(
        [Organization(f"o{u}", int(m)) for u, m in enumerate(rng.integers(1, 3, k))],
        rng.integers(0, k, n),
        np.sort(rng.integers(0, 40, n)),
        rng.integers(1, 10, n),
        rng.integers(1, 4, n),
        requested=rng.integers(10, 15, n),
    )
    T = 50
    inst.start = simulate(inst, get_policy("fifo"), T, backfill="easy-queue").start
    exact = coopsched.audit(inst, horizon=T, backfill="easy-queue", points=0)
    assert exact.window.backfill == "easy-queue"
    assert sum(o.phi for o in exact.organizations) == sum(o.psi for o in exact.organizations)
    est = {}
    for rule in ("easy", "easy-queue"):
        r = coopsched.audit(inst, horizon=T, backfill=rule, points=0, method="sampled", samples=60)
        assert r.window.backfill == rule
        est[rule] = [o.phi for o in r.organizations]
    assert est["easy"] != est["easy-queue"]
