"""The audit report as typed records: :class:`AuditReport` and its sections.

Each record's :meth:`~Section.to_dict` gives the section of the JSON report
(:mod:`.report` lists its keys): fields in order, nested records as dicts, a field marked
optional left out when ``None`` (``sampling`` of an exact audit, ``owen`` without a
hierarchy), ``AuditWindow.from_`` under ``"from"``. :meth:`~Section.from_dict` reads such a
dict back (a report saved with ``--format json``), refusing keys it does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, ClassVar, Self

__all__ = [
    "AuditReport",
    "AuditWindow",
    "Backlog",
    "OrganizationRow",
    "Efficiency",
    "Sampling",
    "Counterfactual",
    "Curves",
    "OwenSection",
    "OwenOrganization",
    "OwenUnit",
]


def _optional() -> Any:
    """A field left out of :meth:`Section.to_dict` when ``None``."""
    return field(default=None, metadata={"optional": True})


def _plain(value: Any) -> Any:
    if isinstance(value, Section):
        return value.to_dict()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


class Section:
    """``to_dict``/``from_dict`` for the report's records (dataclasses)."""

    #: Fields holding records (or lists of records), by field name: their type.
    _nested: ClassVar[dict[str, type[Section]]] = {}

    def to_dict(self) -> dict[str, Any]:
        """The section as the JSON report has it."""
        out: dict[str, Any] = {}
        for f in fields(self):  # type: ignore[arg-type]
            value = getattr(self, f.name)
            if value is None and f.metadata.get("optional"):
                continue
            out[f.metadata.get("key", f.name)] = _plain(value)
        return out

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Self:
        """The record of a section of a JSON report (``to_dict``'s inverse)."""
        known = {f.metadata.get("key", f.name): f for f in fields(cls)}  # type: ignore[arg-type]
        unknown = sorted(set(data) - set(known))
        if unknown:
            raise ValueError(f"{cls.__name__}: unknown keys {', '.join(unknown)}")
        values: dict[str, Any] = {}
        for key, f in known.items():
            value = data.get(key)
            sub = cls._nested.get(f.name)
            if sub is not None and value is not None:
                value = (
                    [sub.from_dict(v) for v in value]
                    if isinstance(value, list)
                    else sub.from_dict(value)
                )
            values[f.name] = value
        return cls(**values)


@dataclass(frozen=True)
class Backlog(Section):
    """Log jobs waiting and running at the window's start."""

    waiting: int
    running: int


@dataclass(frozen=True)
class AuditWindow(Section):
    """What was audited: the window (``from_``/``to`` as dates in ``timezone``, ``t0``/``t1``
    on the log's clock), the log, how organizations were formed and machines split, the
    platform's size, its backlog, and the model (``jobs``, ``backfill``)."""

    from_: str | None = field(metadata={"key": "from"})
    to: str | None
    t0: int
    t1: int
    horizon: int
    timezone: str | None
    log: str
    org_by: str
    contribution_rule: str
    machines: int
    backlog: Backlog
    jobs: str
    backfill: str | None
    _nested = {"backlog": Backlog}


@dataclass(frozen=True)
class OrganizationRow(Section):
    """One organization: its machines, jobs and work in the window, ``psi`` (received),
    ``phi`` (its Shapley value; ``phi_exact`` as ``"num/den"`` when exact; an interval when
    sampled), ``surplus = psi - phi`` and its scalings; ``loss_share``/``vs_ref`` in an
    exact audit, or a sampled one with the split estimator
    (:func:`coopsched.audit.efficiency`)."""

    name: str
    machines: int
    jobs: int
    work: int
    psi: int
    phi: float
    phi_exact: str | None
    phi_low: float
    phi_high: float
    sign_decided: bool
    surplus: float
    surplus_per_unit: float | None
    surplus_core_hours: float | None
    loss_share: float | None = _optional()
    vs_ref: float | None = _optional()


@dataclass(frozen=True)
class Efficiency(Section):
    """The recorded schedule's total ``psi`` against REF's (exact audits) or, in a sampled
    audit, against the stand-in policy's total for the grand coalition (``reference``)."""

    recorded_total: int
    ref_total: int
    loss: int
    loss_fraction: float
    loss_share: float
    loss_core_hours: float | None
    #: a sampled audit: the stand-in policy whose grand total is the reference (``ref_total``)
    reference: str | None = _optional()


@dataclass(frozen=True)
class Sampling(Section):
    """How a sampled audit estimated ``phi``: orders used and budget (in CPU and/or
    wall-clock seconds, ``budget``), why it stopped, the
    organizations whose sign stayed undecided, and the sampled game (``game``, the
    statement of :func:`coopsched.audit.sampling.game_statement`)."""

    method: str
    estimator: str
    interval: str
    samples: int
    max_orders: int
    seconds_budget: float | None
    adaptive: bool
    looks: int
    planned_looks: int
    stop: str
    undecided: list[str]
    seed: int
    value_policy: str
    exact_upto: int
    coalitions_valued: int
    game: dict[str, Any]
    #: the organizations the orders left open, refined by stratified sampling
    #: (:mod:`coopsched.audit.sampling`): who, rounds, runs of positions, why it stopped
    refinement: dict[str, Any] | None = _optional()
    #: per organization left undecided, what settling it would take at its observed spread
    #: (:func:`coopsched.audit.sampling.projection_report`)
    projection: dict[str, Any] | None = _optional()
    #: the sampling's budget: ``clock`` (``cpu``, ``wall``, both or ``None``), the limits
    #: ``cpu_seconds`` and ``wall_seconds`` (``seconds_budget`` above is the wall one), and
    #: what was spent on each clock (:meth:`coopsched.audit.estimation.budget.Budget.report`)
    budget: dict[str, Any] | None = _optional()
    #: the control variate (:func:`coopsched.audit.sampling.fit_control`): ``used``, and
    #: ``method`` or the ``reason`` it was not
    control_variate: dict[str, Any] | None = _optional()


@dataclass(frozen=True)
class Counterfactual(Section):
    """The window under one policy: unfairness against REF (exact audits) or estimated
    against the sampled game's fair utilities, with its interval ``unfairness_low`` to
    ``unfairness_high`` (one point when exact), utilization; ``rank``: one more than the
    schedules whose interval lies wholly below this one's, ``tied_with``: those whose
    intervals overlap it (:func:`coopsched.audit.unfairness.rank_policies`); ``note``: why
    it was not run."""

    policy: str
    unfairness: float | None
    utilization: float | None
    note: str | None = _optional()
    unfairness_low: float | None = _optional()
    unfairness_high: float | None = _optional()
    rank: int | None = _optional()
    tied_with: list[str] | None = _optional()


@dataclass(frozen=True)
class Curves(Section):
    """Per organization, the surplus and utilization at the checkpoints ``t``."""

    t: list[int]
    surplus: dict[str, list[float]]
    utilization: dict[str, list[float]]


@dataclass(frozen=True)
class OwenOrganization(Section):
    """One organization's Owen value (``owen_exact`` when exact, an interval when sampled)
    and its surplus against it; ``units``: the units holding it, outermost first."""

    name: str
    units: list[str]
    psi: int
    phi: float
    owen: float
    owen_exact: str | None
    owen_low: float
    owen_high: float
    sign_decided: bool
    owen_surplus: float
    owen_minus_phi: float


@dataclass(frozen=True)
class OwenUnit(Section):
    """One unit of the hierarchy: its parent and level, members, and their sums."""

    name: str
    parent: str | None
    level: int
    members: list[str]
    psi: int
    phi: float
    owen: float
    owen_surplus: float
    value_alone: int | None
    shapley_quotient: float | None


@dataclass(frozen=True)
class OwenSection(Section):
    """The Owen values by units (:func:`coopsched.audit.owen.owen_report`); ``samples`` and
    ``stop`` when sampled."""

    hierarchy: str
    levels: int
    method: str
    text: str
    organizations: list[OwenOrganization]
    units: list[OwenUnit]
    samples: int | None = _optional()
    stop: str | None = _optional()
    _nested = {"organizations": OwenOrganization, "units": OwenUnit}


@dataclass(frozen=True)
class AuditReport(Section):
    """The audit of a recorded schedule (:func:`coopsched.audit.audit`).

    ``method`` is ``exact`` or ``sampled`` (then ``confidence`` and ``sampling``);
    ``efficiency``: exact audits, and sampled ones with the split estimator; ``owen``: with
    a hierarchy of units;
    ``counterfactuals`` empty when not run; ``excluded``: log jobs left out, by reason;
    ``notes``: caveats every output states. ``to_dict()`` is the JSON report."""

    window: AuditWindow
    method: str
    confidence: float | None
    sampling: Sampling | None = field(metadata={"optional": True})
    efficiency: Efficiency | None
    organizations: list[OrganizationRow]
    owen: OwenSection | None = field(metadata={"optional": True})
    counterfactuals: list[Counterfactual]
    curves: Curves
    excluded: dict[str, int]
    notes: list[str]
    #: the verdict's counts, with and without Definition 3.2's equal share
    #: (:func:`coopsched.audit.report.headline_counts`)
    headline: dict[str, int | None] | None = _optional()
    #: the model check (:mod:`coopsched.audit.model_check`)
    model_check: dict[str, Any] | None = _optional()
    _nested = {
        "window": AuditWindow,
        "sampling": Sampling,
        "efficiency": Efficiency,
        "organizations": OrganizationRow,
        "owen": OwenSection,
        "counterfactuals": Counterfactual,
        "curves": Curves,
    }

    def organization(self, name: str) -> OrganizationRow:
        """The row of organization ``name``."""
        for row in self.organizations:
            if row.name == name:
                return row
        raise KeyError(name)
