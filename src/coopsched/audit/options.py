"""The options of an audit, in five records grouped by meaning.

:class:`TimeWindow` (which stretch of the log, and how the log is read),
:class:`Organizations` (who the players are and what each contributes), :class:`PlatformModel`
(how jobs use the machines), :class:`Estimation` (how ``phi`` is computed, its budget, and the
curves' resolution) and :class:`Contents` (what the report holds besides ``phi``). Each record
is frozen and checks its own fields when made; its errors name the parameter (``samples: 2 is
not a value in 4..1,000,000``). Checks that need the log or the source (a window inside the
log, ``org_by=`` against a JSON schedule) stay with :func:`coopsched.audit.audit`.

Every field also says how it reads on the command line (:class:`Flag`, in the field's
metadata: its help, its panel of ``coopsched audit --help``, its flag): the command builds
its options from :data:`RECORDS` (:mod:`coopsched.cli.audit`), so a field's default, help
and checks are written once, here. :func:`records` turns :func:`~coopsched.audit.audit`'s
keywords into these records: the one place where both spellings meet.

This module imports nothing heavy (the command line reads it to build its ``--help``).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

__all__ = [
    "TimeWindow",
    "Organizations",
    "PlatformModel",
    "Estimation",
    "Contents",
    "Flag",
    "PANELS",
    "RECORDS",
    "records",
]

#: The panels of ``coopsched audit --help``, in the order they are shown: what an operator
#: sets first, the estimation's internals last.
WINDOW = "The log and its window"
ORGANIZATIONS = "Organizations and their machines"
MODEL = "Platform model"
BUDGET = "Estimation and budget"
OUTPUT = "Output"
ADVANCED = "Estimation (advanced)"
PANELS: tuple[str, ...] = (WINDOW, ORGANIZATIONS, MODEL, BUDGET, OUTPUT, ADVANCED)


@dataclass(frozen=True)
class Flag:
    """How a field of an option record reads on the command line: ``help`` (one line),
    ``panel`` (one of :data:`PANELS`), ``type`` of the flag's value (``str``, ``int``,
    ``float``, ``bool``: an on/off pair, or ``Path``), ``flag`` when it is not ``--`` + the
    field's name with dashes, ``metavar`` (the choices, for a closed set)."""

    help: str
    panel: str
    type: type = str
    flag: str = ""
    metavar: str | None = None

    def cli_flag(self, name: str) -> str:
        """The flag of the field ``name`` (``--from`` for ``t_from``)."""
        return self.flag or "--" + name.replace("_", "-")


def option(default: Any, help: str, panel: str, **flag: Any) -> Any:
    """A record field with its default and its command-line :class:`Flag`."""
    return field(default=default, metadata={"flag": Flag(help, panel, **flag)})


def flag_of(f: Any) -> Flag:
    """The :class:`Flag` of a record's field."""
    return f.metadata["flag"]


def _integer(name: str, value: object, low: int, high: int, what: str = "a value") -> int:
    """``value`` as an int in ``low..high``; the error names ``name``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    if not low <= int(value) <= high:
        raise ValueError(f"{name}: {int(value)} is not {what} in {low:,}..{high:,}")
    return int(value)


def _choice(name: str, value: object, allowed: tuple[str | None, ...], say: str) -> None:
    if value not in allowed:
        raise ValueError(f"{name}: {value!r}; {say}")


def _flag(name: str, value: object, none: bool = False) -> None:
    if not (isinstance(value, bool) or (none and value is None)):
        said = "True, False or None" if none else "True or False"
        raise TypeError(f"{name}: expected {said}, got {value!r}")


def _seconds(name: str, value: object) -> None:
    if value is not None and (
        isinstance(value, bool) or not isinstance(value, numbers.Real) or not float(value) > 0
    ):
        raise ValueError(f"{name}: {value!r} is not a positive number of seconds")


@dataclass(frozen=True)
class TimeWindow:
    """The window ``[t_from, t_to)`` of a log, as log seconds or ISO dates in the log's zone
    (``timezone`` overrides it); ``horizon``: the window's length from ``t_from`` instead of
    ``t_to`` (for a JSON schedule: its length from 0, required). An unparsable date is an
    error here, before the log is read; a date outside the log needs the log.
    ``skip_malformed``: a malformed record of the log is left out (counted, the first five
    listed in the report's notes) instead of stopping the audit. ``by_month``/``by_week``:
    the window cut into calendar months or weeks, each audited on its own
    (:func:`coopsched.audit.periods.audit_periods`; :func:`~coopsched.audit.audit` audits
    one window and refuses them)."""

    t_from: str | int | None = option(
        None,
        "Start: ISO date/time in the log's zone, or log seconds.",
        WINDOW,
        flag="--from",
    )
    t_to: str | int | None = option(None, "End (exclusive), as --from.", WINDOW, flag="--to")
    horizon: int | None = option(
        None, "Length in seconds from --from; a JSON schedule's window.", WINDOW, type=int
    )
    timezone: str | None = option(None, "IANA time zone of the dates (default: the log's).", WINDOW)
    skip_malformed: bool = option(
        False, "Leave malformed records out (counted and listed).", WINDOW, type=bool
    )
    by_month: bool = option(
        False, "Audit each calendar month on its own, side by side.", WINDOW, type=bool
    )
    by_week: bool = option(False, "Audit each week (from Monday) on its own.", WINDOW, type=bool)

    def __post_init__(self) -> None:
        from ..workloads.limits import MAX_EXACT, check_horizon
        from .window import check_time

        check_horizon(self.horizon, below=MAX_EXACT)
        for name in ("t_from", "t_to"):
            value = getattr(self, name)
            if value is not None:
                check_time(value, name)
        _flag("skip_malformed", self.skip_malformed)
        _flag("by_month", self.by_month)
        _flag("by_week", self.by_week)
        if self.by_month and self.by_week:
            raise ValueError("by_week: give by_month or by_week, not both")


@dataclass(frozen=True)
class Organizations:
    """Who the organizations are: distinct values of the log's column ``org_by``, or a
    ``mapping`` file (TOML); ``other`` gathers the window's unmatched jobs under one name.
    ``shares``: a Slurm account tree whose normalized shares split the machines (with
    ``org_by="account"``); else ``contribution`` (``work`` or ``equal``) splits them unless
    the mapping does. ``machines``: the platform's processors (default: the log's)."""

    org_by: str | None = option(
        None,
        "One per value of user, group, account, partition or queue.",
        ORGANIZATIONS,
    )
    mapping: str | Path | None = option(
        None, "TOML file naming organizations, members, machines.", ORGANIZATIONS, type=Path
    )
    other: str | None = option(
        None, "Gather the jobs no organization claims under this name.", ORGANIZATIONS
    )
    shares: str | Path | None = option(
        None,
        "Slurm account tree: machines split by shares.",
        ORGANIZATIONS,
        type=Path,
    )
    machines: int | None = option(
        None, "Processors of the platform (default: the log's).", ORGANIZATIONS, type=int
    )
    contribution: str = option(
        "work",
        "Machines split by work or equally, if not mapped.",
        ORGANIZATIONS,
        metavar="work|equal",
    )

    def __post_init__(self) -> None:
        from ..workloads.limits import MAX_MACHINES

        if self.machines is not None:
            _integer("machines", self.machines, 1, MAX_MACHINES, "a number of processors")


#: The policy the platform ran, for the model check (:mod:`coopsched.audit.model_check`),
#: unless ``platform_policy=`` names another.
PLATFORM_POLICY = "fifo"


@dataclass(frozen=True)
class PlatformModel:
    """How jobs use the platform: ``jobs="rigid"`` (the default for logs: a job holds its
    processors at once, packed under the backfilling rule ``backfill``: ``none``,
    ``first-fit`` or ``easy``; default EASY where every job has a requested time, else
    first-fit) or ``"sequential"`` (a job on ``q`` processors split into ``q``
    one-processor jobs; ``backfill`` then does not apply). ``platform_policy``: the policy
    the platform ran, which the model check replays the window under
    (:mod:`coopsched.audit.model_check`)."""

    jobs: str | None = option(
        None,
        "Jobs hold all their processors at once, or split.",
        MODEL,
        metavar="rigid|sequential",
    )
    backfill: str | None = option(
        None,
        "none, first-fit, easy, easy-queue, first-fit-queue (default: auto).",
        MODEL,
        metavar="RULE",
    )
    platform_policy: str = option(
        PLATFORM_POLICY,
        "The policy the platform ran (model check).",
        MODEL,
        metavar="NAME",
    )

    def __post_init__(self) -> None:
        _choice("jobs", self.jobs, (None, "rigid", "sequential"), "choose rigid or sequential")
        if not isinstance(self.platform_policy, str):
            raise TypeError(
                f"platform_policy: expected a policy name, got {self.platform_policy!r}"
            )


@dataclass(frozen=True)
class Estimation:
    """How ``phi`` is computed. ``method``: ``exact``, ``sampled`` or ``auto`` (exact up to
    ``exact_max`` organizations). Sampled: antithetic orders in batches, at most ``samples``
    orders, stopping once every sign is decided unless ``adaptive=False``, or when the
    budget is spent: ``cpu_seconds`` of CPU time (this process's and, with a ``scheduler``,
    the workers' too) or ``seconds`` of wall-clock time (``None``: no limit; both may be
    given, the first spent stops). ``confidence`` and ``interval`` (``auto``: ``t`` when
    adaptive, ``hall`` with one look; ``t``, ``hall`` or ``bernstein``) make the
    intervals; proper coalitions valued under ``value_policy``, those of at most
    ``exact_upto`` members under REF; ``seed`` also seeds the randomized counterfactual
    policies; ``scheduler``: a dask.distributed address or ``Client``. ``points``:
    checkpoints of the curves over the window. ``estimator``: ``split`` (default: the grand
    coalition's recorded total split off exactly, a control variate), ``ends`` (first and
    last positions exact) or ``plain`` (:mod:`coopsched.audit.sampling`). ``refine``
    (adaptive only): the organizations the orders leave undecided estimated again,
    stratified by position; ``allocate``: the refinement's optimum allocation of draws
    after its first look (off by default); ``control_variate`` (rigid jobs): the game of the
    jobs that fit subtracted from every draw with a fitted coefficient
    (:mod:`coopsched.audit.surrogate`)."""

    method: str = option(
        "auto",
        "auto: exact up to --exact-max organizations.",
        BUDGET,
        metavar="auto|exact|sampled",
    )
    cpu_seconds: float | None = option(
        None, "Budget of CPU seconds (dask workers' included).", BUDGET, type=float
    )
    seconds: float | None = option(None, "Budget of wall-clock seconds.", BUDGET, type=float)
    samples: int = option(200, "At most this many orders of the organizations.", BUDGET, type=int)
    confidence: float = option(0.95, "Confidence of the intervals.", BUDGET, type=float)
    seed: int = option(0, "Seed of the orders and of randomized policies.", BUDGET, type=int)
    scheduler: object = option(None, "Value coalitions on this dask scheduler.", BUDGET)
    points: int = option(24, "Points of the curves over the window.", OUTPUT, type=int)
    exact_max: int = option(16, "--method auto: exact up to this many.", ADVANCED, type=int)
    adaptive: bool = option(
        True, "Use all --samples orders (default: until decided).", ADVANCED, type=bool
    )
    interval: str = option(
        "auto",
        "auto: t, or hall with --no-adaptive.",
        ADVANCED,
        metavar="auto|t|hall|bernstein",
    )
    estimator: str = option(
        "split",
        "split: recorded total split off exactly.",
        ADVANCED,
        metavar="split|ends|plain",
    )
    refine: bool = option(
        True, "No stratified sampling of the last undecided.", ADVANCED, type=bool
    )
    allocate: bool = option(
        False, "Optimum allocation of the refinement's draws.", ADVANCED, type=bool
    )
    control_variate: bool = option(
        True,
        "No control variate (the game of the jobs that fit).",
        ADVANCED,
        type=bool,
        flag="--control",
    )
    value_policy: str = option("fairshare", "REF's stand-in, valuing the coalitions.", ADVANCED)
    exact_upto: int = option(0, "Coalitions of up to this many valued by REF.", ADVANCED, type=int)

    def __post_init__(self) -> None:
        from ..workloads.limits import MAX_SAMPLES
        from .estimation import resolve_interval

        _integer("samples", self.samples, 4, MAX_SAMPLES)
        _integer("exact_max", self.exact_max, 1, 20)
        _integer("exact_upto", self.exact_upto, 0, 16)
        _integer("points", self.points, 0, 10_000)
        _integer("seed", self.seed, 0, 2**63 - 1)  # numpy seeds are non-negative
        _seconds("seconds", self.seconds)
        _seconds("cpu_seconds", self.cpu_seconds)
        for name in ("adaptive", "refine", "allocate", "control_variate"):
            _flag(name, getattr(self, name))
        resolve_interval(self.interval, self.adaptive)  # checks the name
        _choice(
            "estimator", self.estimator, ("split", "ends", "plain"), "choose split, ends or plain"
        )
        _choice(
            "method", self.method, ("auto", "exact", "sampled"), "choose from auto, exact, sampled"
        )
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence: {self.confidence!r} must be in (0, 1)")

    def sampling(self) -> dict[str, Any]:
        """The keywords of a sampling under these options, the same for ``phi``
        (:func:`~coopsched.audit.sampling.sampled_game`) and the Owen values
        (:func:`~coopsched.audit.owen.sampled_owen`): the budget, the game, the estimator."""
        return {name: getattr(self, name) for name in SAMPLING_OPTIONS}


#: :meth:`Estimation.sampling`'s fields.
SAMPLING_OPTIONS = (
    "samples",
    "seed",
    "confidence",
    "value_policy",
    "exact_upto",
    "adaptive",
    "seconds",
    "cpu_seconds",
    "interval",
    "estimator",
)


@dataclass(frozen=True)
class Contents:
    """What the report holds besides ``psi`` and ``phi``: ``with_counterfactuals``, every
    policy replayed on the window; ``owen``, the Owen values by units (``None``: when the
    account tree or the mapping's units have more than one level; ``True``: required)."""

    with_counterfactuals: bool = option(
        True,
        "Do not replay the window under every policy.",
        OUTPUT,
        type=bool,
        flag="--counterfactuals",
    )
    owen: bool | None = option(
        None, "Owen values by units (default: with 2+ levels).", OUTPUT, type=bool
    )

    def __post_init__(self) -> None:
        _flag("with_counterfactuals", self.with_counterfactuals)
        _flag("owen", self.owen, none=True)


#: The records and the parameter of :func:`~coopsched.audit.audit` that passes each.
RECORDS: tuple[tuple[str, type], ...] = (
    ("window", TimeWindow),
    ("organizations", Organizations),
    ("model", PlatformModel),
    ("estimation", Estimation),
    ("contents", Contents),
)


def field_names() -> list[str]:
    """Every field of every record, in :data:`RECORDS`' order."""
    return [f.name for _, cls in RECORDS for f in fields(cls)]


def records(given: dict[str, Any], flat: dict[str, Any]) -> tuple[Any, ...]:
    """The records of an audit, in :data:`RECORDS`' order: ``given[parameter]`` where a
    record was passed, else one made from the ``flat`` keywords of its fields (``None``:
    the field's default). A flat keyword set beside its record is an error naming both."""
    unknown = set(flat) - set(field_names())
    if unknown:
        raise TypeError(f"no option record has the fields {', '.join(sorted(unknown))}")
    out = []
    for param, cls in RECORDS:
        names = [f.name for f in fields(cls)]
        set_flat = {n: flat[n] for n in names if flat.get(n) is not None}
        record = given.get(param)
        if record is None:
            out.append(cls(**set_flat))
            continue
        if not isinstance(record, cls):
            raise TypeError(f"{param}: expected a {cls.__name__}, got {record!r}")
        if set_flat:
            both = ", ".join(f"{n}=" for n in set_flat)
            raise TypeError(
                f"{param}= and {both} both given: set {both} in {param}= "
                f"({cls.__name__}(...)) or leave {param}= out"
            )
        out.append(record)
    return tuple(out)
