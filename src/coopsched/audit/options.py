"""The options of an audit, in four records grouped by meaning.

:class:`TimeWindow` (which stretch of the log), :class:`Organizations` (who the players are
and what each contributes), :class:`PlatformModel` (how jobs use the machines) and
:class:`Estimation` (how ``phi`` is computed, and the curves' resolution). Each record is
frozen and checks its own fields when made; its errors name the parameter (``samples: 2 is
not a value in 4..1,000,000``). Checks that need the log or the source (a window inside the
log, ``org_by=`` against a JSON schedule) stay with :func:`coopsched.audit.audit`.

:func:`records` turns :func:`~coopsched.audit.audit`'s flat keywords into these records:
the one place where both spellings meet.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

__all__ = ["TimeWindow", "Organizations", "PlatformModel", "Estimation", "records"]


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


@dataclass(frozen=True)
class TimeWindow:
    """The window ``[t_from, t_to)`` of a log, as log seconds or ISO dates in the log's zone
    (``timezone`` overrides it); ``horizon``: the window's length from ``t_from`` instead of
    ``t_to`` (for a JSON schedule: its length from 0, required). An unparsable date is an
    error here, before the log is read; a date outside the log needs the log."""

    t_from: str | int | None = None
    t_to: str | int | None = None
    horizon: int | None = None
    timezone: str | None = None

    def __post_init__(self) -> None:
        from ..workloads.limits import MAX_EXACT, check_horizon
        from .window import check_time

        check_horizon(self.horizon, below=MAX_EXACT)
        for name in ("t_from", "t_to"):
            value = getattr(self, name)
            if value is not None:
                check_time(value, name)


@dataclass(frozen=True)
class Organizations:
    """Who the organizations are: distinct values of the log's column ``org_by``, or a
    ``mapping`` file (TOML); ``other`` gathers unmatched jobs under one name. ``shares``: a
    Slurm account tree whose normalized shares split the machines (with
    ``org_by="account"``); else ``contribution`` (``work`` or ``equal``) splits them unless
    the mapping does. ``machines``: the platform's processors (default: the log's)."""

    org_by: str | None = None
    mapping: str | Path | None = None
    shares: str | Path | None = None
    other: str | None = None
    machines: int | None = None
    contribution: str = "work"

    def __post_init__(self) -> None:
        from ..workloads.limits import MAX_MACHINES

        if self.machines is not None:
            _integer("machines", self.machines, 1, MAX_MACHINES, "a number of processors")


@dataclass(frozen=True)
class PlatformModel:
    """How jobs use the platform: ``jobs="rigid"`` (the default for logs: a job holds its
    processors at once, packed under the backfilling rule ``backfill``: ``none``,
    ``first-fit`` or ``easy``; default EASY where every job has a requested time, else
    first-fit) or ``"sequential"`` (a job on ``q`` processors split into ``q``
    one-processor jobs; ``backfill`` then does not apply)."""

    jobs: str | None = None
    backfill: str | None = None

    def __post_init__(self) -> None:
        _choice("jobs", self.jobs, (None, "rigid", "sequential"), "choose rigid or sequential")


@dataclass(frozen=True)
class Estimation:
    """How ``phi`` is computed. ``method``: ``exact``, ``sampled`` or ``auto`` (exact up to
    ``exact_max`` organizations). Sampled: antithetic orders in batches, at most ``samples``
    orders and ``seconds`` of sampling (``None``: no time limit), stopping once every sign
    is decided unless ``adaptive=False``; ``confidence`` and ``interval`` (``auto``: ``t``
    when adaptive, ``hall`` with one look; ``t``, ``hall`` or ``bernstein``) make the
    intervals; proper coalitions valued under ``value_policy``,
    those of at most ``exact_upto`` members under REF; ``seed`` also seeds the randomized
    counterfactual policies; ``scheduler``: a dask.distributed address or ``Client``.
    ``points``: checkpoints of the curves over the window. ``estimator``: ``split``
    (default: the grand coalition's recorded total split off exactly, a control variate),
    ``ends`` (first and last positions exact) or ``plain`` (:mod:`coopsched.audit.sampling`).
    ``refine`` (adaptive only): the organizations the orders leave undecided estimated again,
    stratified by position (:mod:`coopsched.audit.sampling`); ``allocate``: the refinement's
    optimum allocation of draws after its first look (off by default)."""

    method: str = "auto"
    exact_max: int = 16
    samples: int = 200
    seed: int = 0
    confidence: float = 0.95
    value_policy: str = "fairshare"
    exact_upto: int = 0
    seconds: float | None = None
    adaptive: bool = True
    interval: str = "auto"
    points: int = 24
    scheduler: object = None
    estimator: str = "split"
    refine: bool = True
    allocate: bool = False

    def __post_init__(self) -> None:
        from ..workloads.limits import MAX_SAMPLES
        from .estimation import resolve_interval

        _integer("samples", self.samples, 4, MAX_SAMPLES)
        _integer("exact_max", self.exact_max, 1, 20)
        _integer("exact_upto", self.exact_upto, 0, 16)
        _integer("points", self.points, 0, 10_000)
        _integer("seed", self.seed, -(2**63), 2**63 - 1)
        sec = self.seconds
        if sec is not None and (
            isinstance(sec, bool) or not isinstance(sec, numbers.Real) or not float(sec) > 0
        ):
            raise ValueError(f"seconds: {sec!r} is not a positive number of seconds")
        resolve_interval(self.interval, self.adaptive)  # checks the name
        _choice(
            "estimator", self.estimator, ("split", "ends", "plain"), "choose split, ends or plain"
        )
        _choice(
            "method", self.method, ("auto", "exact", "sampled"), "choose from auto, exact, sampled"
        )
        if not 0 < self.confidence < 1:
            raise ValueError(f"confidence: {self.confidence!r} must be in (0, 1)")


#: The records and the parameter of :func:`~coopsched.audit.audit` that passes each.
RECORDS: tuple[tuple[str, type], ...] = (
    ("window", TimeWindow),
    ("organizations", Organizations),
    ("model", PlatformModel),
    ("estimation", Estimation),
)


def records(given: dict[str, Any], flat: dict[str, Any]) -> tuple[Any, ...]:
    """The four records of an audit, in :data:`RECORDS`' order: ``given[parameter]`` where
    a record was passed, else one made from the ``flat`` keywords of its fields (``None``:
    the field's default). A flat keyword set beside its record is an error naming both."""
    unknown = set(flat) - {f.name for _, cls in RECORDS for f in fields(cls)}
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
