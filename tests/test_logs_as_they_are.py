"""Logs as they are (issue 42, item 5): records overlapping the platform's size are fitted by
the rule of coopsched.audit.overlap (checked against a second-by-second reference), cancelled
SWF records without processors never ran, and a log without start times says so."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_audit import _log

from coopsched import audit
from coopsched.audit.organizations import by_column
from coopsched.audit.overlap import fit_recorded
from coopsched.audit.window import CANCELLED_OVERLAP, WindowError, window_instance
from coopsched.workloads.swf import CANCELLED_UNALLOCATED, SWFError, read_swf_recorded


def fit_by_seconds(start, run, width, machines, horizon, cancelled):
    """The rule of docs/audit.md read literally: jobs by recorded start (then listed order),
    each at the first second t >= its start at which its processors are free at every
    second of [t, t + p) beside the jobs placed before it, the cancelled ones after all
    others and only at their recorded start (else never started); one moved to or past the window's
    end has no start there and holds no processor."""
    busy: dict[int, int] = {}
    new = list(start)
    ran = [j for j in range(len(start)) if start[j] >= 0 and not cancelled[j]]
    late = [j for j in range(len(start)) if start[j] >= 0 and cancelled[j]]
    for j in sorted(ran, key=lambda j: start[j]) + sorted(late, key=lambda j: start[j]):
        t = start[j]
        while any(busy.get(x, 0) + width[j] > machines for x in range(t, t + run[j])):
            t += 1
        if cancelled[j] and t != start[j]:  # cancelled before it started: never ran
            new[j] = -1
            continue
        if t >= horizon:  # no start in the window: it holds nothing there
            new[j] = -1
            continue
        for x in range(t, t + run[j]):
            busy[x] = busy.get(x, 0) + width[j]
        new[j] = t
    return new


@st.composite
def recorded(draw):
    machines = draw(st.integers(1, 6))
    n = draw(st.integers(1, 12))
    horizon = draw(st.integers(1, 30))  # a recorded start lies in the window
    start = draw(st.lists(st.integers(-1, horizon - 1), min_size=n, max_size=n))
    run = draw(st.lists(st.integers(1, 8), min_size=n, max_size=n))
    width = draw(st.lists(st.integers(1, machines), min_size=n, max_size=n))
    cancelled = draw(st.lists(st.booleans(), min_size=n, max_size=n))
    return machines, start, run, width, horizon, cancelled


@settings(max_examples=300, deadline=None)
@given(recorded())
def test_fit_matches_the_second_by_second_reference(case):
    machines, start, run, width, horizon, cancelled = case
    f = fit_recorded(
        np.array(start), np.array(run), np.array(width), machines, horizon, np.array(cancelled)
    )
    assert f.start.tolist() == fit_by_seconds(start, run, width, machines, horizon, cancelled)
    # capacity holds at every second; a job moves only later; counted exactly
    busy = np.zeros(horizon + 20, dtype=int)
    for s, p, q in zip(f.start.tolist(), run, width, strict=True):
        if s >= 0:
            busy[s : s + p] += q
    assert busy.max(initial=0) <= machines
    changed = [s0 >= 0 and s1 != s0 for s0, s1 in zip(start, f.start.tolist(), strict=True)]
    assert (f.moved | f.dropped).tolist() == changed
    assert not (f.dropped & ~np.array(cancelled, dtype=bool)).any()  # only cancelled ones


def test_a_schedule_within_the_platform_is_unchanged():
    start, run, width = np.array([0, 0, 3, -1]), np.array([5, 3, 2, 4]), np.array([2, 2, 2, 1])
    f = fit_recorded(start, run, width, 4, 10)
    assert f.start.tolist() == start.tolist() and f.count == 0 and f.total_shift == 0


def test_a_log_over_its_size_is_fitted_and_says_so():
    # two jobs of 3 on a platform of 4 at once (a skewed clock): the second waits 10 s
    log = _log([(1, 0, 0, 10, 3, "u", "a"), (2, 0, 2, 12, 3, "v", "a")])
    w = window_instance(log, by_column(log.jobs, "user", "x"), 0, 100, jobs="rigid")
    assert w.instance.start.tolist() == [0, 10]
    (note,) = w.notes
    assert "runs up to 6 processors at once, more than its 4" in note
    assert "1 job(s) started later" in note
    # the operator's own --machines below what ran stays an error (never replaced)
    with pytest.raises(WindowError, match="more than the 4 given by machines="):
        window_instance(log, by_column(log.jobs, "user", "x"), 0, 100, machines=4)
    # every output states it
    report = audit(log, org_by="user", t_from=0, t_to=100, with_counterfactuals=False)
    assert any("started later to fit" in n for n in report.notes)


def _swf_row(job, submit, wait, run, alloc, req=-1, status=1):
    f = [-1] * 18
    f[:5] = [job, submit, wait, run, alloc]
    f[7], f[10], f[11], f[12] = req, status, 1, 1
    return " ".join(map(str, f))


def test_cancelled_records_without_processors_never_ran(tmp_path):
    p = tmp_path / "c.swf"
    p.write_text(
        "; MaxProcs: 4\n"
        + "\n".join(
            [
                _swf_row(1, 0, 0, 10, 4),
                _swf_row(2, 0, 0, 30, -1, req=4, status=5),  # cancelled, never allocated
                _swf_row(3, 0, 10, 10, -1, req=2, status=1),  # ran: its requested count
            ]
        )
        + "\n"
    )
    log = read_swf_recorded(p)
    assert log.jobs["job"].tolist() == ["1", "3"]
    assert log.jobs["processors"].tolist() == [4, 2]
    assert log.excluded == {CANCELLED_UNALLOCATED: 1}


def test_a_log_without_start_times_says_which_field(tmp_path):
    p = tmp_path / "n.swf"
    p.write_text("\n".join(_swf_row(j, j, -1, 10, 1) for j in range(1, 4)) + "\n")
    with pytest.raises(SWFError, match=r"field 3 \(wait\) is -1 for all 3 jobs"):
        read_swf_recorded(p)


def test_a_cancelled_record_with_no_room_never_started():
    # a completed job of 3 and a cancelled one of 3 at once on 4 processors: the cancelled
    # one was cancelled before it started (left out, counted); the completed one keeps its start
    log = _log([(1, 0, 2, 12, 3, "u", "a"), (2, 0, 0, 30, 3, "v", "a")])
    log.jobs["cancelled"] = [False, True]
    w = window_instance(log, by_column(log.jobs, "user", "x"), 0, 100, jobs="rigid")
    assert w.instance.n == 1 and w.instance.start.tolist() == [2]
    assert w.excluded[CANCELLED_OVERLAP] == 1
    assert "1 cancelled record(s) with no room" in w.notes[0]
    # where it fits, a cancelled record ran until cancelled: kept as recorded
    # (jobs 1 and 3 overlap: 3 moves to 10; the cancelled 2 fits beside both throughout)
    log = _log([(1, 0, 0, 10, 3, "u", "a"), (2, 0, 0, 30, 1, "v", "a"), (3, 0, 0, 10, 3, "v", "a")])
    log.jobs["cancelled"] = [False, True, False]
    w = window_instance(log, by_column(log.jobs, "user", "x"), 0, 100, jobs="rigid")
    assert CANCELLED_OVERLAP not in w.excluded
    assert w.instance.n == 3 and sorted(w.instance.start.tolist()) == [0, 0, 10]
