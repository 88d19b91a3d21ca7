"""``coopsched reproduce``: the papers' experiments and the studies beyond them."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from ._app import CLIError, PolicyHelp, app, in_flags

#: The options of the studies whose flag is not ``--`` + the name with dashes.
_FLAG_OF = {
    "sampling": "--window-sampling",
    "machines": "--metacentrum-machines",
    "instances": "--windows",
}
_PARAMS = (
    "traces|windows|split|machines|sampling|warmup|owners|policies|backlog|jobs|backfill|"
    "orgs|long_windows|states|logs|lengths|instances"
)


def _flag(option: str) -> str:
    """The flag of a study option."""
    return _FLAG_OF.get(option, "--" + option.replace("_", "-"))


@app.command(cls=PolicyHelp)
def reproduce(
    what: Annotated[
        str,
        typer.Argument(help="A study's name; 'list' shows every study and what it reproduces."),
    ],
    out: Annotated[Path | None, typer.Option(help="Output folder (default results/WHAT).")] = None,
    quick: Annotated[
        bool, typer.Option(help="Small preset: a few windows, minutes on 2 cores.")
    ] = False,
    windows: Annotated[
        int | None,
        typer.Option(
            min=1, help="Windows per trace (default 100); for mosp and game, instances per cell."
        ),
    ] = None,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Local worker processes (default: all cores).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="dask.distributed scheduler address.")
    ] = None,
    traces: Annotated[Path | None, typer.Option(help="Folder with the SWF traces.")] = None,
    split: Annotated[
        str | None, typer.Option(help="Machine split: uniform or zipf (default zipf).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the study.")] = 0,
    metacentrum_machines: Annotated[
        int | None, typer.Option(help="Machines for METACENTRUM (no header).")
    ] = None,
    orgs: Annotated[
        str | None, typer.Option(help="fig10: comma-separated organization counts.")
    ] = None,
    window_sampling: Annotated[
        str | None,
        typer.Option(help="table1/2: window starts uniform in 'time' or at a random 'job'."),
    ] = None,
    warmup: Annotated[
        int | None,
        typer.Option(
            min=0,
            help="table1/2, sensitivity: seconds simulated before each window (the metric "
            "counts the utilities accrued in the window; sensitivity default 50000).",
        ),
    ] = None,
    owners: Annotated[
        str | None,
        typer.Option(help="table1/2: jobs to organizations by 'user' (default) or 'random'."),
    ] = None,
    backlog: Annotated[
        bool,
        typer.Option(
            help="table1/2: start each window from the log's own state (waiting jobs kept, "
            "running jobs pinned); sensitivity: use --states."
        ),
    ] = False,
    long_windows: Annotated[
        int | None,
        typer.Option(min=1, help="sensitivity: windows per trace for Table 2 (default --windows)."),
    ] = None,
    states: Annotated[
        str | None,
        typer.Option(
            help="sensitivity: window start states, comma-separated (empty,warmup,backlog)."
        ),
    ] = None,
    policies: Annotated[
        str | None,
        typer.Option(
            help="table1/2, fig10, sensitivity, production: the policy columns, comma-separated "
            "registered names (plug-ins too), 'paper' (the paper's six; the default of the "
            "reproductions) or 'all' (every registered policy but REF, the reference)."
        ),
    ] = None,
    logs: Annotated[
        str | None,
        typer.Option(
            help="rigid: the logs, comma-separated (default SDSC-SP2,CTC-SP2,KTH-SP2,HPC2N,"
            "CEA-Curie,LPC-EGEE)."
        ),
    ] = None,
    lengths: Annotated[
        str | None,
        typer.Option(help="rigid: window lengths in seconds, comma-separated (50000,500000)."),
    ] = None,
    jobs: Annotated[
        str | None,
        typer.Option(
            help="table1/2, fig10, sensitivity, production: 'sequential' (a job on q processors "
            "is q one-processor jobs, the paper's split; the default) or 'rigid' (q machines "
            "at once, REF and every policy with backfilling)."
        ),
    ] = None,
    backfill: Annotated[
        str | None,
        typer.Option(
            help="With --jobs rigid: none, first-fit or easy (default: easy when every job of "
            "a window has a requested time, else first-fit)."
        ),
    ] = None,
) -> None:
    """Reproduce a paper's experiments or run a study; parallel, resumable (rows.jsonl)."""
    from ..experiments.study import STUDIES, OptionError, get_study

    if what == "list":
        get_study("table1")  # loads the built-in studies
        for name, cls in STUDIES.items():
            print(f"{name:12s} {cls.title}")
        return
    try:
        cls = get_study(what)
    except KeyError as exc:
        raise CLIError(exc.args[0]) from None
    options: dict[str, Any] = {
        "windows": windows,
        "traces": traces,
        "split": split,
        "orgs": orgs,
        "sampling": window_sampling,
        "warmup": warmup,
        "owners": owners,
        "backlog": backlog or None,
        "long_windows": long_windows,
        "states": states,
        "policies": policies,
        "logs": logs,
        "lengths": lengths,
        "jobs": jobs,
        "backfill": backfill,
        "machines": {"METACENTRUM": metacentrum_machines} if metacentrum_machines else None,
    }
    if "instances" in cls.options:
        options["instances"] = options.pop("windows")
    out = out or Path("results") / (what + ("-quick" if quick else ""))

    def configured():
        try:
            return cls(quick=quick, seed=seed, **options)
        except OptionError as exc:  # in flags, as the user gave them
            accepted = ", ".join(map(_flag, exc.accepted)) or "none besides --quick and --seed"
            raise CLIError(
                f"reproduce {what}: option(s) {', '.join(map(_flag, exc.unknown))} do not "
                f"apply (accepted: {accepted})"
            ) from None

    errors = (ValueError, TypeError, FileNotFoundError)
    study = in_flags(configured, _PARAMS, _FLAG_OF, errors)()
    _, md = in_flags(study.run, _PARAMS, _FLAG_OF, errors)(
        out, workers=workers, scheduler=scheduler
    )
    print(md)
    files = ", ".join(("summary.md", "results.csv", *cls.files, "rows.jsonl"))
    print(f"written to {out}/ ({files})")
