"""The ``coopsched`` command line: a thin layer over the package, one module per command group."""

from __future__ import annotations

import sys

import typer

from . import audit, migration, mosp, online, reproduce  # noqa: F401  (registers the commands)
from ._app import CLIError, app

__all__ = ["CLIError", "app", "main", "run"]


def main(argv: list[str] | None = None) -> int:
    """Entry point: one-line errors, non-zero exits, no tracebacks for bad input."""
    from ..online.engine import PolicyError
    from ..workloads.instance import InstanceError
    from ..workloads.swf import SWFError

    cmd = typer.main.get_command(app)
    try:
        cmd.main(args=argv, prog_name="coopsched", standalone_mode=False)
    except (CLIError, SWFError, InstanceError, PolicyError, ValueError, KeyError, OSError) as exc:
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
