"""Plug-in policies run under the project's checks, so that a plug-in cannot break the tool
(``docs/policies.md``, "Plug-ins").

A plug-in is a policy class coopsched did not write: ``--policy path/to/file.py:Class``,
``package.module:Class`` or an entry point of ``coopsched.policies``. When the registry
loads one (:func:`guard`):

* the class is checked: it overrides ``select()`` or ``run()``, every parameter of its
  ``__init__`` has a default (values come from ``--param NAME=VALUE``), and its ``name``
  is not that of a registered policy (results are keyed by name: a plug-in named ``fifo``
  would pass for FIFO);
* every method it defines itself (``__init__``, ``prepare``, ``reset``, ``select``, the
  event hooks, ``run``) is wrapped, once: an exception it raises, ``SystemExit`` included,
  becomes a :class:`PluginError` ``policy SPEC raised Type: message (at file:line in
  function)`` (the last frame of the plug-in's own file); ``select()`` must return an
  organization with a waiting job, ``run()`` a :class:`~coopsched.online.schedule.Schedule`;
* under :func:`time_limit` (``--policy-timeout SECONDS``), a call into the plug-in (its
  ``run``, or one ``select`` or hook) that has not returned after that many seconds is
  stopped (``SIGALRM``; main thread, POSIX).

Each is a one-line error naming the plug-in as the user gave it (``SPEC``).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import signal
import threading
import traceback
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from ..engine import Policy, PolicyError
from ..schedule import Schedule

#: The methods of a policy a plug-in may define, each wrapped (:func:`guard`).
METHODS = ("__init__", "prepare", "reset", "select", "on_release", "on_start", "on_complete", "run")


class PluginError(PolicyError):
    """A plug-in policy failed a check or raised; the message names it (``policy SPEC ...``)."""


class _Timeout(BaseException):
    """Raised by the alarm inside a plug-in's call (a BaseException: a plug-in's own
    ``except Exception`` cannot swallow it)."""


_limit: list[float | None] = [None]  # seconds of the current time_limit
_depth = [0]  # calls into plug-ins under way (nested: run -> the engine -> select)


def normalize(name: str) -> str:
    """The registry's lookup key of a policy name: lower case, without ``-``, ``_`` or spaces.

    >>> normalize("Slurm-Classic"), normalize("round_robin")
    ('slurmclassic', 'roundrobin')
    """
    return "".join(c for c in name.lower() if c not in "-_ ")


def spec_of(cls: type) -> str | None:
    """How the user named a guarded plug-in class (``None``: not a plug-in)."""
    return cls.__dict__.get("_plugin_spec")


def guard(cls: type[Policy], spec: str, registered: dict[str, type[Policy]]) -> type[Policy]:
    """Check the plug-in class ``cls`` (named ``spec`` by the user) and wrap its methods
    (once); ``registered`` is the registry (normalized name -> class)."""
    if spec_of(cls) is not None:
        return cls
    if cls.select is Policy.select and not cls.drives_simulation():
        raise PluginError(
            f"policy {spec}: {cls.__name__} overrides neither select() nor run(); a policy "
            "needs one of them (docs/policies.md)"
        )
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    needed = [
        p.name
        for p in params
        if p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
    ]
    if needed:
        raise PluginError(
            f"policy {spec}: {cls.__name__}.__init__ needs {', '.join(needed)}: every "
            "parameter of a policy needs a default (values come from --param NAME=VALUE)"
        )
    taken = registered.get(normalize(cls.name))
    if taken is not None and taken is not cls:
        raise PluginError(
            f"policy {spec}: its name {cls.name!r} is the registered policy "
            f"{taken.__module__}:{taken.__qualname__}'s; give {cls.__name__} a 'name' of "
            "its own (results are keyed by name)"
        )
    for method in METHODS:
        fn = getattr(cls, method)
        if fn is getattr(Policy, method) or getattr(fn, "__module__", "").startswith("coopsched."):
            continue  # coopsched's own code: not the plug-in's
        setattr(cls, method, _wrap(fn, spec, method, _file_of(cls)))
    cls._plugin_spec = spec  # type: ignore[attr-defined]
    return cls


def _file_of(cls: type) -> str:
    try:
        return inspect.getfile(cls)
    except (TypeError, OSError):
        return ""


def _wrap(fn: Callable[..., Any], spec: str, method: str, file: str) -> Callable[..., Any]:
    @functools.wraps(fn)
    def call(*args: Any, **kwargs: Any) -> Any:
        outer = _depth[0] == 0
        limit = _limit[0]
        _depth[0] += 1
        try:
            if outer and limit:
                signal.setitimer(signal.ITIMER_REAL, limit)
            try:
                out = fn(*args, **kwargs)
            finally:
                if outer and limit:
                    signal.setitimer(signal.ITIMER_REAL, 0)
        except PluginError:
            raise
        except PolicyError as exc:  # the engine's check of what the plug-in did
            raise PluginError(f"policy {spec}: {exc}") from None
        except _Timeout:
            raise PluginError(
                f"policy {spec}: {method}() did not return within {limit:g} s "
                "(--policy-timeout); stopped"
            ) from None
        except (Exception, SystemExit) as exc:
            raise PluginError(f"policy {spec} raised {_describe(exc, file)}") from None
        finally:
            _depth[0] -= 1
        if method == "select":
            _check_pick(spec, args[1], out)
        elif method == "run" and not isinstance(out, Schedule):
            raise PluginError(
                f"policy {spec}: run() returned {type(out).__name__}, not a Schedule "
                "(build one with coopsched.online.engine.simulate; docs/policies.md)"
            )
        return out

    return call


def _describe(exc: BaseException, file: str) -> str:
    """``Type: message (at file:line in function)``: the last frame in the plug-in's own
    file, else the innermost one."""
    frames = traceback.extract_tb(exc.__traceback__)[1:]  # the first is the wrapper
    own = [f for f in frames if file and f.filename == file]
    where = (own or frames)[-1] if (own or frames) else None
    text = str(exc) if not isinstance(exc, SystemExit) else f"exit status {exc.code!r}"
    at = f" (at {where.filename}:{where.lineno} in {where.name})" if where else ""
    return f"{type(exc).__name__}: {' '.join(text.split())}{at}"


def _check_pick(spec: str, view: Any, u: object) -> None:
    """``select()``'s answer: an organization (index) that has a waiting job."""
    if isinstance(u, bool) or not isinstance(u, int | np.integer):
        raise PluginError(
            f"policy {spec}: select() returned {u!r} at t={view.t}: not an organization index"
        )
    if not 0 <= int(u) < view.k or not view.waiting[int(u)]:
        why = (
            f"not an organization index (0..{view.k - 1})"
            if not 0 <= int(u) < view.k
            else f"organization {int(u)} has no waiting job"
        )
        raise PluginError(f"policy {spec}: select() returned {u!r} at t={view.t}: {why}")


@contextlib.contextmanager
def time_limit(seconds: float | None) -> Iterator[None]:
    """Within the block, a call into a plug-in that lasts more than ``seconds`` is stopped
    with a :class:`PluginError` (``None``: no limit). Needs the main thread and ``SIGALRM``."""
    if seconds is None:
        yield
        return
    if not seconds > 0:
        raise ValueError(f"policy_timeout: {seconds!r} is not a positive number of seconds")
    if not hasattr(signal, "setitimer") or threading.current_thread() is not (
        threading.main_thread()
    ):
        raise ValueError("policy_timeout: needs SIGALRM and the main thread (POSIX)")

    def on_alarm(signum: int, frame: object) -> None:
        if _depth[0]:  # inside a plug-in's call: stop it
            raise _Timeout

    previous = signal.signal(signal.SIGALRM, on_alarm)
    _limit[0] = float(seconds)
    try:
        yield
    except _Timeout:  # fired as a call was returning
        raise PluginError(
            f"a policy plug-in did not return within {seconds:g} s (--policy-timeout); stopped"
        ) from None
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _limit[0] = None
