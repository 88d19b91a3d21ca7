"""The counterfactual policies' unfairness beyond the exact audit (issue 43, item 4):
estimated from the sampled orders, with an interval, and the policies ranked where the
intervals separate (:mod:`coopsched.audit.unfairness`)."""

from __future__ import annotations

import dataclasses
import io
import json

import numpy as np
import pytest
from conftest import fifo_recorded
from test_shapley_antithetic import CONF, upper_bound

from coopsched.audit import audit
from coopsched.audit.report import to_csv
from coopsched.audit.unfairness import FairShares, rank_policies, unfairness_interval


def _fair(f, hw, se, pairs=None, refined=None, q=2.0, p=10.0):
    k = len(f)
    return FairShares(
        f=np.asarray(f, float),
        halfwidth=np.asarray(hw, float),
        se=np.asarray(se, float),
        refined=np.zeros(k, bool) if refined is None else np.asarray(refined),
        pairs=None if pairs is None else np.asarray(pairs, float),
        quantile=q,
        p_tot=p,
        confidence=0.95,
    )


def test_the_interval_is_linear_where_sides_are_known_and_widens_where_not():
    # org 0 below its fair share by 10 (decided), org 1 above by 8 (decided), org 2 open
    pairs = np.array([[1.0, -1.0, 0.0], [-1.0, 1.0, 0.0], [2.0, -2.0, 0.0], [0.0, 0.0, 0.0]])
    fair = _fair([20, 0, 5], [3, 3, 3], [0.5, 0.5, 0.5], pairs=pairs)
    est, lo, hi = unfairness_interval([10, 8, 6], fair)
    assert est == pytest.approx((10 + 8 + 1) / 10)
    # the linear form -(a0 - f0) + (a1 - f1): per pair -(-y0) + (-y1) = y0 - y1
    z = pairs[:, 0] - pairs[:, 1]
    spread = 2.0 * np.sqrt(z.var(ddof=1) / 4)
    assert lo == pytest.approx((18 - spread) / 10)
    assert hi == pytest.approx((18 + spread + 1 + 3) / 10)
    # without the pairs, the standard errors add up (a bound on the sum's)
    _, lo2, hi2 = unfairness_interval([10, 8, 6], _fair([20, 0, 5], [3, 3, 3], [0.5, 0.5, 0.5]))
    assert lo2 == pytest.approx((18 - 2.0 * 1.0) / 10)
    assert hi2 == pytest.approx((18 + 2.0 * 1.0 + 4) / 10)
    # a refined organization adds its own variance, independent of the orders
    fair = _fair([20, 0, 5], [3, 3, 3], [0.5, 0.7, 0.5], pairs=pairs, refined=[False, True, False])
    _, lo3, _ = unfairness_interval([10, 8, 6], fair)
    z = pairs[:, 0]
    assert lo3 == pytest.approx((18 - 2.0 * np.sqrt(z.var(ddof=1) / 4 + 0.49)) / 10)
    assert unfairness_interval([1, 2, 3], _fair([1, 2, 3], [0, 0, 0], [0, 0, 0], p=0)) == (0, 0, 0)


def test_policies_are_ranked_where_their_intervals_separate():
    rows = [
        {"policy": "a", "unfairness": 1.0, "unfairness_low": 0.5, "unfairness_high": 1.5},
        {"policy": "b", "unfairness": 1.4, "unfairness_low": 1.2, "unfairness_high": 2.0},
        {"policy": "c", "unfairness": 3.0, "unfairness_low": 1.8, "unfairness_high": 4.0},
        {"policy": "d", "unfairness": 9.0, "unfairness_low": 8.0, "unfairness_high": 10.0},
        {"policy": "e", "unfairness": None},
    ]
    rank_policies(rows)
    got = {r["policy"]: (r.get("rank"), r.get("tied_with")) for r in rows}
    assert got == {
        "a": (1, ["b"]),
        "b": (1, ["a", "c"]),
        "c": (2, ["b"]),  # a lies wholly below c
        "d": (4, []),
        "e": (None, None),
    }
    exact = [{"policy": p, "unfairness": x} for p, x in (("r", 0.0), ("s", 0.0), ("t", 2.0))]
    rank_policies(exact)
    assert [(r["rank"], r["tied_with"]) for r in exact] == [(1, ["s"]), (1, ["r"]), (3, [])]


def _stand_in_game(rec, T):
    """Every coalition of ``rec`` valued under FAIRSHARE (the sampled game's stand-in), the
    grand coalition too: the table, and the fair utilities ``f`` (its Shapley values)."""
    from coopsched.audit.sampling import coalition_values
    from coopsched.online.shapley import shapley

    inst = dataclasses.replace(rec, start=None)
    table = [0] + [coalition_values(inst, T, [T], m)[0] for m in range(1, 1 << rec.k)]
    return table, np.array([float(x) for x in shapley(table)])


def test_sampled_counterfactuals_cover_the_exact_unfairness(monkeypatch):
    """On a game valued in full (8 organizations), each policy's exact unfairness against the
    stand-in game's fair utilities, ``sum |psi_P - f| / p_tot``, lies in the sampled audit's
    interval in the stated share over seeded runs (the runs are the sample: the policies
    of one run share their orders), the intervals are not all wide (some policies are told
    apart), and the recorded schedule's row is ``sum |vs_ref| / p_tot``."""
    from coopsched.audit import sampling
    from coopsched.audit.counterfactuals import policy_names
    from coopsched.audit.game import recorded_schedule
    from coopsched.audit.sampling import sampled_game
    from coopsched.audit.unfairness import fair_shares
    from coopsched.online.policies import get_policy

    T = 60
    rec = fifo_recorded(8, 120, 3)
    table, f = _stand_in_game(rec, T)
    inst = dataclasses.replace(rec, start=None)
    stand_in = get_policy("fairshare").run(inst, T)
    p_tot = sum(stand_in.work(T))
    assert sum(stand_in.psi(T)) == table[-1]
    schedules = {"recorded": recorded_schedule(rec, T)}
    for name in policy_names():
        if name not in ("ref", "rand", "directcontr"):  # (seeded ones: same figures)
            schedules[name] = get_policy(name).run(inst, T)
    psis = {n: s.psi(T) for n, s in schedules.items()}
    exact = {n: float(np.abs(np.array(p, float) - f).sum()) / p_tot for n, p in psis.items()}
    monkeypatch.setattr(sampling, "coalition_values", lambda i, h, g, m, *a: [table[m]])
    monkeypatch.setattr(sampling, "CoalitionValuer", lambda *a: lambda m: [table[m]])
    recorded_total = sum(psis["recorded"])
    shares, separated = [], 0
    for seed in range(200):
        sg = sampled_game(rec, T, [], samples=40, seed=seed, confidence=CONF)
        fair = fair_shares(sg, (table[-1] - recorded_total) / rec.k, p_tot, CONF)
        rows = []
        for name, psi in psis.items():
            est, lo, hi = unfairness_interval(psi, fair)
            assert lo <= est <= hi
            rows.append(
                {"policy": name, "unfairness": est, "unfairness_low": lo, "unfairness_high": hi}
            )
        shares.append(
            np.mean(
                [
                    lo <= exact[r["policy"]] <= hi
                    for r in rows
                    for lo, hi in [(r["unfairness_low"], r["unfairness_high"])]
                ]
            )
        )
        rank_policies(rows)
        separated += max(r["rank"] for r in rows) > 1
        vs_ref = np.array(psis["recorded"], float) - fair.f
        assert rows[0]["unfairness"] == pytest.approx(np.abs(vs_ref).sum() / p_tot)
    assert upper_bound(shares) >= CONF, np.mean(shares)
    assert np.mean(shares) >= CONF - 0.02
    assert separated >= 150, separated


def test_the_audits_outputs_carry_each_policys_interval_and_rank(capsys):
    """A sampled audit's report: every counterfactual (REF left out) with its estimate inside
    its interval and a rank, the recorded row too; the stand-in's own total is the one the
    report's ``efficiency`` names; JSON, CSV (``# counterfactual:`` lines), the table and
    the HTML page show them. An exact audit's intervals are points."""
    from rich.console import Console

    from coopsched.audit.html import render_html
    from coopsched.audit.report import render_table

    rec = fifo_recorded(8, 120, 3)
    r = audit(rec, horizon=60, method="sampled", samples=200, points=2)
    rows = r.to_dict()["counterfactuals"]
    names = [c["policy"] for c in rows]
    assert "ref" not in names and names[0] == "recorded"
    for c in rows:
        assert c["unfairness_low"] <= c["unfairness"] <= c["unfairness_high"]
        assert c["rank"] >= 1 and isinstance(c["tied_with"], list)
    assert any(c["unfairness_high"] > c["unfairness_low"] for c in rows)
    assert any("estimated against the fair utilities" in n for n in r.notes)
    vs_ref = np.array([o.vs_ref for o in r.organizations])
    stand = next(c for c in rows if c["policy"] == "fairshare")
    assert stand["unfairness"] > 0  # FAIRSHARE is not its own game's fair shares
    # the recorded row: sum |vs_ref| / p_tot, p_tot the work of FAIRSHARE's schedule
    from coopsched.online.policies import get_policy

    work = sum(get_policy("fairshare").run(dataclasses.replace(rec, start=None), 60).work(60))
    assert rows[0]["unfairness"] == pytest.approx(np.abs(vs_ref).sum() / work)
    csv_text = to_csv(r)
    lines = [x for x in csv_text.splitlines() if x.startswith("# counterfactual: ")]
    assert lines[0] == (
        "# counterfactual: policy,unfairness,unfairness_low,unfairness_high,rank,tied_with,"
        "utilization"
    )
    assert len(lines) == len(rows) + 1 and lines[1].startswith("# counterfactual: recorded,")
    buf = io.StringIO()
    render_table(r, Console(file=buf, width=160))
    text = buf.getvalue()
    assert "95% interval" in text and "rank: 1 + the schedules" in text
    page = render_html(r)
    assert 'id="fig-counterfactuals"' in page and "95% interval" in page
    json.dumps(r.to_dict())  # serializable
    exact = audit(rec, horizon=60, points=2).to_dict()["counterfactuals"]
    assert next(c for c in exact if c["policy"] == "ref")["rank"] == 1
    for c in exact:
        assert c["unfairness_low"] == c["unfairness"] == c["unfairness_high"]
