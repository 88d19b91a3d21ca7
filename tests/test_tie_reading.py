"""One reading of ties for every policy (docs/conventions.md, "Ties and anonymity").

REF ranks the organizations once per event time and keeps that ranking for every pick at
``t``: the winner keeps receiving machines until its queue is empty. Ties go to the older
queue head *as the picks at t began*. Every other policy whose keys are fixed during an
event time (DIRECTCONTR, RAND, the fair-share family, the production schedulers) reads ties
the same way, in both engines and under every backfilling rule, so at a tied instant it
hands out machines as REF does, not alternately.
"""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from conftest import make_instance, small_instances
from hypothesis import given, settings

from coopsched.online.backends import compiled_names
from coopsched.online.engine import simulate
from coopsched.online.policies import available, get_policy
from coopsched.online.ref import ref_schedule
from coopsched.online.rigid import BACKFILL

#: Policies whose keys do not change between the picks at one time: their picks at ``t``
#: follow one ranking. (CURRFAIRSHARE counts running jobs, which change with each pick;
#: ROUNDROBIN and FIFO have no ties to read.)
FIXED_KEYS = [
    "ref",
    "rand",
    "directcontr",
    "fairshare",
    "utfairshare",
    "htcondor",
    "maui",
    "slurm-classic",
    "slurm-fairtree",
]


def _engines(name: str) -> list[str]:
    return ["python", "compiled"] if name in compiled_names() else ["python"]


def _run(name: str, inst, engine: str, horizon=None):
    if name == "ref":
        return ref_schedule(inst, horizon)[0]
    return simulate(inst, get_policy(name), horizon, engine=engine)


def test_the_policy_list_is_the_registry_minus_the_three_without_fixed_keys():
    names = {cls.name for cls in available()}
    assert set(FIXED_KEYS) == names - {"fifo", "roundrobin", "currfairshare"}


# Two organizations with two machines each; five jobs at t = 0, A's first. Every key is 0
# at t = 0, so A (the older queue head) wins the tie and takes machines until its queue
# is empty; B gets the last one. Read per pick, the machines would alternate A, B, A, B.
TIED = make_instance([2, 2], [(0, 0, 5), (1, 0, 5), (0, 0, 5), (1, 0, 5), (0, 0, 5)])


@pytest.mark.parametrize("name", FIXED_KEYS)
def test_a_tied_winner_takes_every_free_machine_as_in_ref(name):
    expected = [0, 0, 0, 5, 0]  # A's three jobs and B's first at 0, B's second at 5
    assert ref_schedule(TIED)[0].start.tolist() == expected
    for engine in _engines(name):
        sched = _run(name, TIED, engine)
        assert sched.start.tolist() == expected, (name, engine)


@pytest.mark.parametrize("name", ["fifo", "roundrobin"])
def test_fifo_and_roundrobin_serve_b_before_as_second_job(name):
    """No ties to read: FIFO serves by submission, ROUNDROBIN by turns."""
    for engine in _engines(name):
        assert _run(name, TIED, engine).start.tolist() == [0, 0, 0, 0, 5], (name, engine)


def _interleaved_at(sched) -> int | None:
    """An event time at which the organizations served were interleaved (some organization
    served, then another, then the first again), or ``None``. The engine gives each pick
    the lowest-numbered free machine, so the machines of the jobs started at ``t``, in
    increasing order, give the order of the picks."""
    inst = sched.instance
    for t in np.unique(sched.start[sched.start >= 0]).tolist():
        at = np.flatnonzero(sched.start == t)
        served = inst.org[at[np.argsort(sched.machine[at])]].tolist()
        blocks = [u for i, u in enumerate(served) if i == 0 or served[i - 1] != u]
        if len(blocks) != len(set(blocks)):
            return t
    return None


def _undrained_pickers(sched) -> int:
    """The most organizations, at one event time, that started a job at ``t`` and still
    had a job waiting after it (released by ``t``, not started at ``t``)."""
    inst = sched.instance
    worst = 0
    for t in np.unique(sched.start[sched.start >= 0]).tolist():
        picked = set(inst.org[sched.start == t].tolist())
        late = (inst.release <= t) & ((sched.start > t) | (sched.start < 0))
        worst = max(worst, len(picked & set(inst.org[late].tolist())))
    return worst


@pytest.mark.parametrize("name", FIXED_KEYS)
@settings(max_examples=40, deadline=None)
@given(inst=small_instances(max_k=4, max_jobs=14))
def test_one_ranking_per_event_time(name, inst):
    """With keys fixed during ``t`` and one tie order, the organizations served at ``t``
    are served one after the other, each until its queue is empty: never interleaved,
    and at most one of them (the last) can still have a waiting job."""
    for engine in _engines(name):
        sched = _run(name, inst, engine)
        assert _undrained_pickers(sched) <= 1, (name, engine)
        if not get_policy(name).random_machines:
            assert _interleaved_at(sched) is None, (name, engine)


@pytest.mark.parametrize("backfill", BACKFILL)
@pytest.mark.parametrize("name", [n for n in FIXED_KEYS if n != "ref"])
@settings(max_examples=25, deadline=None)
@given(inst=small_instances(max_k=4, max_jobs=12))
def test_rigid_engine_reads_ties_the_same_way(name, backfill, inst):
    """One-processor rigid jobs under any backfilling rule: the same schedules as the
    sequential engine, so the same reading of ties (both engines)."""
    ones = np.ones(inst.n, dtype=np.int64)
    rigid = dataclasses.replace(inst, processors=ones, requested=inst.size + ones)
    seq = simulate(inst, get_policy(name), engine="python").start.tolist()
    for engine in _engines(name):
        got = simulate(rigid, get_policy(name), engine=engine, backfill=backfill)
        assert got.start.tolist() == seq, (name, engine, backfill)
