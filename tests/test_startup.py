"""Start-up: commands import heavy modules only when they need them (issue 12, item 5)."""

import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from startup import write_swf  # noqa: E402

HEAVY = ("numpy", "pandas", "numba", "matplotlib", "distributed", "dask", "pydantic")


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


def test_simulate_swf_does_not_import_pandas(tmp_path):
    """Reading an SWF and simulating it keeps the columns as numpy arrays (issue 26, item 6):
    pandas is imported only when a DataFrame is asked for (``SWFTrace.jobs``)."""
    path = tmp_path / "small.swf"
    write_swf(path, n=300, gap=60)  # the start-up benchmark's log, shorter
    heavy = loaded_after(["simulate", str(path), "--orgs", "3", "--horizon", "7200"])
    assert heavy == {"numpy"}  # no pandas, no numba (a small log: the Python engine), and
    # no pydantic (typer's conversion of the option values is done without it)
    code = (
        "import sys\n"
        "from coopsched.workloads.load import load_instance\n"
        "from coopsched.online.policies import get_policy\n"
        f"inst = load_instance({str(path)!r}, k=3, backlog=True, start=3600, length=7200)\n"
        "get_policy('fifo').run(inst, 7200)\n"
        "from coopsched.workloads.swf import read_swf\n"
        f"tr = read_swf({str(path)!r})\n"
        "assert 'pandas' not in sys.modules, 'pandas imported'\n"
        "assert len(tr.jobs) == tr.n == 300 and 'pandas' in sys.modules\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_option_values_convert_as_typer_does():
    """The converter of :mod:`coopsched.cli._values` gives typer's own result for every
    value it handles, and typer's own error for the rest (issue 26, item 6)."""
    from pathlib import Path

    import pytest
    from typer._click.exceptions import BadParameter
    from typer._coercion import build_runtime_param

    from coopsched.cli import _command
    from coopsched.cli._values import _PlainParam

    cmd = _command(["simulate"]).commands["simulate"]
    params = {p.name: p for p in cmd.params}
    cases = {
        "orgs": ["3", "007", "-0", "0", "-2", "1.5", "1e3", " 4", "x", "", 5, "9" * 25],
        "horizon": ["100", "-5", "0", "12_000", None],
        "samples": ["0", "1", "15"],
        "policy": ["fifo", "", "x y"],
        "input": ["docs/example.json", "", ".", "missing/file.json", None],
        "param": [("a=1", "b=2"), (), ["x=1"]],
        "backlog": [True, False],
    }
    checked = 0
    for name, values in cases.items():
        param = params[name]
        assert isinstance(param._runtime_param, _PlainParam), name
        slow = build_runtime_param(param.type_descriptor)
        for value in values:
            try:
                want = slow.coerce(value, param=param, ctx=None)
            except BadParameter as exc:
                with pytest.raises(BadParameter) as got:
                    param._runtime_param.coerce(value, param=param, ctx=None)
                assert got.value.format_message() == exc.format_message()
            else:
                got = param._runtime_param.coerce(value, param=param, ctx=None)
                assert got == want and type(got) is type(want), (name, value, got, want)
                if isinstance(want, Path):
                    assert str(got) == str(want)
            checked += 1
    assert checked > 30


def test_the_console_script_runs_openblas_on_one_thread_unless_told():
    """``run()`` sets ``OPENBLAS_NUM_THREADS=1`` before numpy is imported (its thread pool's
    start-up is a sizeable share of a short command's CPU time); a user's setting stays."""
    import os

    code = (
        "import io, os, sys, contextlib\n"
        "sys.argv = ['coopsched', 'policies', '--format', 'csv']\n"
        "from coopsched.cli import run\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n"
        "        run()\n"
        "    except SystemExit as exc:\n"
        "        assert exc.code == 0\n"
        "task = '/proc/self/task'  # Linux: the process's threads\n"
        "threads = len(os.listdir(task)) if os.path.isdir(task) else 1\n"
        "print(os.environ.get('OPENBLAS_NUM_THREADS'), 'numpy' in sys.modules, threads)\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}

    def after(env):
        out = subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
        )
        return out.stdout.split()

    # one thread: the setting was made before numpy (which the command imports) started
    assert after(env) == ["1", "True", "1"]
    assert after({**env, "OPENBLAS_NUM_THREADS": "2"})[:2] == ["2", "True"]
