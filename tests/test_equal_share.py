"""Definition 3.2's equal share read side by side (issue 42, item 6): the headline counts the
organizations short-changed with and without the platform's gain or loss shared equally, and
every output shows both surpluses."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from coopsched.audit.html import render_html
from coopsched.audit.report import headline_counts, render_table, to_csv

GOLDEN = Path(__file__).parent / "fixtures" / "audit-golden"


@pytest.mark.parametrize("name", ["exact_shares_owen", "exact_sequential", "instance_rigid"])
def test_counts_with_and_without_the_share(name):
    report = json.loads((GOLDEN / f"{name}.json").read_text())
    orgs = report["organizations"]
    h = report["headline"]
    assert h == headline_counts(orgs, sampled=False)
    assert h["short_changed"] == sum(o["surplus"] < 0 for o in orgs)
    # without the share: psi - phi - (ref_total - recorded_total) / k, counted by sign
    eff = report["efficiency"]
    k = len(orgs)
    share = (eff["ref_total"] - eff["recorded_total"]) / k
    vs_ref = [o["psi"] - o["phi"] - share for o in orgs]
    assert [o["vs_ref"] for o in orgs] == pytest.approx(vs_ref, rel=1e-9, abs=1e-6)
    assert h["short_changed_vs_ref"] == sum(v < 0 for v in vs_ref)


def test_every_output_shows_both():
    report = json.loads((GOLDEN / "exact_shares_owen.json").read_text())
    h = report["headline"]
    assert h["short_changed"] != h["short_changed_vs_ref"]  # the case the issue is about
    console = Console(record=True, width=200)
    render_table(report, console)
    text = " ".join(console.export_text().split())  # as one line: wrapping aside
    assert (
        f"{h['short_changed']} of {h['organizations']} organizations short-changed" in text
        and f"without that share (against REF's total): {h['short_changed_vs_ref']} short-changed"
        in text
    )
    assert "vs REF: core-h without" in text
    assert "vs_ref" in to_csv(report).splitlines()[-k_rows(report) - 1]
    html = render_html(report)
    assert 'id="headline-counts"' in html and f"{h['short_changed_vs_ref']} short-changed" in html


def k_rows(report: dict) -> int:
    return len(report["organizations"])
