"""docs/python.md is a doctest: its session runs on the LPC-EGEE log (skipped without it)."""

from __future__ import annotations

import doctest
import re
from pathlib import Path

import pytest
from conftest import TRACES

DOC = Path(__file__).resolve().parents[1] / "docs" / "python.md"


def test_python_md_session(tmp_path, monkeypatch):
    if not (TRACES / "LPC-EGEE-2004-1.2-cln.swf.gz").exists():
        pytest.skip("the LPC-EGEE log is not available here")
    import pandas as pd

    monkeypatch.setenv("COOPSCHED_TRACES", str(TRACES))
    monkeypatch.setenv("COOPSCHED_PWA_URL", "http://127.0.0.1:9/")  # never download here
    monkeypatch.chdir(tmp_path)
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.S)
    test = doctest.DocTestParser().get_doctest("\n".join(blocks), {}, "python.md", str(DOC), 0)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE | doctest.ELLIPSIS)
    with pd.option_context("display.width", 100):
        res = runner.run(test)
    assert res.attempted >= 10
    assert res.failed == 0
    assert (tmp_path / "gantt.png").stat().st_size > 10_000
