"""The audit itself: :func:`audit` reads the source, forms the organizations and the
window's instance, values the game exactly or by sampling, and assembles the report
(:mod:`coopsched.audit`'s doc; ``docs/audit.md``).

Each step takes the option records whole (:mod:`.options`): :func:`_window_part` the
window, organizations and model; :func:`_exact_part` or :func:`_sampled_part` the
estimation; :func:`_owen_part` and the counterfactuals what the report contains.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from ..online.rigid import PLATFORM_BACKFILL
from ..workloads.instance import Instance
from ..workloads.recorded import RecordedLog
from .counterfactuals import counterfactuals
from .estimation.budget import BudgetError
from .game import exact_game, recorded_schedule
from .model_check import check_policy, model_check
from .options import Contents, Estimation, Organizations, PlatformModel, TimeWindow, records
from .organizations import MappingError, assign_unmatched, by_column, by_mapping
from .progress import Say, step
from .report import headline_counts, org_row
from .result import AuditReport
from .sampling import (
    describe_estimator,
    game_statement,
    projection_note,
    projection_report,
    sampled_game,
)
from .unfairness import fair_shares, unfairness_interval
from .window import WindowError, expand_parallel, format_time, parse_time, window_instance


def load_log(
    path: str | Path,
    timezone: str | None = None,
    skip_malformed: bool = False,
    window: tuple[int, int] | None = None,
) -> RecordedLog | Instance:
    """A recorded log by file name: ``.json`` (``sacct --json`` output, told by its content,
    or a JSON schedule, an :class:`Instance` with ``start``), ``.swf``/``.swf.gz`` (SWF),
    anything else Slurm ``sacct`` output. ``skip_malformed``: the readers of logs leave
    malformed records out, count and list them, instead of stopping at the first.
    ``window``: ``(t0, t1)`` on the log's clock: a ``sacct`` text log keeps only what an
    audit of that window needs (memory follows the window, not the file); other logs are
    read whole."""
    p = Path(path)
    name = p.name.lower()
    if name.endswith(".json"):
        from ..workloads.jsonio import read_instance
        from ..workloads.sacct_json import NotSacctJson, read_sacct_json

        try:  # read a job at a time; a JSON schedule is told by its content
            return read_sacct_json(p, timezone=timezone, skip_malformed=skip_malformed)
        except NotSacctJson:
            pass
        if skip_malformed:
            raise WindowError(f"skip_malformed: applies to logs (sacct, SWF), not to {p}")

        inst = read_instance(p)
        if inst.start is None:
            raise WindowError(f"{p}: a recorded schedule needs 'start' for every job")
        return inst
    if name.endswith(".swf") or name.endswith(".swf.gz"):
        from ..workloads.swf import read_swf_recorded

        return read_swf_recorded(p, timezone=timezone, skip_malformed=skip_malformed)
    try:
        from ..workloads.sacct import read_sacct
    except ImportError:
        raise WindowError(
            f"{p}: expected a .json schedule or an .swf/.swf.gz log (no sacct reader in this build)"
        ) from None
    return read_sacct(p, timezone=timezone, skip_malformed=skip_malformed, window=window)


def _sacct_window(
    path: str | Path,
    t_from: str | int | None,
    t_to: str | int | None,
    horizon: int | None,
    timezone: str | None,
) -> tuple[int, int] | None:
    """The window ``[t0, t1)`` of an audit of a ``sacct`` text log, known before reading it
    (its clock is Unix seconds, its zone ``timezone`` or this machine's), or ``None``: not
    a sacct text log, no window, or a window the audit reports as wrong after reading the
    log (so that errors come in the same order as when the whole log is read)."""
    name = Path(path).name.lower()
    if name.endswith((".json", ".swf", ".swf.gz")) or t_from is None:
        return None
    if t_to is None and horizon is None:
        return None
    try:
        import pandas as pd

        from ..workloads.recorded import COLUMNS
        from ..workloads.sacct import local_timezone

        stub = RecordedLog(
            path=str(path),
            jobs=pd.DataFrame({c: [] for c in COLUMNS}),
            epoch=0,
            timezone=timezone or local_timezone(),
            source="sacct",
        )
        t0 = parse_time(t_from, stub, "t_from")
        if t_to is not None:
            t1 = parse_time(t_to, stub, "t_to")
        else:
            assert horizon is not None  # checked above
            t1 = t0 + int(horizon)
    except ValueError:
        return None
    return t0, t1


def _grid(horizon: int, points: int) -> list[int]:
    if points <= 0:
        return []
    return sorted({int(x) for x in np.linspace(0, horizon, points + 1)[1:]} | {int(horizon)})


def audit(
    source: str | Path | RecordedLog | Instance,
    *,
    window: TimeWindow | None = None,
    organizations: Organizations | None = None,
    model: PlatformModel | None = None,
    estimation: Estimation | None = None,
    contents: Contents | None = None,
    progress: Say | None = None,
    **options: Any,
) -> AuditReport:
    """The audit of a recorded schedule, an :class:`AuditReport` (``.to_dict()``: the JSON
    report of :mod:`coopsched.audit.report`).

    ``source`` is a log path (SWF, ``sacct`` text or JSON, or a JSON schedule), a
    :class:`RecordedLog`, or an :class:`Instance` with recorded starts (then the window's
    ``horizon`` is required, unless its ``meta`` has one, and organizations are the
    instance's).

    The options come in five records (:mod:`.options`, whose docs say what each field
    does): ``window=`` a :class:`TimeWindow` (``t_from``, ``t_to``, ``horizon``,
    ``timezone``, ``skip_malformed``), ``organizations=`` an :class:`Organizations`
    (``org_by``, ``mapping``, ``other``, ``shares``, ``machines``, ``contribution``),
    ``model=`` a :class:`PlatformModel` (``jobs``, ``backfill``), ``estimation=`` an
    :class:`Estimation` (``method``, the budget ``cpu_seconds``/``seconds``/``samples``,
    ``confidence``, ``seed``, ``scheduler``, ``points`` and the sampling's internals) and
    ``contents=`` a :class:`Contents` (``with_counterfactuals``, ``owen``). Each field may
    also be given as a keyword of its own, the short form for one audit
    (``org_by="group"`` for ``organizations=Organizations(org_by="group")``); a keyword left
    at ``None`` takes the field's default, and a keyword given beside its record is an
    error naming both.

    ``progress``: called with each :class:`~coopsched.audit.progress.Progress` message
    (a ``str`` with a ``kind``): the phases, and the sampling's looks.
    """
    if not isinstance(source, str | Path | RecordedLog | Instance):
        raise TypeError(
            "source: expected a log's path, a RecordedLog or an Instance with recorded "
            f"starts, got {type(source).__name__}"
        )
    given = dict(
        window=window,
        organizations=organizations,
        model=model,
        estimation=estimation,
        contents=contents,
    )
    w, o, m, e, c = records(given, options)
    if w.by_month or w.by_week:
        raise ValueError(
            f"by_{'month' if w.by_month else 'week'}: audit() audits one window; "
            "coopsched.audit.periods.audit_periods audits the periods side by side"
        )
    _check_horizon(source, w)
    report = _audit(source, w, o, m, e, c, progress or (lambda _msg: None))
    return AuditReport.from_dict(report)


def _check_horizon(source: object, window: TimeWindow) -> None:
    """``horizon`` of a log's window needs ``t_from`` and excludes ``t_to`` (a JSON
    schedule's window is ``[0, horizon)``)."""
    json_schedule = isinstance(source, Instance) or str(source).lower().endswith(".json")
    if not json_schedule and window.horizon is not None:
        if window.t_from is None:
            raise ValueError("horizon: needs t_from= (the window's start); alone it means nothing")
        if window.t_to is not None:
            raise ValueError("horizon: give t_to= or horizon=, not both")


@dataclass
class _Game:
    """The valued game: ``psi`` and ``phi`` at the horizon and at the curves' ``times``,
    and the exact game (:class:`~.game.ExactGame`, ``None`` when sampled)."""

    psi: Any
    phi: Any
    times: list[int]
    psi_at: list
    phi_at: list
    exact: Any = None
    #: the sampled game (:class:`~.sampling.SampledGame`), ``None`` when exact
    sampled: Any = None


@dataclass
class _Window:
    """The audited window (:func:`_window_part`): the instance with its recorded
    schedule, the report's ``window`` section, jobs per organization, exclusions, notes,
    and the hierarchy of units if the organizations have one (its source, and a function
    of the organizations' names giving the root unit)."""

    inst: Instance
    horizon: int
    rec: Any
    section: dict[str, Any]
    jobs: list[int]
    excluded: dict[str, int]
    notes: list[str] = field(default_factory=list)
    hierarchy: tuple[str, Callable] | None = None


def _audit(
    source: str | Path | RecordedLog | Instance,
    w: TimeWindow,
    o: Organizations,
    m: PlatformModel,
    e: Estimation,
    c: Contents,
    say: Say,
) -> dict:
    """The audit report as a dict (:func:`audit`, its options checked)."""
    check_policy(m.platform_policy)  # before any work
    if isinstance(source, str | Path):
        say(step(f"reading {source}"))
        window_read = _sacct_window(source, w.t_from, w.t_to, w.horizon, w.timezone)
        source = load_log(
            source, timezone=w.timezone, skip_malformed=w.skip_malformed, window=window_read
        )
    win = _window_part(source, w, o, m, c, say)
    e, rule = _platform_part(win, m, e)
    inst, T = win.inst, win.horizon
    times = _grid(T, e.points)
    report: dict = {"window": win.section}
    if e.method == "exact" or (e.method == "auto" and inst.k <= e.exact_max):
        game = _exact_part(report, win, times, rule, say)
    else:
        game = _sampled_part(report, win, times, rule, e, say)
    if c.owen is not False:
        _owen_part(report, win, game, rule, e, c, say)
    ref = None if game.exact is None else game.exact.ref
    report["counterfactuals"] = []
    if c.with_counterfactuals:
        target = None
        if game.sampled is not None:
            sg, recorded_total = game.sampled, sum(game.psi)

            def target(total: int, work: int) -> Callable:
                fair = fair_shares(sg, (total - recorded_total) / k, work, e.confidence)
                return lambda psi: unfairness_interval(psi, fair)

        k = inst.k
        report["counterfactuals"] = counterfactuals(
            inst,
            T,
            win.rec,
            ref,
            seed=e.seed,
            skip=() if ref is not None else ("ref", "REF"),
            progress=lambda name: say(step(f"counterfactual: {name}")),
            backfill=rule,
            reference_policy=e.value_policy,
            target=target,
        )
        if game.sampled is not None:
            win.notes.append(UNFAIRNESS_NOTE.format(policy=e.value_policy.upper()))
    say(step("model check: the window under the platform's own policy"))
    eff = report.get("efficiency") if game.exact is not None else None  # REF's own total
    report["model_check"] = model_check(
        inst,
        T,
        win.rec,
        m.platform_policy,
        rule or PLATFORM_BACKFILL,
        recorded_total=None if eff is None else eff["recorded_total"],
        ref_total=None if eff is None else eff["ref_total"],
        seed=e.seed,
    )
    say(step("building the report"))
    report["headline"] = headline_counts(report["organizations"], report["method"] == "sampled")
    report["curves"] = _curves(win, game)
    report["excluded"] = win.excluded
    report["notes"] = win.notes
    return report


def _window_part(
    source: RecordedLog | Instance,
    w: TimeWindow,
    o: Organizations,
    m: PlatformModel,
    c: Contents,
    say: Say,
) -> _Window:
    """The window's instance: a JSON schedule as it is, or a log's organizations and
    window (:mod:`.organizations`, :mod:`.window`)."""
    if isinstance(source, Instance):
        return _schedule_window(source, w, o, m)
    log = source
    notes = list(log.notes)
    if w.horizon is not None and (w.t_from is None or w.t_to is not None):
        # _check_horizon took a .json path for a schedule; sacct --json is a log
        raise ValueError("horizon: needs t_from= (the window's start) and no t_to= for a log")
    if w.timezone is not None and log.timezone != w.timezone:
        from ..workloads.recorded import check_timezone

        log.timezone = check_timezone(w.timezone, "timezone")
    orgs, hierarchy = _organizations(log, o, c)
    t0 = None if w.t_from is None else parse_time(w.t_from, log, "t_from")
    t1 = None if w.t_to is None else parse_time(w.t_to, log, "t_to")
    if t1 is None and w.horizon is not None and t0 is not None:
        t1 = t0 + int(w.horizon)
    say(step("building the window's instance"))
    win = window_instance(log, orgs, t0, t1, o.machines, o.contribution, jobs=m.jobs or "rigid")
    notes += win.notes
    org_by = o.org_by
    section = {
        "from": format_time(win.t0, log),
        "to": format_time(win.t1, log),
        "t0": win.t0,
        "t1": win.t1,
        "horizon": win.horizon,
        "timezone": log.timezone,
        "log": log.path,
        "org_by": (f"{org_by} (shares {o.shares})" if o.shares else org_by)
        if org_by
        else f"mapping {o.mapping}" + (f" (+ {o.other})" if o.other else ""),
        "contribution_rule": win.contribution_rule,
        "machines": win.machines,
        "backlog": win.backlog,
    }
    inst = win.instance
    return _Window(
        inst,
        win.horizon,
        recorded_schedule(inst, win.horizon),
        section,
        win.jobs,
        win.excluded,
        notes,
        hierarchy,
    )


def _organizations(
    log: RecordedLog, o: Organizations, c: Contents
) -> tuple[Any, tuple[str, Callable] | None]:
    """The organizations of a log's jobs (by a column, a mapping or Slurm's shares) and
    their hierarchy of units, if any. Jobs no organization claims are gathered under
    ``other`` or, without it, refused by the window if it holds any
    (:func:`~.window.window_instance`): a mapping need cover only the audited window."""
    hierarchy: tuple[str, Callable] | None = None
    if o.shares is not None:
        if o.mapping is not None:
            raise MappingError(
                "shares: give shares= (Slurm's shares) or mapping= (a TOML file), not both"
            )
        if o.org_by != "account":
            raise MappingError(
                "shares: Slurm's shares are per account: give org_by=account with shares="
            )
        from .shares import by_shares

        orgs = by_shares(log.jobs, o.shares, o.other, log.path, log.weight)
        if c.owen is not False:
            from ..workloads.slurm_assoc import read_account_tree
            from .owen import hierarchy_from_tree

            tree = read_account_tree(o.shares)
            hierarchy = (
                f"Slurm account tree {o.shares}",
                lambda names: hierarchy_from_tree(tree, names),
            )
    elif o.org_by is not None and o.mapping is None:
        orgs = by_column(log.jobs, o.org_by, log.path)
    elif o.mapping is not None and o.org_by is None:
        orgs = by_mapping(log.jobs, o.mapping)
        if orgs.units and c.owen is not False:
            from .owen import hierarchy_from_units

            units = orgs.units
            hierarchy = (
                f"units of mapping {o.mapping}",
                lambda names: hierarchy_from_units(units, names),
            )
    else:
        raise MappingError("give exactly one of org_by= (a column) or mapping= (a TOML file)")
    assign_unmatched(orgs, log.jobs, o.other, log.weight)
    return orgs, hierarchy


def _schedule_window(
    source: Instance, w: TimeWindow, o: Organizations, m: PlatformModel
) -> _Window:
    """A JSON schedule's window ``[0, horizon)``: its organizations and machines as given."""
    if any(x is not None for x in (o.org_by, o.mapping, o.shares, o.other, w.t_from, w.t_to)):
        raise WindowError(
            "a JSON schedule names its organizations and starts at 0: give horizon=, "
            "not org_by=, mapping=, shares=, other=, t_from= or t_to="
        )
    T = w.horizon if w.horizon is not None else source.meta.get("horizon")
    if T is None or int(T) <= 0:
        raise WindowError("auditing a JSON schedule needs horizon= (a positive number of seconds)")
    T = int(T)
    inst = source if source.rigid and m.jobs != "sequential" else expand_parallel(source)
    rec = recorded_schedule(inst, T)
    _check_capacity(rec, inst)
    section = {
        "from": None,
        "to": None,
        "t0": 0,
        "t1": T,
        "horizon": T,
        "timezone": None,
        "log": str(source.meta.get("source", "<instance>")),
        "org_by": "the schedule's organizations",
        "contribution_rule": "machines from the schedule",
        "machines": inst.total_machines,
        "backlog": {
            "waiting": 0,
            "running": int(inst.pinned.sum()) if inst.pinned is not None else 0,
        },
    }
    jobs = np.bincount(source.org, minlength=inst.k).tolist()
    return _Window(inst, T, rec, section, jobs, {})


def _platform_part(win: _Window, m: PlatformModel, e: Estimation) -> tuple[Estimation, str | None]:
    """The backfilling rule of rigid jobs (stated in the report's ``window``), and the
    estimation within what exact REF for rigid jobs affords (a note says when that makes
    an audit sampled)."""
    inst, k = win.inst, win.inst.k
    rule = None
    if inst.rigid:
        from ..online.ref.rigid import MAX_K_RIGID
        from ..online.rigid import resolve_backfill

        rule = resolve_backfill(inst, m.backfill or PLATFORM_BACKFILL)
        if e.method == "auto" and MAX_K_RIGID < k <= e.exact_max:
            win.notes.append(
                f"{k} organizations: exact REF for rigid jobs stops at {MAX_K_RIGID} "
                f"organizations (its 2^k coalitions in lockstep), so this audit is sampled "
                f"although exact_max is {e.exact_max}"
            )
        e = replace(
            e,
            exact_max=min(e.exact_max, MAX_K_RIGID),
            exact_upto=min(e.exact_upto, MAX_K_RIGID),
        )
    elif m.backfill is not None:
        raise ValueError(
            "backfill: applies to rigid jobs (jobs='rigid', the default for logs); with "
            "sequential jobs every rule gives the same schedule"
        )
    win.section["jobs"] = "rigid" if inst.rigid else "sequential"
    win.section["backfill"] = rule
    return e, rule


def _exact_part(report: dict, win: _Window, times: list[int], rule: str | None, say: Say) -> _Game:
    """The exact game (REF over every coalition): rows, efficiency, curves' values."""
    inst, T = win.inst, win.horizon
    k = inst.k
    say(step(f"REF over all {2**k - 1:,} coalitions"))
    g = exact_game(inst, T, times, backfill=rule)
    report["method"] = "exact"
    report["confidence"] = None
    done_work, names, mach = win.rec.work(T), inst.names, inst.machines.tolist()
    rows = [
        org_row(names[u], mach[u], win.jobs[u], done_work[u], g.psi[u], g.phi[u], 0.0, T)
        for u in range(k)  # exact: every sign is known (sign_decided True)
    ]
    report["efficiency"] = efficiency(sum(g.psi), g.ref_total, k, T)
    share = Fraction(g.ref_total - sum(g.psi), k)
    for r, psi_u, phi_u in zip(rows, g.psi, g.phi, strict=True):
        r["loss_share"] = float(share)
        r["vs_ref"] = float(psi_u - phi_u - share)
    report["organizations"] = rows
    return _Game(g.psi, g.phi, g.times, g.psi_at, [[float(x) for x in r] for r in g.phi_at], g)


def _sampled_part(
    report: dict, win: _Window, times: list[int], rule: str | None, e: Estimation, say: Say
) -> _Game:
    """The sampled game (:mod:`.sampling`): rows, the ``sampling`` section, notes."""
    inst, T = win.inst, win.horizon
    k, names = inst.k, inst.names
    try:
        sg = sampled_game(
            inst,
            T,
            times,
            **e.sampling(),
            progress_text=say,
            backfill=rule,
            scheduler=e.scheduler,
            refine=e.refine,
            allocate=e.allocate,
            control_variate=e.control_variate,
        )
    except BudgetError as exc:  # in the words of the option that set the budget
        flag = "cpu_seconds" if exc.clock == "cpu" else "seconds"
        raise BudgetError(f"{flag}: {exc}", exc.clock) from None
    report["method"] = "sampled"
    report["confidence"] = e.confidence
    report["sampling"] = sampling_section(sg, e, names, inst.rigid)
    win.notes.extend(sampling_notes(sg, names, report["sampling"]))
    done_work, mach = win.rec.work(T), inst.machines.tolist()
    rows = [
        org_row(
            names[u],
            mach[u],
            win.jobs[u],
            done_work[u],
            sg.psi[u],
            float(sg.phi[u]),
            float(sg.halfwidth[u]),
            T,
            sign_decided=bool(sg.sign_decided[u]),
        )
        for u in range(k)
    ]
    report["efficiency"] = None  # REF's own total is not computed by a sampled audit
    if sg.grand_policy_total is not None:  # but the stand-in's total is (split)
        eff = efficiency(sum(sg.psi), sg.grand_policy_total, k, T)
        eff["reference"] = sg.value_policy
        report["efficiency"] = eff
        share = Fraction(sg.grand_policy_total - sum(sg.psi), k)
        for r, psi_u, phi_u in zip(rows, sg.psi, sg.phi, strict=True):
            r["loss_share"] = float(share)
            r["vs_ref"] = float(psi_u - float(phi_u) - float(share))
    report["organizations"] = rows
    return _Game(
        sg.psi, sg.phi, sg.times, sg.psi_at, [[float(x) for x in r] for r in sg.phi_at], None, sg
    )


#: The note of a sampled audit's counterfactuals (every output prints the notes).
UNFAIRNESS_NOTE = (
    "counterfactuals: each schedule's unfairness is estimated against the fair utilities of "
    "the sampled game played under {policy} (the stand-in for REF, whose schedule of all "
    "organizations is not computed): sum over organizations of |psi - (phi + loss share)| / "
    "the work {policy} processed, from the same sampled orders, with an interval; schedules "
    "are ranked where their intervals separate, tied where they overlap"
)


#: The intervals of the sampled audit, in words (the report's ``sampling.interval``).
INTERVAL_TEXT = {
    "t": "per organization, central limit theorem with Student's t and the observed variance "
    "of the pair means",
    "hall": "per organization, central limit theorem with Student's t, the observed variance "
    "and skewness of the pair means and Hall's (1992) transformation (the larger side as "
    "half-width)",
    "bernstein": "per organization, empirical Bernstein (Maurer & Pontil 2009) with the "
    "observed variance and range of the pair means",
}


def sampling_section(sg: Any, e: Estimation, names: list[str], rigid: bool) -> dict:
    """The report's ``sampling`` section of a sampled game ``sg``
    (:class:`~.sampling.SampledGame`) under the options ``e``."""
    est, k = sg.estimate, len(names)
    section: dict[str, Any] = {
        "method": "antithetic permutation sampling (each order and its reverse)",
        "estimator": f"{sg.estimator}: " + describe_estimator(sg.estimator, e.value_policy),
        "interval": INTERVAL_TEXT[est.interval]
        + f"; each look at {est.level:.6g} (Bonferroni over {est.planned_looks} planned looks"
        + (", half of 1 - confidence kept for the refinement" if sg.refining else "")
        + ")",
        "samples": sg.samples,
        "max_orders": e.samples,
        "seconds_budget": e.seconds,
        "budget": sg.budget.report(),
        "adaptive": e.adaptive,
        "looks": est.looks,
        "planned_looks": est.planned_looks,
        "stop": sg.stop,
        "undecided": [names[u] for u in range(k) if not sg.sign_decided[u]],
        "seed": e.seed,
        "value_policy": e.value_policy,
        "exact_upto": e.exact_upto,
        "coalitions_valued": sg.coalitions,
        "game": game_statement(k, e.value_policy, e.exact_upto, rigid),
    }
    if sg.control_variate is not None:
        section["control_variate"] = sg.control_variate
    ref_ = sg.refinement
    if ref_ is not None:
        section["refinement"] = {
            "method": (
                "the organizations the orders left undecided estimated again, "
                "stratified by position: the first and last positions exact, the middle "
                f"ones in {ref_.bins} runs of sizes, one coalition per run and round; "
                + {
                    "t": "Student t",
                    "hall": "Student t with Hall's skewness correction",
                    "bernstein": "empirical Bernstein",
                }[ref_.interval]
                + " over the rounds"
                + (
                    "; after the first look an organization still open gets its own "
                    "number of coalitions per run where that promises at least half the "
                    "rounds (optimum allocation: more where its first-look "
                    "contributions spread more and coalitions cost less), its estimate "
                    "from those later rounds alone"
                    if ref_.allocation is not None
                    else ""
                )
                + "; the orders' estimates of the others kept"
            ),
            "organizations": [names[u] for u in ref_.players],
            "rounds": [int(r) for r in ref_.rounds],
            "looks": ref_.looks,
            "planned_looks": ref_.planned_looks,
            "level": ref_.level,
            "stop": ref_.stop,
            "orders_stop": est.stop,
            "error_split": "half of 1 - confidence to the orders' looks, half to the "
            "refinement's (a union bound)",
        }
        if ref_.allocation is not None:
            section["refinement"]["draws_per_run"] = [
                None if a is None else [int(x) for x in a] for a in ref_.allocation
            ]
    if sg.projection:
        section["projection"] = projection_report(sg, names)
    return section


def sampling_notes(sg: Any, names: list[str], section: dict) -> list[str]:
    """The notes every output prints about a sampled game: the game, the refinement, the
    organizations left undecided and what settling them would take."""
    notes = ["sampled game: " + section["game"]["text"]]
    after = f"{sg.samples} orders"
    ref_, undecided, k = sg.refinement, section["undecided"], len(names)
    if ref_ is not None:
        after += (
            f" and up to {int(ref_.rounds.max(initial=0))} stratified rounds for the "
            f"{len(ref_.players)} organizations they left open"
        )
        notes.append(
            f"{len(ref_.players)} organizations left undecided by {sg.samples} orders were "
            "estimated again by stratified sampling (their intervals are from it): "
            + ", ".join(names[u] for u in ref_.players[:20])
            + (" ..." if len(ref_.players) > 20 else "")
        )
    if undecided:
        notes.append(
            f"sign of the surplus undecided for {len(undecided)} of {k} organizations "
            f"after {after} (stopped: {sg.stop}): "
            + ", ".join(undecided[:20])
            + (" ..." if len(undecided) > 20 else "")
        )
    if sg.projection:
        notes.append(projection_note(sg, names))
    return notes


def _owen_part(
    report: dict,
    win: _Window,
    game: _Game,
    rule: str | None,
    e: Estimation,
    c: Contents,
    say: Say,
) -> None:
    """The report's ``owen`` section when the organizations form a hierarchy of units
    (exact from the exact game's table of values, sampled otherwise)."""
    from .owen import owen_report, trivial

    names = win.inst.names
    root = win.hierarchy[1](names) if win.hierarchy is not None else None
    described = win.hierarchy[0] if win.hierarchy is not None else ""
    if root is None or trivial(root):
        if c.owen:
            raise ValueError(
                "owen: needs a hierarchy of units: shares= (a Slurm account tree with "
                "sub-accounts) or a mapping with [[unit]] tables"
                + ("; this one has a single level" if root is not None else "")
            )
        return
    psi, phi = game.psi, game.phi
    if game.exact is not None:
        say(step("Owen values"))
        report["owen"] = owen_report(
            root, names, psi, phi, source=described, values=game.exact.values
        )
        return
    say(step("sampling orders that keep every unit contiguous (Owen values)"))
    try:
        oest, odecided = _sampled_owen(win, root, rule, e)
    except BudgetError as exc:
        win.notes.append(f"Owen values not estimated: {exc}")
        return
    report["owen"] = owen_report(
        root, names, psi, phi, source=described, estimate=oest, decided=odecided
    )
    report["owen"]["samples"] = oest.orders
    report["owen"]["stop"] = oest.stop


def _sampled_owen(win: _Window, root: Any, rule: str | None, e: Estimation) -> tuple:
    """The sampled Owen values (:func:`~.owen.sampled_owen`), under the options ``e``."""
    from .owen import sampled_owen

    return sampled_owen(win.inst, win.horizon, root, **e.sampling(), backfill=rule)


def _curves(win: _Window, game: _Game) -> dict:
    """The report's ``curves``: per organization, its surplus and its share of the
    platform's capacity used by its jobs at each checkpoint."""
    inst, rec, names = win.inst, win.rec, win.inst.names
    ctimes, psi_at, phi_at = game.times, game.psi_at, game.phi_at
    M = inst.total_machines
    work_at = [rec.work(t) if M and t else None for t in ctimes]  # one pass per time
    surplus: dict[str, list[float]] = {}
    utilization: dict[str, list[float]] = {}
    for u in range(inst.k):
        surplus[names[u]] = [float(p[u] - f[u]) for p, f in zip(psi_at, phi_at, strict=True)]
        utilization[names[u]] = [
            w[u] / (M * t) if w is not None else 0.0 for w, t in zip(work_at, ctimes, strict=True)
        ]
    return {"t": ctimes, "surplus": surplus, "utilization": utilization}


def efficiency(recorded_total: int, ref_total: int, k: int, horizon: int) -> dict:
    """The platform's loss against REF, kept apart from unfairness. (A sampled audit's game
    values the grand coalition by the recorded total and every other coalition by a stand-in
    policy: there ``ref_total`` is the stand-in's total for the grand coalition, named in
    ``reference``, and the same argument holds for that game.)

    The Shapley value is linear and ``v(grand)`` enters every organization's with weight
    ``1/k``; so when the recorded total falls short of REF's own total by ``loss``,
    Definition 3.2 lowers every ``phi`` by the same ``loss / k``, and an organization that
    did little (say, contributed machines and ran nothing) reads as favoured by that
    much. ``vs_ref = psi - phi - loss / k`` (per organization: what it received against its
    fair share had the platform been as efficient as REF; they sum to ``-loss``) separates
    who was short-changed by the platform's choices from what the whole platform lost."""
    loss = ref_total - recorded_total
    return {
        "recorded_total": int(recorded_total),
        "ref_total": int(ref_total),
        "loss": int(loss),
        "loss_fraction": loss / ref_total if ref_total else 0.0,
        "loss_share": loss / k if k else 0.0,
        "loss_core_hours": loss / horizon / 3600 if horizon else None,
    }


def _check_capacity(rec, inst: Instance) -> None:
    """A recorded JSON schedule may not run more jobs at once than there are machines."""
    from .window import _peak

    ok = rec.start >= 0
    peak, at = _peak(rec.start[ok], rec.start[ok] + inst.size[ok], inst.width[ok])
    if peak > inst.total_machines:
        raise WindowError(
            f"the recorded schedule runs {peak} processors at t={at} on "
            f"{inst.total_machines} machines"
        )
