"""The ``coopsched`` command line: a thin layer over the package, one module per command group."""

from __future__ import annotations

import sys

import typer

from . import migration, mosp, online, reproduce  # noqa: F401  (registers the commands)
from ._app import CLIError, app

__all__ = ["CLIError", "app", "main", "run"]


def _user_errors() -> tuple[type[BaseException], ...]:
    """Errors reported on one line. ``SWFError`` and ``InstanceError`` are ValueErrors;
    ``PolicyError`` is looked up only if the engine was imported (a command that never
    simulated cannot raise it), so start-up imports no numpy."""
    errors: list[type[BaseException]] = [CLIError, ValueError, KeyError, OSError]
    engine = sys.modules.get("coopsched.online.engine")
    if engine is not None:
        errors.append(engine.PolicyError)
    return tuple(errors)


def main(argv: list[str] | None = None) -> int:
    """Entry point: one-line errors, non-zero exits, no tracebacks for bad input."""
    cmd = typer.main.get_command(app)
    try:
        cmd.main(args=argv, prog_name="coopsched", standalone_mode=False)
    except _user_errors() as exc:
        msg = exc.args[0] if isinstance(exc, KeyError) and exc.args else str(exc)
        print(f"error: {msg}", file=sys.stderr)
        return 1
    except Exception as exc:  # the CLI framework's own usage errors, exits and aborts
        if hasattr(exc, "format_message"):
            print(f"error: {exc.format_message()}", file=sys.stderr)
            return 2
        if type(exc).__name__ == "Abort":
            print("aborted", file=sys.stderr)
            return 130
        if hasattr(exc, "exit_code"):
            return int(exc.exit_code)
        raise
    return 0


def run() -> None:
    """Console-script entry point."""
    sys.exit(main())
