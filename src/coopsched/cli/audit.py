"""``coopsched audit``: how fair was a recorded schedule, who was short-changed, by how much.

The command's options are the fields of the audit's option records
(:data:`coopsched.audit.options.RECORDS`: each field's default, help, panel and flag are
declared once, there), plus the command's own output options (:data:`OUTPUT_OPTIONS`); the
command is built from them, as ``coopsched reproduce STUDY`` is from its study's options.
Progress goes to standard error (:class:`ProgressLine`), whatever the format.
"""

from __future__ import annotations

import inspect
import sys
from dataclasses import MISSING, fields
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand

from ..audit.options import OUTPUT, PANELS, RECORDS, flag_of
from ._app import (
    CLIError,
    _given,
    app,
    console,
    in_flags,
    option_annotation,
    panelled,
    writable,
    write_atomically,
)
from ._app import flag_message as _flag_message

#: The command's own options (not the audit's): name, type, default, flag, help, metavar.
OUTPUT_OPTIONS: tuple[tuple[str, type, Any, str, str, str | None], ...] = (
    ("format", str, "table", "--format", "table, json or csv.", None),
    ("html", Path, None, "--html", "Also write an HTML report to this file.", None),
    ("quiet", bool, False, "--quiet", "No progress on standard error.", None),
)


def _record_fields() -> list[tuple[str, Any]]:
    """Every field of every option record, by the panels' order, then the records'."""
    every = [f for _, cls in RECORDS for f in fields(cls)]
    return [(f.name, f) for panel in PANELS for f in every if flag_of(f).panel == panel]


def _shown(default: Any) -> str:
    """A default worth showing, after the help (escaped from rich's markup)."""
    return "" if default is None or isinstance(default, bool) else f" \\[{default}]"


def _negated(f: Any) -> bool:
    """A record's on/off field that is on by default: the command has only its ``--no-``
    flag (its parameter ``no_`` + the name), which turns it off."""
    return flag_of(f).type is bool and f.default is True


def _cli_name(name: str, f: Any) -> str:
    return "no_" + name if _negated(f) else name


def _cli_flag(name: str, f: Any) -> str:
    flag = flag_of(f).cli_flag(name)
    return "--no-" + flag[2:] if _negated(f) else flag


def _parameters() -> list[inspect.Parameter]:
    """The command's parameters: the log, then every option, panel by panel (the output
    panel starts with the command's own options)."""
    params = [
        inspect.Parameter(
            "log",
            inspect.Parameter.POSITIONAL_OR_KEYWORD,
            annotation=Annotated[
                Path,
                typer.Argument(
                    help="SWF, sacct text or JSON log, or a JSON schedule.",
                    show_default=False,
                ),
            ],
        )
    ]

    def add(name: str, kind: type, default: Any, flag: str, help: str, **kw: Any) -> None:
        annotation = option_annotation(
            kind,
            flag,
            help + _shown(default),
            optional=default is None,
            show_default=False,
            pair=default is None,  # on/off with no default; else the one flag that changes it
            **kw,
        )
        params.append(
            inspect.Parameter(
                name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
            )
        )

    own = list(OUTPUT_OPTIONS)
    for name, f in _record_fields():
        fl = flag_of(f)
        assert f.default is not MISSING
        if fl.panel == OUTPUT:  # the command's own output options come first there
            for o_name, kind, default, flag, help, metavar in own:
                add(o_name, kind, default, flag, help, panel=OUTPUT, metavar=metavar)
            own = []
        default = False if _negated(f) else f.default
        add(
            _cli_name(name, f),
            fl.type,
            default,
            _cli_flag(name, f),
            fl.help,
            panel=fl.panel,
            metavar=fl.metavar,
        )
    return params


#: The audit's parameters (the records' fields) and their flags, for errors in flags.
_NAMES = "|".join(name for name, _ in _record_fields())
_FLAG_OF = {name: flag_of(f).cli_flag(name) for name, f in _record_fields()}
_FLAG_OF.update({name: _cli_flag(name, f) for name, f in _record_fields() if _negated(f)})


def flag_message(message: str) -> str:
    """An audit error in the command line's words (:func:`._app.flag_message`)."""
    return _flag_message(message, _NAMES, _FLAG_OF)


def _flags(fn):
    """``fn`` with its ValueError/TypeError messages given in flags."""
    return in_flags(fn, _NAMES, _FLAG_OF)


def audit(log: Path, **values: Any) -> None:
    """Audit a recorded schedule: who got less than their fair share (psi, phi) and by how
    much. Details: docs/audit.md."""
    from ..audit import AuditReport
    from ..audit import audit as run_audit
    from ..audit.report import render_table, to_csv, to_json

    format, html, quiet = (values.pop(name) for name, *_ in OUTPUT_OPTIONS)
    if format not in ("table", "json", "csv"):
        raise CLIError("--format must be 'table', 'json' or 'csv'")
    if values.get("shares") is not None and _given("contribution"):
        raise CLIError(
            "--contribution: not applicable with --shares (the account tree's shares split "
            "the machines)"
        )
    render_html = None
    if html is not None:
        writable(html, "--html")  # before the audit, not after it
        try:
            from ..audit import html as html_report
        except ImportError:
            raise CLIError("HTML report not available in this build") from None
        render_html = html_report.render_html

    def value(f: Any) -> Any:
        x = values[_cli_name(f.name, f)]
        return not x if _negated(f) else x

    def records() -> dict[str, Any]:
        return {param: cls(**{f.name: value(f) for f in fields(cls)}) for param, cls in RECORDS}

    recs = _flags(records)()
    progress = None if quiet else ProgressLine()
    if recs["window"].by_month or recs["window"].by_week:
        by = "month" if recs["window"].by_month else "week"
        _periods(log, by, recs, format, html, progress)
        return
    try:
        report: AuditReport = _flags(lambda: run_audit(log, progress=progress, **recs))()
    finally:
        if progress is not None:
            progress.close()
    if html is not None and render_html is not None:  # first, whole or not at all
        write_atomically(html, render_html(report), "--html")
    if format != "table":
        # say loudly which contribution rule was used, without polluting the data stream
        print(f"contribution rule: {report.window.contribution_rule}", file=sys.stderr)
    if format == "json":
        print(to_json(report))
    elif format == "csv":
        sys.stdout.write(to_csv(report))
    else:
        render_table(report, console)
    if html is not None and format == "table":
        console.print(f"HTML report written to {html}")


def _periods(
    log: Path, by: str, recs: dict[str, Any], format: str, html: Path | None, progress: Any
) -> None:
    """``--by-month``/``--by-week``: every period audited, side by side
    (:mod:`coopsched.audit.periods`), in the chosen format, and the HTML page if asked."""
    from ..audit import periods

    try:
        report = _flags(lambda: periods.audit_periods(log, by, progress=progress, **recs))()
    finally:
        if progress is not None:
            progress.close()
    if html is not None:
        from ..audit.periods_html import render_html

        write_atomically(html, render_html(report), "--html")
    if format == "json":
        print(periods.to_json(report))
    elif format == "csv":
        sys.stdout.write(periods.to_csv(report))
    else:
        periods.render_table(report, console)
        if html is not None:
            console.print(f"HTML report written to {html}")


audit.__signature__ = inspect.Signature(_parameters())  # type: ignore[attr-defined]
audit.__annotations__ = {p.name: p.annotation for p in audit.__signature__.parameters.values()}  # type: ignore[attr-defined]
app.command(name="audit", cls=panelled({}, TyperCommand))(audit)


class ProgressLine:
    """The audit's progress on standard error: a live line on a terminal (rich's status,
    every message: the phases, the sampling's looks and, every few seconds, the coalitions
    valued within a look), one line per look otherwise (a file, a pipe, a cron job's mail),
    plus one line at most every ``quiet_seconds`` (a minute) within a long look."""

    def __init__(self, stream: Any = None, quiet_seconds: float = 60.0) -> None:
        self.stream = sys.stderr if stream is None else stream
        self.quiet_seconds = quiet_seconds
        self.live = None
        self.last = -float("inf")
        if self.stream.isatty():
            from rich.console import Console

            self.live = Console(file=self.stream).status("auditing", spinner="dots")
            self.live.start()

    def __call__(self, message: str) -> None:
        import time

        if self.live is not None:
            self.live.update(str(message))
            return
        kind = getattr(message, "kind", "step")
        now = time.monotonic()
        if kind == "look" or (kind == "tick" and now - self.last >= self.quiet_seconds):
            self.last = now
            print(f"audit: {message}", file=self.stream, flush=True)

    def close(self) -> None:
        """Stop the live line (the terminal's line is cleared); nothing off a terminal."""
        if self.live is not None:
            self.live.stop()
            self.live = None
