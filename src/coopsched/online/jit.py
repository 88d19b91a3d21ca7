"""numba's first compilation, made visible (issue 26, item 6).

On a fresh install (or after an upgrade) numba compiles the package's kernels on their
first call and keeps them in its on-disk cache (``cache=True``, see
:data:`coopsched.online.kernels.JIT_OPTIONS`); later processes load them in a fraction of
a second. Two things here:

* :func:`kernel_ready`: is a kernel already compiled in this process or found in numba's
  on-disk cache? The engine uses it so that a small instance never triggers the compiled
  engine's compilation (seconds) just because another kernel has warmed numba up.
* the compile notice: numba announces every compilation that its cache could not serve
  (a ``numba:compile`` event, sent only on a cache miss); once :func:`enable` has been
  called (the command line does), the first such event of the process prints one line to
  stderr, ``compiling numba kernels (once, about N s; cached for later runs)``. A warm
  start never sees the event, so it costs nothing there. The worker processes of a pool
  (``--workers N``) share one notice with their parent (:func:`for_workers`).

This module imports nothing heavy: numba only in functions that receive its objects.
"""

from __future__ import annotations

import sys
from typing import Any

#: Rough compile time of each top-level kernel on an idle machine (seconds, numba 0.68,
#: ``benchmarks/results-compile.txt`` of 2026-11-25 on an Intel Xeon, rounded up), by
#: function name: the notice's estimate ("about N s"; the AMD EPYC of 2026-11-27 took 2.3 to
#: 2.8 times as long). Helpers compiled along with a kernel are included in its figure.
COMPILE_SECONDS: dict[str, float] = {
    "_ref_kernel": 8.5,
    "_engine": 4.5,
    "_engine_rigid": 6.0,
    "_fifo_kernel": 0.5,
    "_fifo_events_kernel": 0.5,
}

_state: dict[str, Any] = {"enabled": False, "shown": False, "installed": False, "shared": None}
_ready: dict[int, bool] = {}  # id(dispatcher) -> found in the disk cache (per process)


def enable(on: bool = True) -> bool:
    """Print the compile notice in this process from now on (``on``); returns the previous
    setting, so that a caller can restore it."""
    before = bool(_state["enabled"])
    _state["enabled"] = on
    return before


def for_workers() -> tuple[bool, Any]:
    """What the worker processes of a pool need to print the compile notice once for the
    whole pool, this process included: whether it is enabled here, and a flag in shared
    memory (``None`` when it is not enabled), set by the first process that prints it.
    Pass it to :func:`in_worker` in each worker (a pool's initializer)."""
    if not _state["enabled"]:
        return False, None
    if _state.get("shared") is None:
        import multiprocessing

        _state["shared"] = multiprocessing.Value("b", bool(_state["shown"]))
    return True, _state["shared"]


def in_worker(setting: tuple[bool, Any]) -> None:
    """In a worker process: the notice as :func:`for_workers` of the parent says (a worker
    started by fork inherits the parent's setting, one started by spawn does not)."""
    _state["enabled"], _state["shared"] = setting
    _state["shown"] = False


def kernel_ready(dispatcher: Any) -> bool:
    """Whether calling ``dispatcher`` (a numba ``njit`` function) needs no compilation of
    its own: compiled in this process already, or its on-disk cache index is present and
    valid for the current source (numba checks the file's stamp when it loads the index).
    Read once per process; any failure counts as "not ready"."""
    if getattr(dispatcher, "signatures", None):  # (a plain function under NUMBA_DISABLE_JIT)
        return True
    key = id(dispatcher)
    if key not in _ready:
        try:
            # numba's private API (0.5x-0.6x): the index of the function's cached overloads
            _ready[key] = bool(dispatcher._cache._cache_file._load_index())
        except Exception:
            _ready[key] = False
    return _ready[key]


def estimate(compiling: Any = None) -> float:
    """Seconds the pending compilation may take: the kernel being compiled (``compiling``,
    a dispatcher) and every other known kernel of a loaded coopsched module that is not
    ready yet (:data:`COMPILE_SECONDS`)."""
    total = 0.0
    seen = set()
    if compiling is not None:
        name = getattr(getattr(compiling, "py_func", None), "__name__", "")
        total += COMPILE_SECONDS.get(name, 1.0)
        seen.add(id(compiling))
    for modname, mod in list(sys.modules.items()):
        if not modname.startswith("coopsched.") or mod is None:
            continue
        for attr, obj in list(vars(mod).items()):
            if attr in COMPILE_SECONDS and hasattr(obj, "py_func") and id(obj) not in seen:
                seen.add(id(obj))
                if not kernel_ready(obj):
                    total += COMPILE_SECONDS[attr]
    return total


def notice_line(seconds: float) -> str:
    """The one line printed before the first compilation."""
    return f"compiling numba kernels (once, about {seconds:.0f} s; cached for later runs)"


def _on_compile(dispatcher: Any) -> None:
    if not _state["enabled"] or _state["shown"]:
        return
    module = getattr(getattr(dispatcher, "py_func", None), "__module__", None) or ""
    if not module.startswith("coopsched."):  # another package's function
        return
    _state["shown"] = True
    shared = _state.get("shared")
    if shared is not None:  # one notice for a pool of processes (:func:`for_workers`)
        with shared.get_lock():
            if shared.value:
                return
            shared.value = True
    print(notice_line(estimate(dispatcher)), file=sys.stderr, flush=True)


def install() -> None:
    """Listen to numba's compile events (once per process; called by the kernel modules
    when they are imported, numba being loaded by then)."""
    if _state["installed"]:
        return
    from numba.core import event

    class _Notice(event.Listener):
        def on_start(self, ev: Any) -> None:
            _on_compile((ev.data or {}).get("dispatcher"))

        def on_end(self, ev: Any) -> None:
            pass

    event.register("numba:compile", _Notice())
    _state["installed"] = True
