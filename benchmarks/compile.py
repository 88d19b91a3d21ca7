"""Compile time of the numba kernels on a fresh install (issue 26, item 6).

Each case runs in a fresh process with an empty ``NUMBA_CACHE_DIR``: numba's compiler is
started first on a trivial function (its start-up, reported apart), then the case's entry
point is called twice on a tiny instance; the first call minus the second is the compile
time (and the writing of the cache). The dispatchers that hold a signature afterwards are
listed with their number of specializations (``dispatcher.signatures``): more than one
means the same kernel was compiled again for other argument types. The same case is then
run again in a fresh process on the now filled cache (the "cached" column: loading the
kernels from disk). Last, the whole first ``coopsched demo`` against the second one.

    python benchmarks/compile.py [--cases engine,ref,...] [--no-demo]

Times are wall seconds; the load average is printed before and after, since a loaded
machine stretches every compile (rerun it idle for figures to quote).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tiny():
    from coopsched import make_instance

    return make_instance(
        [2, 1, 1], [(0, 0, 3), (1, 0, 2), (1, 1, 4), (2, 1, 2), (0, 2, 1), (2, 3, 3), (1, 3, 1)]
    )


def _rigid():
    import numpy as np

    from coopsched.workloads.instance import Instance

    inst = _tiny()
    return Instance(
        inst.organizations,
        inst.org,
        inst.release,
        inst.size,
        np.asarray([2, 1, 3, 1, 4, 2, 1]),
        requested=inst.size + 1,
    )


def _case_engine():
    from coopsched.online.engine import simulate
    from coopsched.online.policies import Fifo

    inst = _tiny()
    return lambda: simulate(inst, Fifo(), 10, engine="compiled")


def _case_directcontr():
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    inst = _tiny()
    return lambda: simulate(inst, get_policy("directcontr"), 10, engine="compiled")


def _case_rand():
    from coopsched.online.engine import simulate
    from coopsched.online.policies import get_policy

    inst = _tiny()
    return lambda: simulate(inst, get_policy("rand"), 10, engine="compiled")


def _case_fifo_starts():
    from coopsched.online.kernels import fifo_starts

    inst = _tiny()
    return lambda: fifo_starts(inst.release, inst.size, 2)


def _case_ref():
    from coopsched.online.policies import Ref

    inst = _tiny()
    return lambda: Ref().run(inst, 10)


def _case_rigid():
    from coopsched.online.engine import simulate
    from coopsched.online.policies import Fifo

    inst = _rigid()
    return lambda: simulate(inst, Fifo(), 10, engine="compiled", backfill="easy")


#: name -> (what it measures, a function returning the call to time)
CASES = {
    "engine": ("compiled engine, FIFO (simulate engine='compiled')", _case_engine),
    "directcontr": ("compiled engine, DIRECTCONTR (random machines)", _case_directcontr),
    # engine='compiled' is not passed on by RAND's run: "auto" decides, i.e. on this small
    # instance the coalition values' kernel only (the engine's is the "engine" case)
    "rand": ("RAND on a small instance", _case_rand),
    "fifo_starts": ("kernels.fifo_starts", _case_fifo_starts),
    "ref": ("REF (its kernel)", _case_ref),
    "rigid": ("compiled rigid engine, FIFO + EASY", _case_rigid),
}


def _dispatchers() -> dict[str, int]:
    """Every numba dispatcher of a loaded coopsched module that holds a signature."""
    out = {}
    for name, mod in list(sys.modules.items()):
        if not name.startswith("coopsched.") or mod is None:
            continue
        for attr, obj in vars(mod).items():
            sigs = getattr(obj, "signatures", None)
            if sigs and hasattr(obj, "py_func") and obj.py_func.__module__ == name:
                out[f"{name.removeprefix('coopsched.')}.{attr}"] = len(sigs)
    return out


def _compile_timer() -> dict[str, float]:
    """Listen to numba's compile events (sent only on a cache miss) and return the dict it
    fills: each coopsched dispatcher's own compile seconds, the compilations of the
    functions it calls (nested events) left out."""
    from numba.core import event

    own: dict[str, float] = {}
    stack: list[list] = []

    def name(ev) -> str:
        f = ev.data["dispatcher"].py_func
        return f"{f.__module__.removeprefix('coopsched.')}.{f.__name__}"

    class Timer(event.Listener):
        def on_start(self, ev):
            stack.append([name(ev), time.perf_counter(), 0.0])

        def on_end(self, ev):
            key, t0, nested = stack.pop()
            took = time.perf_counter() - t0
            own[key] = own.get(key, 0.0) + took - nested
            if stack:
                stack[-1][2] += took

    event.register("numba:compile", Timer())
    return own


def child(case: str) -> None:
    """Time one case in this process (run with an empty or filled NUMBA_CACHE_DIR)."""
    t0 = time.perf_counter()
    import numba

    @numba.njit
    def _start(x):
        return x + 1

    _start(1)
    startup = time.perf_counter() - t0
    own = _compile_timer()
    call = CASES[case][1]()
    t0, c0 = time.perf_counter(), time.process_time()
    call()
    first, first_cpu = time.perf_counter() - t0, time.process_time() - c0
    t0, c0 = time.perf_counter(), time.process_time()
    call()
    warm, warm_cpu = time.perf_counter() - t0, time.process_time() - c0
    out = {"startup": startup, "first": first, "warm": warm, "dispatchers": _dispatchers()}
    out["own"] = {k: v for k, v in own.items() if not k.startswith("__main__")}
    print(json.dumps(out | {"first_cpu": first_cpu, "warm_cpu": warm_cpu}))


def _run_child(case: str, cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
    out = subprocess.run(
        [sys.executable, __file__, "--child", case],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def _demo(cache: str) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one whole ``coopsched demo``."""
    env = dict(os.environ, NUMBA_CACHE_DIR=cache, PYTHONPATH=str(ROOT / "src"))
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    subprocess.run(
        [sys.executable, "-c", "from coopsched.cli import run; run()", "demo"],
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=ROOT,
    )
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--child", help=argparse.SUPPRESS)
    parser.add_argument("--cases", default=",".join(CASES), help="comma-separated cases")
    parser.add_argument("--no-demo", action="store_true", help="skip the whole-demo runs")
    args = parser.parse_args()
    if args.child:
        child(args.child)
        return
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    print(
        f"{'case':<12} {'start-up':>8} {'compile':>8} {'cpu':>6} {'cached':>7} {'warm':>7}"
        "  dispatchers (x specializations, own compile seconds)"
    )
    for case in args.cases.split(","):
        with tempfile.TemporaryDirectory() as cache:
            cold = _run_child(case, cache)
            hot = _run_child(case, cache)
        own = cold["own"]
        disp = ", ".join(
            f"{k} x{v} {own.get(k, 0):.1f}" for k, v in sorted(cold["dispatchers"].items())
        )
        print(
            f"{case:<12} {cold['startup']:8.2f} {cold['first'] - cold['warm']:8.2f} "
            f"{cold['first_cpu'] - cold['warm_cpu']:6.2f} {hot['first'] - hot['warm']:7.2f} "
            f"{cold['warm']:7.3f}  {disp}"
        )
    print("(seconds; compile = first call - second call on an empty cache, wall and CPU;")
    print(" cached = the same on the filled cache, i.e. loading from disk; start-up: numba's;")
    print(" a dispatcher's own seconds leave out the functions it calls, compiled within)")
    if not args.no_demo:
        with tempfile.TemporaryDirectory() as cache:
            (first, first_cpu), (second, second_cpu) = _demo(cache), _demo(cache)
        print(
            f"coopsched demo, whole process: first run {first:.1f} s ({first_cpu:.1f} s CPU), "
            f"second run {second:.1f} s ({second_cpu:.1f} s CPU)"
        )
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
