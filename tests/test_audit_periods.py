"""Months side by side (issue 43, item 6): ``coopsched audit LOG --by-month`` audits each
month on its own, with its own backlog, and names who was short-changed persistently
(:mod:`coopsched.audit.periods`)."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import numpy as np
import pytest
from conftest import trace_path

from coopsched.audit import audit
from coopsched.audit.periods import audit_periods, periods, persistent, to_csv
from coopsched.audit.window import WindowError
from coopsched.cli import main

EPOCH = int(datetime(2024, 1, 1, tzinfo=UTC).timestamp())
DAY = 86400


def row(job, submit, wait, run, procs, user):
    f = [-1] * 18
    f[:5] = [job, submit, wait, run, procs]
    f[11], f[12] = user, 1
    return " ".join(map(str, f))


def three_months(tmp_path, seed=0):
    """An SWF log of January to March 2024 (UTC) on 4 processors: users 1 and 2 submit
    every few hours; user 1's jobs wait longer every month (the recorded scheduler favoured
    user 2); a job of user 1 submitted on 31 January at 20:00 runs across midnight."""
    rng = np.random.default_rng(seed)
    rows, n = [], 0
    for month_start in (0, 31 * DAY, 60 * DAY):
        for h in range(0, 28 * 24, 7):
            for user, wait in ((1, 6 * 3600), (2, 0)):
                n += 1
                submit = month_start + h * 3600 + int(rng.integers(0, 600))
                rows.append(row(n, submit, wait, 3 * 3600, 1, user))
    n += 1
    rows.append(row(n, 31 * DAY - 4 * 3600, 0, 8 * 3600, 1, 1))
    rows.sort(key=lambda r: int(r.split()[1]))
    p = tmp_path / "three.swf"
    p.write_text(
        f"; UnixStartTime: {EPOCH}\n; TimeZoneString: UTC\n; MaxProcs: 4\n" + "\n".join(rows) + "\n"
    )
    return p


def test_calendar_months_and_weeks_in_the_log_zone():
    epoch = int(datetime(2024, 1, 15, tzinfo=UTC).timestamp())
    got = periods(0, 60 * DAY, "month", epoch, "UTC")
    assert [g[0] for g in got] == ["2024-01", "2024-02", "2024-03"]
    assert got[0][1] == 0 and got[-1][2] == 60 * DAY  # clipped to the window
    assert got[1][1] == 17 * DAY and got[1][2] == 17 * DAY + 29 * DAY  # 2024 is a leap year
    # consecutive and covering
    assert all(a[2] == b[1] for a, b in zip(got, got[1:], strict=False))
    weeks = periods(0, 15 * DAY, "week", epoch, "UTC")  # 2024-01-15 is a Monday
    assert [w[0] for w in weeks] == ["2024-01-15", "2024-01-22", "2024-01-29"]
    assert weeks[0][2] - weeks[0][1] == 7 * DAY and weeks[-1][2] == 15 * DAY
    # in Europe/Paris, the month starts at local midnight (23:00 UTC the day before)
    paris = periods(0, 40 * DAY, "month", epoch, "Europe/Paris")
    assert paris[1][1] == 17 * DAY - 3600
    # without dates: weeks of 7 days from the start, months refused
    assert periods(5, 5 + 10 * DAY, "week", None, None)[1] == ("week 2", 5 + 7 * DAY, 5 + 10 * DAY)
    with pytest.raises(WindowError, match="no dates"):
        periods(0, 10, "month", None, None)
    assert periods(10, 10, "month", epoch, "UTC") == []


def test_the_persistence_rule():
    rows = [
        {"name": "a", "sign": ["-", "-", "?", None]},  # 2 of 3 decided short-changed
        {"name": "b", "sign": ["-", "+", "-", "-"]},  # once decided favoured: not persistent
        {"name": "c", "sign": ["-", "?", "?", "?"]},  # 1 of 4: less than half
        {"name": "d", "sign": ["-", "?", None, None]},  # 1 of 2: half
        {"name": "e", "sign": ["-", None, None, None]},  # one period only
        {"name": "f", "sign": ["0", "0", "-", "-"]},
    ]
    assert persistent(rows) == ["a", "d", "f"]


def test_each_month_is_the_audit_of_that_window_with_its_backlog(tmp_path):
    p = three_months(tmp_path)
    r = audit_periods(p, "month", org_by="user")
    assert [x["label"] for x in r["periods"]] == ["2024-01", "2024-02", "2024-03"]
    feb = audit(p, t_from="2024-02-01", t_to="2024-03-01", org_by="user").to_dict()
    assert r["periods"][1]["backlog"] == feb["window"]["backlog"]
    assert feb["window"]["backlog"]["running"] >= 1  # the job across midnight is pinned
    by_name = {o["name"]: o for o in feb["organizations"]}
    for o in r["organizations"]:
        assert o["surplus_core_hours"][1] == pytest.approx(by_name[o["name"]]["surplus_core_hours"])
    one, two = (next(o for o in r["organizations"] if o["name"] == n) for n in ("1", "2"))
    assert one["sign"] == ["-", "-", "-"] and two["sign"] == ["+", "+", "+"]
    assert r["persistent"]["short_changed"] == ["1"]
    assert r["organizations"][0]["name"] == "1"  # the most short-changed first
    json.dumps(r)
    lines = to_csv(r).splitlines()
    assert lines[0].startswith("# short-changed persistently: audited in at least two")
    assert lines[1] == "# short-changed persistently: 1"
    assert lines[2] == "period,name,surplus_core_hours,sign" and len(lines) == 3 + 6


def test_cli_by_month_table_json_csv_html_and_errors(tmp_path, capsys):
    p = three_months(tmp_path)
    page = tmp_path / "m.html"

    def cli(*flags):
        return main(["audit", str(p), "--org-by", "user", *flags])

    assert cli("--by-month", "--no-counterfactuals", "--html", str(page)) == 0
    out = capsys.readouterr().out
    assert "2024-02" in out and "Short-changed persistently: 1." in out
    html = page.read_text()
    assert 'id="fig-periods"' in html and 'id="periods"' in html and "<svg" in html
    assert cli("--by-week", "--to", "2024-01-15", "--format", "json") == 0
    got = json.loads(capsys.readouterr().out)
    assert got["by"] == "week"
    assert [x["label"] for x in got["periods"]] == ["2024-01-01", "2024-01-08"]
    assert cli("--by-month", "--format", "csv", "--quiet") == 0
    assert capsys.readouterr().out.splitlines()[2] == "period,name,surplus_core_hours,sign"
    assert cli("--by-month", "--by-week") == 1
    assert "error: --by-week: give by_month or by_week, not both" in capsys.readouterr().err
    with pytest.raises(ValueError, match="by_month: audit\\(\\) audits one window"):
        audit(p, by_month=True)


def test_a_month_without_jobs_is_noted_and_an_error_names_its_month(tmp_path):
    p = three_months(tmp_path)
    lines = p.read_text().splitlines()
    keep = [
        x
        for x in lines
        if x.startswith(";") or not 31 * DAY - 5 * 3600 <= int(x.split()[1]) < 60 * DAY
    ]
    gap = tmp_path / "gap.swf"
    gap.write_text("\n".join(keep) + "\n")
    r = audit_periods(gap, "month", org_by="user", with_counterfactuals=False, points=2)
    assert [x["label"] for x in r["periods"]] == ["2024-01", "2024-02", "2024-03"]
    assert r["periods"][1]["note"] == "no job runs or waits in this month"
    assert all(o["sign"][1] is None for o in r["organizations"])
    assert "2024-02" in to_csv(r) and ",2024-02," not in to_csv(r)
    with pytest.raises(WindowError, match=r"^month 2024-01: .*machines"):
        audit_periods(p, "month", org_by="user", machines=1)


def top_users_mapping(path, top, tmp):
    """A mapping file naming the ``top`` users of the whole log with the most work, one
    organization each (the others go to ``other``)."""
    from coopsched.audit import load_log

    j = load_log(path).jobs
    work = (j["processors"] * (j["end"] - j["start"])).groupby(j["user"]).sum()
    names = work.sort_values(ascending=False).index[:top]
    m = tmp / "top.toml"
    m.write_text("".join(f'[[organization]]\nname = "u{u}"\nusers = ["{u}"]\n' for u in names))
    return m


@pytest.mark.slow
def test_a_year_by_month_on_a_project_trace(tmp_path):
    """KTH-SP2, the whole log (30 September 1996 to 29 August 1997), by its 7 busiest users
    and 'other', month by month: twelve exact audits, each equal to the audit of its own
    month; the persistent verdicts follow the rule."""
    path = trace_path("KTH-SP2-1996-2.1-cln.swf.gz")
    from coopsched.audit import load_log
    from coopsched.audit.window import recorded_peak

    log = load_log(path)
    peak = recorded_peak(log, int(log.jobs["submit"].min()), int(log.jobs["end"].max()))
    assert peak > 100  # the log states 100 processors and runs up to this many at once
    mapping = top_users_mapping(path, 7, tmp_path)
    opts = dict(mapping=mapping, other="other", machines=peak, with_counterfactuals=False, points=2)
    r = audit_periods(path, "month", **opts)
    labels = [x["label"] for x in r["periods"]]
    assert labels[0] == "1996-09" and labels[-1] == "1997-08" and len(labels) == 12
    assert all(x["method"] == "exact" for x in r["periods"])
    assert persistent(r["organizations"]) == r["persistent"]["short_changed"]
    assert all(s in ("-", "+", "0") for o in r["organizations"] for s in o["sign"] if s)
    may = audit(path, t_from="1997-05-01", t_to="1997-06-01", **opts).to_dict()
    i = labels.index("1997-05")
    assert r["periods"][i]["backlog"] == may["window"]["backlog"]
    for o in may["organizations"]:
        row_ = next(x for x in r["organizations"] if x["name"] == o["name"])
        assert row_["surplus_core_hours"][i] == pytest.approx(o["surplus_core_hours"])
