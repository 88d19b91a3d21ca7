"""Help that reads (issue 39 item 5): the commands with many options group them in panels,
and ``coopsched audit --help`` fits in about 60 lines at 100 columns, its options built
from the audit's option records (issue 40 item 5)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import fields

import pytest

from coopsched.audit.options import ADVANCED, PANELS, RECORDS, flag_of


def help_of(*args: str) -> str:
    env = {**os.environ, "COLUMNS": "100", "NO_COLOR": "1", "TERM": "dumb"}
    out = subprocess.run(
        [sys.executable, "-c", "from coopsched.cli import run; run()", *args, "--help"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    return out.stdout


def panels(text: str) -> dict[str, str]:
    """Each panel's title and body, in the order shown."""
    out: dict[str, str] = {}
    title = None
    for line in text.splitlines():
        m = re.match(r"^╭─ (.+?) ─", line)
        if m:
            title = m.group(1)
            out[title] = ""
        elif line.startswith("╰"):
            title = None
        elif title is not None:
            out[title] += line + "\n"
    return out


def test_audit_help_fits_in_60_lines_at_100_columns_in_panels():
    text = help_of("audit")
    lines = text.rstrip("\n").splitlines()
    assert len(lines) <= 60, len(lines)
    assert max(len(line) for line in lines) <= 100
    shown = panels(text)
    assert list(shown) == ["Arguments", *PANELS]  # no panel of its own for --help
    assert "--help" in shown["Output"] and "--format" in shown["Output"]
    # every option on one line: a row per option, its help beside it
    rows = [ln for body in shown.values() for ln in body.splitlines()]
    assert all(re.match(r"^│ +(\*|--|-[a-z] |log)", ln) for ln in rows), rows


def test_audit_flags_come_from_the_records_and_sit_in_their_panel():
    shown = panels(help_of("audit"))
    for _, cls in RECORDS:
        for f in fields(cls):
            fl = flag_of(f)
            flag = fl.cli_flag(f.name)
            if fl.type is bool and f.default is True:
                flag = "--no-" + flag[2:]
            assert re.search(rf"│ {re.escape(flag)}\b", shown[fl.panel]), (flag, fl.panel)
            assert fl.help in " ".join(shown[fl.panel].split()) or fl.panel == ADVANCED
    assert "--cpu-seconds" in shown["Estimation and budget"]
    assert "--interval" in shown[ADVANCED] and "--interval" not in shown["Estimation and budget"]


def test_audit_defaults_are_the_records_defaults(monkeypatch, tmp_path):
    """The command passes the records as the defaults make them: no default restated."""
    import coopsched.audit.run as run
    from coopsched.cli import main

    got: dict = {}

    def fake(log, progress=None, **records):
        got.update(records)
        raise ValueError("stop here")

    import coopsched.audit

    monkeypatch.setattr(coopsched.audit, "audit", fake)  # (its old value read first)
    monkeypatch.setattr(run, "audit", fake)
    assert main(["audit", str(tmp_path / "x.swf"), "--quiet"]) == 1
    assert {param: cls() for param, cls in RECORDS} == got
    got.clear()
    assert main(["audit", "x.swf", "--no-refine", "--no-counterfactuals", "--allocate"]) == 1
    assert got["estimation"].refine is False and got["estimation"].allocate is True
    assert got["contents"].with_counterfactuals is False


def test_audit_errors_name_the_flags(capsys):
    from coopsched.cli import main

    for args, said in (
        (["--samples", "2"], "error: --samples: 2 is not a value in 4..1,000,000"),
        (["--cpu-seconds", "0"], "error: --cpu-seconds: 0.0 is not a positive number"),
        (["--from", "next week"], "error: --from: 'next week' is neither seconds"),
        (["--method", "guess"], "error: --method: 'guess'; choose from auto"),
    ):
        assert main(["audit", "x.swf", *args]) == 1
        assert said in capsys.readouterr().err


@pytest.mark.parametrize("command", ["simulate", "compare"])
def test_commands_with_many_options_group_them(command):
    shown = panels(help_of(command))
    assert {"Workload", "Platform model", "Policy", "Output"} <= set(shown)
    assert "Options" not in shown
    assert "--backfill" in shown["Platform model"] and "--window-start" in shown["Workload"]


def test_the_game_groups_its_options():
    shown = panels(help_of("game"))
    assert list(shown)[1:] == ["Action", "Mechanism", "Instance", "Output"]
    assert "--starts" in shown["Action"] and "--help" in shown["Output"]


def test_a_studys_options_have_their_panel():
    shown = panels(help_of("reproduce", "table1"))
    assert "--windows" in shown["The study's options"] and "--out" in shown["Options"]
