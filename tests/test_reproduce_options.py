"""``coopsched reproduce STUDY``: each study's options are data (``Study.options``), its
``--help`` lists them and no other, another study's flag is refused on one line, and every
command line the README and the docs show still parses (issue 26, item 4)."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from coopsched.cli import _command, main
from coopsched.experiments.studies import get_study
from coopsched.experiments.study import STUDIES, StudyOption

get_study("table1")  # loads the built-in studies
ROOT = Path(__file__).resolve().parents[1]
RUNNER = {"--out", "--quick", "--workers", "--scheduler", "--seed", "--help"}


def _reproduce():
    return _command(["reproduce"]).commands["reproduce"]


def _flags(help_text: str) -> set[str]:
    return set(re.findall(r"(?<![\w-])--[a-z][a-z-]*", help_text)) - {
        f"--no-{f[2:]}" for f in re.findall(r"--[a-z][a-z-]*", help_text)
    }


@pytest.mark.parametrize("name", STUDIES)
def test_a_studys_help_lists_exactly_its_options(name, capsys, monkeypatch):
    monkeypatch.setenv("COLUMNS", "300")
    cls = STUDIES[name]
    assert all(isinstance(o, StudyOption) for o in cls.options)
    assert main(["reproduce", name, "--help"]) == 0
    out = capsys.readouterr().out
    options = out[out.index("Options") :]  # the help text of an option may name another flag
    shown = {f for f in _flags(options) if re.search(rf"^\W*{f}\b", options, re.M)}
    assert shown == RUNNER | {o.cli_flag for o in cls.options}
    assert cls.title in " ".join(out.split())


def test_options_are_declared_once_and_match_configure():
    """Every option is a keyword of the study's ``configure``; a flag means one thing in
    every study that takes it (same type and conversion; ``--windows`` is ``instances``
    for mosp and the game)."""
    import inspect

    by_flag: dict[str, StudyOption] = {}
    for cls in STUDIES.values():
        keywords = inspect.signature(cls.configure).parameters
        assert set(cls.option_names()) <= set(keywords), cls.name
        assert len(set(cls.option_names())) == len(cls.options)
        for o in cls.options:
            first = by_flag.setdefault(o.cli_flag, o)
            assert (first.type, first.convert) == (o.type, o.convert), o.cli_flag


@pytest.mark.parametrize("name", STUDIES)
def test_another_studys_flag_is_refused_on_one_line(name, capsys, monkeypatch):
    cls = STUDIES[name]
    monkeypatch.setattr(cls, "run", lambda *a, **k: pytest.fail("the study ran"))
    own = {o.cli_flag for o in cls.options}
    foreign = next(o for other in STUDIES.values() for o in other.options if o.cli_flag not in own)
    value = [] if foreign.type is bool else ["1" if foreign.type is int else "x"]
    assert main(["reproduce", name, foreign.cli_flag, *value, "--out", "/nonexistent/x"]) == 1
    err = capsys.readouterr().err
    accepted = ", ".join(o.cli_flag for o in cls.options) or "none besides --quick and --seed"
    assert err == (
        f"error: reproduce {name}: option(s) {foreign.cli_flag} do not apply "
        f"(accepted: {accepted})\n"
    )


def test_zero_is_a_value_and_no_backlog_asks_for_nothing(capsys):
    assert main(["reproduce", "rigid", "--warmup", "0"]) == 1
    assert "option(s) --warmup do not apply" in capsys.readouterr().err
    ctx = _reproduce().make_context("reproduce", ["poa", "--no-backlog"])
    assert ctx.params["what"] == "poa"


def test_an_unknown_study_is_named(capsys):
    assert main(["reproduce", "nosuch", "--windows", "3"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: unknown study 'nosuch'; choose from ")
    from coopsched.experiments.study import STUDIES

    assert err.strip().split("choose from ")[1] == ", ".join(sorted(STUDIES))


def test_the_flags_reach_the_study(monkeypatch, capsys, tmp_path):
    """Flag to keyword, with its conversion (one METACENTRUM machine count to a dict),
    and options before the study's name as after it."""
    seen = {}

    def run(self, out, **kwargs):
        seen["study"], seen["out"], seen["run"] = self, out, kwargs
        return None, "summary"

    cls = STUDIES["table1"]
    monkeypatch.setattr(cls, "run", run)
    traces = tmp_path / "traces"  # any existing folder: the study is not run
    traces.mkdir()
    args = ["--workers", "1", "--windows", "2", "table1", "--metacentrum-machines", "7"]
    args += ["--window-sampling", "job", "--backlog", "--traces", str(traces), "--seed", "3"]
    assert main(["reproduce", *args, "--out", str(tmp_path)]) == 0
    spec = seen["study"].spec
    assert (spec.windows, spec.machines, spec.sampling, spec.backlog) == (
        2,
        {"METACENTRUM": 7},
        "job",
        True,
    )
    assert (spec.seed, seen["out"], seen["run"]["workers"]) == (3, tmp_path, 1)
    monkeypatch.setattr(STUDIES["mosp"], "run", run)
    assert main(["reproduce", "mosp", "--windows", "5", "--quick"]) == 0
    assert seen["study"].spec.instances == 5 and seen["out"] == Path("results/mosp-quick")
    assert capsys.readouterr().out.startswith("summary\nwritten to ")


def _documented() -> list[list[str]]:
    """Every ``coopsched reproduce ...`` command line of the README and docs/."""
    lines = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for m in re.finditer(r"coopsched (reproduce [^`#)\n]*)", page.read_text()):
            lines.add(m.group(1).strip())
    return [shlex.split(line) for line in sorted(lines) if not re.search(r"\||NAME|STUDY", line)]


def test_the_documented_command_lines_parse():
    documented = _documented()
    assert ["reproduce", "list"] in documented and len(documented) > 10
    assert any("--policies" in args for args in documented)
    for args in documented:
        if args == ["reproduce"]:
            continue  # prose: "`coopsched reproduce` ..."
        ctx = _reproduce().make_context("reproduce", args[1:])
        assert ctx.params["what"] == args[1], args
