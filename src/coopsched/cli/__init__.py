"""The ``coopsched`` command line: a thin layer over the package, one module per command group."""

from __future__ import annotations

import copy
import gc
import os
import signal
import sys
import threading
import warnings

import typer

from . import audit, migration, mosp, online, reproduce, slurm, traces  # noqa: F401  (registers the commands)
from ._app import CLIError, app
from ._values import plain_values

__all__ = ["CLIError", "app", "main", "run"]


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors reported on one line. ``SWFError`` and ``InstanceError`` are ValueErrors;
    ``PolicyError`` is looked up only if the engine was imported (a command that never
    simulated cannot raise it), so start-up imports no numpy."""
    errors: list[type[BaseException]] = [CLIError, ValueError, KeyError, OSError]
    engine = sys.modules.get("coopsched.online.engine")
    if engine is not None:
        errors.append(engine.PolicyError)
    sweep = sys.modules.get("coopsched.experiments.sweep")
    if sweep is not None:  # a study's errors (StudyError) are SweepErrors
        errors.append(sweep.SweepError)
    return tuple(errors)


def _plain_warning(message, category, filename, lineno, file=None, line=None) -> None:
    """Show a warning as one plain line on stderr (``warning: ...``), without Python's
    ``file:line: Category`` prefix and source line: the user did not write that code."""
    text = " ".join(str(message).split())
    print(f"warning: {text}", file=sys.stderr if file is None else file)


class Interrupted(BaseException):
    """Raised by the SIGINT/SIGTERM handler of :func:`main` (a BaseException, so that no
    ``except Exception`` swallows it and the CLI framework does not turn it into a bare
    abort)."""


def main(argv: list[str] | None = None) -> int:
    """Entry point: one-line errors, non-zero exits, no tracebacks for bad input;
    warnings as one ``warning: ...`` line each on stderr (Python's filters still decide
    which are shown).

    Ctrl-C (SIGINT) and SIGTERM stop the command with ``error: interrupted`` (or
    ``terminated``) and exit status 128 + the signal number (130 for Ctrl-C), after the
    ``with``/``finally`` blocks have run, so worker processes are stopped and row files
    are closed.

    A command that has numba compile a kernel its disk cache does not hold (the first run
    after an install) says so first, in one line on stderr (:mod:`coopsched.online.jit`).
    """
    received: list[int] = []

    def on_signal(signum, frame) -> None:
        received.append(signum)
        raise Interrupted(signum)

    previous = {}
    if threading.current_thread() is threading.main_thread():  # else leave signals alone
        for sig in (signal.SIGINT, signal.SIGTERM):
            previous[sig] = signal.signal(sig, on_signal)
    from ..online import jit

    notice = jit.enable()  # "compiling numba kernels (once, ...)" on stderr, if it happens
    try:
        with warnings.catch_warnings():  # the caller's warning display comes back after
            warnings.showwarning = _plain_warning
            code = _run(argv, received)
    except (Interrupted, KeyboardInterrupt):
        code = 130 if not received else 128 + received[0]
        received = received or [signal.SIGINT]
    finally:
        jit.enable(notice)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    if received:
        what = "interrupted" if received[0] == signal.SIGINT else "terminated"
        print(f"error: {what}", file=sys.stderr)
        return 128 + received[0]
    return code


def _command(argv: list[str] | None):
    """The click command that runs ``argv``.

    Typer builds every command's parameters (evaluating their annotations) when it builds
    the group; for ``coopsched NAME ...`` with ``NAME`` a command, a group holding only
    that command parses and runs the same way and starts faster (issue 12, item 5).
    Anything else (no command, ``--help``, an unknown name) gets the whole group. Either
    way its values are converted without pydantic (:mod:`._values`).
    """
    args = sys.argv[1:] if argv is None else argv
    if args and not args[0].startswith("-"):
        chosen = [
            c
            for c in app.registered_commands
            if c.callback is not None
            and (c.name or typer.main.get_command_name(c.callback.__name__)) == args[0]
        ]
        if chosen:
            one = copy.copy(app)
            one.registered_commands = chosen
            return plain_values(typer.main.get_group(one))
    return plain_values(typer.main.get_command(app))


def _run(argv: list[str] | None, received: list[int]) -> int:
    cmd = _command(argv)
    try:
        cmd.main(args=argv, prog_name="coopsched", standalone_mode=False)
    except _user_errors() as exc:
        if received:  # an error caused by the interrupt itself is not reported
            raise Interrupted(received[0]) from None
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"error: {msg}", file=sys.stderr)
        return 1
    except Exception as exc:  # the CLI framework's own usage errors, exits and aborts
        if received:
            raise Interrupted(received[0]) from None
        if hasattr(exc, "format_message"):
            print(f"error: {exc.format_message()}", file=sys.stderr)
            return 2
        if type(exc).__name__ == "Abort":
            print("error: aborted", file=sys.stderr)
            return 130
        if hasattr(exc, "exit_code"):
            return int(exc.exit_code)
        raise
    return 0


def run() -> None:
    """Console-script entry point.

    Once the command has finished, every object is moved out of the garbage collector's
    reach (:func:`gc.freeze`): the process is about to end, and the collections of the
    interpreter's shutdown would otherwise walk the objects of every imported module
    (numpy, typer, pydantic, ...), a sizeable share of a short command's time. Reference
    counting still frees what it frees, streams are flushed and ``atexit`` handlers run.

    numpy's OpenBLAS starts a pool of threads when numpy is imported, unless
    ``OPENBLAS_NUM_THREADS`` says otherwise; coopsched does no floating-point linear
    algebra, so a command runs it on one thread (a setting the user gave is kept): the
    pool's start-up would cost every command about 35 ms of CPU time, and a sweep's worker
    processes inherit the setting instead of each starting a pool on the same cores.
    """
    os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
    code = main()
    gc.freeze()
    sys.exit(code)
