"""The audit's HTML page (issue #14 item 6): self-contained, escaped, and correct in a browser.

The browser tests open the page in Debian's ``chromium`` (headless, driven by playwright) and
skip with a reason when chromium or the playwright driver is missing.
"""

from __future__ import annotations

import contextlib
import functools
import html
import io
import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from coopsched.audit.html import (
    COLLAPSE_ABOVE,
    FIGURES,
    LEGEND_EACH,
    LEGEND_MAX,
    SHOW_EACH,
    duration,
    render_html,
)

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
EVIL = '<b>lab</b> & "co" $x$'


def make_report(names: list[str], sampled: bool = False, seed: int = 0) -> dict:
    """A realistic audit report: psi and phi of the same size, surplus = psi - phi."""
    rng = np.random.default_rng(seed)
    t0, horizon = 1_700_000_000, 6 * 3600
    t = [i * 600 for i in range(1, horizon // 600 + 1)]  # seconds since the window's start
    orgs, surplus, util = [], {}, {}
    for i, name in enumerate(names):
        machines = int(rng.integers(1, 9))
        work = int(rng.integers(10_000, 100_000))
        phi = float(rng.uniform(1e8, 5e8))
        psi = phi * float(rng.uniform(0.8, 1.2))
        org = {
            "name": name,
            "machines": machines,
            "jobs": int(rng.integers(5, 300)),
            "work": work,
            "psi": psi,
            "phi": phi,
            "phi_low": phi * 0.97 if sampled else None,
            "phi_high": phi * 1.03 if sampled else None,
            "surplus": psi - phi,
            "surplus_per_unit": (psi - phi) / work,
            "surplus_core_hours": (psi - phi) / horizon / 3600,
        }
        orgs.append(org)
        ramp = np.linspace(0.0, 1.0, len(t)) ** 2
        surplus[name] = list(ramp * (psi - phi) + rng.normal(0, abs(psi - phi) * 0.05, len(t)))
        util[name] = list(np.clip(0.5 + 0.4 * np.sin(np.arange(len(t)) / 4 + i), 0, 1))
    return {
        "window": {
            "from": "2023-11-14T22:13:20+00:00",
            "to": "2023-11-15T04:13:20+00:00",
            "t0": t0,
            "t1": t0 + horizon,
            "horizon": horizon,
            "timezone": "UTC",
            "log": "sacct_X_utc.txt",
            "org_by": "account",
            "machines": 24,
            "contribution_rule": "machines by job share",
            "backlog": {"waiting": 2, "running": 1},
        },
        "method": "sampled" if sampled else "exact",
        "confidence": 0.95 if sampled else None,
        "organizations": orgs,
        "counterfactuals": [
            {"policy": "recorded", "unfairness": None if sampled else 31.0, "utilization": 0.8},
            {"policy": "ref", "unfairness": None if sampled else 0.0, "utilization": 0.81},
            {"policy": "rand", "unfairness": None if sampled else 12.5, "utilization": 0.81},
            {"policy": "fairshare", "unfairness": None if sampled else 40.25, "utilization": 0.79},
        ],
        "curves": {"t": t, "surplus": surplus, "utilization": util},
        "excluded": {"job step line (sacct without -X)": 12, "end before start": 1},
    }


def _sorted_names(report: dict) -> list[tuple[str, float]]:
    """(name, surplus), most short-changed first: the order the page must show."""
    orgs = sorted(report["organizations"], key=lambda o: o["surplus"])
    return [(o["name"], o["surplus"]) for o in orgs]


# --- page content, no browser ---------------------------------------------------------------


def test_page_is_self_contained_and_escaped():
    page = render_html(make_report(["physics", EVIL, "_hidden"]))
    assert "<script" not in page.lower()
    # nothing is fetched: the only URL is the SVG namespace
    urls = set(re.findall(r"https?://[^\s\"')]+", page))
    assert urls <= {"http://www.w3.org/2000/svg", "http://www.w3.org/1999/xlink"}
    assert not re.search(r"""(src|href)\s*=\s*["']?(https?:|//)""", page)
    assert "@import" not in page and "@font-face" not in page
    # the name is never raw markup, in tables or in the SVG text
    assert "<b>lab</b>" not in page
    assert "&lt;b&gt;lab&lt;/b&gt; &amp; &quot;co&quot; $x$" in page
    for fig in FIGURES:
        assert f'id="{fig}"' in page
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), "duplicate ids across the inlined figures"


def test_legends_name_every_organization_even_with_underscore_or_dollar():
    names = ["_hidden", "a$b$", "plain"]
    page = render_html(make_report(names))
    surplus = page[page.index('id="fig-surplus"') : page.index('id="fig-utilization"')]
    for name in names:
        # svg.fonttype none keeps text as text; '$' stays literal (no mathtext)
        assert f">{name}<" in surplus or f"> {name}<" in surplus, name


def test_sampled_note_and_intervals_only_when_sampled():
    exact = render_html(make_report(["a", "b"]))
    sampled = render_html(make_report(["a", "b"], sampled=True))
    assert "sampled-note" not in exact and "phi interval" not in exact
    assert 'id="sampled-note"' in sampled and "95% confidence" in sampled
    assert sampled.count("<td>[") == 2
    # the estimator, when the report names it, and the platform against the stand-in
    report = make_report(["a", "b"], sampled=True)
    report["sampling"] = {"samples": 40, "seed": 0, "estimator": "split: <exact> share"}
    report["efficiency"] = {
        "recorded_total": 80,
        "ref_total": 100,
        "loss": 20,
        "loss_fraction": 0.2,
        "loss_share": 10.0,
        "loss_core_hours": None,
        "reference": "fairshare",
    }
    page = render_html(report)
    note = _section(page, 'id="sampled-note"', "</p>")
    assert "Estimator: split: &lt;exact&gt; share" in note
    eff = _section(page, 'id="efficiency"', "</div>")
    assert "The platform against FAIRSHARE." in eff and "stand-in for REF" in eff
    assert "REF would have" not in eff


def _section(page: str, start: str, end: str) -> str:
    """The page from ``start`` to the first ``end`` after it."""
    i = page.index(start)
    return page[i : page.index(end, i)]


def test_twenty_organizations_and_one():
    for k in (1, 20):
        names = [f"org{i:02d}" for i in range(k)]
        page = render_html(make_report(names, seed=k))
        table = _section(page, 'id="organizations"', 'id="specialists"')
        assert table.count('<td class="name">org') == k
        assert _section(page, 'id="utilities"', "</table>").count('<td class="name">org') == k
        util = page[page.index('id="fig-utilization"') :]
        if k <= LEGEND_MAX:
            assert all(f">{n}<" in util for n in names)
        else:  # the most short-changed and most favoured named, the others under one entry
            order = [n for n, _ in _sorted_names(make_report(names, seed=k))]
            named = order[:LEGEND_EACH] + order[-LEGEND_EACH:]
            assert all(f">{n}<" in util for n in named)
            assert not any(f">{n}<" in util for n in order if n not in named)
            assert f">{k - 2 * LEGEND_EACH} others (grey)<" in util


def test_surplus_sign_is_coloured():
    report = make_report(list("abcdef"), seed=0)
    page = render_html(report)
    assert {o["surplus"] > 0 for o in report["organizations"]} == {True, False}
    for o in report["organizations"]:
        sign = "pos" if o["surplus"] > 0 else "neg"
        for table in ("organizations", "utilities"):
            part = page[page.index(f'id="{table}"') :]
            row = re.search(
                rf'<tr[^>]*>(<td>\d+</td>)?<td class="name">{o["name"]}</td>.*?</tr>', part
            )
            assert row is not None and f'class="{sign}"' in row.group(0), (table, o["name"])


def test_interval_bound_at_zero_is_drawn():
    from coopsched.audit.html import _bound

    org = {"phi": 5.0, "phi_low": 0.0, "phi_high": None}
    assert (_bound(org, "phi_low"), _bound(org, "phi_high")) == (0.0, 5.0)


def test_same_report_same_bytes():
    report = make_report(["a", "b", "c"], sampled=True)
    assert render_html(report) == render_html(report)


def test_unfairness_not_computed_is_explained():
    page = render_html(make_report(["a", "b"], sampled=True))
    table = page[page.index('id="counterfactuals"') :]
    # (an older report: rank, unfairness and its interval unknown on each of the 4 rows)
    assert table.count("<td>—</td>") == 12 and "not computed" in table
    assert "not computed" not in render_html(make_report(["a", "b"]))


def test_real_audit_of_the_slurm_fixture_renders():
    """With the audit (branch ``audit``) present: the page of a real sacct capture."""
    audit_mod = pytest.importorskip("coopsched.audit")
    if not hasattr(audit_mod, "audit"):
        pytest.skip("coopsched.audit.audit is not in this build")
    fixture = Path(__file__).parent / "fixtures" / "slurm" / "sacct_X_utc.txt"
    report = audit_mod.audit(fixture, org_by="account", timezone="UTC", machines=4)
    page = render_html(report)
    for org in report.organizations:
        assert f'<td class="name">{org.name}</td>' in page
    for fig in FIGURES:
        assert f'id="{fig}"' in page


def test_missing_curves_give_a_note_not_an_empty_figure():
    report = make_report(["a", "b"])
    report["curves"] = {"t": [], "surplus": {}, "utilization": {}}
    page = render_html(report)
    assert 'id="fig-surplus-missing"' in page and 'id="fig-contribution"' in page


def test_no_organizations_is_an_error():
    report = make_report(["a"])
    report["organizations"] = []
    with pytest.raises(ValueError, match="no organizations"):
        render_html(report)


def _big(k: int) -> dict:
    """A report of ``k`` organizations: exact at 5, sampled (with intervals) beyond."""
    return make_report([f"org{i:03d}" for i in range(k)], sampled=k > 5, seed=k)


@functools.cache
def _big_page(k: int) -> str:
    return render_html(_big(k))


def _table_names(page: str, table: str) -> list[str]:
    part = _section(page, f'id="{table}"', "</table>")
    return [html.unescape(n) for n in re.findall(r'<td class="name">([^<]*)</td>', part)]


@pytest.mark.parametrize("k", [5, 30, 140])
def test_rows_are_sorted_most_short_changed_first(k):
    report, page = _big(k), _big_page(k)
    order = [n for n, _ in _sorted_names(report)]
    assert order != [o["name"] for o in report["organizations"]], "the test needs a reorder"
    assert _table_names(page, "organizations") == order
    assert _table_names(page, "utilities") == order
    surplus = [float(x) for x in re.findall(r'data-surplus="([^"]+)"', page)]
    assert surplus == sorted(surplus) and len(surplus) == k
    ranks = re.findall(r'<tr class="(?:un)?decided"[^>]*><td>(\d+)</td>', page)
    assert ranks == [str(i + 1) for i in range(k)]


def test_decided_marks_follow_the_intervals():
    report = _big(30)
    orgs = report["organizations"]
    # one organization exactly on the bound: |surplus| = half-width is not decided
    orgs[0]["phi_low"], orgs[0]["phi_high"] = orgs[0]["phi"] - 5e6, orgs[0]["phi"] + 5e6
    orgs[0]["surplus"] = -5e6
    page = render_html(report)
    expected = {o["name"]: abs(o["surplus"]) > (o["phi_high"] - o["phi_low"]) / 2 for o in orgs}
    assert 0 < sum(expected.values()) < len(orgs), "the test needs both kinds"
    rows = re.findall(r'<tr class="(decided|undecided)" data-name="([^"]+)"', page)
    assert {n: c == "decided" for c, n in rows} == expected
    marks = re.findall(r'<td class="mark"[^>]*>([^<]*)</td>', page)
    assert sum(m.startswith("✓") for m in marks) == sum(expected.values())
    n_short = sum(expected[o["name"]] and o["surplus"] < 0 for o in orgs)
    assert f"Signs decided by the intervals: {n_short} short-changed" in page
    # an exact audit decides every sign
    exact = render_html(make_report([f"o{i}" for i in range(6)], seed=0))
    assert exact.count('<tr class="decided"') == 6 and 'class="undecided"' not in exact
    assert "every sign is decided" in exact


def test_equivalent_wait_is_the_uniform_delay_that_gives_the_surplus():
    """Starting every job d seconds later lowers psi_sp by d x work: the page's 'extra wait
    per job' of a surplus psi(late) - psi(fair) is d."""
    from coopsched.audit.html import core_hours, wait_hours
    from coopsched.online.utilities import psi_sp

    rng = np.random.default_rng(1)
    n, T, d = 40, 200_000, 5_400
    size = rng.integers(60, 3_600, n)
    width = rng.integers(1, 9, n)
    start = rng.integers(0, T - d - 4_000, n)
    org = np.zeros(n, dtype=np.int64)
    fair = psi_sp(org, start, size, T, 1, width)[0]
    late = psi_sp(org, start + d, size, T, 1, width)[0]
    work = int((size * width).sum())
    row = {"surplus": float(late - fair), "work": work, "surplus_core_hours": None}
    assert wait_hours(row) == pytest.approx(d / 3600)
    assert wait_hours(row, T) == pytest.approx(d / 3600)  # within the window's length
    assert core_hours(row, T) == pytest.approx(-d * work / T / 3600)
    assert wait_hours({"surplus": 1.0, "work": 0}) is None


def test_the_wait_per_job_is_shown_only_where_the_work_makes_it_mean_something():
    """A few seconds of work against a large surplus would read as a wait of years: the
    wait is shown only when it is at most the window's length (work >= |surplus| / T),
    else '—' with a footnote stating the rule, in the table and on the page."""
    from rich.console import Console

    from coopsched.audit.numbers import WAIT_RULE, wait_hours
    from coopsched.audit.report import render_table

    T = 7 * 86400
    assert wait_hours({"surplus": -T * 100.0, "work": 100}, T) == pytest.approx(T / 3600)
    assert wait_hours({"surplus": -T * 100.0 - 1, "work": 100}, T) is None
    assert wait_hours({"surplus": T * 100.0 + 1, "work": 100}, T) is None
    assert wait_hours({"surplus": -T * 100.0 - 1, "work": 100}) is not None  # no window
    report = make_report(["a", "b", "c"])
    rows = report["organizations"]
    rows[0]["work"], rows[0]["surplus"] = 2, 10.0 * report["window"]["horizon"]
    buf = io.StringIO()
    render_table(report, Console(file=buf, width=300))
    out = buf.getvalue()
    assert "— *" in out and f"*: no wait/job: it is {WAIT_RULE}" in " ".join(out.split())
    page = render_html(report)
    assert "<sup>*</sup></td>" in page and 'id="wait-rule"' in page


def test_durations_in_the_unit_people_read():
    cases = {1 / 3600: "1 s", -59 / 3600: "59 s", 1.5 / 60: "1.5 min", 1.0: "1 h"}
    cases |= {47.9: "47.9 h", 72.0: "3 days"}
    for hours, text in cases.items():
        assert duration(hours) == text, hours
    assert duration(-0.5, signed=True) == "-30 min" and duration(2.0, signed=True) == "+2 h"
    assert duration(0.0, signed=True) == "0 s" and duration(None) == "—"


def test_time_axis_in_the_logs_dates_and_zone():
    report = make_report(["a", "b"])  # 22:13 to 04:13 UTC: Paris is one hour ahead
    utc = render_html(report)
    report["window"]["timezone"] = "Europe/Paris"
    paris = render_html(report)
    for page, zone in ((utc, "UTC"), (paris, "Europe/Paris")):
        fig = _section(page, 'id="fig-surplus"', "</figure>")
        assert f"date and time ({zone})" in fig and "since the start" not in fig
    assert ">05:00<" in _section(paris, 'id="fig-surplus"', "</figure>")
    assert ">05:00<" not in _section(utc, 'id="fig-surplus"', "</figure>")
    report["window"]["from"] = None  # no date (a JSON schedule): hours since the start
    fig = _section(render_html(report), 'id="fig-surplus"', "</figure>")
    assert "hours since the start of the window" in fig


def test_headline_in_core_hours_and_wait_per_job():
    report = make_report(list("abcdef"), seed=0)
    page = render_html(report)
    worst = min(report["organizations"], key=lambda o: o["surplus"])
    best = max(report["organizations"], key=lambda o: o["surplus"])
    head = _section(page, 'id="headline"', "</p>")
    hours = -worst["surplus"] / worst["work"] / 3600
    assert f"Most short-changed: <b>{worst['name']}</b>" in head
    assert f"{-worst['surplus_core_hours']:.3g} core-hours behind" in head
    assert f"waited {duration(hours)} longer" in head
    assert f"Most favoured: <b>{best['name']}</b>" in head
    # psi and phi stay for the specialists, in their units
    assert "processor-seconds x seconds" in _section(page, 'id="specialists"', "</summary>")


def test_long_lists_collapse_and_get_a_search_box():
    small, mid, big = _big_page(5), _big_page(30), _big_page(140)
    assert "<script" not in small and 'id="org-search"' not in small
    assert 'id="org-search"' in mid and 'id="show-all"' not in mid
    assert 'id="show-all"' in big and 'class="more"' in big
    more = _section(big, '<tbody class="more">', "</tbody>")
    assert more.count("<tr") == 140 - 2 * SHOW_EACH and COLLAPSE_ABOVE < 140
    # the page's only script is inline and fetches nothing
    assert big.count("<script") == 1 and "<script>" in big
    script = _section(big, "<script>", "</script>")
    for word in ("http", "fetch", "XMLHttpRequest", "import", "src="):
        assert word not in script


def test_many_organizations_name_a_few_in_the_legends():
    page, order = _big_page(140), [n for n, _ in _sorted_names(_big(140))]
    for fig in ("fig-surplus", "fig-utilization"):
        part = _section(page, f'id="{fig}"', "</figure>")
        assert ">130 others (grey)<" in part
        assert sum(f">{n}<" in part for n in order) == 2 * LEGEND_EACH
    bars = _section(page, 'id="fig-verdict"', "</figure>")
    assert "100 organizations in between" in bars
    assert f">{order[0]}<" in bars and f">{order[-1]}<" in bars


# --- in a real headless browser ---------------------------------------------------------------

FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


@contextlib.contextmanager
def _browser(tmp_path: Path, javascript: bool = True):
    """A page of a fresh headless chromium profile; records console errors and requests."""
    if CHROMIUM is None:
        pytest.skip("Debian's chromium is not installed (apt-get install chromium)")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="the playwright driver is not installed (test extra)"
    )
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            user_data_dir=str(tmp_path / "profile"),
            executable_path=CHROMIUM,
            headless=True,
            args=FLAGS,
            viewport={"width": 1200, "height": 900},
            java_script_enabled=javascript,
        )
        try:
            page = context.new_page()
            page.errors = []  # type: ignore[attr-defined]
            page.requests = []  # type: ignore[attr-defined]
            page.on("console", lambda m: m.type == "error" and page.errors.append(m.text))
            page.on("pageerror", lambda e: page.errors.append(str(e)))
            page.on("request", lambda r: page.requests.append(r.url))
            yield page
        finally:
            context.close()


@pytest.fixture
def browser_page(tmp_path):
    with _browser(tmp_path) as page:
        yield page


@pytest.fixture
def browser_page_without_js(tmp_path):
    with _browser(tmp_path, javascript=False) as page:
        yield page


def _open(page, tmp_path: Path, report: dict) -> Path:
    path = tmp_path / "report.html"
    path.write_text(render_html(report), encoding="utf-8")
    page.goto(path.as_uri(), wait_until="load")
    return path


@pytest.mark.parametrize("sampled", [False, True])
def test_browser_loads_with_every_figure_and_the_table(browser_page, tmp_path, sampled):
    report = make_report(["physics", "chemistry", EVIL, "astro"], sampled=sampled)
    path = _open(browser_page, tmp_path, report)
    assert browser_page.errors == []
    assert browser_page.requests == [path.as_uri()], "the page fetched something"
    for fig in FIGURES:
        svg = browser_page.locator(f"#{fig} svg")
        assert svg.count() == 1, fig
        box = svg.bounding_box()
        assert box is not None and box["width"] > 200 and box["height"] > 100, (fig, box)
        drawn = browser_page.locator(f"#{fig} svg path, #{fig} svg rect").count()
        assert drawn > 10, (fig, drawn)
    rows = browser_page.locator("#counterfactuals tr")
    assert rows.count() == 1 + len(report["counterfactuals"])
    assert rows.nth(3).locator("td").nth(1).inner_text() == "rand"  # (after the rank)
    assert rows.nth(1).get_attribute("class") == "recorded"
    assert browser_page.locator("#organizations tr").count() == 1 + 4
    # the hostile name is shown as text, not interpreted
    assert browser_page.locator("#organizations b").count() == 0
    assert EVIL in browser_page.locator("#organizations").inner_text()
    assert (browser_page.locator("#sampled-note").count() == 1) is sampled


def test_browser_screenshot_is_not_blank(browser_page, tmp_path):
    from PIL import Image

    _open(browser_page, tmp_path, make_report([f"org{i}" for i in range(12)], sampled=True))
    shot = tmp_path / "report.png"
    browser_page.screenshot(path=str(shot), full_page=True)
    img = np.asarray(Image.open(shot).convert("L"), dtype=float)
    assert img.shape[0] > 1500 and img.shape[1] >= 1200
    assert img.std() > 20
    assert (img < 200).mean() > 0.02, "almost nothing drawn"
    assert browser_page.errors == []


#: A typical laptop window and a phone's.
WIDTHS = (1280, 400)


def _visible_rows(page) -> int:
    return page.locator("#organizations tbody tr[data-name]:visible").count()


@pytest.mark.parametrize("k", [5, 30, 140])
def test_browser_many_organizations_fit_sorted_and_marked(browser_page, tmp_path, k):
    from PIL import Image

    report = _big(k)
    path = tmp_path / f"report{k}.html"
    path.write_text(_big_page(k), encoding="utf-8")
    for width in WIDTHS:
        browser_page.set_viewport_size({"width": width, "height": 900})
        browser_page.goto(path.as_uri(), wait_until="load")
        scroll, inner = browser_page.evaluate(
            "[document.documentElement.scrollWidth, window.innerWidth]"
        )
        assert scroll <= inner, (k, width, scroll, inner)
        shot = tmp_path / f"report{k}-{width}.png"
        browser_page.screenshot(path=str(shot), full_page=True)
        img = np.asarray(Image.open(shot).convert("L"), dtype=float)
        assert img.shape[1] == width and img.std() > 20
    names = browser_page.eval_on_selector_all(
        "#organizations tbody tr[data-name]", "rows => rows.map(r => r.dataset.name)"
    )
    assert names == [n for n, _ in _sorted_names(report)]
    decided = [
        abs(o["surplus"]) > (o["phi_high"] - o["phi_low"]) / 2 if k > 5 else True
        for o in report["organizations"]
    ]
    assert browser_page.locator("#organizations tr.decided").count() == sum(decided)
    marks = browser_page.locator("#organizations tr.decided td.mark").all_inner_texts()
    assert all(m.startswith("✓") for m in marks)
    assert _visible_rows(browser_page) == (k if k <= COLLAPSE_ABOVE else 2 * SHOW_EACH)
    assert browser_page.locator("#org-search").is_visible() is (k > 10)
    assert browser_page.errors == []
    assert browser_page.requests == [path.as_uri()] * len(WIDTHS)


def test_browser_show_all_and_search(browser_page, tmp_path):
    path = tmp_path / "report.html"
    path.write_text(_big_page(140), encoding="utf-8")
    browser_page.goto(path.as_uri(), wait_until="load")
    assert _visible_rows(browser_page) == 2 * SHOW_EACH
    browser_page.locator("#show-all").check()
    assert _visible_rows(browser_page) == 140
    browser_page.locator("#show-all").uncheck()
    assert _visible_rows(browser_page) == 2 * SHOW_EACH
    # a search looks through the hidden rows too
    browser_page.locator("#org-search").fill("ORG07")
    visible = browser_page.locator("#organizations tbody tr[data-name]:visible")
    found = visible.evaluate_all("rows => rows.map(r => r.dataset.name)")
    assert sorted(found) == [f"org07{i}" for i in range(10)]
    assert browser_page.locator("#org-search-count").inner_text() == "10 of 140 organizations"
    browser_page.locator("#org-search").fill("")
    assert _visible_rows(browser_page) == 2 * SHOW_EACH
    assert browser_page.errors == []


def test_browser_without_javascript_still_shows_all(browser_page_without_js, tmp_path):
    page = browser_page_without_js
    path = tmp_path / "report.html"
    path.write_text(_big_page(140), encoding="utf-8")
    page.goto(path.as_uri(), wait_until="load")
    assert not page.locator("#org-search").is_visible()  # no dead control
    assert _visible_rows(page) == 2 * SHOW_EACH
    page.locator("#organizations tbody.gap label").click()  # "show all", in the table
    assert _visible_rows(page) == 140


# --- the Owen value by units (issue #29 item 4) ------------------------------------------------

TREE = Path(__file__).parent / "fixtures" / "slurm-tree"


def with_owen(report: dict, sampled: bool, seed: int = 0) -> dict:
    """``report`` with a synthetic ``owen`` section over a three-level tree: faculties of
    departments of groups, the organizations spread over the groups, the last one alone."""
    rng = np.random.default_rng(seed)
    orgs = report["organizations"]
    units: list[dict] = []
    path_of: dict[str, list[str]] = {}
    leaves = []
    for f in range(2):
        fac = f"faculty-of-{'very-long-name-' * 3}{f}"
        units.append({"name": fac, "parent": None, "level": 1})
        for d in range(2):
            dept = f"f{f}-dept{d}"
            units.append({"name": dept, "parent": fac, "level": 2})
            for g in range(2):
                grp = f"{dept}-grp{g}"
                units.append({"name": grp, "parent": dept, "level": 3})
                leaves.append([fac, dept, grp])
    rows = []
    for i, o in enumerate(orgs):
        path = leaves[i % len(leaves)] if i < len(orgs) - 1 else []
        path_of[o["name"]] = path
        owen = o["phi"] * float(rng.uniform(0.9, 1.1))
        hw = abs(o["psi"] - owen) * float(rng.uniform(0.3, 1.7)) if sampled else 0.0
        rows.append(
            {
                "name": o["name"],
                "units": path,
                "psi": o["psi"],
                "phi": o["phi"],
                "owen": owen,
                "owen_exact": None,
                "owen_low": owen - hw,
                "owen_high": owen + hw,
                "sign_decided": abs(o["psi"] - owen) > hw,
                "owen_surplus": o["psi"] - owen,
                "owen_minus_phi": owen - o["phi"],
            }
        )
    for u in units:
        mine = [r for r in rows if u["name"] in r["units"]]
        u |= {
            "members": [r["name"] for r in mine],
            "psi": sum(r["psi"] for r in mine),
            "phi": sum(r["phi"] for r in mine),
            "owen": sum(r["owen"] for r in mine),
            "owen_surplus": sum(r["owen_surplus"] for r in mine),
            "value_alone": sum(r["psi"] for r in mine) * 0.9,
            "shapley_quotient": None,
        }
    report["owen"] = {
        "hierarchy": "mapping units.toml",
        "levels": 3,
        "method": "sampled" if sampled else "exact",
        "text": "Owen value (Owen 1977; nested units: Winter 1989)",
        "organizations": rows,
        "units": units,
    }
    if sampled:
        report["owen"]["samples"] = 120
    return report


def _owen_rows(page: str) -> list[list[str]]:
    """The Owen table's cells, row by row, as text."""
    body = _section(page, 'id="owen-organizations"', "</table>")
    return [
        [html.unescape(c) for c in re.findall(r"<td[^>]*>([^<]*)</td>", row)]
        for row in re.findall(r"<tr class=.*?</tr>", body)
    ]


def _tree_args(tmp_path: Path) -> list[str]:
    args = ["audit", str(TREE / "sacct_X_utc.txt"), "--org-by", "account", "--timezone", "UTC"]
    args += ["--shares", str(TREE / "sacctmgr_assoc.txt"), "--machines", "202"]
    return args + ["--no-counterfactuals", "--points", "2", "--html", str(tmp_path / "t.html")]


@functools.cache
def _tree_report_and_page(tmp: str) -> tuple[dict, str]:
    """The real tree capture audited through the CLI with --shares and --html."""
    import json

    from coopsched.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*_tree_args(Path(tmp)), "--format", "json"]) == 0
    return json.loads(out.getvalue()), (Path(tmp) / "t.html").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    return _tree_report_and_page(str(tmp_path_factory.mktemp("tree")))


def test_owen_section_of_the_real_tree_through_the_cli(tree):
    report, page = tree
    ow, T = report["owen"], report["window"]["horizon"]
    assert 'id="owen"' in page and page.index('id="utilities"') < page.index('id="owen"')
    rows = _owen_rows(page)
    order = sorted(ow["organizations"], key=lambda o: o["owen_surplus"])
    assert [r[1] for r in rows] == [o["name"] for o in order]
    assert [o["name"] for o in order] != [o["name"] for o in ow["organizations"]]
    for r, o in zip(rows, order, strict=True):
        where = "/".join(o["units"]) or "— (alone)"
        assert r[2] == where and r[3].startswith("✓"), r  # exact: every sign decided
        assert "±" not in r[4]
        assert float(r[4]) == pytest.approx(o["owen"] / T / 3600, rel=2e-3)
        assert float(r[5]) == pytest.approx(o["owen_minus_phi"] / T / 3600, rel=2e-3)
        assert float(r[6]) == pytest.approx(o["owen_surplus"] / T / 3600, rel=2e-3)
        assert ("short-changed" in r[3]) is (o["owen_surplus"] < 0)
    units = _section(page, 'id="owen-unit-table"', "</table>")
    assert re.findall(r'<td class="name path"[^>]*>([^<]*)</td>', units) == ["life", "sciences"]
    life = next(u for u in ow["units"] if u["name"] == "life")
    cells = re.findall(r"<td[^>]*>([^<]*)</td>", units)[:7]
    assert cells[1] == "2" and float(cells[4]) == pytest.approx(life["owen"] / T / 3600, 2e-3)
    assert float(cells[6]) == pytest.approx(life["value_alone"] / T / 3600, rel=2e-3)
    assert '<details id="owen-units" open>' in page  # two units, two levels: open


def test_no_owen_section_without_units():
    page = render_html(make_report(["a", "b"]))
    assert 'id="owen"' not in page and "owen-organizations" not in page


@pytest.mark.parametrize("sampled", [False, True])
def test_owen_section_of_a_nested_tree(sampled):
    report = with_owen(make_report([f"org{i:02d}" for i in range(12)], sampled=sampled), sampled)
    ow, T = report["owen"], report["window"]["horizon"]
    page = render_html(report)
    rows = _owen_rows(page)
    order = sorted(ow["organizations"], key=lambda o: o["owen_surplus"])
    assert [r[1] for r in rows] == [o["name"] for o in order]
    for r, o in zip(rows, order, strict=True):
        assert r[2] == ("/".join(o["units"]) or "— (alone)")
        decided = o["sign_decided"] or not sampled
        assert r[3].startswith("✓" if decided else "?"), r
        hw = (o["owen_high"] - o["owen_low"]) / 2 / T / 3600
        assert r[4].endswith(f" ± {float(f'{hw:.2g}'):g}") if sampled else "±" not in r[4]
    if sampled:
        assert 0 < sum(r[3].startswith("✓") for r in rows) < len(rows), "needs both kinds"
        assert "120 orders" in _section(page, 'id="owen"', "</p>")
    # the units table: every unit by its path, parents first, indented by level; deep: folded
    units = _section(page, 'id="owen-unit-table"', "</table>")
    paths = re.findall(r'<td class="name path"[^>]*>([^<]*)</td>', units)
    assert len(paths) == len(ow["units"]) == 14
    assert paths[2] == f"{ow['units'][0]['name']}/{ow['units'][1]['name']}/{ow['units'][2]['name']}"
    assert units.count('data-level="3"') == 8 and "padding-left:2.75rem" in units
    assert '<details id="owen-units">' in page  # three levels: folded


def test_owen_browser_fits_at_1280_and_400(browser_page, tmp_path, tree):
    """The real tree's page and a synthetic nested one, unfolded: no horizontal overflow."""
    from PIL import Image

    nested = with_owen(make_report([f"org{i:02d}" for i in range(30)], sampled=True), True)
    pages = {"tree": tree[1], "nested": render_html(nested)}
    for name, text in pages.items():
        path = tmp_path / f"{name}.html"
        path.write_text(text, encoding="utf-8")
        for width in WIDTHS:
            browser_page.set_viewport_size({"width": width, "height": 900})
            browser_page.goto(path.as_uri(), wait_until="load")
            for box in ("owen-orgs", "owen-units"):
                browser_page.evaluate(f"document.getElementById('{box}').open = true")
            assert browser_page.locator("#owen-unit-table tbody tr").first.is_visible()
            assert browser_page.locator("#owen-organizations tbody tr").count() == (
                6 if name == "tree" else 30
            )
            scroll, inner = browser_page.evaluate(
                "[document.documentElement.scrollWidth, window.innerWidth]"
            )
            assert scroll <= inner, (name, width, scroll, inner)
            shot = tmp_path / f"owen-{name}-{width}.png"
            browser_page.locator("#owen").scroll_into_view_if_needed()
            browser_page.screenshot(path=str(shot), full_page=True)
            img = np.asarray(Image.open(shot).convert("L"), dtype=float)
            assert img.shape[1] == width and img.std() > 20
    assert browser_page.errors == []


def test_cli_table_sorted_with_the_wait_per_job(tmp_path, capsys):
    """The text table: most short-changed first and the HTML's wait per job; JSON keeps the
    report's order (sorting is display only)."""
    import json

    from coopsched.audit.numbers import wait_hours
    from coopsched.cli import main

    args = _tree_args(tmp_path)[:-2]
    assert main([*args, "--format", "json"]) == 0
    report = json.loads(capsys.readouterr().out)
    from rich.console import Console

    from coopsched.audit.report import render_table

    buf = io.StringIO()
    render_table(json.loads(json.dumps(report)), Console(file=buf, width=200))
    out = buf.getvalue()
    assert [o["name"] for o in report["organizations"]][:2] == ["root", "astro"]  # log's order
    table = out[out.index("Who was short-changed") : out.index("Owen value")]
    lines = [ln for ln in table.splitlines() if ln.startswith("│")]
    cells = [[c.strip() for c in ln.strip("│").split("│")] for ln in lines]
    order = sorted(report["organizations"], key=lambda o: o["surplus"])
    assert [c[0] for c in cells] == [o["name"] for o in order]
    assert [c[0] for c in cells] != [o["name"] for o in report["organizations"]]
    assert "wait/job" in table
    for c, o in zip(cells, order, strict=True):
        wait = wait_hours(o, report["window"]["horizon"])
        assert c[-1] == ("— *" if wait is None else duration(wait, signed=True)), c
    assert cells[0][-1] == "+43.3 s"  # biology: -(-2643) / 61 s
    owen = out[out.index("Owen value") : out.index("Units: sums")]
    names = [ln.strip("│").split("│")[0].strip() for ln in owen.splitlines() if ln[:1] == "│"]
    ow = sorted(report["owen"]["organizations"], key=lambda o: o["owen_surplus"])
    assert names == [o["name"] for o in ow]
