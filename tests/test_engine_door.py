"""One door to the engines (#40 item 4): ``simulate(..., engine=)``, ``--engine`` on the
command line, and one clear error for a policy the compiled engine cannot run."""

from __future__ import annotations

import json

import pytest

from coopsched.cli import main
from coopsched.online.engine import Policy, simulate
from coopsched.online.policies import Fifo, get_policy
from coopsched.workloads.instance import make_instance

INST = make_instance([1, 2], [(0, 0, 3), (1, 0, 2), (1, 1, 4), (0, 2, 1), (1, 3, 2)])

PLUGIN = """
from coopsched.online.engine import Policy
from coopsched.online.policies import get_policy


class Newest(Policy):
    name = "newest"

    def select(self, view):
        return max(view.candidates(), key=view.head_position)


class Own(Policy):
    name = "own"

    def run(self, instance, horizon=None, members=None):
        return get_policy("fifo").run(instance, horizon, members)
"""


class Newest(Policy):
    name = "newest"

    def select(self, view):
        return max(view.candidates(), key=view.head_position)


@pytest.mark.parametrize("name", ["fifo", "directcontr", "rand", "ref"])
def test_every_engine_choice_gives_the_same_schedule(name):
    runs = {
        e: simulate(INST, get_policy(name), 9, engine=e) for e in ("auto", "python", "compiled")
    }
    assert len({tuple(s.start.tolist()) for s in runs.values()}) == 1
    assert len({tuple(s.machine.tolist()) for s in runs.values()}) == 1
    if name in ("fifo", "directcontr"):
        assert runs["python"].info["engine"] == "python"
        assert runs["compiled"].info["engine"] == "compiled"


def test_a_plugin_on_the_compiled_engine_gets_one_clear_error():
    with pytest.raises(
        ValueError, match=r"^engine: 'compiled' cannot run Newest: it has no compiled rule"
    ) as e:
        simulate(INST, Newest(), engine="compiled")
    assert "\n" not in str(e.value) and "fifo" in str(e.value) and "'python'" in str(e.value)

    # a subclass of a compiled policy may change select(): it never inherits the rule
    class Later(Fifo):
        pass

    with pytest.raises(ValueError, match="cannot run Later: it has no compiled rule"):
        simulate(INST, Later(), engine="compiled")
    assert simulate(INST, Newest()).info["engine"] == "python"
    assert (
        simulate(INST, Later(), engine="python").start.tolist()
        == simulate(INST, Fifo()).start.tolist()
    )
    with pytest.raises(ValueError, match="engine: 'numba'; choose from auto, python, compiled"):
        simulate(INST, Fifo(), engine="numba")


def test_a_policy_building_its_schedule_without_an_engine_parameter_is_refused_compiled():
    class Own(Policy):
        name = "own"

        def run(self, instance, horizon=None, members=None):
            return simulate(instance, Fifo(), horizon, members, engine="python")

    with pytest.raises(ValueError, match="cannot run Own: it builds its schedule itself"):
        simulate(INST, Own(), engine="compiled")
    assert simulate(INST, Own()).start.tolist() == simulate(INST, Fifo()).start.tolist()


def test_the_engine_flag(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "mine.py").write_text(PLUGIN)
    out = {}
    for engine in ("python", "compiled"):
        args = ["simulate", "--policy", "directcontr", "--engine", engine, "--format", "json"]
        assert main(args) == 0
        out[engine] = json.loads(capsys.readouterr().out)
    assert out["python"] == out["compiled"]
    for cls, why in (("Newest", "it has no compiled rule"), ("Own", "it builds its schedule")):
        assert main(["simulate", "--policy", f"mine.py:{cls}", "--engine", "compiled"]) == 1
        err = capsys.readouterr().err.strip()
        assert err.startswith(f"error: --engine: 'compiled' cannot run {cls}: {why}")
        assert len(err.splitlines()) == 1
        assert main(["simulate", "--policy", f"mine.py:{cls}", "--engine", "python"]) == 0
        capsys.readouterr()
    assert main(["simulate", "--engine", "numba"]) == 1
    assert "error: --engine: 'numba'; choose from auto, python, compiled" in capsys.readouterr().err
