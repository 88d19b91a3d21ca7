"""The sampled audit on a busy month (issue 43, item 1): with its control variate, the
intervals of the whole audit (orders, then the refinement) cover the exact values at the
audit's nominal level, on SDSC-SP2's busiest month (January 2000, 91.5 % recorded
utilization) by its 7 busiest users and 'other'; every coalition of the sampled game is
valued, so its Shapley values are exact (``benchmarks/busy_months.py coverage`` measures
the same on the three busy months at k = 10)."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from conftest import trace_path
from test_audit_sampled_speed import top_users_window
from test_shapley_antithetic import upper_bound

from coopsched.audit.game import recorded_starts
from coopsched.audit.sampling import coalition_values, sampled_game
from coopsched.online.shapley import shapley
from coopsched.online.utilities import psi_sp

LEVEL = 0.95  # the audit's default confidence


@pytest.fixture(scope="module")
def sdsc_busy_month(tmp_path_factory):
    """``(inst, T, rule, fair, exact)``: the month, its sampled game's table ``fair`` (the
    grand coalition under FAIRSHARE) and the exact Shapley values of the audit's game (the
    grand coalition at the recorded total)."""
    from coopsched.audit import load_log

    path = trace_path("SDSC-SP2-1998-4.2-cln.swf.gz")
    log = load_log(path)
    tz = ZoneInfo(log.timezone or "UTC")
    t0 = int(datetime(2000, 1, 1, tzinfo=tz).timestamp()) - (log.epoch or 0)
    t1 = int(datetime(2000, 2, 1, tzinfo=tz).timestamp()) - (log.epoch or 0)
    inst, T, rule = top_users_window(path, t0, t1, 7, tmp_path_factory.mktemp("sdsc"))
    k, G = inst.k, (1 << inst.k) - 1
    fair = [0] + [coalition_values(inst, T, [T], m, backfill=rule)[0] for m in range(1, G + 1)]
    recorded = sum(psi_sp(inst.org, recorded_starts(inst), inst.size, T, k, inst.processors))
    exact = np.array([float(x) for x in shapley([*fair[:-1], recorded])])
    return inst, T, rule, fair, exact


@pytest.mark.slow
def test_busy_month_intervals_cover_the_exact_values(sdsc_busy_month, monkeypatch):
    from coopsched.audit import sampling

    inst, T, rule, fair, exact = sdsc_busy_month
    monkeypatch.setattr(sampling, "coalition_values", lambda i, h, g, m, *a: [fair[m]])
    monkeypatch.setattr(sampling, "CoalitionValuer", lambda *a: lambda m: [fair[m]])
    shares, used = [], 0
    for seed in range(120):
        sg = sampled_game(
            inst, T, [], samples=5120, seed=seed, confidence=LEVEL, backfill=rule, negligible=0.05
        )
        used += bool(sg.control_variate and sg.control_variate["used"])
        shares.append(np.mean(np.abs(sg.phi - exact) <= sg.halfwidth))
    assert used == 120
    assert upper_bound(shares) >= LEVEL, np.mean(shares)
    assert np.mean(shares) >= LEVEL - 0.02, np.mean(shares)
