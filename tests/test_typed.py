"""The package is typed (issue 39 item 6): it ships ``py.typed``, ``coopsched.__all__`` is
the documented API, and ``mypy --strict`` accepts a user script made of the README's
Python examples while still refusing a wrong call."""

from __future__ import annotations

import ast
import importlib
import re
import subprocess
import sys
import tomllib
from importlib import resources
from pathlib import Path

import pytest

import coopsched

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "src" / "coopsched" / "__init__.py"


def test_py_typed_is_shipped():
    assert resources.files("coopsched").joinpath("py.typed").is_file()
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "py.typed" in config["tool"]["setuptools"]["package-data"]["coopsched"]


def test_all_is_the_lazy_api_and_every_name_resolves():
    api = coopsched._API
    assert coopsched.__all__ == sorted({*api, "simulate", "audit", "__version__"})
    for name in coopsched.__all__:
        assert getattr(coopsched, name) is not None, name


def _type_checking_imports() -> dict[str, tuple[str, str]]:
    """``name -> (module, attribute)`` of the imports under ``if TYPE_CHECKING:``."""
    tree = ast.parse(INIT.read_text())
    block = next(
        n for n in tree.body if isinstance(n, ast.If) and ast.unparse(n.test) == "TYPE_CHECKING"
    )
    found = {}
    for node in block.body:
        if isinstance(node, ast.ImportFrom):
            assert node.level == 1 and node.module is not None
            for alias in node.names:
                found[alias.asname or alias.name] = (f"coopsched.{node.module}", alias.name)
    return found


def test_what_type_checkers_see_is_what_runs():
    """The ``TYPE_CHECKING`` imports (what mypy and IDEs see) name, for every name of
    ``__all__`` but ``simulate`` and ``__version__``, the object ``coopsched.NAME`` is."""
    seen = _type_checking_imports()
    assert set(seen) == set(coopsched.__all__) - {"simulate", "__version__"}
    for name, (module, attr) in seen.items():
        runtime = getattr(coopsched, name)
        if name == "audit":  # the callable package: its function is what a call runs
            runtime = runtime.audit
        assert getattr(importlib.import_module(module), attr) is runtime, name


def user_script() -> str:
    """The README's Python examples, one after the other, as a user would paste them."""
    readme = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", readme, re.S)
    assert blocks, "the README has no Python example"
    return "\n".join(blocks)


def _mypy(tmp_path: Path, name: str, code: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / name
    script.write_text(code)
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--cache-dir", str(tmp_path / "cache"), name],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.mark.slow
def test_mypy_strict_accepts_the_readme_example_and_refuses_a_wrong_call(tmp_path):
    code = user_script()
    assert "cs.simulate" in code and "cs.compare" in code
    ok = _mypy(tmp_path, "user.py", code + "\nreveal_type(sched)\n")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert 'Revealed type is "coopsched.online.schedule.Schedule"' in ok.stdout
    # the types are real, not Any: a wrong argument is an error
    bad = _mypy(tmp_path, "bad.py", code + "\ncs.simulate(inst, horizon='soon')\n")
    assert bad.returncode == 1 and "bad.py:" in bad.stdout and "[arg-type]" in bad.stdout
