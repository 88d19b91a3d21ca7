"""The audit report: one JSON-ready dict, and its table and CSV renderings.

:func:`coopsched.audit.audit` returns an :class:`~coopsched.audit.result.AuditReport`; its
``to_dict()`` is this dict, and every rendering here takes either (:func:`as_dict`).

Keys (``coopsched audit --format json``; the HTML page reads the same dict):
``window`` (``from``, ``to``, ``t0``, ``t1``, ``horizon``, ``timezone``, ``log``, ``org_by``,
``contribution_rule``, ``machines``, ``backlog``), ``method``, ``confidence``,
``organizations`` (per organization ``name``, ``machines``, ``jobs``, ``work``, ``psi``,
``phi``, ``phi_exact``, ``phi_low``, ``phi_high``, ``sign_decided``, ``surplus``, ``surplus_per_unit``,
``surplus_core_hours``, ``loss_share``, ``vs_ref``), ``headline`` (:func:`headline_counts`:
``organizations``, ``short_changed``, ``favoured`` and, when ``vs_ref`` is known,
``short_changed_vs_ref``, ``favoured_vs_ref``), ``counterfactuals`` (``policy``, ``unfairness``,
``utilization``), ``curves`` (``t``, and per organization ``surplus`` and
``utilization``), ``excluded`` (reason: count); with a hierarchy of units, ``owen``
(:func:`coopsched.audit.owen.owen_report`: per organization ``owen``, ``owen_surplus``
``= psi - owen``, ``owen_minus_phi``, ``units``; per unit ``psi``, ``phi``, ``owen`` sums,
``value_alone`` and ``shapley_quotient``).

``surplus = psi - phi``: positive = favoured, negative = short-changed.
``surplus_per_unit`` divides it by the organization's work processed before the horizon in
the recorded schedule: seconds of unjustified speed-up (delay, if negative) per unit of
work. ``surplus_core_hours = surplus / T / 3600``: since ``psi_sp(T)`` sums the processed
work over the window's seconds, this is how many core-hours more (fewer) work the
organization had done than its fair share, on average over the window.
"""

from __future__ import annotations

import csv
import io
import json
import math
from fractions import Fraction
from typing import TYPE_CHECKING, Any

from .numbers import DIGITS, WAIT_RULE, number, wait_hours
from .result import AuditReport

if TYPE_CHECKING:
    from rich.console import JustifyMethod

ORG_COLUMNS = (
    "name",
    "machines",
    "jobs",
    "work",
    "psi",
    "phi",
    "phi_low",
    "phi_high",
    "sign_decided",
    "surplus",
    "surplus_per_unit",
    "surplus_core_hours",
    "loss_share",
    "vs_ref",
)


def org_row(
    name: str,
    machines: int,
    jobs: int,
    work: int,
    psi: int,
    phi: Fraction | float,
    halfwidth: float,
    horizon: int,
    sign_decided: bool = True,
) -> dict:
    """One organization's line of the report (exact ``phi`` also as ``"num/den"``).
    ``sign_decided``: the interval excludes ``psi`` (always in an exact audit)."""
    surplus = psi - phi
    row = {
        "name": name,
        "machines": int(machines),
        "jobs": int(jobs),
        "work": int(work),
        "psi": int(psi),
        "phi": float(phi),
        "phi_exact": f"{phi.numerator}/{phi.denominator}" if isinstance(phi, Fraction) else None,
        "phi_low": float(phi) - halfwidth,
        "phi_high": float(phi) + halfwidth,
        "sign_decided": bool(sign_decided),
        "surplus": float(surplus),
        "surplus_per_unit": float(surplus) / work if work else None,
        "surplus_core_hours": float(surplus) / horizon / 3600 if horizon else None,
    }
    return row


def headline_counts(orgs: list[dict], sampled: bool) -> dict[str, int | None]:
    """How many organizations read short-changed, with and without the platform's gain or
    loss shared equally (Definition 3.2 spreads ``ref_total - recorded_total`` over the
    ``k`` organizations; ``vs_ref`` takes that share out). ``short_changed``: surplus < 0
    (in a sampled audit, with its sign decided); ``short_changed_vs_ref``: ``vs_ref < 0``
    (``None`` when the report has no ``vs_ref``); ``favoured`` likewise."""

    def sure(o: dict) -> bool:
        return not sampled or bool(o.get("sign_decided", True))

    with_ref = any(o.get("vs_ref") is not None for o in orgs)
    return {
        "organizations": len(orgs),
        "short_changed": sum(float(o["surplus"]) < 0 and sure(o) for o in orgs),
        "favoured": sum(float(o["surplus"]) > 0 and sure(o) for o in orgs),
        "short_changed_vs_ref": sum(float(o.get("vs_ref") or 0.0) < 0 for o in orgs)
        if with_ref
        else None,
        "favoured_vs_ref": sum(float(o.get("vs_ref") or 0.0) > 0 for o in orgs)
        if with_ref
        else None,
    }


def headline_text(report: AuditReport | dict) -> str:
    """The verdict's counts in one sentence: short-changed with the equal share of
    Definition 3.2, and without it (against REF's total) when the report has both."""
    report = as_dict(report)
    h = report.get("headline") or headline_counts(
        report["organizations"], report.get("method") == "sampled"
    )
    text = (
        f"{h['short_changed']} of {h['organizations']} organizations short-changed, "
        f"{h['favoured']} favoured (Definition 3.2: the platform's gain or loss against "
        "the reference shared equally"
        + ("; signs decided by the intervals" if report.get("method") == "sampled" else "")
        + ")"
    )
    if h.get("short_changed_vs_ref") is not None:
        ref, _ = reference_name(report.get("efficiency") or {})
        text += (
            f"; without that share (against {ref}'s total): {h['short_changed_vs_ref']} "
            f"short-changed, {h['favoured_vs_ref']} favoured"
        )
    return text


def _core_hours(value: float | None, horizon: int) -> float | None:
    """A surplus (processor-seconds x seconds) as core-hours averaged over the window."""
    return None if value is None or not horizon else float(value) / horizon / 3600


def as_dict(report: AuditReport | dict) -> dict[str, Any]:
    """The report as a dict: an :class:`AuditReport`'s ``to_dict()``, a dict as it is."""
    return report.to_dict() if isinstance(report, AuditReport) else report


def to_json(report: AuditReport | dict) -> str:
    """The report as JSON (integers exact, however large)."""
    return json.dumps(as_dict(report), indent=1)


def platform_model(report: AuditReport | dict) -> str | None:
    """The model the coalitions and counterfactuals were scheduled under, in words (every
    output states it: docs/audit.md); ``None`` for a report without one."""
    w = as_dict(report).get("window") or {}
    if not w.get("jobs"):
        return None
    if w["jobs"] == "rigid":
        return f"rigid jobs, backfilling {w.get('backfill')}"
    return "sequential jobs (a job on q processors split into q one-processor jobs)"


def to_csv(report: AuditReport | dict) -> str:
    """One CSV row per organization, the columns of :data:`ORG_COLUMNS` plus ``phi_exact``;
    the platform model and the report's ``notes`` (caveats about the input) come first as
    ``# model:`` and ``# note:`` lines."""
    report = as_dict(report)
    out = io.StringIO()
    model = platform_model(report)
    if model:
        out.write(f"# model: {model}\n")
    for note in report.get("notes") or ():  # caveats first, as comment lines (comment="#")
        out.write(f"# note: {note}\n")
    mc = report.get("model_check")
    if mc:
        from .model_check import model_check_text

        out.write(f"# {model_check_text(mc)}\n")
        if mc.get("warning"):
            out.write(f"# warning: {mc['warning']}\n")
    cf = report.get("counterfactuals") or []
    if cf:  # the counterfactuals, as comment lines of their own columns
        out.write("# counterfactual: " + ",".join(CF_COLUMNS) + "\n")
        for r in cf:
            cells = ["" if r.get(c) is None else r[c] for c in CF_COLUMNS]
            if r.get("tied_with"):
                cells[CF_COLUMNS.index("tied_with")] = "/".join(r["tied_with"])
            out.write("# counterfactual: " + ",".join(str(c) for c in cells) + "\n")
    owen = {o["name"]: o for o in (report.get("owen") or {}).get("organizations", [])}
    extra = list(OWEN_COLUMNS) if owen else []
    w = csv.DictWriter(out, fieldnames=[*ORG_COLUMNS, "phi_exact", *extra], lineterminator="\n")
    w.writeheader()
    for row in report["organizations"]:
        line = {c: row.get(c) for c in w.fieldnames}
        o = owen.get(row["name"])
        if o is not None:  # the Owen columns (a hierarchy of units was given)
            line.update({c: o[c] for c in OWEN_COLUMNS if c != "units"})
            line["units"] = "/".join(o["units"])
        w.writerow(line)
    return out.getvalue()


#: The counterfactuals' columns, on the CSV's ``# counterfactual:`` comment lines (the first
#: of them names the columns; ``tied_with`` joined by ``/``).
CF_COLUMNS = (
    "policy",
    "unfairness",
    "unfairness_low",
    "unfairness_high",
    "rank",
    "tied_with",
    "utilization",
)

#: The CSV's extra columns when the report has an ``owen`` section (``units``: the units
#: holding the organization, outermost first, joined by ``/``).
OWEN_COLUMNS = ("units", "owen", "owen_low", "owen_high", "owen_surplus", "owen_exact")


def duration(hours: float | None, signed: bool = False) -> str:
    """A duration in the unit people read it in: seconds, minutes, hours or days (three
    significant digits, :func:`~.numbers.number`); '—' when missing."""
    if hours is None or math.isnan(hours):
        return "—"
    seconds = hours * 3600
    size = abs(seconds)
    value, unit = (
        (seconds, "s")
        if size < 60
        else (seconds / 60, "min")
        if size < 3600
        else (hours, "h")
        if size < 2 * 86400
        else (hours / 24, "days")
    )
    if not signed:
        value = abs(value)
    return f"{number(value, 3, signed=signed)} {unit}"


def budget_text(budget: dict | None) -> str:
    """The sampling's budget in words, and what was spent (a report's ``sampling.budget``):
    ``budget 300 CPU seconds (spent 297 CPU s, 305 s of wall-clock time)``."""
    if not budget:
        return "budget not stated"
    limits = [
        f"{number(budget[key], 6)} {what}"
        for key, what in (("cpu_seconds", "CPU seconds"), ("wall_seconds", "s of wall-clock time"))
        if budget.get(key) is not None
    ]
    if not limits:
        return "no time budget"
    return (
        "budget " + " and ".join(limits) + f" (spent {number(budget.get('cpu_seconds_spent'), 3)}"
        f" CPU s, {number(budget.get('wall_seconds_spent'), 3)} s of wall-clock time)"
    )


def by_surplus(orgs: list[dict], key: str = "surplus") -> list[dict]:
    """The organizations by ``key`` (the surplus), the most short-changed (most negative)
    first; ties keep the report's order. Display only: the report's lists keep their order."""
    return sorted(orgs, key=lambda o: float(o.get(key) or 0.0))


def render_table(report: AuditReport | dict, console) -> None:
    """The rich tables ``coopsched audit`` prints by default."""
    from rich.table import Table

    report = as_dict(report)
    w = report["window"]
    console.print(
        f"[bold]Audit of {w['log']}[/bold]: window [{w['from'] or w['t0']}, {w['to'] or w['t1']}) "
        f"= {w['horizon']:,} s, {w['machines']} machines, organizations by {w['org_by']}"
    )
    console.print(f"[yellow]contribution rule: {w['contribution_rule']}[/yellow]")
    model = platform_model(report)
    if model:
        console.print(f"platform model: {model}", highlight=False)
    for note in report.get("notes") or ():
        console.print(f"[bold yellow]note:[/bold yellow] {note}", markup=True, highlight=False)
    b = w["backlog"]
    console.print(
        f"backlog at the window's start: {b['waiting']} waiting, {b['running']} running "
        "(running jobs keep their machines first in every schedule)"
    )
    if report["method"] == "sampled":
        s = report["sampling"]
        undecided = s.get("undecided") or []
        console.print(
            f"[yellow]phi sampled: {s['samples']:,} orders (at most {s.get('max_orders'):,}), "
            f"seed {s['seed']}, {report['confidence']:.0%} intervals; "
            f"{budget_text(s.get('budget'))}; stopped: "
            f"{s.get('stop')}; sign undecided for {len(undecided)} organization(s)"
            f"{': ' + ', '.join(undecided[:10]) if undecided else ''}"
            f"{' ...' if len(undecided) > 10 else ''}[/yellow]",
            highlight=False,
        )

    console.print(headline_text(report), highlight=False)
    with_ref = any(o.get("vs_ref") is not None for o in report["organizations"])
    t = Table(
        title="Who was short-changed, who was favoured (surplus = psi - phi), "
        "most short-changed first"
    )
    columns: tuple[tuple[str, JustifyMethod], ...] = (
        ("org", "left"),
        ("mach", "right"),
        ("jobs", "right"),
        ("work", "right"),
        ("psi", "right"),
        ("phi", "right"),
        ("surplus", "right"),
        ("s/unit", "right"),
        ("core-h", "right"),
        *((("vs REF", "right"),) if with_ref else ()),
        ("wait/job", "right"),
    )
    for c, j in columns:
        t.add_column(c, justify=j)
    orgs = by_surplus(report["organizations"])
    u, hw = DIGITS["utility"], DIGITS["halfwidth"]
    T = w["horizon"]
    no_wait = 0
    for r in orgs:
        color = "green" if r["surplus"] > 0 else "red" if r["surplus"] < 0 else ""
        phi = number(r["phi"], u)
        if report["method"] == "sampled":
            phi += " ±" + number((r["phi_high"] - r["phi_low"]) / 2, hw)
            phi += "" if r.get("sign_decided", True) else " ?"
        surplus = number(r["surplus"], u, signed=True)
        wait = wait_hours(r, T)
        no_wait += wait is None
        t.add_row(
            r["name"],
            f"{r['machines']:,}",
            f"{r['jobs']:,}",
            f"{r['work']:,}",
            number(r["psi"], u),
            phi,
            f"[{color}]{surplus}[/{color}]" if color else surplus,
            number(r["surplus_per_unit"], DIGITS["per_unit"], signed=True),
            number(r["surplus_core_hours"], DIGITS["core_hours"], signed=True),
            *(
                (number(_core_hours(r.get("vs_ref"), T), DIGITS["core_hours"], signed=True),)
                if with_ref
                else ()
            ),
            duration(wait, signed=True) + ("" if wait is not None else " *"),
        )
    console.print(t)
    console.print(
        "work: cpu-seconds processed in the window; " + "s/unit: surplus per unit of work (s); "
        "core-h: surplus / window / 3600 (core-hours of work ahead of, or behind, the fair share, "
        "averaged over the window); "
        + (
            "vs REF: core-h without Definition 3.2's equal share of the platform's "
            "gain or loss (vs_ref: psi minus the Shapley value under the reference's total); "
            if with_ref
            else ""
        )
        + "wait/job: equivalent extra wait per job, -surplus / work"
        + ("; ?: sign of the surplus undecided" if report["method"] == "sampled" else ""),
        highlight=False,
    )
    if no_wait:
        console.print(f"*: no wait/job: it is {WAIT_RULE}", highlight=False)
    if report.get("owen"):
        render_owen(report, console)
    eff = report.get("efficiency")
    if eff:
        side = "below" if eff["loss"] >= 0 else "above"
        ref, remark = reference_name(eff)
        console.print(
            f"platform: the recorded schedule's total psi is {1 - eff['loss_fraction']:.1%} of "
            f"{ref}'s{remark} ({number(abs(eff['loss']), u)} {side} it, "
            f"{number(abs(eff['loss_core_hours'] or 0), DIGITS['core_hours'])} core-h); "
            "Definition 3.2 spreads that difference equally, "
            f"{number(eff['loss_share'], u, signed=True)} to every organization's surplus. "
            f"Without it (what each received against its fair share under {ref}'s total): "
            + ", ".join(f"{r['name']} {number(r['vs_ref'], u, signed=True)}" for r in orgs),
            highlight=False,
        )
    mc = report.get("model_check")
    if mc:
        from .model_check import model_check_text

        console.print(model_check_text(mc), highlight=False)
        if mc.get("warning"):
            console.print(
                f"[bold red]warning:[/bold red] {mc['warning']}", markup=True, highlight=False
            )
    if report["counterfactuals"]:
        rows = report["counterfactuals"]
        estimated = report["method"] == "sampled"
        cf = Table(
            title="Counterfactuals: the same window under each policy (unfairness "
            + ("estimated against the sampled game's fair shares" if estimated else "vs REF")
            + ")"
        )
        cf.add_column("schedule")
        cf.add_column("rank", justify="right")
        cf.add_column("dpsi / p_tot (s)", justify="right")
        if estimated:
            cf.add_column(f"{report['confidence']:.0%} interval", justify="right")
        cf.add_column("utilization", justify="right")
        for r in rows:
            util = r["utilization"]
            cells = [r["policy"], rank_text(r), number(r["unfairness"], DIGITS["unfairness"])]
            if estimated:
                cells.append(interval_text(r))
            cells.append("—" if util is None else f"{util:.3f}")
            cf.add_row(*cells)
        console.print(cf)
        console.print(RANK_RULE, highlight=False)
        for r in rows:
            if r.get("note"):
                console.print(f"{r['policy']}: {r['note']}")
    if report["excluded"]:
        console.print(
            "excluded: " + ", ".join(f"{k}: {v:,}" for k, v in report["excluded"].items())
        )


#: How the counterfactuals are ranked, in words (the table, the CSV and the HTML page).
RANK_RULE = (
    "rank: 1 + the schedules whose unfairness interval lies wholly below this one's; '=': "
    "its interval overlaps another's (tied: not told apart)"
)


def unfairness_estimated(row: dict) -> bool:
    """The row's unfairness is an estimate with an interval (a sampled audit), not a point."""
    lo, hi = row.get("unfairness_low"), row.get("unfairness_high")
    return lo is not None and hi is not None and lo != hi


def rank_text(row: dict) -> str:
    """``3``, or ``3=`` when tied with another schedule; "—" without a rank."""
    rank = row.get("rank")
    if rank is None:
        return "—"
    return f"{rank}" + ("=" if row.get("tied_with") else "")


def interval_text(row: dict) -> str:
    """A row's unfairness interval, ``low – high``; "—" without one."""
    lo, hi = row.get("unfairness_low"), row.get("unfairness_high")
    if lo is None or hi is None:
        return "—"
    d = DIGITS["unfairness"]
    return f"{number(lo, d)} – {number(hi, d)}"


def render_owen(report: AuditReport | dict, console) -> None:
    """The Owen tables: per organization, then per unit of the hierarchy."""
    from rich.table import Table

    report = as_dict(report)
    ow = report["owen"]
    sampled = ow["method"] == "sampled"
    t = Table(
        title=f"Owen value by units ({ow['hierarchy']}; surplus = psi - owen, "
        "most short-changed first)"
    )
    for c, j in (("org", "left"), ("units", "left"), ("psi", "right"), ("phi", "right")):
        t.add_column(c, justify=j)  # type: ignore[arg-type]
    for c in ("owen", "owen - phi", "surplus"):
        t.add_column(c, justify="right")
    u = DIGITS["utility"]
    for r in by_surplus(ow["organizations"], "owen_surplus"):
        val = number(r["owen"], u)
        if sampled:
            val += " ±" + number((r["owen_high"] - r["owen_low"]) / 2, DIGITS["halfwidth"])
            val += "" if r.get("sign_decided", True) else " ?"
        s = r["owen_surplus"]
        color = "green" if s > 0 else "red" if s < 0 else ""
        surplus = number(s, u, signed=True)
        t.add_row(
            r["name"],
            "/".join(r["units"]) or "-",
            number(r["psi"], u),
            number(r["phi"], u),
            val,
            number(r["owen_minus_phi"], u, signed=True),
            f"[{color}]{surplus}[/{color}]" if color else surplus,
        )
    console.print(t)
    units = Table(title="Units: sums over their organizations")
    units.add_column("unit")
    for c in ("orgs", "psi", "phi", "owen", "surplus", "v(alone)"):
        units.add_column(c, justify="right")
    path = {r["name"]: r["name"] for r in ow["units"]}
    for r in ow["units"]:  # parents come first
        if r["parent"]:
            path[r["name"]] = f"{path[r['parent']]}/{r['name']}"
        units.add_row(
            path[r["name"]],
            f"{len(r['members']):,}",
            number(r["psi"], u),
            number(r["phi"], u),
            number(r["owen"], u),
            number(r["owen_surplus"], u, signed=True),
            number(r["value_alone"], u),
        )
    console.print(units)
    console.print(ow["text"], highlight=False)


def reference_name(eff: dict) -> tuple[str, str]:
    """Whose total the platform is measured against in ``efficiency``, and a remark to say
    once: REF (exact audits) or the sampled game's stand-in policy."""
    ref = eff.get("reference")
    if ref is None:
        return "REF", ""
    return ref.upper(), " (the sampled game's stand-in for REF: REF's own total is not computed)"
