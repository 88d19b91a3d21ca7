"""Shared pieces of the command line: the app, one-line errors, instance loading, options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Fair scheduling on platforms shared by several organizations.",
)


class _LazyConsole:
    """The rich ``Console``, created on first use (rich is not imported at start-up)."""

    _console = None

    def __getattr__(self, name: str):
        if _LazyConsole._console is None:
            from rich.console import Console

            _LazyConsole._console = Console()
        return getattr(_LazyConsole._console, name)


console = _LazyConsole()


def Table(*args, **kwargs):  # noqa: N802  (stands for the class)
    """``rich.table.Table``, imported on first use."""
    from rich.table import Table as _Table

    return _Table(*args, **kwargs)


class CLIError(Exception):
    """An error to report on one line, without a traceback."""


def _load(
    path: Path | None,
    orgs: int,
    window_start: int | None,
    window_length: int | None,
    machines: int | None,
    split: str,
    seed: int,
):
    """An instance from a JSON file, an SWF trace, or the built-in synthetic default
    (each reader imported only when needed: pandas only for traces)."""
    if path is None:
        from ..workloads.generators import synthetic_instance

        return synthetic_instance(k=orgs, seed=seed)
    name = path.name.lower()
    if name.endswith(".json"):
        from ..workloads.jsonio import read_instance

        return read_instance(path)
    if name.endswith(".swf") or name.endswith(".swf.gz"):
        from ..workloads.prepare import trace_to_instance
        from ..workloads.swf import read_swf

        trace = read_swf(path)
        return trace_to_instance(
            trace,
            k=orgs,
            start=window_start,
            length=window_length,
            machines=machines,
            split=split,
            seed=seed,
        )
    raise CLIError(f"{path}: expected a .json instance or a .swf/.swf.gz trace")


def _check_format(format: str) -> None:
    if format not in ("table", "json"):
        raise CLIError("--format must be 'table' or 'json'")


def _mosp_instance(path: Path | None, generate: str, seed: int):
    """A MOSP instance (jobs with ``processors``, releases 0) from JSON or a generator spec."""
    from ..mosp.generators import mosp_instance
    from ..mosp.schedule import mosp_arrays
    from ..workloads.jsonio import read_instance

    if path is not None:
        inst = read_instance(path)
        if inst.processors is None:
            raise CLIError(f"{path}: MOSP jobs need 'processors'")
        if (inst.release != 0).any():
            raise CLIError(f"{path}: MOSP is off-line: every release must be 0")
    else:
        try:
            kind, N, n, m = generate.split(":")
            inst = mosp_instance(kind, int(N), int(n), int(m), seed=seed)
        except ValueError as exc:
            raise CLIError(f"--generate expects KIND:N:n:m, e.g. uni:5:100:128 ({exc})") from None
    mosp_arrays(inst)  # rejects a job wider than its cluster, with the job named
    return inst


def _horizon(inst, horizon: int | None) -> int | None:
    if horizon is not None:
        if horizon <= 0:
            raise CLIError("--horizon must be positive")
        return horizon
    return inst.meta.get("horizon")


Orgs = Annotated[
    int, typer.Option("--orgs", "-k", min=1, help="Organizations (traces, synthetic).")
]
WStart = Annotated[
    int | None, typer.Option(help="Window start, seconds after the trace's first submit.")
]
WLen = Annotated[int | None, typer.Option(help="Window length in seconds (default: whole trace).")]
Machines = Annotated[int | None, typer.Option(help="Machines in total (default: from the trace).")]
Split = Annotated[str, typer.Option(help="Machine split across organizations: uniform or zipf.")]
Seed = Annotated[
    int, typer.Option(help="Seed for users-to-organizations, machine split, policies.")
]
Fmt = Annotated[str, typer.Option("--format", help="table or json.")]
