"""The audit's HTML page (issue #14 item 6): self-contained, escaped, and correct in a browser.

The browser tests open the page in Debian's ``chromium`` (headless, driven by playwright) and
skip with a reason when chromium or the playwright driver is missing.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import numpy as np
import pytest

from coopsched.audit.html import FIGURES, render_html

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


def test_twenty_organizations_and_one():
    for k in (1, 20):
        names = [f"org{i:02d}" for i in range(k)]
        page = render_html(make_report(names, seed=k))
        table = page[page.index('id="organizations"') :]
        assert table.count('<td class="name">org') == k
        util = page[page.index('id="fig-utilization"') :]
        assert all(f">{n}<" in util for n in names)


def test_surplus_sign_is_coloured():
    report = make_report(["a", "b", "c"], seed=3)
    page = render_html(report)
    signs = ["pos" if o["surplus"] > 0 else "neg" for o in report["organizations"]]
    rows = re.findall(r'<tr><td class="name">[^<]*</td>.*?</tr>', page)[: len(signs)]
    for row, sign in zip(rows, signs, strict=True):
        assert f'class="{sign}"' in row


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
    assert table.count("<td>—</td>") == 4 and "not computed" in table
    assert "not computed" not in render_html(make_report(["a", "b"]))


def test_real_audit_of_the_slurm_fixture_renders():
    """With the audit (branch ``audit``) present: the page of a real sacct capture."""
    audit_mod = pytest.importorskip("coopsched.audit")
    if not hasattr(audit_mod, "audit"):
        pytest.skip("coopsched.audit.audit is not in this build")
    fixture = Path(__file__).parent / "fixtures" / "slurm" / "sacct_X_utc.txt"
    report = audit_mod.audit(fixture, org_by="account", timezone="UTC", machines=4)
    page = render_html(report)
    for org in report["organizations"]:
        assert f'<td class="name">{org["name"]}</td>' in page
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


@pytest.fixture
def browser_page(tmp_path):
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
    assert rows.nth(3).locator("td").first.inner_text() == "rand"
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
