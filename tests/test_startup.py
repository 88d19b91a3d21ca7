"""Start-up: commands import heavy modules only when they need them (issue 12, item 5)."""

import json
import subprocess
import sys

HEAVY = ("numpy", "pandas", "numba", "matplotlib", "distributed", "dask")


def loaded_after(argv: list[str]) -> set[str]:
    code = (
        "import sys, io, contextlib\n"
        "from coopsched.cli import main\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        f"    rc = main({argv!r})\n"
        f"print(sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
        "sys.exit(rc)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(eval(out.stdout.strip().splitlines()[-1]))


def test_help_imports_nothing_heavy():
    assert loaded_after(["--help"]) == set()
    assert loaded_after(["mosp", "--help"]) == set()
    # simulate's and compare's help list the registered policies, read from the registry
    # (the engine needs numpy) only when that help is shown; still nothing else heavy
    assert loaded_after(["simulate", "--help"]) == {"numpy"}


def test_simulate_small_json_needs_only_numpy(tmp_path):
    inst = {
        "organizations": [{"name": "a", "machines": 2}, {"name": "b", "machines": 1}],
        "jobs": [{"org": "a", "release": 0, "size": 3}, {"org": "b", "release": 1, "size": 2}],
    }
    path = tmp_path / "small.json"
    path.write_text(json.dumps(inst))
    heavy = loaded_after(["simulate", str(path)])
    assert "numpy" in heavy
    assert not heavy & {"pandas", "numba", "matplotlib", "distributed", "dask"}


def test_reproduce_help_lists_policies_without_pandas():
    assert loaded_after(["reproduce", "--help"]) == {"numpy"}


def test_a_command_is_built_alone_and_the_rest_on_demand():
    """``coopsched NAME`` builds only NAME's parameters; help and unknown names get all."""
    from coopsched.cli import _command, app

    every = {c.name or c.callback.__name__.replace("_", "-") for c in app.registered_commands}
    assert set(_command(["simulate", "x.json"]).commands) == {"simulate"}
    assert set(_command(["trace-info", "x.swf"]).commands) == {"trace-info"}
    assert set(_command(["--help"]).commands) == every
    assert set(_command(["simulat"]).commands) == every
    assert set(_command([]).commands) == every
