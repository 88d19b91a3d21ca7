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


def _given(*names: str) -> list[str]:
    """Which of the current command's parameters the user gave (not defaults)."""
    try:  # recent typer vendors click as typer._click; older ones use click itself
        from typer._click.globals import get_current_context
    except ImportError:
        from click import get_current_context
    ctx = get_current_context(silent=True)
    if ctx is None:
        return []
    sources = {n: ctx.get_parameter_source(n) for n in names}
    return [n for n, src in sources.items() if getattr(src, "name", "DEFAULT") in _GIVEN]


_GIVEN = ("COMMANDLINE", "ENVIRONMENT", "PROMPT")


def _refuse(given: list[str], what: str) -> None:
    if given:
        opts = ", ".join("--" + n.replace("_", "-") for n in given)
        raise CLIError(f"{opts}: not applicable to {what}")


def _load(
    path: Path | None,
    orgs: int,
    window_start: int | None,
    window_length: int | None,
    machines: int | None,
    split: str,
    seed: int,
):
    """An instance from a JSON file, an SWF trace, or the built-in synthetic default."""
    from ..workloads.generators import synthetic_instance
    from ..workloads.jsonio import read_instance
    from ..workloads.prepare import trace_to_instance
    from ..workloads.swf import read_swf

    if path is None:
        _refuse(_given("window_start", "window_length"), "the synthetic workload")
        extra = {n: v for n, v in (("machines", machines), ("split", split)) if n in _given(n)}
        return synthetic_instance(k=orgs, seed=seed, **extra)
    name = path.name.lower()
    if name.endswith(".json"):
        given = _given("orgs", "window_start", "window_length", "machines", "split")
        _refuse(given, "a JSON instance (it fixes organizations, machines and times)")
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
        if not 0 < horizon < 2**53:
            raise CLIError(f"--horizon must be positive and below 2^53, got {horizon}")
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
