"""``coopsched audit``: how fair was a recorded schedule, who was short-changed, by how much."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import typer

from ._app import CLIError, _given, app, console, in_flags, writable, write_atomically
from ._app import flag_message as _flag_message


@app.command()
def audit(
    log: Annotated[
        Path,
        typer.Argument(help="Recorded log: SWF (.swf, .swf.gz), sacct output, or a JSON schedule."),
    ],
    org_by: Annotated[
        str | None,
        typer.Option(
            help="Organizations = distinct values of: user, group, account, partition, queue."
        ),
    ] = None,
    mapping: Annotated[
        Path | None, typer.Option(help="TOML file naming organizations, members, machines.")
    ] = None,
    shares: Annotated[
        Path | None,
        typer.Option(
            help="Slurm account tree with shares (sacctmgr show assoc -P, or sshare -a -l -P): "
            "with --org-by account, machines split by each account's normalized shares."
        ),
    ] = None,
    other: Annotated[
        str | None, typer.Option(help="Gather jobs that match no organization under this name.")
    ] = None,
    from_: Annotated[
        str | None,
        typer.Option(
            "--from", help="Window start: ISO date/time in the log's zone, or log seconds."
        ),
    ] = None,
    to: Annotated[
        str | None, typer.Option(help="Window end (exclusive), same forms as --from.")
    ] = None,
    horizon: Annotated[
        int | None, typer.Option(help="Window length in seconds (JSON schedules: required).")
    ] = None,
    timezone: Annotated[
        str | None, typer.Option(help="IANA zone for dates (default: the log's TimeZoneString).")
    ] = None,
    machines: Annotated[
        int | None, typer.Option(help="Platform processors (default: the log's MaxProcs).")
    ] = None,
    contribution: Annotated[
        str, typer.Option(help="Machine split without a mapping's machines: work or equal.")
    ] = "work",
    method: Annotated[str, typer.Option(help="auto, exact or sampled.")] = "auto",
    exact_max: Annotated[
        int, typer.Option(min=1, max=20, help="auto: exact up to this many organizations.")
    ] = 16,
    samples: Annotated[
        int,
        typer.Option(
            min=4, help="Sampled: at most this many orders (antithetic pairs, in batches)."
        ),
    ] = 200,
    seconds: Annotated[
        float | None,
        typer.Option(help="Sampled: stop sampling after this many seconds (default: no limit)."),
    ] = None,
    adaptive: Annotated[
        bool,
        typer.Option(help="Sampled: stop once every organization's surplus sign is decided."),
    ] = True,
    confidence: Annotated[float, typer.Option(help="Sampled: interval confidence.")] = 0.95,
    interval: Annotated[
        str,
        typer.Option(
            help="Sampled: auto (t when adaptive, hall with --no-adaptive), t (central limit "
            "theorem), hall (t with Hall's skewness correction) or bernstein (empirical, wider)."
        ),
    ] = "auto",
    estimator: Annotated[
        str,
        typer.Option(
            help="Sampled: split (the grand coalition's recorded total split off exactly, "
            "far less variance per order), ends (also each organization's first and last "
            "positions exact) or plain."
        ),
    ] = "split",
    refine: Annotated[
        bool,
        typer.Option(
            help="Sampled, adaptive: once few organizations are undecided, sample only "
            "them, stratified by position (first and last positions exact)."
        ),
    ] = True,
    allocate: Annotated[
        bool,
        typer.Option(
            help="Sampled, with --refine: after the refinement's first look, give each "
            "organization still open more draws where its contributions vary most and "
            "coalitions cost least (optimum allocation; off by default: it helped on some "
            "months and cost time on others)."
        ),
    ] = False,
    value_policy: Annotated[
        str, typer.Option(help="Sampled: policy valuing the proper coalitions (REF's stand-in).")
    ] = "fairshare",
    exact_upto: Annotated[
        int,
        typer.Option(
            min=0, max=16, help="Sampled: coalitions up to this size valued by REF (0: none)."
        ),
    ] = 0,
    seed: Annotated[
        int, typer.Option(min=0, max=2**63 - 1, help="Seed for sampling and randomized policies.")
    ] = 0,
    scheduler: Annotated[
        str | None,
        typer.Option(help="Sampled: value coalitions on this dask.distributed scheduler address."),
    ] = None,
    points: Annotated[int, typer.Option(min=0, help="Points of the curves over the window.")] = 24,
    counterfactuals: Annotated[
        bool, typer.Option(help="Run every policy on the same window.")
    ] = True,
    jobs: Annotated[
        str | None,
        typer.Option(
            help="The platform's model: rigid (default for logs: a job holds its processors "
            "at once) or sequential (the paper's split into one-processor jobs)."
        ),
    ] = None,
    backfill: Annotated[
        str | None,
        typer.Option(
            help="Rigid jobs: none, first-fit or easy (default: easy where every job has a "
            "requested time, else first-fit)."
        ),
    ] = None,
    skip_malformed: Annotated[
        bool,
        typer.Option(
            help="Leave malformed log records out (counted, the first listed in every output) "
            "instead of stopping at the first."
        ),
    ] = False,
    owen: Annotated[
        bool | None,
        typer.Option(
            "--owen/--no-owen",
            help="Owen values by units (the --shares account tree or the mapping's [[unit]] "
            "tables); default: when the hierarchy has more than one level.",
        ),
    ] = None,
    format: Annotated[str, typer.Option("--format", help="table, json or csv.")] = "table",
    html: Annotated[Path | None, typer.Option(help="Also write an HTML report here.")] = None,
) -> None:
    """Audit a recorded schedule: psi, phi (Shapley, REF) and the signed surplus per organization."""
    from ..audit import AuditReport
    from ..audit import audit as run_audit
    from ..audit.report import render_table, to_csv, to_json

    if format not in ("table", "json", "csv"):
        raise CLIError("--format must be 'table', 'json' or 'csv'")
    if shares is not None and _given("contribution"):
        raise CLIError(
            "--contribution: not applicable with --shares (the account tree's shares split "
            "the machines)"
        )
    render_html: Callable[[AuditReport], str] | None = None
    if html is not None:
        writable(html, "--html")  # before the audit, not after it
        try:
            from ..audit import html as html_report
        except ImportError:
            raise CLIError("HTML report not available in this build") from None
        render_html = html_report.render_html
    quiet = format != "table"
    status = console.status("auditing", spinner="dots") if not quiet else None
    if status is not None:
        status.start()
    try:
        report = _flags(run_audit)(
            log,
            org_by=org_by,
            mapping=mapping,
            shares=shares,
            other=other,
            t_from=from_,
            t_to=to,
            horizon=horizon,
            timezone=timezone,
            machines=machines,
            contribution=contribution,
            method=method,
            exact_max=exact_max,
            samples=samples,
            seconds=seconds,
            adaptive=adaptive,
            interval=interval,
            estimator=estimator,
            refine=refine,
            allocate=allocate,
            seed=seed,
            confidence=confidence,
            value_policy=value_policy,
            exact_upto=exact_upto,
            points=points,
            with_counterfactuals=counterfactuals,
            jobs=jobs,
            backfill=backfill,
            skip_malformed=skip_malformed,
            owen=owen,
            scheduler=scheduler,
            progress=None if status is None else (lambda m: status.update(m)),
        )
    finally:
        if status is not None:
            status.stop()
    if html is not None and render_html is not None:  # first, whole or not at all
        write_atomically(html, render_html(report), "--html")
    if quiet:
        # say loudly which contribution rule was used, without polluting the data stream
        print(f"contribution rule: {report.window.contribution_rule}", file=sys.stderr)
    if format == "json":
        print(to_json(report))
    elif format == "csv":
        sys.stdout.write(to_csv(report))
    else:
        render_table(report, console)
    if html is not None and not quiet:
        console.print(f"HTML report written to {html}")


#: Parameters of :func:`coopsched.audit.audit` whose flag is not ``--`` + the name with dashes.
_FLAG_OF = {"t_from": "--from", "t_to": "--to", "with_counterfactuals": "--counterfactuals"}
_PARAMS = (
    "t_from|t_to|org_by|mapping|shares|other|horizon|timezone|machines|contribution|method|"
    "exact_max|samples|seconds|adaptive|interval|estimator|refine|allocate|confidence|value_policy|exact_upto|seed|points|jobs|backfill|"
    "skip_malformed|owen|scheduler"
)


def flag_message(message: str) -> str:
    """An audit error in the command line's words (:func:`._app.flag_message`)."""
    return _flag_message(message, _PARAMS, _FLAG_OF)


def _flags(fn):
    """``fn`` with its ValueError/TypeError messages given in flags."""
    return in_flags(fn, _PARAMS, _FLAG_OF)
