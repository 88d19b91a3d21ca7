"""The documentation site in a browser (issue 39 item 4): built with ``mkdocs build --strict``
(the docs extra), served on the loopback and opened in Debian's headless chromium, driven by
playwright as the HTML report's tests do. The pages render, the navigation works, the
figures load, every local link of every page resolves, and nothing is fetched from elsewhere.
Slow (a build and a browser): ``pytest -m slow`` and .ci/run run it."""

from __future__ import annotations

import functools
import http.server
import os
import re
import subprocess
import sys
import threading
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

import pytest
from test_html_report import _browser

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.slow

# the pages opened in the browser: every hand-written page, and a sample of the reference
SAMPLE = ["reference/index.html", "reference/coopsched.online.schedule.html"]


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built in strict mode from this checkout."""
    if importlib_missing("mkdocs") or importlib_missing("mkdocstrings"):
        if os.environ.get("CI"):
            pytest.fail("CI must build the site: pip install -e '.[docs]'")
        pytest.skip("the docs extra is not installed (pip install -e '.[docs]')")
    out = tmp_path_factory.mktemp("site")
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    res = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env=env,
        timeout=900,
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return out


def importlib_missing(name: str) -> bool:
    import importlib.util

    return importlib.util.find_spec(name) is None


@pytest.fixture(scope="module")
def server(site):
    """The site on a loopback port (material's search loads its index over HTTP)."""
    handler = functools.partial(QuietHandler, directory=str(site))
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/"
    finally:
        httpd.shutdown()
        httpd.server_close()


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):  # no line per request in the test output
        pass


def _h1(page) -> str:
    """The page's title (without the permalink sign)."""
    return page.locator("article h1").first.inner_text().replace("¶", "").strip()


@pytest.fixture
def browser(tmp_path):
    with _browser(tmp_path) as page:
        page.set_viewport_size({"width": 1400, "height": 900})  # wide: the nav is a sidebar
        yield page


class _Links(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.urls: list[str] = []

    def handle_starttag(self, tag, attrs):
        for key, value in attrs:
            if key in ("href", "src") and value:
                self.urls.append(value)


def _hand_written(site: Path) -> list[str]:
    pages = [p.relative_to(site).as_posix() for p in site.glob("*.html") if p.name != "404.html"]
    return sorted(pages)


def test_every_local_link_of_every_page_resolves(site):
    dead = []
    pages = [p for p in site.rglob("*.html") if p.name != "404.html"]  # 404: absolute links
    assert len(pages) > 100  # the hand-written pages and one per public module
    for page in pages:
        parser = _Links()
        parser.feed(page.read_text())
        for url in parser.urls:
            parts = urlsplit(url)
            if parts.scheme or parts.netloc or url.startswith(("#", "mailto:")):
                continue
            target = (page.parent / unquote(parts.path)).resolve()
            if not target.exists():
                dead.append(f"{page.relative_to(site)}: {url}")
    assert not dead, dead[:20]


def test_pages_render_with_nothing_fetched_from_elsewhere(site, server, browser):
    for rel in _hand_written(site) + SAMPLE:
        browser.errors.clear()
        browser.requests.clear()
        response = browser.goto(urljoin(server, rel), wait_until="load")
        assert response is not None and response.status == 200, rel
        assert browser.locator("article h1").first.is_visible() and _h1(browser), rel
        assert not browser.errors, (rel, browser.errors)
        outside = [u for u in browser.requests if not u.startswith(server)]
        assert not outside, (rel, outside)
    # the reference renders the docstrings, not the raw reStructuredText
    browser.goto(urljoin(server, "reference/coopsched.online.schedule.html"), wait_until="load")
    assert browser.locator(".doc-object, .doc").count() > 5
    assert ":func:" not in browser.locator("article").inner_text()


def test_the_navigation_works(server, browser):
    browser.goto(server, wait_until="load")
    assert _h1(browser) == "coopsched"
    browser.locator('nav.md-nav--primary a.md-nav__link[href="performance.html"]').click()
    browser.wait_for_load_state("load")
    assert browser.url.endswith("/performance.html")
    assert _h1(browser) == "Performance"
    # a link of the page's text: the README's front-page table, back on the home page
    browser.locator("article a", has_text="README").first.click()
    browser.wait_for_load_state("load")
    assert re.search(r"/index\.html(#.*)?$", browser.url), browser.url
    # the API reference: the section of a module, its page, a class documented on it
    browser.goto(urljoin(server, "reference/index.html"), wait_until="load")
    browser.locator("article a", has_text="coopsched.Schedule").first.click()
    browser.wait_for_load_state("load")
    assert "reference/coopsched.online.schedule.html" in browser.url
    assert browser.locator("#coopsched\\.online\\.schedule\\.Schedule").count() == 1
    assert not browser.errors, browser.errors


def _figures() -> dict[str, int]:
    """The HTML page of each Markdown source that shows figures, and how many it shows."""
    sources = {"index.html": ROOT / "README.md"}
    sources |= {f"{p.stem}.html": p for p in (ROOT / "docs").glob("*.md")}
    counts = {}
    for page, src in sources.items():
        text = re.sub(r"```.*?```", "", src.read_text(), flags=re.S)
        if n := len(re.findall(r"!\[[^\]]*\]\(", text)):
            counts[page] = n
    return counts


def test_the_figures_load(server, browser):
    figures = _figures()
    assert {"index.html", "tour.html", "reproduction.html"} <= set(figures)
    for page, n in figures.items():
        browser.goto(urljoin(server, page), wait_until="load")
        sizes = browser.locator("article img").evaluate_all(
            "(imgs) => imgs.map((i) => [i.currentSrc, i.naturalWidth])"
        )
        assert len(sizes) >= n, page
        broken = [src for src, width in sizes if width == 0]
        assert not broken, (page, broken)
