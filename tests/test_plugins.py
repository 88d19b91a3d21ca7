"""Plug-in policies cannot break the tool (issue 41, item 4): the project's checks of a
plug-in, a plug-in's own exceptions (SystemExit too) and a plug-in that never returns are
one-line errors naming it as given (``policy FILE:CLASS ...``), and results are keyed by
something unique: a plug-in may not take a registered name, a policy is compared once."""

from __future__ import annotations

import pytest

from coopsched import make_instance
from coopsched.cli import main
from coopsched.experiments.compare import compare_policies, policy_labels
from coopsched.online.policies import Rand, get_policy, policy_class
from coopsched.online.policies._plugins import PluginError, time_limit

PLUGINS = """
import sys
from coopsched import Policy
from coopsched.online.policies import Fifo


class Fifo2(Policy):
    name = "fifo"

    def select(self, view):
        return view.candidates()[0]


class Inherits(Fifo):
    def __init__(self, seed=0):
        self.seed = seed


class Nothing(Policy):
    name = "nothing"


class NeedsArg(Policy):
    name = "needs-arg"

    def __init__(self, x, seed=0):
        self.x, self.seed = x, seed

    def select(self, view):
        return view.candidates()[0]


class BadRun(Policy):
    name = "bad-run"

    def run(self, instance, horizon=None, members=None, *, backfill=None):
        return 42


class Raises(Policy):
    name = "raises"

    def select(self, view):
        if view.t > 5:
            raise ValueError("bad value")
        return view.candidates()[0]


class Exits(Policy):
    name = "exits"

    def select(self, view):
        sys.exit(0)


class BadPick(Policy):
    name = "bad-pick"

    def select(self, view):
        return 99


class Loops(Policy):
    name = "loops"

    def select(self, view):
        while True:
            try:
                pass
            except Exception:
                pass


class Fine(Policy):
    name = "fine-plugin"

    def select(self, view):
        return view.candidates()[-1]
"""


@pytest.fixture(scope="module")
def plugins(tmp_path_factory):
    path = tmp_path_factory.mktemp("plug") / "plugs.py"
    path.write_text(PLUGINS)
    return path


def _one_line(capsys, argv):
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 1 and err.count("\n") == 1 and "Traceback" not in err, err
    return err.strip()


@pytest.mark.parametrize(
    "cls, message",
    [
        (
            "Fifo2",
            "its name 'fifo' is the registered policy coopsched.online.policies.baselines:Fifo's",
        ),
        ("Inherits", "its name 'fifo' is the registered policy"),
        ("Nothing", "Nothing overrides neither select() nor run()"),
        ("NeedsArg", "NeedsArg.__init__ needs x: every parameter of a policy needs a default"),
        ("BadRun", "run() returned int, not a Schedule"),
        ("BadPick", "select() returned 99 at t="),
    ],
)
def test_the_projects_checks_of_a_plugin_name_its_file_and_class(capsys, plugins, cls, message):
    err = _one_line(capsys, ["simulate", "--policy", f"{plugins}:{cls}"])
    assert err.startswith(f"error: policy {plugins}:{cls}: ") and message in err


@pytest.mark.parametrize(
    "cls, raised",
    [
        ("Raises", "raised ValueError: bad value (at "),
        ("Exits", "raised SystemExit: exit status 0"),
    ],
)
def test_a_plugins_own_exception_names_it_and_its_last_frame(capsys, plugins, cls, raised):
    err = _one_line(capsys, ["simulate", "--policy", f"{plugins}:{cls}"])
    assert err.startswith(f"error: policy {plugins}:{cls} {raised}")
    assert f"{plugins}:" in err.split(raised)[1] and "in select)" in err  # file:line in select
    with pytest.raises(PluginError, match=f"policy .*:{cls} raised"):
        get_policy(f"{plugins}:{cls}").run(make_instance([1], [(0, 0, 3)] * 4 + [(0, 9, 1)]))


def test_policy_timeout_stops_a_plugin_that_never_returns(capsys, plugins):
    err = _one_line(capsys, ["simulate", "--policy", f"{plugins}:Loops", "--policy-timeout", "0.5"])
    assert "select() did not return within 0.5 s (--policy-timeout); stopped" in err
    # the built-in policies and a plug-in that returns are not touched by the limit
    assert main(["compare", "--policies", f"fifo,{plugins}:Fine", "--policy-timeout", "30"]) == 0
    with pytest.raises(ValueError, match="policy_timeout: 0 is not a positive"), time_limit(0):
        pass


def test_compare_keys_its_results_by_something_unique(capsys, plugins):
    err = _one_line(capsys, ["compare", "--policies", "fifo,fifo,FIFO"])
    assert err.startswith("error: --policies: 'fifo' (policies[1]) names the policy of 'fifo'")
    err = _one_line(capsys, ["compare", "--policies", f"fifo,{plugins}:Fifo2"])
    assert "its name 'fifo' is the registered policy" in err
    inst = make_instance([1, 1], [(0, 0, 4), (1, 0, 2), (1, 1, 2)], names=["a", "b"])
    rows = compare_policies(inst, 6, [Rand(n_samples=3), Rand(n_samples=5), "fifo"])
    assert [r["policy"] for r in rows] == [
        "rand(n_samples=3, epsilon=None, lam=None, sub_policy='fifo', seed=0)",
        "rand(n_samples=5, epsilon=None, lam=None, sub_policy='fifo', seed=0)",
        "fifo",
    ]
    with pytest.raises(ValueError, match=r"policies\[0\] and policies\[1\] are both fifo"):
        policy_labels([get_policy("fifo"), get_policy("fifo")])


def test_a_plugin_module_that_exits_on_import_is_an_error(tmp_path):
    path = tmp_path / "quits.py"
    path.write_text("import sys\nsys.exit(3)\n")
    with pytest.raises(KeyError, match="quits.py failed: SystemExit: 3"):
        policy_class(f"{path}:X")
