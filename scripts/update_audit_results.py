"""Rerun the worked audits of docs/audit.md and rewrite docs/results/audit/.

    python scripts/update_audit_results.py [--traces DIR] [--slurm-only]

Each audit runs through the command line, exactly as the page shows it, on the rigid
model (the default for logs) and, for the comparison the page draws, on the sequential
split (``--jobs sequential``). The Slurm capture's HTML report is also photographed in
headless chromium (Debian's, driven by playwright). The SWF logs are read from ``--traces``
(default ``../shared/traces``); the Slurm capture is the test fixture.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "docs" / "results" / "audit"
SLURM = "tests/fixtures/slurm/sacct_X_utc.txt"
LPC = "LPC-EGEE-2004-1.2-cln.swf.gz"
SDSC = "SDSC-SP2-1998-4.2-cln.swf.gz"


def coopsched(*args: str, cwd: Path = ROOT) -> str:
    """The command's output, run in ``cwd`` (the logs' folder for the SWF audits, so that
    the outputs name the log as a user who downloaded it would: by its file name)."""
    env = {**os.environ, "COLUMNS": "120", "NO_COLOR": "1"}
    exe = Path(sys.executable).with_name("coopsched")
    res = subprocess.run(
        [str(exe), *args], cwd=cwd, env=env, capture_output=True, text=True, check=False
    )
    if res.returncode:
        raise SystemExit(f"coopsched {' '.join(args)} failed:\n{res.stderr}")
    return res.stdout


def screenshot(html: Path, png: Path) -> None:
    from playwright.sync_api import sync_playwright

    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        raise SystemExit(
            "Debian's chromium is needed for the screenshot (apt-get install chromium)"
        )
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 1100, "height": 900})
        page.goto(html.as_uri())
        page.wait_for_timeout(500)
        page.screenshot(path=str(png), full_page=True)
        browser.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--traces", type=Path, default=ROOT.parent / "shared" / "traces")
    ap.add_argument(
        "--slurm-only",
        action="store_true",
        help="only the Slurm capture (seconds): its outputs, HTML page and screenshot",
    )
    a = ap.parse_args()
    a.traces = a.traces.resolve()
    OUT.mkdir(parents=True, exist_ok=True)
    w = lambda name, text: (OUT / name).write_text(text)  # noqa: E731

    # the real Slurm capture (tests/fixtures/slurm), accounts as organizations
    slurm = [SLURM, "--org-by", "account", "--timezone", "UTC", "--machines", "4"]
    html = OUT / "slurm-capture.html"
    w("slurm-capture.txt", coopsched("audit", *slurm, "--html", str(html.relative_to(ROOT))))
    w("slurm-capture-sequential.txt", coopsched("audit", *slurm, "--jobs", "sequential"))
    screenshot(html, OUT / "slurm-capture.png")
    if a.slurm_only:
        print(f"rewrote the Slurm capture's outputs in {OUT}")
        return

    # LPC-EGEE, the week of 20 December 2004, groups as organizations (serial jobs)
    lpc = [
        LPC,
        "--org-by",
        "group",
        "--from",
        "2004-12-20",
        "--to",
        "2004-12-27",
    ]
    w("lpc-egee-2004-12-20.txt", coopsched("audit", *lpc, cwd=a.traces))
    w("lpc-egee-2004-12-20.json", coopsched("audit", *lpc, "--format", "json", cwd=a.traces))
    w(
        "lpc-egee-2004-12-20-equal.txt",
        coopsched("audit", *lpc, "--contribution", "equal", cwd=a.traces),
    )

    # SDSC-SP2 (parallel jobs), the week of 27 April 1998, groups as organizations
    sdsc = [
        SDSC,
        "--org-by",
        "group",
        "--from",
        "1998-04-27",
        "--to",
        "1998-05-04",
    ]
    w("sdsc-sp2-1998-04-27.txt", coopsched("audit", *sdsc, cwd=a.traces))
    w("sdsc-sp2-1998-04-27.json", coopsched("audit", *sdsc, "--format", "json", cwd=a.traces))
    w(
        "sdsc-sp2-1998-04-27-sequential.txt",
        coopsched("audit", *sdsc, "--jobs", "sequential", cwd=a.traces),
    )
    print(f"rewrote {OUT}")


if __name__ == "__main__":
    main()
