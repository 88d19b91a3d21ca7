"""Audit a recorded schedule: how fair was the platform, who was short-changed, by how much.

The package is callable: ``coopsched.audit(...)`` is its function :func:`audit` (also
importable as ``from coopsched.audit import audit``), while ``coopsched.audit.window``
and the other modules stay reachable as attributes.

>>> import coopsched
>>> report = coopsched.audit("log.swf.gz", org_by="group", t_from="2004-12-01", t_to="2005-01-01")  # doctest: +SKIP

Per organization ``u``: ``psi_u``, its ``psi_sp`` at the window's end in the recorded
schedule; ``phi_u``, its Shapley value in the game whose grand coalition is worth the recorded
total and whose other coalitions are worth what they would get alone under REF (Skowron &
Rzadca, Definition 3.2 applied to the recorded schedule; docs/conventions.md §5); and the signed
surplus ``psi_u - phi_u``. Exact up to ``exact_max`` organizations (one REF run over all
``2^k`` coalitions), sampled beyond (:mod:`.sampling`). See ``docs/audit.md``.
"""

from __future__ import annotations

import sys
import types
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path

import numpy as np

from ..workloads.instance import Instance
from ..workloads.recorded import RecordedLog
from .counterfactuals import counterfactuals
from .game import exact_game, recorded_schedule
from .options import Estimation, Organizations, PlatformModel, TimeWindow, records
from .organizations import MappingError, assign_unmatched, by_column, by_mapping
from .report import org_row
from .result import (
    AuditReport,
    AuditWindow,
    Backlog,
    Counterfactual,
    Curves,
    Efficiency,
    OrganizationRow,
    OwenOrganization,
    OwenSection,
    OwenUnit,
    Sampling,
)
from .sampling import (
    describe_estimator,
    game_statement,
    projection_note,
    projection_report,
    sampled_game,
)
from .window import WindowError, expand_parallel, format_time, parse_time, window_instance

__all__ = [
    "audit",
    "load_log",
    "MappingError",
    "WindowError",
    "TimeWindow",
    "Organizations",
    "PlatformModel",
    "Estimation",
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
    with_counterfactuals: bool = True,
    progress: Callable[[str], None] | None = None,
    skip_malformed: bool = False,
    owen: bool | None = None,
    org_by: str | None = None,
    mapping: str | Path | None = None,
    shares: str | Path | None = None,
    other: str | None = None,
    t_from: str | int | None = None,
    t_to: str | int | None = None,
    horizon: int | None = None,
    timezone: str | None = None,
    machines: int | None = None,
    contribution: str | None = None,
    method: str | None = None,
    exact_max: int | None = None,
    samples: int | None = None,
    seed: int | None = None,
    confidence: float | None = None,
    value_policy: str | None = None,
    exact_upto: int | None = None,
    seconds: float | None = None,
    adaptive: bool | None = None,
    interval: str | None = None,
    estimator: str | None = None,
    refine: bool | None = None,
    allocate: bool | None = None,
    points: int | None = None,
    jobs: str | None = None,
    backfill: str | None = None,
    scheduler: object = None,
) -> AuditReport:
    """The audit of a recorded schedule, an :class:`AuditReport` (``.to_dict()``: the JSON
    report of :mod:`coopsched.audit.report`).

    Options come in four records (:mod:`.options`): ``window=`` a :class:`TimeWindow`,
    ``organizations=`` an :class:`Organizations`, ``model=`` a :class:`PlatformModel`,
    ``estimation=`` an :class:`Estimation`. Their fields may also be given as keywords of
    their own (``org_by="group"`` for ``organizations=Organizations(org_by="group")``); a
    keyword left at ``None`` takes the record's default, and a keyword given beside its
    record is an error naming both.

    ``source`` is a log path, a :class:`RecordedLog`, or an :class:`Instance` with recorded
    starts (then ``horizon`` is required, unless its ``meta`` has one, and organizations
    are the instance's). For logs: organizations by ``org_by`` or a ``mapping`` file
    (``other`` gathers unmatched jobs); window ``[t_from, t_to)`` as log seconds or ISO
    dates in the log's zone (``timezone`` overrides it); ``machines`` overrides the
    platform size; ``contribution`` splits the machines when the mapping does not.
    ``shares``: a Slurm account tree (``sacctmgr show assoc -P`` or ``sshare -a -l -P``,
    :mod:`.shares`): with ``org_by="account"``, each account contributes machines in
    proportion to its normalized shares (instead of ``contribution``).
    ``method``: ``exact``, ``sampled`` or ``auto`` (exact up to ``exact_max``
    organizations). ``points``: checkpoints of the curves over the window.

    Sampled (:mod:`.sampling`): antithetic orders in batches until every organization's
    surplus sign is decided or the budget is spent: at most ``samples`` orders, at most
    ``seconds`` of sampling (``None``: no time limit); ``adaptive=False`` uses all
    ``samples`` orders. ``interval``: ``"auto"`` (default: ``"t"`` when adaptive,
    ``"hall"`` with one look), ``"t"`` (central limit theorem, Student t), ``"hall"`` (the
    same with Hall's skewness correction) or ``"bernstein"`` (empirical Bernstein, wider).
    ``estimator``: ``"split"`` (default: the orders sample the game with the grand
    coalition valued under ``value_policy`` too, and the recorded total's difference to it
    is added in equal shares, exactly; far less variance per order), ``"ends"`` (every
    organization's first and last positions valued exactly, the middle ones sampled) or
    ``"plain"``. ``refine`` (default ``True``, adaptive only): once few organizations are
    left undecided, only they are sampled further, stratified by position (the first and
    last positions exact), with half of ``1 - confidence`` kept for that phase. ``allocate``
    (default ``False``): after the refinement's first look, each organization still open
    gets its own number of draws per run of positions (optimum allocation).
    Proper coalitions are valued under ``value_policy``, those of at most ``exact_upto``
    members under REF (default 0: one game); the report's ``sampling`` states which, with
    the measured gap to REF. ``scheduler``: a dask.distributed scheduler address or
    ``Client``; the coalitions each round of orders needs are valued on that cluster (the
    same estimate as in one process for the same seed).

    ``jobs``: the platform's model. ``"rigid"`` (the default for logs): each job holds its
    processors at once, and every coalition and counterfactual packs jobs under the
    backfilling rule ``backfill`` (default EASY where every job has a requested time,
    first-fit otherwise); ``"sequential"``: the paper's split of a job on ``q`` processors
    into ``q`` one-processor jobs. A JSON schedule is rigid when its jobs have
    ``processors``. Both are stated in the report's ``window``.

    ``skip_malformed``: a malformed record of a log (sacct text or JSON, SWF) is left out,
    counted in ``excluded`` and listed (the first five, with line and reason) in ``notes``,
    instead of stopping the audit (the default, strict: the error names file, line, field).

    ``owen``: the report's ``owen`` section (:mod:`.owen`), the Owen value of every
    organization in the hierarchy of units given by the ``shares=`` account tree or the
    mapping's ``[[unit]]`` tables; ``None`` (default): when such a hierarchy has more than one
    level, ``False``: never, ``True``: required (an error without a hierarchy). Exact with an
    exact audit (from its table of coalition values), sampled otherwise (orders that keep
    every unit contiguous, the sampled game and budget of ``phi``).
    """
    flat = {k: v for k, v in locals().items() if k not in _NOT_FLAT}
    given = dict(window=window, organizations=organizations, model=model, estimation=estimation)
    w, o, m, e = records(given, flat)
    if owen is not None and not isinstance(owen, bool):
        raise TypeError(f"owen: expected True, False or None, got {owen!r}")
    _check_horizon(source, w)
    report = _audit(
        source,
        w,
        o,
        m,
        e,
        with_counterfactuals,
        progress or (lambda _msg: None),
        skip_malformed,
        owen,
    )
    return AuditReport.from_dict(report)


#: :func:`audit`'s parameters that are not fields of an option record.
_NOT_FLAT = frozenset(
    {
        "source",
        "window",
        "organizations",
        "model",
        "estimation",
        "with_counterfactuals",
        "progress",
        "skip_malformed",
        "owen",
    }
)


def _check_horizon(source: object, window: TimeWindow) -> None:
    """``horizon`` of a log's window needs ``t_from`` and excludes ``t_to`` (a JSON
    schedule's window is ``[0, horizon)``)."""
    json_schedule = isinstance(source, Instance) or str(source).lower().endswith(".json")
    if not json_schedule and window.horizon is not None:
        if window.t_from is None:
            raise ValueError("horizon: needs t_from= (the window's start); alone it means nothing")
        if window.t_to is not None:
            raise ValueError("horizon: give t_to= or horizon=, not both")


def _audit(
    source: str | Path | RecordedLog | Instance,
    w: TimeWindow,
    o: Organizations,
    m: PlatformModel,
    e: Estimation,
    with_counterfactuals: bool,
    say: Callable[[str], None],
    skip_malformed: bool,
    owen: bool | None,
) -> dict:
    """The audit report as a dict (:func:`audit`, its options checked)."""
    t_from, t_to, horizon, timezone = w.t_from, w.t_to, w.horizon, w.timezone
    org_by, mapping, shares, other = o.org_by, o.mapping, o.shares, o.other
    machines, contribution = o.machines, o.contribution
    jobs, backfill = m.jobs, m.backfill
    method, exact_max, samples, seed = e.method, e.exact_max, e.samples, e.seed
    confidence, value_policy, exact_upto = e.confidence, e.value_policy, e.exact_upto
    seconds, adaptive, interval, points = e.seconds, e.adaptive, e.interval, e.points
    scheduler, estimator, refine = e.scheduler, e.estimator, e.refine
    allocate = e.allocate
    if isinstance(source, str | Path):
        say(f"reading {source}")
        window_read = _sacct_window(source, t_from, t_to, horizon, timezone)
        source = load_log(
            source, timezone=timezone, skip_malformed=skip_malformed, window=window_read
        )
    excluded: dict[str, int] = {}
    notes: list[str] = []
    hierarchy: tuple[str, Callable] | None = None  # (source, names -> Unit)
    if isinstance(source, Instance):
        if org_by or mapping or shares or other or t_from is not None or t_to is not None:
            raise WindowError(
                "a JSON schedule names its organizations and starts at 0: give horizon=, "
                "not org_by=, mapping=, shares=, other=, t_from= or t_to="
            )
        T = horizon if horizon is not None else source.meta.get("horizon")
        if T is None or int(T) <= 0:
            raise WindowError(
                "auditing a JSON schedule needs horizon= (a positive number of seconds)"
            )
        T = int(T)
        inst = source if source.rigid and jobs != "sequential" else expand_parallel(source)
        rec = recorded_schedule(inst, T)
        _check_capacity(rec, inst)
        k = inst.k
        jobs_per = np.bincount(source.org, minlength=k).tolist()
        work = np.zeros(k, dtype=np.int64)
        np.add.at(work, inst.org, inst.size * inst.width)
        window = {
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
    else:
        log = source
        notes = list(log.notes)
        if horizon is not None and (t_from is None or t_to is not None):
            # _check_options took a .json path for a schedule; sacct --json is a log
            raise ValueError("horizon: needs t_from= (the window's start) and no t_to= for a log")
        if timezone is not None and log.timezone != timezone:
            from ..workloads.recorded import check_timezone

            log.timezone = check_timezone(timezone, "timezone")
        if shares is not None:
            if mapping is not None:
                raise MappingError(
                    "shares: give shares= (Slurm's shares) or mapping= (a TOML file), not both"
                )
            if org_by != "account":
                raise MappingError(
                    "shares: Slurm's shares are per account: give org_by=account with shares="
                )
            from .shares import by_shares

            orgs = by_shares(log.jobs, shares, other, log.path, log.weight)
            if owen is not False:
                from ..workloads.slurm_assoc import read_account_tree
                from .owen import hierarchy_from_tree

                tree = read_account_tree(shares)
                hierarchy = (
                    f"Slurm account tree {shares}",
                    lambda names: hierarchy_from_tree(tree, names),
                )
        elif org_by is not None and mapping is None:
            orgs = by_column(log.jobs, org_by, log.path)
        elif mapping is not None and org_by is None:
            orgs = by_mapping(log.jobs, mapping)
            if orgs.units and owen is not False:
                from .owen import hierarchy_from_units

                units = orgs.units
                hierarchy = (
                    f"units of mapping {mapping}",
                    lambda names: hierarchy_from_units(units, names),
                )
        else:
            raise MappingError("give exactly one of org_by= (a column) or mapping= (a TOML file)")
        assign_unmatched(orgs, log.jobs, other, log.weight)
        t0 = None if t_from is None else parse_time(t_from, log, "t_from")
        t1 = None if t_to is None else parse_time(t_to, log, "t_to")
        if t1 is None and horizon is not None and t0 is not None:
            t1 = t0 + int(horizon)
        say("building the window's instance")
        win = window_instance(log, orgs, t0, t1, machines, contribution, jobs=jobs or "rigid")
        inst, T = win.instance, win.horizon
        rec = recorded_schedule(inst, T)
        k = inst.k
        jobs_per, work, excluded = win.jobs, np.array(win.work), win.excluded
        window = {
            "from": format_time(win.t0, log),
            "to": format_time(win.t1, log),
            "t0": win.t0,
            "t1": win.t1,
            "horizon": T,
            "timezone": log.timezone,
            "log": log.path,
            "org_by": (f"{org_by} (shares {shares})" if shares else org_by)
            if org_by
            else f"mapping {mapping}" + (f" (+ {other})" if other else ""),
            "contribution_rule": win.contribution_rule,
            "machines": win.machines,
            "backlog": win.backlog,
        }
    rule = None
    if inst.rigid:
        from ..online.ref.rigid import MAX_K_RIGID
        from ..online.rigid import resolve_backfill

        rule = resolve_backfill(inst, backfill)
        if method == "auto" and MAX_K_RIGID < k <= exact_max:
            notes.append(
                f"{k} organizations: exact REF for rigid jobs stops at {MAX_K_RIGID} "
                f"organizations (its 2^k coalitions in lockstep), so this audit is sampled although "
                f"exact_max is {exact_max}"
            )
        exact_max = min(exact_max, MAX_K_RIGID)
        exact_upto = min(exact_upto, MAX_K_RIGID)
    elif backfill is not None:
        raise ValueError(
            "backfill: applies to rigid jobs (jobs='rigid', the default for logs); with "
            "sequential jobs every rule gives the same schedule"
        )
    window["jobs"] = "rigid" if inst.rigid else "sequential"
    window["backfill"] = rule
    use_exact = method == "exact" or (method == "auto" and k <= exact_max)
    times = _grid(T, points)
    done_work = rec.work(T)
    names = inst.names
    mach = inst.machines.tolist()
    report: dict = {"window": window}
    ref = None
    if use_exact:
        say(f"REF over all {2**k - 1} coalitions")
        g = exact_game(inst, T, times, backfill=rule)
        ref = g.ref
        report["method"] = "exact"
        report["confidence"] = None
        rows = [
            org_row(names[u], mach[u], jobs_per[u], done_work[u], g.psi[u], g.phi[u], 0.0, T)
            for u in range(k)  # exact: every sign is known (sign_decided True)
        ]
        psi_at, phi_at = g.psi_at, [[float(x) for x in row] for row in g.phi_at]
        ctimes = g.times
        report["efficiency"] = efficiency(sum(g.psi), g.ref_total, k, T)
        share = Fraction(g.ref_total - sum(g.psi), k)
        for r, psi_u, phi_u in zip(rows, g.psi, g.phi, strict=True):
            r["loss_share"] = float(share)
            r["vs_ref"] = float(psi_u - phi_u - share)
    else:
        say(f"sampling at most {samples} orders of {k} organizations")
        sg = sampled_game(
            inst,
            T,
            times,
            samples=samples,
            seed=seed,
            confidence=confidence,
            value_policy=value_policy,
            exact_upto=exact_upto,
            adaptive=adaptive,
            seconds=seconds,
            interval=interval,
            progress_text=say,
            backfill=rule,
            scheduler=scheduler,
            estimator=estimator,
            refine=refine,
            allocate=allocate,
        )
        report["method"] = "sampled"
        report["confidence"] = confidence
        est = sg.estimate
        undecided = [names[u] for u in range(k) if not sg.sign_decided[u]]
        report["sampling"] = {
            "method": "antithetic permutation sampling (each order and its reverse)",
            "estimator": f"{sg.estimator}: " + describe_estimator(sg.estimator, value_policy),
            "interval": (
                {
                    "t": "per organization, central limit theorem with Student's t and the "
                    "observed variance of the pair means",
                    "hall": "per organization, central limit theorem with Student's t, the "
                    "observed variance and skewness of the pair means and Hall's (1992) "
                    "transformation (the larger side as half-width)",
                    "bernstein": "per organization, empirical Bernstein (Maurer & Pontil 2009) "
                    "with the observed variance and range of the pair means",
                }[est.interval]
                + f"; each look at {est.level:.6g} (Bonferroni over {est.planned_looks} "
                "planned looks"
                + (", half of 1 - confidence kept for the refinement" if sg.refining else "")
                + ")"
            ),
            "samples": sg.samples,
            "max_orders": samples,
            "seconds_budget": seconds,
            "adaptive": adaptive,
            "looks": est.looks,
            "planned_looks": est.planned_looks,
            "stop": sg.stop,
            "undecided": undecided,
            "seed": seed,
            "value_policy": value_policy,
            "exact_upto": exact_upto,
            "coalitions_valued": sg.coalitions,
            "game": game_statement(k, value_policy, exact_upto, inst.rigid),
        }
        ref_ = sg.refinement
        if ref_ is not None:
            report["sampling"]["refinement"] = {
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
                report["sampling"]["refinement"]["draws_per_run"] = [
                    None if a is None else [int(x) for x in a] for a in ref_.allocation
                ]
        # stated wherever the notes are printed (text, CSV comment lines, HTML)
        notes.append("sampled game: " + report["sampling"]["game"]["text"])
        after = f"{sg.samples} orders"
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
            report["sampling"]["projection"] = projection_report(sg, names)
            notes.append(projection_note(sg, names))
        rows = [
            org_row(
                names[u],
                mach[u],
                jobs_per[u],
                done_work[u],
                sg.psi[u],
                float(sg.phi[u]),
                float(sg.halfwidth[u]),
                T,
                sign_decided=bool(sg.sign_decided[u]),
            )
            for u in range(k)
        ]
        psi_at, phi_at = sg.psi_at, [[float(x) for x in row] for row in sg.phi_at]
        ctimes = sg.times
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
    if owen is not False:
        from .owen import owen_report, sampled_owen, trivial

        root = hierarchy[1](names) if hierarchy is not None else None
        described = hierarchy[0] if hierarchy is not None else ""
        if root is None or trivial(root):
            if owen:
                raise ValueError(
                    "owen: needs a hierarchy of units: shares= (a Slurm account tree with "
                    "sub-accounts) or a mapping with [[unit]] tables"
                    + ("; this one has a single level" if root is not None else "")
                )
        elif use_exact:
            say("Owen values")
            report["owen"] = owen_report(
                root, names, g.psi, g.phi, source=described, values=g.values
            )
        else:
            say("sampling orders that keep every unit contiguous (Owen values)")
            oest, odecided = sampled_owen(
                inst,
                T,
                root,
                samples=samples,
                seed=seed,
                confidence=confidence,
                value_policy=value_policy,
                exact_upto=exact_upto,
                adaptive=adaptive,
                seconds=seconds,
                interval=interval,
                backfill=rule,
                estimator=estimator,
            )
            report["owen"] = owen_report(
                root,
                names,
                sg.psi,
                sg.phi,
                source=described,
                estimate=oest,
                decided=odecided,
            )
            report["owen"]["samples"] = oest.orders
            report["owen"]["stop"] = oest.stop
    report["counterfactuals"] = []
    if with_counterfactuals:
        report["counterfactuals"] = counterfactuals(
            inst,
            T,
            rec,
            ref,
            seed=seed,
            skip=() if ref is not None else ("ref", "REF"),
            progress=lambda name: say(f"counterfactual: {name}"),
            backfill=rule,
        )
    say("building the report")
    M = inst.total_machines
    surplus: dict[str, list[float]] = {}
    utilization: dict[str, list[float]] = {}
    work_at = [rec.work(t) if M and t else None for t in ctimes]  # one pass per time
    for u in range(k):
        surplus[names[u]] = [float(p[u] - f[u]) for p, f in zip(psi_at, phi_at, strict=True)]
        utilization[names[u]] = [
            w[u] / (M * t) if w is not None else 0.0 for w, t in zip(work_at, ctimes, strict=True)
        ]
    report["curves"] = {"t": ctimes, "surplus": surplus, "utilization": utilization}
    report["excluded"] = excluded
    report["notes"] = notes
    return report


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


class _CallableModule(types.ModuleType):
    """The type of the ``coopsched.audit`` package: a module whose call is :func:`audit`.

    Assigning a :class:`types.ModuleType` subclass to a module's ``__class__`` is supported
    by Python (the data model, "Customizing module attribute access"); the module keeps its
    attributes, submodules and docstring.
    """

    def __call__(self, source: str | Path | RecordedLog | Instance, **options) -> AuditReport:
        """:func:`audit` (same arguments)."""
        return audit(source, **options)

    @property
    def __signature__(self):
        """:func:`audit`'s signature, so that ``inspect.signature`` and IDEs show it."""
        import inspect

        return inspect.signature(audit)


sys.modules[__name__].__class__ = _CallableModule
