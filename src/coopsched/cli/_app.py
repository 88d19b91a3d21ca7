"""Shared pieces of the command line: the app, one-line errors, instance loading, options."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

if TYPE_CHECKING:
    from rich.console import Console

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    help="Fair scheduling on platforms shared by several organizations.",
)


class _LazyConsole:
    """The rich ``Console``, created on first use (rich is not imported at start-up)."""

    _console: Console | None = None

    def __getattr__(self, name: str):
        if _LazyConsole._console is None:
            from rich.console import Console

            _LazyConsole._console = Console()
        return getattr(_LazyConsole._console, name)


console = _LazyConsole()


def flag_message(message: str, params: str, flag_of: dict[str, str] | None = None) -> str:
    """A library error in the command line's words: a parameter name of ``params`` (a
    ``|``-separated list) at the start (``machines: ...``) or written ``name=`` becomes its
    flag (``--machines``; ``flag_of`` for a flag that is not the name with dashes)."""
    import re

    def flag(name: str) -> str:
        return (flag_of or {}).get(name, "--" + name.replace("_", "-"))

    message = re.sub(rf"^({params}):", lambda m: flag(m.group(1)) + ":", message)
    message = re.sub(rf"\b({params})=(?=\w)", lambda m: flag(m.group(1)) + " ", message)
    return re.sub(rf"\b({params})=", lambda m: flag(m.group(1)), message)


def in_flags(
    fn, params: str, flag_of: dict[str, str] | None = None, errors=(ValueError, TypeError)
):
    """``fn`` with the messages of its ``errors`` given in flags (:func:`flag_message`), as
    one-line :class:`CLIError`."""

    def call(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except errors as exc:
            raise CLIError(flag_message(str(exc), params, flag_of)) from None

    return call


def option_annotation(
    kind: type,
    flag: str,
    help: str,
    *,
    optional: bool = True,
    panel: str | None = None,
    metavar: str | None = None,
    min: int | None = None,
    hidden: bool = False,
    show_default: bool = True,
    pair: bool = True,
) -> Any:
    """The typer annotation of an option declared as data (a study's option, an audit
    record's field): ``kind`` its value's type (``bool``: an on/off pair ``--x/--no-x``,
    or with ``pair=False`` the flag ``flag`` alone), ``flag`` its flag, ``optional``
    whether it may be left unset (``None``), ``panel`` its panel of ``--help``."""
    value: Any = kind | None if optional else kind
    flags = (f"{flag}/--no-{flag[2:]}",) if kind is bool and pair else (flag,)
    return Annotated[
        value,
        typer.Option(
            *flags,
            help=help,
            min=min,
            hidden=hidden,
            rich_help_panel=panel,
            metavar=metavar,
            show_default=show_default,
        ),
    ]


def Table(*args, **kwargs):  # noqa: N802  (stands for the class)
    """``rich.table.Table``, imported on first use."""
    from rich.table import Table as _Table

    return _Table(*args, **kwargs)


class PolicyHelp(TyperCommand):
    """A command whose ``--help`` ends with the registered policies: the list is read from
    the registry when help is shown, so start-up does not import the policies."""

    def format_help(self, ctx, formatter) -> None:
        if not self.epilog:
            from ..online.policies import names

            self.epilog = (
                "Registered policies: "
                + ", ".join(names())
                + " (also package.module:Class; 'coopsched policies' describes them)."
            )
        super().format_help(ctx, formatter)


#: The panels of ``--help`` of the commands that run policies on a workload (simulate,
#: compare; :func:`panelled`): the workload, the platform's model, the policy, the output.
WORKLOAD = "Workload"
#: The options of a trace's or the synthetic workload (the :data:`WORKLOAD` panel; none
#: applies to a JSON instance).
WORKLOAD_OPTIONS = (
    "orgs",
    "window_start",
    "window_length",
    "machines",
    "split",
    "warmup",
    "owners",
    "backlog",
)
MODEL = "Platform model"
POLICY = "Policy"
OUTPUT = "Output"


def panelled(panels: dict[str, str], base: type | None = None) -> type:
    """A command class (``base``, default :class:`PolicyHelp`) whose ``--help`` shows the
    options named in ``panels`` (parameter name: panel) in their panels, and ``--help``
    itself in the :data:`OUTPUT` panel (an "Options" panel of its own would take three
    lines)."""

    class Panelled(base or PolicyHelp):  # type: ignore[misc]
        def format_help(self, ctx, formatter) -> None:
            for param in self.get_params(ctx):
                if param.name in panels:
                    param.rich_help_panel = panels[param.name]
            super().format_help(ctx, formatter)

        def get_help_option(self, ctx):
            option = super().get_help_option(ctx)
            if option is not None:
                option.rich_help_panel = OUTPUT
            return option

    return Panelled


class CLIError(Exception):
    """An error to report on one line, without a traceback."""


def writable(path: Path, flag: str) -> Path:
    """``path`` if a file can be written there (its folder exists and is writable), checked
    before a long command starts; else a :class:`CLIError` naming ``flag``."""
    import os

    folder = path.parent if str(path.parent) else Path(".")
    if path.is_dir():
        raise CLIError(f"{flag}: {path} is a folder; give a file name")
    if not folder.is_dir():
        raise CLIError(f"{flag}: cannot write {path}: no folder {folder}")
    if not os.access(folder, os.W_OK):
        raise CLIError(f"{flag}: cannot write {path}: the folder {folder} is not writable")
    return path


def write_atomically(path: Path, text: str, flag: str) -> None:
    """Write ``text`` to ``path`` whole or not at all: into a temporary file of the same
    folder, then renamed over ``path`` (an interrupted or failed write leaves no half
    file); an error names ``flag``."""
    import os
    import tempfile

    folder = path.parent if str(path.parent) else Path(".")
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            umask = os.umask(0)
            os.umask(umask)
            os.chmod(tmp, 0o666 & ~umask)  # as open() would create it, not mkstemp's 0600
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    except OSError as exc:
        raise CLIError(f"{flag}: cannot write {path}: {exc.strerror or exc}") from None


def _input_path(path: Path | None, trace: str | None) -> Path | None:
    """The input file: a path, or a Parallel Workloads Archive log named by ``--trace``
    (or given as the argument when no such file exists), downloaded on first use."""
    from ..workloads.archive import trace_path

    if trace is not None:
        if path is not None:
            raise CLIError("give an input file or --trace NAME, not both")
        return trace_path(trace)
    if path is not None and not path.exists():
        from ..workloads.archive import lookup

        try:
            lookup(str(path))
        except KeyError:
            return path  # not a log name either: the loader reports the missing file
        return trace_path(str(path))
    return path


def _given(*names: str) -> list[str]:
    """Which of the current command's parameters the user gave (not defaults)."""
    try:  # recent typer vendors click as typer._click; older ones use click itself
        from typer._click.globals import get_current_context
    except ImportError:
        from click import get_current_context  # type: ignore[no-redef]  # the same function
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
    trace: str | None = None,
    warmup: int = 0,
    owners: str = "user",
    backlog: bool = False,
    jobs: str = "sequential",
):
    """An instance from a JSON file, an SWF trace (path or archive name), or the built-in
    synthetic default (:func:`coopsched.workloads.load.load_instance`). ``warmup``,
    ``owners`` and ``backlog`` apply to traces
    (:func:`coopsched.workloads.prepare.trace_to_instance`)."""
    from ..workloads.load import load_instance

    if trace is not None and path is not None:
        raise CLIError("give an input file or --trace NAME, not both")
    source = trace if trace is not None else path
    if source is None:
        from ..workloads.generators import synthetic_instance

        given = _given("window_start", "window_length", "warmup", "owners", "backlog", "jobs")
        _refuse(given, "the synthetic workload")
        extra: dict[str, Any] = {
            n: v for n, v in (("machines", machines), ("split", split)) if n in _given(n)
        }
        return synthetic_instance(k=orgs, seed=seed, **extra)
    if str(source).lower().endswith(".json"):
        given = _given(*WORKLOAD_OPTIONS, "jobs")
        _refuse(
            given,
            "a JSON instance (it fixes organizations, machines and times; jobs with "
            "'processors' are rigid)",
        )
    inst = load_instance(
        source,
        k=orgs,
        start=window_start,
        length=window_length,
        machines=machines,
        split=split,
        seed=seed,
        warmup=warmup,
        owners=owners,
        backlog=backlog,
        jobs=jobs,
    )
    if inst.n == 0:  # never a table of zeros for a window past the end of a trace
        if str(source).lower().endswith(".json"):
            raise CLIError(f"{source}: the instance has no job: nothing to simulate")
        raise CLIError(
            f"{source}: no job is submitted in the window (--window-start "
            f"{window_start or 0} s after the first submit, --window-length "
            f"{window_length if window_length is not None else 'to the end'}): nothing to "
            f"simulate; 'coopsched trace-info {source}' shows the trace's span"
        )
    return inst


def _backfill(inst, backfill: str | None) -> str | None:
    """``--backfill`` for a rigid instance; refused (never ignored) for sequential jobs."""
    if backfill is None:
        return None
    if not inst.rigid:
        raise CLIError(
            "--backfill applies to rigid jobs (--jobs rigid, or a JSON instance with "
            "'processors'): with sequential jobs every rule gives the same schedule"
        )
    return backfill


def _check_format(format: str) -> None:
    from ..report import FORMATS

    if format not in FORMATS:
        raise CLIError(f"--format must be one of {', '.join(FORMATS)}")


def _show(report, format: str) -> None:
    """Print a :class:`coopsched.report.Report` as a table, CSV or JSON."""
    from rich.console import Console
    from rich.table import Table

    if format == "json":
        print(report.to_json())
        return
    if format == "csv":
        print(report.to_csv(), end="")
        return
    # off a terminal (a file, a pipe) rich must not squeeze the table to 80 columns
    out = console if console.is_terminal else Console(file=sys.stdout, width=100_000)
    table = Table(title=report.title)
    for c in report.columns:
        table.add_column(c.header or c.key, justify="left" if c.left else "right")
    for r in report.rows:
        table.add_row(*(c.show(r.get(c.key)) for c in report.columns))
    out.print(table)
    for note in report.notes:
        out.print(note, highlight=False)


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
    int,
    typer.Option(
        min=0, max=2**63 - 1, help="Seed for users-to-organizations, machine split, policies."
    ),
]
Fmt = Annotated[str, typer.Option("--format", help="table, json or csv.")]
Trace = Annotated[
    str | None,
    typer.Option(
        help="A Parallel Workloads Archive log by name (e.g. LPC-EGEE), downloaded on first "
        "use; see 'coopsched fetch --list'."
    ),
]
Warmup = Annotated[
    int,
    typer.Option(
        min=0,
        help="Traces: seconds simulated before the window; utilities and dpsi/p_tot then "
        "count only what accrues in the window.",
    ),
]
Backlog = Annotated[
    bool,
    typer.Option(
        help="Traces: start the window from the log's own state: jobs waiting at its start "
        "kept, jobs running pinned with their remaining run time (not with --warmup).",
    ),
]
Owners = Annotated[
    str, typer.Option(help="Traces: jobs to organizations by 'user' (in turn) or 'random'.")
]
Jobs = Annotated[
    str,
    typer.Option(
        help="Traces: 'sequential' (a job on q processors is q one-processor jobs, the "
        "paper's split) or 'rigid' (q machines at once, with backfilling)."
    ),
]
Backfill = Annotated[
    str | None,
    typer.Option(
        help="Rigid jobs: none, first-fit, easy (only each organization's oldest job is a "
        "candidate, the papers' model), easy-queue or first-fit-queue (EASY or first-fit "
        "over the whole queue, as real schedulers; default: easy when every job has a "
        "requested time, else first-fit)."
    ),
]
Engine = Annotated[
    str,
    typer.Option(
        help="auto (default), python or compiled: the event loop that runs the policy "
        "(compiled: numba, for the built-in policies of its table; same schedules)."
    ),
]
PolicyTimeout = Annotated[
    float | None,
    typer.Option(
        min=0.001,
        help="Stop a plug-in policy whose call (its run, or one select) lasts more than this "
        "many seconds (default: no limit).",
    ),
]
