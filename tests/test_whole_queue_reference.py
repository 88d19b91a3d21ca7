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

Today's engines have no whole-queue rule yet, but with every job its own organization their
per-organization EASY under FIFO is this rule (each queue holds one job), which is how the
reference is checked against both engines here; ``slurm/validate.py`` uses that stand-in.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy
from coopsched.workloads.instance import Instance, Organization


def fifo_whole_queue_easy(
    release: list[int], size: list[int], width: list[int], requested: list[int], M: int
) -> list[int]:
    """Every job's start (``-1``: never, too wide), by the rule of the module's doc."""
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
        while queue and width[queue[0]] <= free:
            j = queue.pop(0)
            start[j], free = t, free - width[j]
            running.append(j)
        if queue:  # the first job does not fit: a reservation, then the whole queue
            q = width[queue[0]]
            ends = sorted(max(start[j] + requested[j], t + 1) for j in running)
            shadow = extra = None
            for e in ends:
                if (
                    sum(width[j] for j in running if max(start[j] + requested[j], t + 1) <= e)
                    + free
                    >= q
                ):
                    shadow = e
                    extra = (
                        free
                        + sum(width[j] for j in running if max(start[j] + requested[j], t + 1) <= e)
                        - q
                    )
                    break
            assert shadow is not None and extra is not None
            for j in list(queue[1:]):
                if width[j] <= free and (t + requested[j] <= shadow or width[j] <= extra):
                    queue.remove(j)
                    start[j], free = t, free - width[j]
                    running.append(j)
                    if t + requested[j] > shadow:
                        extra -= width[j]
        times = sorted(set(times) | {start[j] + size[j] for j in running})
        if pending:
            times = sorted(set(times) | {release[pending[0]]})
    return start


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
