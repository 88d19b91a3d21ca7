"""``coopsched fetch``: Parallel Workloads Archive logs by name."""

from __future__ import annotations

from typing import Annotated

import typer

from ._app import CLIError, Fmt, _check_format, _show, app, console


@app.command()
def fetch(
    names: Annotated[
        list[str] | None, typer.Argument(help="Log names, e.g. LPC-EGEE RICC-2010-2.")
    ] = None,
    list_: Annotated[bool, typer.Option("--list", help="List the known logs.")] = False,
    format: Fmt = "table",
) -> None:
    """Download Parallel Workloads Archive logs into the user cache (checksums pinned)."""
    from ..workloads import archive

    _check_format(format)
    if list_ or not names:
        if not list_:
            raise CLIError("give log names, or --list")
        _show(archive.logs_report(), format)
        return
    for name in names:
        log = archive.lookup(name)
        path = archive.fetch_trace(log.name, progress=console.is_terminal)
        console.print(f"{log.name}: {path}", highlight=False)
        if log.sha256 is None and log.records_sha256 is None:
            console.print(
                f"  warning: no checksum pinned for this log; sha256 {archive.sha256_of(path)}",
                highlight=False,
            )
        console.print(f"  Acknowledge: {log.acknowledge}", highlight=False)
    console.print(
        f"Please acknowledge the {archive.ARCHIVE_CITATION} and each log's contributors.",
        highlight=False,
    )
