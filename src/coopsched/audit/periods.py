"""Months (or weeks) side by side: ``coopsched audit LOG --by-month`` (issue 43, item 6).

The audited window (the whole log by default) is cut into consecutive calendar months, or
weeks from Monday 00:00, in the log's time zone (:func:`periods`); each is audited on its
own, with its own backlog: the window rule of docs/audit.md, "Windows and the backlog"
(jobs waiting at the month's start released then, jobs running then pinned). The log is read
once; each month's report is reduced to what the comparison needs before the next month
is audited (memory follows one month, not the year).

The report (:func:`audit_periods`, a plain dict, the JSON output) gives, per organization,
its surplus in core-hours month by month (``psi - phi`` over the month's length, as each
month's own report) and whether its sign was decided, and names the organizations
**short-changed persistently** (:data:`PERSISTENT_RULE`).
"""

from __future__ import annotations

import csv
import io
import json
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from .numbers import DIGITS, number
from .progress import look
from .window import WindowError, format_time, parse_time

__all__ = ["PERSISTENT_RULE", "periods", "audit_periods", "persistent", "to_csv", "to_json"]

#: The rule for "short-changed persistently", in words (every output states it).
PERSISTENT_RULE = (
    "short-changed persistently: audited in at least two periods, short-changed with a "
    "decided sign in at least half of the periods it was audited in, and favoured with a "
    "decided sign in none"
)

WEEK = 7 * 86400


def periods(t0: int, t1: int, by: str, epoch: int | None, timezone: str | None) -> list:
    """The consecutive periods covering ``[t0, t1)`` (log seconds): ``(label, start, end)``,
    calendar months (``by="month"``, labelled ``2010-09``) or weeks from Monday 00:00
    (``"week"``, labelled by their Monday ``2010-09-06``) in ``timezone``, the first and
    last clipped to ``[t0, t1)``. A log without dates (no epoch) has no calendar: months
    are an error; weeks are then 7-day periods from ``t0`` (labelled ``week 1``, ...)."""
    if by not in ("month", "week"):
        raise ValueError(f"by: {by!r}; 'month' or 'week'")
    if t1 <= t0:
        return []
    if epoch is None:
        if by == "month":
            raise WindowError(
                "by_month: the log has no dates (no epoch: an SWF header without "
                "UnixStartTime); use by_week (7-day periods from the start) or a window"
            )
        return [(f"week {i + 1}", a, min(a + WEEK, t1)) for i, a in enumerate(range(t0, t1, WEEK))]
    tz = ZoneInfo(timezone or "UTC")
    start = datetime.fromtimestamp(epoch + t0, tz)
    if by == "month":
        cur = datetime(start.year, start.month, 1, tzinfo=tz)
    else:
        day = datetime(start.year, start.month, start.day, tzinfo=tz)
        cur = day - timedelta(days=day.weekday())
    out = []
    while True:
        if by == "month":
            y, m = (cur.year + 1, 1) if cur.month == 12 else (cur.year, cur.month + 1)
            nxt = datetime(y, m, 1, tzinfo=tz)
            label = f"{cur.year}-{cur.month:02d}"
        else:  # wall-clock Monday to Monday (a week with a DST change is 1 h shorter or longer)
            d = (cur + timedelta(days=7)).date()
            nxt = datetime(d.year, d.month, d.day, tzinfo=tz)
            label = cur.date().isoformat()
        a = max(t0, int(cur.timestamp()) - epoch)
        b = min(t1, int(nxt.timestamp()) - epoch)
        if a < b:
            out.append((label, a, b))
        if b >= t1:
            return out
        cur = nxt


def persistent(rows: list[dict]) -> list[str]:
    """The organizations short-changed persistently (:data:`PERSISTENT_RULE`), from rows
    with ``name`` and per period ``sign`` (``"-"``/``"+"`` decided, ``"?"`` undecided,
    ``"0"`` even, ``None`` not audited that period)."""
    out = []
    for r in rows:
        seen = [s for s in r["sign"] if s is not None]
        short = sum(s == "-" for s in seen)
        if len(seen) >= 2 and 2 * short >= len(seen) and "+" not in seen:
            out.append(r["name"])
    return out


def audit_periods(
    source: str | Path,
    by: str,
    *,
    progress: Callable[[str], None] | None = None,
    **options: Any,
) -> dict:
    """Audit each period (:func:`periods`) of ``source``'s window on its own; the report of
    the module doc. The options are :func:`~coopsched.audit.audit`'s (the records
    ``window=`` ... ``contents=``, or their fields as keywords); ``progress`` gets one line
    per period (and each period's own)."""
    from ..workloads.instance import Instance
    from .options import RECORDS, records
    from .run import audit, load_log

    given = {param: options.pop(param, None) for param, _ in RECORDS}
    w, organizations, model, estimation, contents = records(given, options)
    say = progress or (lambda _m: None)
    log = load_log(source, timezone=w.timezone, skip_malformed=w.skip_malformed)
    if isinstance(log, Instance):
        raise WindowError(f"by_{by}: {source} is a JSON schedule (one window); give a log")
    if w.timezone:
        log = replace(log, timezone=w.timezone)
    j = log.jobs
    if not len(j):
        raise WindowError(f"{source}: no job to audit")
    t0 = parse_time(w.t_from, log, "t_from") if w.t_from is not None else int(j["submit"].min())
    if w.t_to is not None:
        t1 = parse_time(w.t_to, log, "t_to")
    elif w.horizon is not None:
        t1 = t0 + int(w.horizon)
    else:
        t1 = int(j["end"].max())
    cuts = periods(t0, t1, by, log.epoch, log.timezone)
    rows: dict[str, dict] = {}
    out_periods = []
    started = time.process_time()
    for i, (label, a, b) in enumerate(cuts):
        say(look(f"{by} {i + 1} of {len(cuts)}: {label}"))
        entry: dict[str, Any] = {
            "label": label,
            "from": format_time(a, log) or a,
            "to": format_time(b, log) or b,
        }
        if not bool(((j["submit"] < b) & (j["end"] > a)).any()):  # a gap in the log
            entry["note"] = f"no job runs or waits in this {by}"
            out_periods.append(entry)
            continue
        try:
            report = audit(
                log,
                window=replace(w, t_from=a, t_to=b, horizon=None, by_month=False, by_week=False),
                organizations=organizations,
                model=model,
                estimation=estimation,
                contents=contents,
                progress=progress,
            ).to_dict()
        except ValueError as exc:  # the period named, in the audit's own words
            raise WindowError(f"{by} {label}: {exc}") from exc
        orgs = report["organizations"]
        entry.update(
            organizations=len(orgs),
            method=report["method"],
            jobs=int(sum(o.get("jobs", 0) for o in orgs)),
            backlog=report["window"].get("backlog"),
        )
        if report.get("counterfactuals"):
            entry["counterfactuals"] = {
                c["policy"]: c.get("unfairness") for c in report["counterfactuals"]
            }
        out_periods.append(entry)
        for o in orgs:
            r = rows.setdefault(
                o["name"],
                {
                    "name": o["name"],
                    "surplus_core_hours": [None] * len(cuts),
                    "sign": [None] * len(cuts),
                },
            )
            s = float(o["surplus"])
            r["surplus_core_hours"][i] = o.get("surplus_core_hours")
            r["sign"][i] = ("-" if s < 0 else "+" if s > 0 else "0") if o["sign_decided"] else "?"
    ordered = sorted(rows.values(), key=lambda r: _total(r))
    return {
        "by": by,
        "log": str(source),
        "timezone": log.timezone,
        "periods": out_periods,
        "organizations": ordered,
        "persistent": {"rule": PERSISTENT_RULE, "short_changed": persistent(ordered)},
        "cpu_seconds": time.process_time() - started,
    }


def _total(row: dict) -> float:
    return sum(x for x in row["surplus_core_hours"] if x is not None)


def to_json(report: dict) -> str:
    """The report as JSON (the numbers at full precision)."""
    return json.dumps(report, indent=1)


def to_csv(report: dict) -> str:
    """One row per organization and period (``period,name,surplus_core_hours,sign``; a
    period it was not audited in has no row), after comment lines: the rule and who is
    short-changed persistently."""
    buf = io.StringIO()
    buf.write(f"# {PERSISTENT_RULE}\n")
    buf.write(
        "# short-changed persistently: " + ", ".join(report["persistent"]["short_changed"]) + "\n"
    )
    for p in report["periods"]:
        if "note" in p:
            buf.write(f"# {p['label']}: {p['note']}\n")
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(["period", "name", "surplus_core_hours", "sign"])
    labels = [p["label"] for p in report["periods"]]
    for r in report["organizations"]:
        for label, x, s in zip(labels, r["surplus_core_hours"], r["sign"], strict=True):
            if s is not None:
                w.writerow([label, r["name"], x, s])
    return buf.getvalue()


#: The table's marks of a period's verdict.
MARK = {"-": "", "+": "", "0": "", "?": " ?"}


def cell(x: float | None, sign: str | None) -> str:
    """A period's surplus in core-hours, ``?`` after it when the sign is undecided, ``·``
    when the organization was not audited that period."""
    if sign is None:
        return "·"
    return number(x, DIGITS["core_hours"], signed=True) + MARK[sign]


def render_table(report: dict, console: Any) -> None:
    """The report as a rich table: organizations (most short-changed over the periods
    first) by periods, then who is short-changed persistently."""
    from rich.table import Table

    labels = [p["label"] for p in report["periods"]]
    t = Table(
        title=f"Surplus by {report['by']}, core-hours ahead (+) or behind (-) the fair share",
        caption=f"? : sign undecided (sampled audit); · : not audited that {report['by']} (no job)",
    )
    t.add_column("organization")
    for label in labels:
        t.add_column(label, justify="right")
    t.add_column("persistent", justify="center")
    short = set(report["persistent"]["short_changed"])
    for r in report["organizations"]:
        t.add_row(
            r["name"],
            *[cell(x, s) for x, s in zip(r["surplus_core_hours"], r["sign"], strict=True)],
            "short-changed" if r["name"] in short else "",
        )
    console.print(t)
    for p in report["periods"]:
        if "note" in p:
            console.print(f"{p['label']}: {p['note']}")
    console.print(PERSISTENT_RULE + ".")
    who = ", ".join(report["persistent"]["short_changed"]) or "none"
    console.print(f"Short-changed persistently: {who}.")
