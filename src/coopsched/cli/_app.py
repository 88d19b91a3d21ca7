"""Shared pieces of the command line: the app, one-line errors, instance loading, options."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Fair scheduling on platforms shared by several organizations.",
)
console = Console()


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
    warmup: int = 0,
    owners: str = "user",
):
    """An instance from a JSON file, an SWF trace, or the built-in synthetic default.
    ``warmup`` and ``owners`` apply to traces (``workloads.prepare.trace_to_instance``)."""
    from ..workloads.generators import synthetic_instance
    from ..workloads.jsonio import read_instance
    from ..workloads.prepare import trace_to_instance
    from ..workloads.swf import read_swf

    if path is None:
        return synthetic_instance(k=orgs, seed=seed)
    name = path.name.lower()
    if name.endswith(".json"):
        return read_instance(path)
    if name.endswith(".swf") or name.endswith(".swf.gz"):
        trace = read_swf(path)
        return trace_to_instance(
            trace,
            k=orgs,
            start=window_start,
            length=window_length,
            machines=machines,
            split=split,
            seed=seed,
            warmup=warmup,
            owners=owners,
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
Warmup = Annotated[
    int,
    typer.Option(
        min=0,
        help="Traces: seconds simulated before the window; utilities and dpsi/p_tot then "
        "count only what accrues in the window.",
    ),
]
Owners = Annotated[
    str, typer.Option(help="Traces: jobs to organizations by 'user' (in turn) or 'random'.")
]
