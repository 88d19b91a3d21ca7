"""The audit of REF's own schedule at tied instants (issue 45 item 1, first part;
docs/conventions.md, "REF's own audit at tied instants")."""

from __future__ import annotations

import dataclasses
import re
import sys
from fractions import Fraction
from pathlib import Path

import coopsched
from coopsched.online.engine import simulate
from coopsched.online.policies import get_policy
from coopsched.workloads.instance import make_instance

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from ref_between_events import ref_rigid_moments  # noqa: E402

#: The tie test's toy: A's and B's jobs alternate, all of size 5 at 0, two machines each.
TIED = make_instance([2, 2], [(0, 0, 5), (1, 0, 5), (0, 0, 5), (1, 0, 5), (0, 0, 5)])


def test_refs_own_surplus_on_the_toy():
    """Every key is 0 at 0: A, the older head, takes three machines, B one. The audit of
    that schedule gives psi = (120, 55) against phi = (95, 80); the same jobs handed out A,
    B, A, B at 0 (FIFO's schedule here) give psi = phi exactly."""
    ref = simulate(TIED, get_policy("ref"), 10)
    assert ref.start.tolist() == [0, 0, 0, 5, 0]
    report = coopsched.audit(
        dataclasses.replace(TIED, start=ref.start), horizon=10, with_counterfactuals=False, points=0
    )
    assert [o.psi for o in report.organizations] == [120, 55]
    assert [Fraction(o.phi_exact) for o in report.organizations] == [95, 80]
    fifo = simulate(TIED, get_policy("fifo"), 10)
    assert fifo.start.tolist() == [0, 0, 0, 0, 5] and fifo.psi(10) == [95, 80]


def test_the_tie_counter():
    """``ref_rigid_moments(ties=)`` records the toy's one tied instant (A starts 3 jobs at
    0), and nothing where a single organization has jobs."""
    ties: list[tuple[int, int]] = []
    starts, _ = ref_rigid_moments(TIED, 10, "first-fit", False, ties=ties)
    assert starts == [0, 0, 0, 5, 0] and ties == [(0, 3)]
    alone: list[tuple[int, int]] = []
    ref_rigid_moments(make_instance([1, 1], [(0, 0, 2)] * 4), 10, "first-fit", False, ties=alone)
    assert alone == []


def test_the_docs_state_refs_own_surplus_on_the_logs():
    """docs/conventions.md's figures, recomputed from the rows of the committed
    ``benchmarks/results-ref-own-surplus.txt``."""
    text = (ROOT / "benchmarks" / "results-ref-own-surplus.txt").read_text().splitlines()
    rows = [x.split() for x in text if x.split() and x.split()[1] in ("sequential", "rigid/easy")]
    page = " ".join((ROOT / "docs" / "conventions.md").read_text().split())
    assert any("psi = (120, 55), phi = ('95', '80')" in x for x in text)
    assert "REF gives `psi = (120, 55)` against `phi = (95, 80)`" in page
    tied = [r for r in rows if int(r[8]) > 0]
    assert f"several machines in {len(tied)} window (" in page
    assert (
        f"({sum(int(r[8]) for r in rows)} such instants, {sum(int(r[9]) for r in rows)} jobs)"
        in page
    )
    off = sum(int(r[4]) > 0 for r in rows)
    assert f"On {len(rows)} one-day windows" in page and f"not 0 in {off} windows" in page
    assert f"reaches {100 * max(float(r[5]) for r in rows):.0f} % of an" in page
    # the means from the summary lines (the rows round to 4 digits)
    means = {
        m[1]: (float(m[2]), float(m[3]))
        for m in (
            re.match(r"# (\w+): .*dist mean ([\d.]+) s.*FIFO's unfairness mean ([\d.]+) s", x)
            for x in text
        )
        if m
    }
    seq, rig = means["sequential"], means["rigid"]
    assert f"averages {seq[0]:,.0f} s (sequential) and {rig[0]:,.0f} s (rigid)" in page
    assert f"averages {seq[1]:,.1f} s and {rig[1]:,.1f} s" in page
    idle = max(float(r[5]) for r in rows if float(r[7]) == 0)
    assert f"up to {100 * idle:.0f} % of `phi`" in page
