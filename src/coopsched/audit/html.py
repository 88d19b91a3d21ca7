"""The audit report as one self-contained HTML page (issue #14, ``coopsched audit --html``).

:func:`render_html` turns the audit's report dict (see ``docs/audit.md``) into a page that
opens offline: no external script, font, style sheet or image; every figure is an inline
SVG drawn by matplotlib. It reads at 5 as at 140 organizations (issue #29 item 6):

* organizations are listed by surplus ``psi - phi``, the most short-changed first (the
  core-hours and ``vs_ref`` columns give the same order: they are the surplus scaled by a
  constant, and shifted by a constant);
* the headline is in core-hours of work ahead of (or behind) the fair share, averaged over
  the window, and in the equivalent extra wait per job (:func:`wait_hours`, shown in
  seconds, minutes, hours or days as its size asks); ``psi`` and
  ``phi`` in processor-seconds x seconds stay in a table for specialists;
* a row whose sign is decided (exact audit, or ``|surplus|`` beyond the interval's
  half-width) carries a mark; sampled intervals are error bars;
* beyond :data:`COLLAPSE_ABOVE` organizations the table shows the most short-changed and the
  most favoured, the others behind a "show all" box (CSS only); a search box filters the
  rows. The search is the page's one inline script: without JavaScript the box stays hidden
  and everything else works (the browser's own find searches the table once all are shown);
* time axes are dates in the log's time zone; legends name at most :data:`LEGEND_MAX`
  organizations (the most short-changed and the most favoured), the others drawn in grey
  under one entry.
"""

from __future__ import annotations

import html
import io
import re
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, tzinfo
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from .numbers import DIGITS, WAIT_RULE, number, wait_hours
from .report import (
    RANK_RULE,
    as_dict,
    budget_text,
    by_surplus,
    duration,
    headline_text,
    interval_text,
    platform_model,
    rank_text,
    reference_name,
)
from .result import AuditReport

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

#: Figure ids of the page, in order (the browser test checks each one).
FIGURES: tuple[str, ...] = ("fig-verdict", "fig-contribution", "fig-surplus", "fig-utilization")

#: Above this many organizations, the table shows the :data:`SHOW_EACH` most short-changed
#: and most favoured; the others are behind the "show all" box.
COLLAPSE_ABOVE = 40
SHOW_EACH = 15
#: Above this many organizations, a search box (shown by the page's script) filters the table.
SEARCH_ABOVE = 10
#: Bar charts draw every organization up to this many, else the :data:`BAR_EACH` most
#: short-changed and most favoured.
BAR_MAX = 40
BAR_EACH = 20
#: Curves name every organization in the legend up to this many, else the
#: :data:`LEGEND_EACH` most short-changed and most favoured (the others grey, one entry).
LEGEND_MAX = 10
LEGEND_EACH = 5

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1b1b1b;line-height:1.45;
overflow-wrap:anywhere}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #ddd;padding-bottom:.2rem}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem;overflow-wrap:normal}
th,td{border:1px solid #ccc;padding:.25rem .55rem;text-align:right}
td{white-space:nowrap}
th{background:#f2f2f2}td.name,th.name{text-align:left}
tr.recorded td{font-weight:600;background:#f7f7ff}td.pos{color:#0b6e2f}td.neg{color:#a3161a}
td.mark,th.mark{text-align:left}tr.undecided td.mark{color:#666}
tr.undecided td.pos,tr.undecided td.neg{opacity:.65}
tbody.gap td{text-align:center;color:#555;font-style:italic}
.note{background:#fff6d6;border:1px solid #e6c44f;padding:.5rem .8rem;border-radius:4px}
.warning{color:#a3161a}
#headline{background:#eef4fb;border:1px solid #9bb7d9;padding:.6rem .9rem;border-radius:4px}
.meta td{text-align:left;white-space:normal}.meta th{text-align:left}
figure.chart{margin:1rem 0;overflow-x:auto}
figure.chart svg{width:100%;min-width:560px;height:auto}
figcaption{font-size:.9rem;color:#444}
#show-all:not(:checked)~.scroll tbody.more{display:none}
#show-all:checked~.scroll tbody.gap{display:none}
#organizations.searching tbody.more{display:table-row-group!important}
#organizations.searching tbody.gap{display:none}
details{margin:.8rem 0}summary{cursor:pointer}
td.path{white-space:normal;overflow-wrap:anywhere;min-width:6rem;max-width:22rem}
"""

#: The search box's script: shows the box (hidden without JavaScript) and filters the
#: organizations' rows by name; while a query is typed, the collapsed rows are searched too.
_SCRIPT = """
(function () {
  var box = document.getElementById("org-search-box");
  var q = document.getElementById("org-search");
  var t = document.getElementById("organizations");
  var n = document.getElementById("org-search-count");
  if (!box || !q || !t || !n) { return; }
  var rows = t.querySelectorAll("tbody tr[data-name]");
  box.hidden = false;
  q.addEventListener("input", function () {
    var s = q.value.trim().toLowerCase(), hits = 0;
    t.classList.toggle("searching", s !== "");
    for (var i = 0; i < rows.length; i++) {
      var hit = rows[i].getAttribute("data-name").toLowerCase().indexOf(s) >= 0;
      rows[i].hidden = !hit;
      if (hit) { hits++; }
    }
    n.textContent = s === "" ? "" : hits + " of " + rows.length + " organizations";
  });
})();
"""


def _esc(value: object) -> str:
    """HTML-escape any value (names come from logs and may hold markup)."""
    return html.escape(str(value), quote=True)


def _mpl_text(name: object) -> str:
    """A name as literal matplotlib text: ``$`` would start mathtext."""
    return str(name).replace("\\", "\\\\").replace("$", r"\$")


def _num(value: Any, digits: int = DIGITS["utility"]) -> str:
    """A number for a table cell (:func:`~.numbers.number`: ``digits`` significant digits,
    the table's format), '—' for missing values."""
    try:
        return number(value, digits)
    except (TypeError, ValueError):
        return _esc(value)


def count(value: Any) -> str:
    """A count (jobs, machines, work, seconds): whole, with thousands separators."""
    return "—" if value is None else f"{int(value):,}"


def _share(value: Any) -> str:
    """A share of capacity (utilization): three decimals."""
    return "—" if value is None else f"{float(value):.3f}"


def _signed(value: float | None) -> str:
    """A signed quantity in core-hours (:func:`~.numbers.number`, three significant digits,
    as in the table)."""
    return number(value, DIGITS["core_hours"], signed=True)


def _colors(n: int) -> list:
    """``n`` distinct colours (tab10 up to 10 organizations, tab20 up to 20, then cycled)."""
    from matplotlib import colormaps

    cmap = colormaps["tab10" if n <= 10 else "tab20"]
    return [cmap(i % cmap.N) for i in range(n)]


def _svg(fig: Figure, prefix: str) -> str:
    """``fig`` as an inline ``<svg>`` element whose ids are unique on the page."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    svg = svg[svg.index("<svg") :]
    svg = re.sub(r"<metadata>.*?</metadata>", "", svg, flags=re.S)
    svg = re.sub(r'id="([^"]+)"', rf'id="{prefix}-\1"', svg)
    svg = re.sub(r"url\(#([^)]+)\)", rf"url(#{prefix}-\1)", svg)
    svg = re.sub(r'href="#([^"]+)"', rf'href="#{prefix}-\1"', svg)
    return svg


#: matplotlib settings while drawing: text stays text (no embedded glyphs), stable ids.
_RC: dict[RcKeyType, Any] = {"svg.fonttype": "none", "svg.hashsalt": "coopsched"}


def _new_figure(width: float, height: float) -> Figure:
    return Figure(figsize=(width, height), layout="constrained")


# --- per-organization quantities in people's units ------------------------------------------


def _horizon(report: dict) -> float | None:
    h = (report.get("window") or {}).get("horizon")
    return float(h) if h else None


def halfwidth(org: dict) -> float:
    """Half-width of the interval of ``phi`` (and of the surplus): 0 in an exact audit."""
    low, high = org.get("phi_low"), org.get("phi_high")
    if low is None or high is None:
        return 0.0
    return max(float(high) - float(low), 0.0) / 2


def decided(org: dict, sampled: bool) -> bool:
    """Whether the sign of the surplus is known: always in an exact audit; in a sampled one
    when ``|surplus|`` exceeds the interval's half-width (the interval excludes 0)."""
    return not sampled or abs(float(org.get("surplus") or 0.0)) > halfwidth(org)


def core_hours(org: dict, horizon: float | None) -> float | None:
    """``surplus / T / 3600``: core-hours of work done ahead of (+) or behind (-) the fair
    share, on average over the window (``surplus_core_hours`` of the report)."""
    value = org.get("surplus_core_hours")
    if value is not None:
        return float(value)
    return float(org.get("surplus") or 0.0) / horizon / 3600 if horizon else None


def _by_surplus(orgs: list[dict]) -> list[dict]:
    """The organizations by surplus, the most short-changed (most negative) first; ties keep
    the report's order."""
    return by_surplus(orgs)


def _ends(items: list, limit: int, each: int) -> tuple[list, list, int]:
    """All of ``items`` up to ``limit``, else the first and last ``each`` and how many between."""
    if len(items) <= limit:
        return list(items), [], 0
    return list(items[:each]), list(items[-each:]), len(items) - 2 * each


def _verdict(org: dict, sampled: bool) -> str:
    s = float(org.get("surplus") or 0.0)
    if not decided(org, sampled):
        return "undecided"
    return "short-changed" if s < 0 else "favoured" if s > 0 else "even"


# --- figures ----------------------------------------------------------------------------------


def _legend(ax, handles: list, names: Sequence[str]) -> None:
    """A legend with explicit labels (names starting with '_' are kept), outside if many."""
    labels = [_mpl_text(n) for n in names]
    if len(names) <= 5:
        ax.legend(handles, labels, fontsize=8, loc="best")
    else:
        ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _bound(org: dict, key: str) -> float:
    """An interval bound of ``phi``, or ``phi`` itself when the report has none."""
    value = org.get(key)
    return float(org["phi"] if value is None else value)


def _rows_with_gap(orgs: list[dict]) -> tuple[list[dict], list[dict], int, np.ndarray, float]:
    """The bar charts' rows: ``(top, bottom, between, y of each drawn row, y of the gap)``."""
    top, bottom, between = _ends(orgs, BAR_MAX, BAR_EACH)
    shown = len(top) + len(bottom)
    y = np.array([i if i < len(top) else i + 1 for i in range(shown)], dtype=float)
    return top, bottom, between, y, float(len(top))


def _gap_label(ax, y: float, between: int) -> None:
    ax.text(
        0.5,
        y,
        f"... {between} organizations in between (all are in the table)",
        transform=ax.get_yaxis_transform(),
        ha="center",
        va="center",
        fontsize=8,
        color="#444",
        style="italic",
    )


def _verdict_figure(orgs: list[dict], sampled: bool, horizon: float | None) -> str:
    """Horizontal bars: each organization's surplus in core-hours (most short-changed on top),
    sampled intervals as error bars; decided signs solid, undecided ones hatched."""
    from matplotlib.artist import Artist
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    top, bottom, between, y, gap = _rows_with_gap(orgs)
    shown = top + bottom
    fig = _new_figure(9.0, max(2.4, 0.22 * (len(y) + (1 if between else 0)) + 1.6))
    ax = fig.add_subplot()
    in_hours = horizon is not None
    scale = horizon * 3600 if horizon else 1.0
    value = np.array(
        [core_hours(o, horizon) if in_hours else float(o.get("surplus") or 0.0) for o in shown],
        dtype=float,
    )
    sure = [decided(o, sampled) for o in shown]
    colors = ["#a3161a" if v < 0 else "#0b6e2f" for v in value]
    faces = [c if d else "#ffffff" for c, d in zip(colors, sure, strict=True)]
    hatches = ["" if d else "////" for d in sure]
    for yi, v, face, edge, hatch in zip(y, value, faces, colors, hatches, strict=True):
        ax.barh(yi, v, height=0.7, color=face, edgecolor=edge, hatch=hatch, lw=0.8)
    handles: list[Artist] = [
        Patch(facecolor="#a3161a", label="short-changed, sign decided"),
        Patch(facecolor="#0b6e2f", label="favoured, sign decided"),
    ]
    if not all(sure):
        handles.append(
            Patch(facecolor="#ffffff", edgecolor="#555", hatch="////", label="sign undecided")
        )
    if sampled:
        err = np.array([halfwidth(o) / scale for o in shown])
        ax.errorbar(value, y, xerr=err, fmt="none", ecolor="#1b1b1b", capsize=2.5, lw=0.9)
        handles.append(Line2D([], [], color="#1b1b1b", lw=0.9, label="interval"))
    if between:
        _gap_label(ax, gap, between)
    ax.set_yticks(y, [_mpl_text(o["name"]) for o in shown], fontsize=8)
    ax.set_ylim(float(y.max()) + 0.6 if len(y) else 0.6, -0.6)
    ax.axvline(0, color="#555", lw=0.8)
    ax.set_xlabel(
        "core-hours of work ahead of (+) or behind (-) the fair share, averaged over the window"
        if in_hours
        else "psi - phi (processor-seconds x seconds)"
    )
    ax.legend(
        handles=handles,
        fontsize=8,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=min(len(handles), 4),
        frameon=False,
    )
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig, "v")


def _contribution_figure(orgs: list[dict], sampled: bool) -> str:
    """Horizontal bars: Shapley value phi (with its interval when sampled) against psi."""
    top, bottom, between, y, gap = _rows_with_gap(orgs)
    shown = top + bottom
    rows = len(y) + (1 if between else 0)
    fig = _new_figure(9.0, max(2.4, (0.42 if rows <= 12 else 0.3) * rows + 1.3))
    ax = fig.add_subplot()
    phi = np.array([float(o["phi"]) for o in shown])
    psi = np.array([float(o["psi"]) for o in shown])
    h = 0.38
    bars_phi = ax.barh(y - h / 2, phi, height=h, color="#7a9cc6", label="phi")
    if sampled:
        low = np.array([_bound(o, "phi_low") for o in shown])
        high = np.array([_bound(o, "phi_high") for o in shown])
        err = np.vstack([np.maximum(phi - low, 0), np.maximum(high - phi, 0)])
        ax.errorbar(phi, y - h / 2, xerr=err, fmt="none", ecolor="#1b1b1b", capsize=3, lw=1)
    bars_psi = ax.barh(y + h / 2, psi, height=h, color="#e39b4c", label="psi")
    if between:
        _gap_label(ax, gap, between)
    ax.set_yticks(y, [_mpl_text(o["name"]) for o in shown], fontsize=8)
    ax.set_ylim(float(y.max()) + 0.6 if len(y) else 0.6, -0.6)
    ax.axvline(0, color="#555", lw=0.8)
    ax.set_xlabel("utility (processor-seconds x seconds, paper Eq. 3)")
    ax.legend(
        [bars_phi, bars_psi],
        [
            "phi: Shapley value (fair share of what it contributed)"
            + (" with interval" if sampled else ""),
            "psi: utility received in the recorded schedule",
        ],
        fontsize=8,
        loc="lower center",
        bbox_to_anchor=(0.5, 1.0),
        ncol=2,
        frameon=False,
    )
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig, "c")


def _zone(name: object) -> tzinfo | None:
    from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

    if not name:
        return None
    try:
        return ZoneInfo(str(name))
    except (ZoneInfoNotFoundError, ValueError):
        return None


def _time_axis(report: dict, t: np.ndarray) -> tuple[np.ndarray, str, tzinfo | None]:
    """``(x, label, zone)``: the curves' times (seconds since the window's start) as dates
    in the log's time zone when the window has a start date; else hours (minutes, seconds)
    since the start, and no zone."""
    window = report.get("window") or {}
    start = window.get("from")
    begin = None
    if start:
        try:
            begin = datetime.fromisoformat(str(start))
        except ValueError:
            begin = None
    if begin is not None and begin.tzinfo is not None:
        from matplotlib.dates import date2num

        zone = _zone(window.get("timezone")) or begin.tzinfo
        first = begin.astimezone(UTC)  # arithmetic in UTC: no wall-clock jump at DST
        x = date2num([first + timedelta(seconds=float(s)) for s in t])
        name = window.get("timezone") if _zone(window.get("timezone")) else begin.strftime("%z")
        return np.asarray(x, dtype=float), f"date and time ({name})", zone
    horizon = float(window.get("horizon") or (t.max() if t.size else 1) or 1)
    unit, scale = (
        ("hours", 3600.0)
        if horizon >= 3 * 3600
        else ("minutes", 60.0)
        if horizon >= 180
        else ("seconds", 1.0)
    )
    return t / scale, f"{unit} since the start of the window", None


def _highlighted(names: list[str]) -> tuple[list[str], list[str]]:
    """``(named, others)``: the curves named in the legend, and the grey ones."""
    top, bottom, _ = _ends(names, LEGEND_MAX, LEGEND_EACH)
    named = top + bottom
    chosen = set(named)
    return named, [n for n in names if n not in chosen]


def _curve_figure(
    report: dict,
    key: str,
    ylabel: str,
    prefix: str,
    zero_line: bool,
    names: list[str],
    transform=None,
) -> str | None:
    """Lines over time, one per organization, from ``report['curves'][key]``: the
    organizations of :func:`_highlighted` in colour and named, the others grey."""
    curves = report.get("curves") or {}
    t = np.asarray(curves.get("t") or [], dtype=float)
    series = curves.get(key) or {}
    if t.size == 0 or not series:
        return None
    x, xlabel, zone = _time_axis(report, t)
    present = [n for n in names if series.get(n) is not None]
    if not present:
        return None
    named, others = _highlighted(present)

    def values(name: str) -> np.ndarray:
        v = np.asarray(series[name], dtype=float)
        return transform(v, t) if transform is not None else v

    fig = _new_figure(9.0 if len(named) <= 5 and not others else 10.5, 3.8)
    ax = fig.add_subplot()
    handles, labels = [], []
    for name in others:
        (grey,) = ax.plot(x, values(name), color="#b5b5b5", lw=0.7, alpha=0.8)
    if others:
        handles.append(grey)
        labels.append(f"{len(others)} others (grey)")
    for color, name in zip(_colors(len(named)), named, strict=True):
        (line,) = ax.plot(x, values(name), color=color, lw=1.5)
        handles.append(line)
        labels.append(name)
    if others:  # the named ones first, in the table's order
        handles = handles[1:] + handles[:1]
        labels = labels[1:] + labels[:1]
    if zero_line:
        ax.axhline(0, color="#555", lw=0.8)
    if zone is not None:
        from matplotlib.dates import AutoDateLocator, ConciseDateFormatter

        locator = AutoDateLocator(tz=zone)
        ax.xaxis.set_major_locator(locator)
        ax.xaxis.set_major_formatter(ConciseDateFormatter(locator, tz=zone))
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    _legend(ax, handles, labels)
    return _svg(fig, prefix)


def _per_core_hour(values: np.ndarray, t: np.ndarray) -> np.ndarray:
    """``psi - phi`` at ``t`` as core-hours ahead of the fair share, averaged since the start."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(t > 0, values / np.where(t > 0, t, 1.0) / 3600, np.nan)


def _figure(fig_id: str, svg: str | None, caption: str) -> str:
    if svg is None:
        return f'<p class="note" id="{fig_id}-missing">No data for this figure.</p>'
    return (
        f'<figure class="chart" id="{fig_id}">{svg}'
        f"<figcaption>{_esc(caption)}</figcaption></figure>"
    )


# --- tables and text ----------------------------------------------------------------------------


def _window_table(report: dict) -> str:
    w = report.get("window") or {}
    backlog = w.get("backlog") or {}
    rows = [
        ("Log", w.get("log")),
        ("Window", f"{w.get('from') or w.get('t0')} to {w.get('to') or w.get('t1')}"),
        ("Horizon", f"{count(w.get('horizon'))} s"),
        ("Machines", count(w.get("machines"))),
        ("Time zone", w.get("timezone") or "not stated"),
        ("Organizations by", w.get("org_by")),
        ("Contribution rule", w.get("contribution_rule")),
        ("Platform model", platform_model(report) or "not stated"),
        (
            "Backlog at the start",
            f"{count(backlog.get('waiting', 0))} waiting, {count(backlog.get('running', 0))} running",
        ),
        ("Method", report.get("method")),
    ]
    cells = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)
    return f'<div class="scroll"><table class="meta" id="window">{cells}</table></div>'


def _sign_class(value: float | None) -> str:
    if value is None:
        return ""
    return "pos" if value > 0 else "neg" if value < 0 else ""


def _org_row(rank: int, o: dict, sampled: bool, horizon: float | None, with_ref: bool) -> str:
    s = float(o.get("surplus") or 0.0)
    sure = decided(o, sampled)
    verdict = _verdict(o, sampled)
    mark = f"✓ {verdict}" if sure else "? undecided"
    title = (
        "exact audit: the sign is certain"
        if not sampled
        else "the interval excludes 0"
        if sure
        else "the interval includes 0"
    )
    ch = core_hours(o, horizon)
    hw = halfwidth(o) / horizon / 3600 if sampled and horizon else None
    ch_cell = _signed(ch) + (f" ± {_num(hw, DIGITS['halfwidth'])}" if hw is not None else "")
    wait = wait_hours(o, horizon)
    vs = o.get("vs_ref")
    ref_cell = ""
    if with_ref:
        vs_ch = float(vs) / horizon / 3600 if vs is not None and horizon else None
        ref_cell = f'<td class="{_sign_class(vs_ch)}">{_signed(vs_ch)}</td>'
    cls = "decided" if sure else "undecided"
    return (
        f'<tr class="{cls}" data-name="{_esc(o["name"])}" data-surplus="{s!r}">'
        f"<td>{rank}</td>"
        f'<td class="name">{_esc(o["name"])}</td>'
        f'<td class="mark" title="{title}">{mark}</td>'
        f'<td class="{_sign_class(ch)}">{ch_cell}</td>'
        f'<td class="{_sign_class(-wait if wait is not None else None)}">'
        f"{duration(wait, signed=True)}{'' if wait is not None else '<sup>*</sup>'}</td>"
        f"{ref_cell}"
        f"<td>{count(o.get('machines'))}</td><td>{count(o.get('jobs'))}</td></tr>"
    )


def _org_table(orgs: list[dict], sampled: bool, horizon: float | None) -> str:
    """The organizations by surplus, most short-changed first, in people's units."""
    with_ref = any(o.get("vs_ref") is not None for o in orgs)
    head = (
        '<thead><tr><th>#</th><th class="name">Organization</th><th class="mark">Sign</th>'
        "<th>Core-hours ahead (+) / behind (−) the fair share"
        + (" ± interval" if sampled else "")
        + "</th><th>Equivalent extra wait per job</th>"
        + ("<th>Core-hours, platform's loss taken out</th>" if with_ref else "")
        + "<th>Machines</th><th>Jobs</th></tr></thead>"
    )
    ncol = 7 + (1 if with_ref else 0)
    rows = [_org_row(i + 1, o, sampled, horizon, with_ref) for i, o in enumerate(orgs)]
    top, bottom, between = _ends(rows, COLLAPSE_ABOVE, SHOW_EACH)
    if not between:
        body = f"<tbody>{''.join(rows)}</tbody>"
        toggle = ""
    else:
        more = rows[len(top) : len(rows) - len(bottom)]
        body = (
            f"<tbody>{''.join(top)}</tbody>"
            f'<tbody class="gap"><tr><td colspan="{ncol}">… {between} organizations in '
            f'between, hidden: <label for="show-all">show all</label></td></tr></tbody>'
            f'<tbody class="more">{"".join(more)}</tbody>'
            f"<tbody>{''.join(bottom)}</tbody>"
        )
        toggle = (
            '<input type="checkbox" id="show-all"> <label for="show-all">Show all '
            f"{len(rows)} organizations (the {between} between the {SHOW_EACH} most "
            f"short-changed and the {SHOW_EACH} most favoured are hidden)</label>"
        )
    search = (
        ""
        if len(rows) <= SEARCH_ABOVE
        else (
            '<p id="org-search-box" hidden><label>Find an organization: <input type="search" '
            'id="org-search" autocomplete="off"></label> <span id="org-search-count" '
            'aria-live="polite"></span></p>'
        )
    )
    no_wait = any(wait_hours(o, horizon) is None for o in orgs)
    footnote = (
        f'<p class="footnote" id="wait-rule"><sup>*</sup> No equivalent wait: it is '
        f"{_esc(WAIT_RULE)}.</p>"
        if no_wait
        else ""
    )
    return (
        f'<div id="org-list">{search}{toggle}<div class="scroll">'
        f'<table id="organizations">{head}{body}</table></div>{footnote}</div>'
    )


def _utility_table(orgs: list[dict], sampled: bool) -> str:
    """For specialists: psi, phi and the surplus in the paper's units, same order."""
    with_ref = any(o.get("vs_ref") is not None for o in orgs)
    head = (
        '<tr><th class="name">Organization</th><th>Machines</th><th>Jobs</th><th>Work</th>'
        "<th>psi (received)</th><th>phi (fair)</th>"
        + ("<th>phi interval</th>" if sampled else "")
        + "<th>psi - phi</th><th>per unit of work (s)</th>"
        + ("<th>vs_ref</th>" if with_ref else "")
        + "</tr>"
    )
    body = []
    for o in orgs:
        s = float(o.get("surplus", 0.0) or 0.0)
        cls = _sign_class(s)
        interval = (
            f"<td>[{_num(o.get('phi_low'))}, {_num(o.get('phi_high'))}]</td>" if sampled else ""
        )
        u = DIGITS["utility"]
        ref = f"<td>{number(o.get('vs_ref'), u, signed=True)}</td>" if with_ref else ""
        body.append(
            f'<tr><td class="name">{_esc(o["name"])}</td><td>{count(o.get("machines"))}</td>'
            f"<td>{count(o.get('jobs'))}</td><td>{count(o.get('work'))}</td>"
            f"<td>{_num(o.get('psi'))}</td><td>{_num(o.get('phi'))}</td>{interval}"
            f'<td class="{cls}">{number(o.get("surplus"), u, signed=True)}</td>'
            f'<td class="{cls}">'
            f"{number(o.get('surplus_per_unit'), DIGITS['per_unit'], signed=True)}</td>{ref}</tr>"
        )
    return (
        '<details id="specialists"><summary>For specialists: <b>psi</b> and <b>phi</b> in '
        "processor-seconds x seconds (paper Eq. 3), same order</summary>"
        "<p>work: processor-seconds done in the window; per unit of work: the surplus divided "
        "by the work, seconds of unjustified speed-up (delay, if negative) per unit of work"
        + (
            "; vs_ref: the surplus with the platform's loss against REF taken out"
            if with_ref
            else ""
        )
        + f'.</p><div class="scroll"><table id="utilities">{head}{"".join(body)}</table></div>'
        "</details>"
    )


def _unit_paths(units: list[dict]) -> dict[str, str]:
    """Each unit's path from the top of the tree (``faculty/physics``); parents come first."""
    path: dict[str, str] = {}
    for u in units:
        parent = u.get("parent")
        path[u["name"]] = f"{path.get(parent, parent)}/{u['name']}" if parent else u["name"]
    return path


#: Above this many units or levels, the units table starts folded.
UNITS_OPEN_MAX = 12
OWEN_OPEN_LEVELS = 2


def _owen_section(report: dict, horizon: float | None) -> str:
    """The Owen value by units (report['owen'], :func:`coopsched.audit.owen.owen_report`):
    per organization (most short-changed against it first) and per unit, in core-hours
    averaged over the window like the rest of the page (utilities ``/ T / 3600``)."""
    ow = report.get("owen")
    if not ow:
        return ""
    sampled = ow.get("method") == "sampled"
    scale = horizon * 3600 if horizon else None
    unit = "core-hours" if scale else "processor-seconds x seconds"

    def ch(value: Any) -> float | None:
        if value is None:
            return None
        return float(value) / scale if scale else float(value)

    def cell(value: Any, signed: bool = True, extra: str = "") -> str:
        v = ch(value)
        cls = _sign_class(v) if signed else ""
        text = (_signed(v) if signed else _num(v, DIGITS["core_hours"])) + extra
        raw = "" if value is None else f' title="{_num(value)} processor-seconds x seconds"'
        return f'<td class="{cls}"{raw}>{text}</td>' if cls else f"<td{raw}>{text}</td>"

    orgs = by_surplus(list(ow.get("organizations") or []), "owen_surplus")
    rows = []
    for i, o in enumerate(orgs):
        s = float(o.get("owen_surplus") or 0.0)
        sure = not sampled or bool(o.get("sign_decided", True))
        verdict = "short-changed" if s < 0 else "favoured" if s > 0 else "even"
        mark = f"✓ {verdict}" if sure else "? undecided"
        title = (
            "exact audit: the sign is certain"
            if not sampled
            else "the interval excludes psi"
            if sure
            else "the interval includes psi"
        )
        hw = None
        if sampled and o.get("owen_low") is not None and o.get("owen_high") is not None:
            hw = (float(o["owen_high"]) - float(o["owen_low"])) / 2
        err = f" ± {_num(ch(hw), DIGITS['halfwidth'])}" if hw is not None else ""
        units = o.get("units") or []
        where = "/".join(units) if units else "— (alone)"
        rows.append(
            f'<tr class="{"decided" if sure else "undecided"}" data-name="{_esc(o["name"])}">'
            f"<td>{i + 1}</td>"
            f'<td class="name">{_esc(o["name"])}</td><td class="name path">{_esc(where)}</td>'
            f'<td class="mark" title="{title}">{mark}</td>'
            + cell(o.get("owen"), signed=False, extra=err)
            + cell(o.get("owen_minus_phi"))
            + cell(o.get("owen_surplus"))
            + "</tr>"
        )
    head = (
        '<thead><tr><th>#</th><th class="name">Organization</th><th class="name">Unit</th>'
        '<th class="mark">Sign</th>'
        f"<th>Owen value ({unit}){' ± interval' if sampled else ''}</th>"
        "<th>owen − phi</th><th>psi − owen: ahead (+) / behind (−)</th>"
        "</tr></thead>"
    )
    k = len(rows)
    org_table = (
        f'<details id="owen-orgs"{" open" if k <= COLLAPSE_ABOVE else ""}><summary>'
        f"Owen value of each of the {k} organizations, most short-changed against it first"
        f'</summary><div class="scroll"><table id="owen-organizations">{head}'
        f"<tbody>{''.join(rows)}</tbody></table></div></details>"
    )
    urows = []
    units = list(ow.get("units") or [])
    paths = _unit_paths(units)
    for u in units:
        level = int(u.get("level") or 1)
        pad = f' style="padding-left:{0.55 + 1.1 * (level - 1):.2f}rem"' if level > 1 else ""
        urows.append(
            f'<tr data-level="{level}"><td class="name path"{pad}>{_esc(paths[u["name"]])}</td>'
            f"<td>{count(len(u.get('members') or []))}</td>"
            + cell(u.get("psi"), signed=False)
            + cell(u.get("phi"), signed=False)
            + cell(u.get("owen"), signed=False)
            + cell(u.get("owen_surplus"))
            + cell(u.get("value_alone"), signed=False)
            + "</tr>"
        )
    levels = int(ow.get("levels") or 1)
    folded = len(units) > UNITS_OPEN_MAX or levels > OWEN_OPEN_LEVELS
    units_table = (
        f'<details id="owen-units"{"" if folded else " open"}><summary>The {len(units)} '
        f"units of the tree ({levels} levels), parents first: sums over their organizations"
        '</summary><div class="scroll"><table id="owen-unit-table"><thead><tr>'
        '<th class="name">Unit</th><th>Organizations</th><th>psi (received)</th>'
        "<th>phi (Shapley)</th><th>owen</th><th>psi − owen</th>"
        "<th>Value alone</th></tr></thead>"
        f"<tbody>{''.join(urows)}</tbody></table></div></details>"
    )
    how = (
        f"sampled ({count(ow['samples'])} orders that keep every unit contiguous); ± the "
        "interval, ✓ where it excludes psi"
        if sampled and "samples" in ow
        else "sampled; ± the interval, ✓ where it excludes psi"
        if sampled
        else "exact"
    )
    return (
        '<h2 id="owen">By units: the Owen value</h2>'
        f"<p>The organizations are grouped in units ({_esc(ow.get('hierarchy'))}). The Owen "
        "value is the fair share when units bargain as blocks: a unit gets its Shapley value "
        "among units, its organizations share it by their Shapley values within the unit. "
        f"In {unit}"
        + (" averaged over the window (utilities divided by its length and 3600)" if scale else "")
        + f"; {how}. Value alone: what the unit's organizations would get on their own "
        "machines; a unit's sums are sums of its organizations.</p>"
        f'<p class="note">{_esc(ow.get("text"))}</p>' + org_table + units_table
    )


def _headline(orgs: list[dict], sampled: bool, horizon: float | None) -> str:
    """The verdict in words: the most short-changed and most favoured organizations in
    core-hours and equivalent wait per job, and how many signs are decided."""
    k = len(orgs)
    short = [o for o in orgs if float(o.get("surplus") or 0.0) < 0]
    fav = [o for o in orgs if float(o.get("surplus") or 0.0) > 0]

    def said(o: dict, side: str) -> str:
        ch = core_hours(o, horizon)
        wait = wait_hours(o, horizon)
        text = f"<b>{_esc(o['name'])}</b>"
        if ch is not None:
            text += (
                f": its work was on average {_num(abs(ch), DIGITS['core_hours'])} core-hours "
                f"{side} its fair share over the window"
            )
        if wait is not None:
            more = "longer" if wait > 0 else "less"
            text += f", as if each of its jobs had waited {duration(abs(wait))} {more}"
        if sampled:
            text += " (sign decided)" if decided(o, sampled) else " (sign undecided)"
        return text

    parts = [f"<b>{k} organization{'s' if k != 1 else ''}</b>, most short-changed first. "]
    if short:
        parts.append(f"Most short-changed: {said(short[0], 'behind')}. ")
    if fav:
        parts.append(f"Most favoured: {said(fav[-1], 'ahead of')}. ")
    if not short and not fav:
        parts.append("Every organization received exactly its fair share. ")
    n_short = sum(decided(o, sampled) for o in short)
    n_fav = sum(decided(o, sampled) for o in fav)
    if sampled:
        undecided = k - n_short - n_fav
        parts.append(
            f"Signs decided by the intervals: {n_short} short-changed, {n_fav} favoured, "
            f"{undecided} undecided."
        )
    else:
        parts.append(
            f"Exact audit, every sign is decided: {n_short} short-changed, {n_fav} favoured."
        )
    return f'<p id="headline">{"".join(parts)}</p>'


def _counterfactual_table(rows: list[dict], confidence: float | None = None) -> str:
    """The schedules by rank, the fairest first; with their intervals when estimated (a
    sampled audit: ``confidence`` given)."""
    if not rows:
        return '<p class="note" id="counterfactuals-missing">No counterfactual policies run.</p>'
    estimated = confidence is not None
    level = f"{float(confidence) * 100:g}% " if confidence is not None else ""
    head = (
        '<tr><th>Rank</th><th class="name">Policy</th>'
        "<th>Unfairness (s per unit of work)</th>"
        + (f"<th>{_esc(level)}interval</th>" if estimated else "")
        + "<th>Utilization</th></tr>"
    )
    body = []
    order = rows  # the fairest first where ranked (a report of an older version is not)
    if any(r.get("rank") is not None for r in rows):
        order = sorted(
            rows,
            key=lambda r: (r.get("rank") is None, r.get("rank") or 0, r.get("unfairness") or 0),
        )
    for r in order:
        tr = '<tr class="recorded">' if r.get("policy") == "recorded" else "<tr>"
        tied = r.get("tied_with") or []
        title = f' title="tied with {_esc(", ".join(tied))}"' if tied else ""
        body.append(
            f"{tr}<td{title}>{_esc(rank_text(r))}</td>"
            f'<td class="name">{_esc(r.get("policy"))}</td>'
            f"<td>{_num(r.get('unfairness'), DIGITS['unfairness'])}</td>"
            + (f"<td>{_esc(interval_text(r))}</td>" if estimated else "")
            + f"<td>{_share(r.get('utilization'))}</td></tr>"
        )
    notes = [_esc(RANK_RULE) + "."]
    if any(r.get("unfairness") is None for r in rows):
        notes.append(
            '"—": not computed (a policy skipped, its note in the JSON report says why, or a '
            "report of a version that did not estimate it)."
        )
    return (
        f'<div class="scroll"><table id="counterfactuals">{head}{"".join(body)}</table></div>'
        f"<p>{' '.join(notes)}</p>"
    )


def _counterfactual_figure(rows: list[dict]) -> str | None:
    """Each schedule's unfairness with its interval as an error bar, the fairest on top."""
    valued = [r for r in rows if r.get("unfairness") is not None]
    if not valued:
        return None
    valued.sort(key=lambda r: (r.get("rank") or 0, float(r["unfairness"])))
    y = np.arange(len(valued))[::-1]
    value = np.array([float(r["unfairness"]) for r in valued])
    lo = np.array([float(r.get("unfairness_low", r["unfairness"])) for r in valued])
    hi = np.array([float(r.get("unfairness_high", r["unfairness"])) for r in valued])
    fig = _new_figure(9.0, 0.9 + 0.32 * len(valued))
    ax = fig.add_subplot()
    colors = ["#3b6fb6" if r.get("policy") != "recorded" else "#444" for r in valued]
    ax.errorbar(
        value,
        y,
        xerr=[value - lo, hi - value],
        fmt="none",
        ecolor="#3b6fb6",
        elinewidth=2,
        capsize=3,
    )
    ax.scatter(value, y, color=colors, zorder=3, s=14)
    ax.set_yticks(y, [_mpl_text(f"{rank_text(r)}  {r['policy']}") for r in valued])
    ax.set_xlabel("unfairness, seconds per unit of work (0: as fair as the fair shares)")
    ax.set_xlim(left=0)
    ax.grid(axis="x", alpha=0.3)
    return _svg(fig, "c")


def _excluded(report: dict) -> str:
    excluded = report.get("excluded") or {}
    if not excluded:
        return "<p>No job was excluded.</p>"
    items = "".join(f"<li>{_esc(k)}: {count(v)}</li>" for k, v in sorted(excluded.items()))
    return f'<ul id="excluded">{items}</ul>'


def _efficiency(report: dict) -> str:
    eff = report.get("efficiency")
    if not eff:
        return ""
    side = "below" if eff["loss"] >= 0 else "above"
    ref, remark = (_esc(x) for x in reference_name(eff))
    return (
        f'<div class="note" id="efficiency"><b>The platform against {ref}.</b> The recorded '
        f"schedule's total utility is {1 - eff['loss_fraction']:.1%} of what {ref}{remark} "
        "would have "
        f"given ({_num(abs(eff['loss']))} {side} it). Definition 3.2 spreads that difference "
        f"equally, {number(eff['loss_share'], DIGITS['utility'], signed=True)} to every "
        "organization's surplus; the column "
        '"platform\'s loss taken out" of the table shows, without it, what each received '
        f"against its fair share under {ref}'s total (vs_ref).</div>"
    )


def _model_check(report: dict) -> str:
    """The model check (:mod:`.model_check`): one line, and its warning when it has one."""
    mc = report.get("model_check")
    if not mc:
        return ""
    from .model_check import model_check_text

    warning = (
        f'<p class="warning" id="model-warning"><b>Warning:</b> {_esc(mc["warning"])}.</p>'
        if mc.get("warning")
        else ""
    )
    return f'<div class="note" id="model-check"><p>{_esc(model_check_text(mc))}.</p>{warning}</div>'


def _notes(report: dict) -> str:
    notes = report.get("notes") or []
    if not notes:
        return ""
    items = "".join(f"<li>{_esc(n)}</li>" for n in notes)
    return f'<div class="note" id="notes"><b>Notes on the input.</b><ul>{items}</ul></div>'


def page_head(title: str) -> str:
    """The page's start, up to its ``<h1>`` (``title``, escaped): the document, its style."""
    return "\n".join(
        [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            '<meta name="viewport" content="width=device-width, initial-scale=1">',
            f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
            f"<h1>{_esc(title)}</h1>",
        ]
    )


def render_html(report: AuditReport | dict) -> str:
    """The audit report (or its dict) as one self-contained HTML page (``coopsched audit
    --html``).

    Headline and figures in core-hours; the organizations by surplus, most short-changed
    first, with a mark where the sign is decided; ``phi`` (Shapley value; Skowron & Rzadca
    Sec. 3) against what each organization received (``psi``, Eq. 3); ``psi - phi`` over
    time; utilization per organization over time. Tables: the window, the organizations,
    the counterfactual policies (unfairness as in Sec. 7.2) and the excluded jobs. Sampled
    estimates carry a note and their intervals.
    """
    import matplotlib

    report = as_dict(report)
    orgs = list(report.get("organizations") or [])
    if not orgs:
        raise ValueError("audit report has no organizations")
    with matplotlib.rc_context(_RC):
        return _render(report, _by_surplus(orgs))


def _render(report: dict, orgs: list[dict]) -> str:
    names = [str(o["name"]) for o in orgs]
    sampled = report.get("method") == "sampled"
    horizon = _horizon(report)
    window = report.get("window") or {}
    title = f"Fairness audit of {window.get('log') or 'a recorded schedule'}"
    k = len(orgs)
    parts = [
        page_head(title),
        "<p>How Shapley-fair was the platform? Each organization is compared with its fair "
        "share: what its contribution (machines and jobs) entitles it to. <b>Core-hours "
        "ahead (+)</b>: on average over the window, it had done that much more work than "
        "under its fair share (favoured); <b>behind (−)</b>: less (short-changed). The "
        "<b>equivalent extra wait per job</b> is the same surplus as a delay: had every one "
        "of its jobs started that much earlier (later, if negative), it would have received "
        "exactly its fair share; its jobs waited, in effect, that much longer each.</p>",
        _headline(orgs, sampled, horizon),
        f'<p id="headline-counts">{_esc(headline_text(report))}.</p>',
        _notes(report),
        _model_check(report),
        _efficiency(report),
    ]
    if sampled:
        conf = report.get("confidence")
        level = f"{float(conf) * 100:g}% " if conf is not None else ""
        how = report.get("sampling") or {}
        detail = (
            f" ({count(how['samples'])} sampled orders, seed {_esc(how.get('seed'))}; "
            f"{_esc(budget_text(how.get('budget')))})"
            if "samples" in how
            else ""
        )
        parts.append(
            f'<p class="note" id="sampled-note"><b>Estimated values.</b> phi was estimated by '
            f"sampling{detail}, not computed exactly; the {level}confidence intervals "
            "are shown in the tables and as error bars. A sign is decided (✓) when the "
            "surplus is farther from 0 than the interval's half-width; differences smaller "
            "than the intervals are not significant."
            + (f" Estimator: {_esc(how['estimator'])}" if how.get("estimator") else "")
            + "</p>"
        )
    shown = (
        f"all {k}"
        if k <= BAR_MAX
        else f"the {BAR_EACH} most short-changed and the {BAR_EACH} most favoured of {k}"
    )
    named = (
        "every organization is named"
        if k <= LEGEND_MAX
        else f"the {LEGEND_EACH} most short-changed and the {LEGEND_EACH} most favoured are "
        f"named, the {k - 2 * LEGEND_EACH} others are grey"
    )
    parts += [
        "<h2>Window</h2>",
        _window_table(report),
        "<h2>Who was short-changed</h2>",
        _figure(
            "fig-verdict",
            _verdict_figure(orgs, sampled, horizon),
            f"Surplus of {shown} organizations in core-hours, the most short-changed on top"
            + (
                "; error bars: the interval; hatched: the interval includes 0 (sign undecided)."
                if sampled
                else " (exact audit: every sign is decided)."
            ),
        ),
        "<p>Sorted by surplus psi − phi, the most short-changed first (the core-hours and "
        "the column without the platform's loss give the same order; the wait per job, "
        "which also divides by each organization's work, need not). ✓: the sign is decided"
        + (" (the interval excludes 0)" if sampled else " (exact audit)")
        + ".</p>",
        _org_table(orgs, sampled, horizon),
        _utility_table(orgs, sampled),
        _owen_section(report, horizon),
        "<h2>Contribution versus received</h2>",
        _figure(
            "fig-contribution",
            _contribution_figure(orgs, sampled),
            f"Shapley value phi (what each organization's contribution entitles it to) "
            f"against the utility psi it received, at the end of the window ({shown} "
            "organizations, most short-changed on top).",
        ),
        "<h2>Surplus over time</h2>",
        _figure(
            "fig-surplus",
            _curve_figure(
                report,
                "surplus",
                "core-hours ahead (+) / behind (-)",
                "s",
                True,
                names,
                _per_core_hour,
            ),
            "Core-hours of work ahead of (above zero) or behind (below) the fair share, "
            f"averaged from the start of the window up to each time; {named}.",
        ),
        "<h2>Utilization per organization over time</h2>",
        _figure(
            "fig-utilization",
            _curve_figure(report, "utilization", "utilization", "u", False, names),
            "Share of the platform's capacity used by each organization's jobs from the "
            f"start of the window up to t (work done / (machines x t)); {named}.",
        ),
        "<h2>Counterfactual policies</h2>",
        "<p>The same jobs and machines replayed under other policies: unfairness is the "
        "average unjustified delay per unit of work (seconds) against "
        + (
            "the fair utilities of the sampled game (each organization's phi plus its "
            "share of the platform's loss against the sampled game's stand-in for REF), "
            "estimated from the same sampled orders as phi, with an interval"
            if sampled
            else "the exact fair schedule (REF)"
        )
        + ". Which policy would have been fairest: the schedules are ranked where their "
        "intervals separate, tied where they overlap.</p>",
        _counterfactual_table(list(report.get("counterfactuals") or []), report.get("confidence")),
        _figure(
            "fig-counterfactuals",
            _counterfactual_figure(list(report.get("counterfactuals") or [])),
            "Each schedule's estimated unfairness (dot) and its interval (bar), the fairest "
            "on top; the label is its rank (=: tied with another).",
        )
        if sampled
        else "",
        "<h2>Excluded jobs</h2>",
        _excluded(report),
        f"<script>{_SCRIPT}</script>" if k > SEARCH_ABOVE else "",
        "</body></html>",
    ]
    return "\n".join(parts)
