"""``coopsched reproduce``: the papers' experiments and the studies beyond them.

The runner's options (``--out``, ``--quick``, ``--workers``, ``--scheduler``, ``--seed``)
are declared here; a study's own options are read from its declaration
(:class:`~coopsched.experiments.study.StudyOption`) once the study is named, so that
``coopsched reproduce STUDY --help`` lists that study's options and no other, and a flag
of another study is refused on one line. Nothing of the studies is imported before a
study is named (``coopsched reproduce --help`` stays light).
"""

from __future__ import annotations

import inspect
import typing
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from typer.core import TyperCommand

from ._app import CLIError, PolicyHelp, app, in_flags, option_annotation

#: The panel of ``coopsched reproduce STUDY --help`` holding the study's own options.
STUDY_PANEL = "The study's options"

if TYPE_CHECKING:
    from ..experiments.study import Study, StudyOption

#: The runner's options that take a value (to find the study's name among the arguments).
_VALUED = ("--out", "--workers", "--scheduler", "--seed")
#: The parameter names of the foreign flags (hidden, refused): ``foreign_`` + the flag.
_FOREIGN = "foreign_"


def _annotation(option: StudyOption, hidden: bool = False) -> Any:
    """The typer annotation of a study option's flag."""
    help = option.help
    if option.choices and not hidden:
        help += f" Choices: {', '.join(option.choices)}."
    return option_annotation(
        option.type,
        option.cli_flag,
        help,
        optional=option.type is not bool,
        min=option.min,
        hidden=hidden,
        panel=STUDY_PANEL,
    )


def _parameter(name: str, option: StudyOption, hidden: bool = False) -> inspect.Parameter:
    return inspect.Parameter(
        name,
        inspect.Parameter.KEYWORD_ONLY,
        default=False if option.type is bool else None,
        annotation=_annotation(option, hidden),
    )


def study_command(cls: type[Study], others: list[type[Study]]) -> Any:
    """The click command of ``coopsched reproduce NAME`` for the study ``cls``: the
    runner's options, the study's (:attr:`Study.options`), and the other studies' flags
    hidden, so that one of them is refused with a one-line error naming it."""
    hints = typing.get_type_hints(reproduce, include_extras=True)
    own = {o.cli_flag for o in cls.options}
    params = [
        p.replace(annotation=hints[p.name])
        for p in inspect.signature(reproduce).parameters.values()
    ]
    params += [_parameter(o.name, o) for o in cls.options]
    foreign: dict[str, StudyOption] = {}
    for other in others:
        for o in other.options:
            if o.cli_flag not in own:
                foreign.setdefault(o.cli_flag, o)
    for flag, o in foreign.items():
        params.append(_parameter(_FOREIGN + flag[2:].replace("-", "_"), o, hidden=True))

    def run(**kwargs: Any) -> None:
        _run(cls, **kwargs)

    run.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params}
    one = typer.Typer(add_completion=False)
    one.command(
        name=cls.name,
        help=f"{cls.title}.\n\nParallel, resumable (rows.jsonl).",
    )(run)
    return typer.main.get_command(one)


def _study_named(args: list[str]) -> type[Study] | None:
    """The study named among ``args`` (the first argument that is a study's name; none for
    ``list``, for no name, or for no argument but flags)."""
    words = [
        a
        for i, a in enumerate(args)
        if not a.startswith("-") and (i == 0 or args[i - 1] not in _VALUED)
    ]
    if not words:
        return None
    from ..experiments.studies import STUDIES, get_study  # importing it loads the studies

    for word in words:
        if word == "list":
            return None
        if word in STUDIES:
            return STUDIES[word]
    try:
        return get_study(words[0])
    except KeyError as exc:
        raise CLIError(exc.args[0]) from None


class StudyHelp(PolicyHelp):
    """``coopsched reproduce``: once the arguments name a study, the command takes that
    study's parameters and callback (:func:`study_command`), help included."""

    def parse_args(self, ctx, args):
        """Parse ``reproduce STUDY ...``: with a study named, take that study's own options and
        refuse the flags of other studies (one line naming them)."""
        cls = _study_named(list(args))
        if cls is not None:
            from ..experiments.study import STUDIES

            one = study_command(cls, [s for s in STUDIES.values() if s is not cls])
            self.params, self.callback, self.help = one.params, one.callback, one.help
            self.study = cls
        rest = super().parse_args(ctx, args)
        if cls is not None:
            # --no-backlog, like no flag, asks for nothing: accepted, as it always was
            given = [
                n for n, v in ctx.params.items() if v is not False and _on_command_line(ctx, n)
            ]
            _refuse_foreign(cls, given)
        return rest

    def format_help(self, ctx, formatter) -> None:
        """A study that takes no ``--policies`` does not list the policies."""
        study = getattr(self, "study", None)
        if study is not None and "policies" not in study.option_names():
            TyperCommand.format_help(self, ctx, formatter)
        else:
            super().format_help(ctx, formatter)


@app.command(cls=StudyHelp)
def reproduce(
    what: Annotated[
        str,
        typer.Argument(help="A study's name; 'list' shows every study and what it reproduces."),
    ],
    out: Annotated[Path | None, typer.Option(help="Output folder (default results/WHAT).")] = None,
    quick: Annotated[
        bool, typer.Option(help="Small preset: a few windows, minutes on 2 cores.")
    ] = False,
    workers: Annotated[
        int | None, typer.Option(min=1, help="Local worker processes (default: all cores).")
    ] = None,
    scheduler: Annotated[
        str | None, typer.Option(help="dask.distributed scheduler address.")
    ] = None,
    seed: Annotated[int, typer.Option(min=0, max=2**63 - 1, help="Seed of the study.")] = 0,
) -> None:
    """Reproduce a paper's experiments or run a study; parallel, resumable (rows.jsonl).
    A study's own options: coopsched reproduce STUDY --help."""
    if what != "list":  # a study's name is handled by its own command (StudyHelp)
        from ..experiments.studies import get_study

        try:
            get_study(what)
        except KeyError as exc:
            raise CLIError(exc.args[0]) from None
    from ..experiments.studies import STUDIES, get_study  # importing it loads the studies

    for name, cls in STUDIES.items():
        print(f"{name:12s} {cls.title}")


def _on_command_line(ctx: Any, name: str) -> bool:
    source = ctx.get_parameter_source(name)
    return source is not None and source.name == "COMMANDLINE"


def _refuse_foreign(cls: type[Study], given_names: list[str]) -> None:
    """Another study's flag given to ``cls``: one line naming it and what ``cls`` takes
    (when the command line is parsed, before anything runs)."""
    given = [
        "--" + name[len(_FOREIGN) :].replace("_", "-")
        for name in given_names
        if name.startswith(_FOREIGN)
    ]
    if given:
        accepted = ", ".join(o.cli_flag for o in cls.options) or "none besides --quick and --seed"
        raise CLIError(
            f"reproduce {cls.name}: option(s) {', '.join(given)} do not apply "
            f"(accepted: {accepted})"
        )


def _run(cls: type[Study], **kwargs: Any) -> None:
    """Configure and run the study ``cls`` from the parsed command line (the other
    studies' flags were refused by :func:`_refuse_foreign`)."""
    from ..experiments.study import OptionError

    for name in [n for n in kwargs if n.startswith(_FOREIGN)]:
        del kwargs[name]
    what = cls.name
    out, quick, workers, scheduler, seed = (
        kwargs.pop(k) for k in ("out", "quick", "workers", "scheduler", "seed")
    )
    kwargs.pop("what")
    options: dict[str, Any] = {}
    for o in cls.options:
        value = kwargs.pop(o.name)
        if value is None or value is False:
            continue  # the study's default
        options[o.name] = o.convert(value) if o.convert else value
    out = out or Path("results") / (what + ("-quick" if quick else ""))
    names = "|".join(cls.option_names()) or "(?!)"  # (?!): no option, nothing to rename
    flag_of = {o.name: o.cli_flag for o in cls.options}

    def configured():
        try:
            return cls(quick=quick, seed=seed, **options)
        except OptionError as exc:  # cannot happen from the command line: a bug
            raise AssertionError(str(exc)) from None

    errors = (ValueError, TypeError, FileNotFoundError)
    study = in_flags(configured, names, flag_of, errors)()
    _, md = in_flags(study.run, names, flag_of, errors)(out, workers=workers, scheduler=scheduler)
    print(md)
    files = ", ".join(("summary.md", "results.csv", *cls.files, "rows.jsonl"))
    print(f"written to {out}/ ({files})")
