"""The first run's compilation is shown as such (issue 26, item 6)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from coopsched.online import jit

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "docs" / "example.json"
NOTICE = "compiling numba kernels (once"


def _fake(module: str, name: str = "_engine", signatures=(), index=None):
    """A stand-in for a numba dispatcher: its function's module and name, its compiled
    signatures, and its disk-cache index (``None``: reading it fails)."""

    def load():
        if index is None:
            raise OSError("no cache")
        return index

    py_func = SimpleNamespace(__module__=module, __name__=name)
    cache = SimpleNamespace(_cache_file=SimpleNamespace(_load_index=load))
    return SimpleNamespace(py_func=py_func, signatures=list(signatures), _cache=cache)


@pytest.fixture
def fresh(monkeypatch):
    monkeypatch.setattr(jit, "_state", {"enabled": False, "shown": False, "installed": True})
    monkeypatch.setattr(jit, "_ready", {})


def test_notice_once_per_process_only_when_enabled(fresh, capsys):
    kernel = _fake("coopsched.online.compiled")
    jit._on_compile(kernel)
    assert capsys.readouterr().err == ""  # a library call prints nothing
    assert jit.enable() is False
    jit._on_compile(_fake("somebody.else"))  # another package's compilation
    assert capsys.readouterr().err == ""
    jit._on_compile(kernel)
    err = capsys.readouterr().err
    assert err.startswith(NOTICE) and err.count("\n") == 1
    # the engine's estimate, plus any other known kernel of a loaded module not cached yet
    assert jit.estimate(kernel) >= jit.COMPILE_SECONDS["_engine"]
    assert f"about {jit.estimate(kernel):.0f} s" in err
    jit._on_compile(kernel)
    assert capsys.readouterr().err == ""
    assert jit.enable(False) is True


def test_kernel_ready_reads_memory_then_the_disk_index(fresh):
    # the answers are kept per dispatcher by id(): the fakes stay alive (as the package's
    # module-level dispatchers do), or a later fake could reuse a freed one's id
    fakes = [
        _fake("coopsched.x", signatures=["sig"]),
        _fake("coopsched.x", index={("sig", "magic"): "data"}),
        _fake("coopsched.x", index={}),  # stale or empty index
        _fake("coopsched.x"),  # unreadable: compile expected
    ]
    assert [jit.kernel_ready(f) for f in fakes] == [True, True, False, False]


def _run(argv: list[str], cache: Path) -> subprocess.CompletedProcess:
    env = dict(os.environ, NUMBA_CACHE_DIR=str(cache))
    code = "from coopsched.cli import run; run()"
    return subprocess.run(
        [sys.executable, "-c", code, *argv], env=env, capture_output=True, text=True, check=True
    )


def test_fresh_cache_prints_the_notice_once_and_a_second_run_does_not(tmp_path):
    """RAND on the example compiles one small kernel (its coalitions' FIFO events); the
    engine itself stays in Python, its kernel not being cached."""
    argv = ["simulate", str(EXAMPLE), "--policy", "rand", "--format", "json"]
    first = _run(argv, tmp_path)
    assert first.stderr.count(NOTICE) == 1
    second = _run(argv, tmp_path)
    assert NOTICE not in second.stderr
    assert first.stdout == second.stdout
    cached = [f.name for f in tmp_path.rglob("*.nbi")]
    assert any(n.startswith("kernels._fifo_events_kernel") for n in cached)
    assert not any(n.startswith("compiled._engine") for n in cached)


def test_engine_decides_as_the_whole_instance_during_a_warm_up(monkeypatch):
    """A warm-up on a few jobs picks the engine the whole instance will use, so that it
    compiles (or loads) the kernels the timed run needs."""
    from coopsched import make_instance
    from coopsched.online import engine
    from coopsched.workloads.instance import Instance

    small = make_instance([1, 1], [(0, 0, 2), (1, 0, 3)])
    n = engine.COMPILE_MIN_JOBS
    big = Instance(small.organizations, np.arange(n) % 2, np.arange(n), np.ones(n))
    monkeypatch.setattr(engine, "numba_warm", lambda: False)
    assert not engine._worth_compiling(small.n)
    with engine.engine_decides_as(big):
        assert engine._worth_compiling(small.n)
    assert not engine._worth_compiling(small.n)


def test_warm_up_changes_nothing_but_the_timings(monkeypatch):
    from coopsched.experiments import compare
    from coopsched.workloads.generators import synthetic_instance

    inst = synthetic_instance(k=3, seed=1)
    T = inst.meta["horizon"]
    calls = []
    real = compare.warm_up

    def spy(*args, **kw):
        calls.append(args[0].n)
        return real(*args, **kw)

    monkeypatch.setattr(compare, "warm_up", spy)
    warm = compare.compare_policies(inst, T, ["ref", "rand", "fifo", "slurm-fairtree"], seed=2)
    monkeypatch.setattr(compare, "warm_up", lambda *a, **k: None)
    cold = compare.compare_policies(inst, T, ["ref", "rand", "fifo", "slurm-fairtree"], seed=2)
    assert calls == [inst.n]
    for a, b in zip(warm, cold, strict=True):
        a.pop("seconds"), b.pop("seconds")
        assert a.keys() == b.keys()
        assert all(np.array_equal(a[c], b[c]) for c in a)


def test_a_pool_of_workers_prints_one_notice(tmp_path):
    """``--workers N``: each worker compiles on a fresh cache, the notice is printed once
    for the pool (the parent's shared flag, :func:`coopsched.online.jit.for_workers`)."""
    code = (
        "import sys\n"
        f"sys.path.insert(0, {str(ROOT / 'tests')!r})\n"
        "from coopsched.online import jit\n"
        "from coopsched.experiments.sweep import run_sweep\n"
        "from sweep_helpers import rand_on_example\n"
        "jit.enable()\n"
        "tasks = [{'seed': s} for s in range(4)]\n"
        f"rows = run_sweep(tasks, rand_on_example, {str(tmp_path / 'rows.jsonl')!r}, "
        "workers=2, quiet=True)\n"
        "print(len({r['pid'] for r in rows}))\n"
    )
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "cache"))
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True
    )
    assert out.stderr.count(NOTICE) == 1, out.stderr
    assert any(f.name.startswith("kernels._fifo_events_kernel") for f in tmp_path.rglob("*.nbi"))
