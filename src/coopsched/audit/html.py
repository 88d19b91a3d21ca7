"""The audit report as one self-contained HTML page (issue #14, ``coopsched audit --html``).

:func:`render_html` turns the audit's report dict (see ``docs/audit.md``) into a page that
opens offline: no script, no external font, style sheet or image; every figure is an inline
SVG drawn by matplotlib. The page shows, per organization, what it received (``psi``, its
utility in the recorded schedule, Skowron & Rzadca Eq. 3) against its Shapley value
(``phi``, what its contribution entitles it to), the surplus ``psi - phi`` over time, each
organization's utilization over time, and the counterfactual policies' unfairness.
"""

from __future__ import annotations

import html
import io
import math
import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from matplotlib.figure import Figure

from .report import platform_model

if TYPE_CHECKING:
    from matplotlib.typing import RcKeyType

#: Figure ids of the page, in order (the browser test checks each one).
FIGURES: tuple[str, ...] = ("fig-contribution", "fig-surplus", "fig-utilization")

_CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,Helvetica,Arial,sans-serif;
margin:2rem auto;max-width:1100px;padding:0 1rem;color:#1b1b1b;line-height:1.45}
h1{font-size:1.6rem;margin-bottom:.2rem}h2{font-size:1.25rem;margin-top:2rem;
border-bottom:1px solid #ddd;padding-bottom:.2rem}
table{border-collapse:collapse;margin:.6rem 0;font-size:.92rem}
th,td{border:1px solid #ccc;padding:.25rem .55rem;text-align:right}
td{white-space:nowrap}
th{background:#f2f2f2}td.name,th.name{text-align:left}
tr.recorded td{font-weight:600;background:#f7f7ff}td.pos{color:#0b6e2f}td.neg{color:#a3161a}
.note{background:#fff6d6;border:1px solid #e6c44f;padding:.5rem .8rem;border-radius:4px}
.meta td{text-align:left}.meta th{text-align:left}
figure.chart{margin:1rem 0}figure.chart svg{width:100%;height:auto}
figcaption{font-size:.9rem;color:#444}
"""


def _esc(value: object) -> str:
    """HTML-escape any value (names come from logs and may hold markup)."""
    return html.escape(str(value), quote=True)


def _mpl_text(name: object) -> str:
    """A name as literal matplotlib text: ``$`` would start mathtext."""
    return str(name).replace("\\", "\\\\").replace("$", r"\$")


def _num(value: Any, digits: int = 4) -> str:
    """A number for a table cell: ``digits`` significant digits, '—' for missing values."""
    if value is None:
        return "—"
    try:
        x = float(value)
    except (TypeError, ValueError):
        return _esc(value)
    if math.isnan(x):
        return "—"
    if x == int(x) and abs(x) < 1e15:
        return f"{int(x):,}"
    return f"{x:,.{digits}g}"


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


def _legend(ax, handles: list, names: Sequence[str]) -> None:
    """A legend with explicit labels (names starting with '_' are kept), outside if many."""
    labels = [_mpl_text(n) for n in names]
    if len(names) <= 8:
        ax.legend(handles, labels, fontsize=8, loc="best")
    else:
        ax.legend(handles, labels, fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))


def _bound(org: dict, key: str) -> float:
    """An interval bound of ``phi``, or ``phi`` itself when the report has none."""
    value = org.get(key)
    return float(org["phi"] if value is None else value)


def _contribution_figure(orgs: list[dict], sampled: bool) -> str:
    """Horizontal bars: Shapley value phi (with its interval when sampled) against psi."""
    n = len(orgs)
    fig = _new_figure(9.0, max(2.4, 0.42 * n + 1.3))
    ax = fig.add_subplot()
    y = np.arange(n)
    phi = np.array([float(o["phi"]) for o in orgs])
    psi = np.array([float(o["psi"]) for o in orgs])
    h = 0.38
    bars_phi = ax.barh(y - h / 2, phi, height=h, color="#7a9cc6", label="phi")
    if sampled:
        low = np.array([_bound(o, "phi_low") for o in orgs])
        high = np.array([_bound(o, "phi_high") for o in orgs])
        err = np.vstack([np.maximum(phi - low, 0), np.maximum(high - phi, 0)])
        ax.errorbar(phi, y - h / 2, xerr=err, fmt="none", ecolor="#1b1b1b", capsize=3, lw=1)
    bars_psi = ax.barh(y + h / 2, psi, height=h, color="#e39b4c", label="psi")
    ax.set_yticks(y, [_mpl_text(o["name"]) for o in orgs], fontsize=8)
    ax.invert_yaxis()
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


def _curve_figure(
    report: dict, key: str, ylabel: str, prefix: str, zero_line: bool, names: list[str]
) -> str | None:
    """Lines over time, one per organization, from ``report['curves'][key]``."""
    curves = report.get("curves") or {}
    t = np.asarray(curves.get("t") or [], dtype=float)
    series = curves.get(key) or {}
    if t.size == 0 or not series:
        return None
    horizon = float((report.get("window") or {}).get("horizon") or t.max() or 1)
    unit, scale = (
        ("hours", 3600.0)
        if horizon >= 3 * 3600
        else ("minutes", 60.0)
        if horizon >= 180
        else ("seconds", 1.0)
    )
    x = t / scale
    n = len(names)
    fig = _new_figure(9.0 if n <= 8 else 10.5, 3.6)
    ax = fig.add_subplot()
    handles, labels = [], []
    for color, name in zip(_colors(n), names, strict=True):
        values = series.get(name)
        if values is None:
            continue
        (line,) = ax.plot(x, np.asarray(values, dtype=float), color=color, lw=1.4)
        handles.append(line)
        labels.append(name)
    if not handles:
        return None
    if zero_line:
        ax.axhline(0, color="#555", lw=0.8)
    ax.set_xlabel(f"{unit} since the start of the window")
    ax.set_ylabel(ylabel)
    ax.grid(alpha=0.3)
    _legend(ax, handles, labels)
    return _svg(fig, prefix)


def _figure(fig_id: str, svg: str | None, caption: str) -> str:
    if svg is None:
        return f'<p class="note" id="{fig_id}-missing">No data for this figure.</p>'
    return (
        f'<figure class="chart" id="{fig_id}">{svg}'
        f"<figcaption>{_esc(caption)}</figcaption></figure>"
    )


def _window_table(report: dict) -> str:
    w = report.get("window") or {}
    backlog = w.get("backlog") or {}
    rows = [
        ("Log", w.get("log")),
        ("Window", f"{w.get('from') or w.get('t0')} to {w.get('to') or w.get('t1')}"),
        ("Horizon", f"{_num(w.get('horizon'))} s"),
        ("Machines", _num(w.get("machines"))),
        ("Time zone", w.get("timezone") or "not stated"),
        ("Organizations by", w.get("org_by")),
        ("Contribution rule", w.get("contribution_rule")),
        ("Platform model", platform_model(report) or "not stated"),
        (
            "Backlog at the start",
            f"{_num(backlog.get('waiting', 0))} waiting, {_num(backlog.get('running', 0))} running",
        ),
        ("Method", report.get("method")),
    ]
    cells = "".join(f"<tr><th>{_esc(k)}</th><td>{_esc(v)}</td></tr>" for k, v in rows)
    return f'<table class="meta" id="window">{cells}</table>'


def _org_table(orgs: list[dict], sampled: bool) -> str:
    head = (
        '<tr><th class="name">Organization</th><th>Machines</th><th>Jobs</th><th>Work</th>'
        "<th>psi (received)</th><th>phi (fair)</th>"
        + ("<th>phi interval</th>" if sampled else "")
        + "<th>psi - phi</th><th>per unit of work</th><th>core-hours</th></tr>"
    )
    body = []
    for o in orgs:
        s = float(o.get("surplus", 0.0) or 0.0)
        cls = "pos" if s > 0 else "neg" if s < 0 else ""
        interval = (
            f"<td>[{_num(o.get('phi_low'))}, {_num(o.get('phi_high'))}]</td>" if sampled else ""
        )
        body.append(
            f'<tr><td class="name">{_esc(o["name"])}</td><td>{_num(o.get("machines"))}</td>'
            f"<td>{_num(o.get('jobs'))}</td><td>{_num(o.get('work'))}</td>"
            f"<td>{_num(o.get('psi'))}</td><td>{_num(o.get('phi'))}</td>{interval}"
            f'<td class="{cls}">{_num(o.get("surplus"))}</td>'
            f'<td class="{cls}">{_num(o.get("surplus_per_unit"))}</td>'
            f'<td class="{cls}">{_num(o.get("surplus_core_hours"))}</td></tr>'
        )
    return f'<table id="organizations">{head}{"".join(body)}</table>'


def _counterfactual_table(rows: list[dict]) -> str:
    if not rows:
        return '<p class="note" id="counterfactuals-missing">No counterfactual policies run.</p>'
    head = (
        '<tr><th class="name">Policy</th><th>Unfairness (s per unit of work)</th>'
        "<th>Utilization</th></tr>"
    )
    body = []
    for r in rows:
        tr = '<tr class="recorded">' if r.get("policy") == "recorded" else "<tr>"
        body.append(
            f'{tr}<td class="name">{_esc(r.get("policy"))}</td>'
            f"<td>{_num(r.get('unfairness'))}</td><td>{_num(r.get('utilization'))}</td></tr>"
        )
    note = (
        '<p>"—": not computed (unfairness is measured against REF, which is not run when '
        "phi is sampled).</p>"
        if any(r.get("unfairness") is None for r in rows)
        else ""
    )
    return f'<table id="counterfactuals">{head}{"".join(body)}</table>{note}'


def _excluded(report: dict) -> str:
    excluded = report.get("excluded") or {}
    if not excluded:
        return "<p>No job was excluded.</p>"
    items = "".join(f"<li>{_esc(k)}: {_num(v)}</li>" for k, v in sorted(excluded.items()))
    return f'<ul id="excluded">{items}</ul>'


def _efficiency(report: dict) -> str:
    eff = report.get("efficiency")
    if not eff:
        return ""
    side = "below" if eff["loss"] >= 0 else "above"
    rows = "".join(
        f"<li>{_esc(o['name'])}: {o['vs_ref']:+,.4g}</li>"
        for o in report.get("organizations") or []
        if o.get("vs_ref") is not None
    )
    return (
        '<div class="note" id="efficiency"><b>The platform against REF.</b> The recorded '
        f"schedule's total utility is {1 - eff['loss_fraction']:.1%} of what REF would have "
        f"given ({abs(eff['loss']):,} {side} it). Definition 3.2 spreads that difference "
        f"equally, {eff['loss_share']:+,.4g} to every organization's surplus; without it, what "
        f"each received against its fair share under REF's total:<ul>{rows}</ul></div>"
    )


def _notes(report: dict) -> str:
    notes = report.get("notes") or []
    if not notes:
        return ""
    items = "".join(f"<li>{_esc(n)}</li>" for n in notes)
    return f'<div class="note" id="notes"><b>Notes on the input.</b><ul>{items}</ul></div>'


def render_html(report: dict) -> str:
    """The audit report dict as one self-contained HTML page (``coopsched audit --html``).

    Figures: contribution (``phi``, Shapley value; Skowron & Rzadca Sec. 3) against what
    each organization received (``psi``, Eq. 3); ``psi - phi`` over time; utilization per
    organization over time. Tables: the window, the organizations, the counterfactual
    policies (unfairness as in Sec. 7.2) and the excluded jobs. Sampled estimates carry a
    note and their intervals.
    """
    import matplotlib

    orgs = list(report.get("organizations") or [])
    if not orgs:
        raise ValueError("audit report has no organizations")
    with matplotlib.rc_context(_RC):
        return _render(report, orgs)


def _render(report: dict, orgs: list[dict]) -> str:
    names = [str(o["name"]) for o in orgs]
    sampled = report.get("method") == "sampled"
    window = report.get("window") or {}
    title = f"Fairness audit of {window.get('log') or 'a recorded schedule'}"
    parts = [
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title)}</title><style>{_CSS}</style></head><body>",
        f"<h1>{_esc(title)}</h1>",
        "<p>How Shapley-fair was the platform? For each organization, <b>psi</b> is the "
        "utility its jobs received in the recorded schedule and <b>phi</b> its Shapley "
        "value: the share its contribution (machines and jobs) entitles it to. "
        "<b>psi - phi &gt; 0</b>: favoured; <b>&lt; 0</b>: short-changed.</p>",
        _notes(report),
        _efficiency(report),
    ]
    if sampled:
        conf = report.get("confidence")
        level = f"{float(conf) * 100:g}% " if conf is not None else ""
        how = report.get("sampling") or {}
        detail = (
            f" ({_num(how['samples'])} sampled orders, seed {_esc(how.get('seed'))})"
            if "samples" in how
            else ""
        )
        parts.append(
            f'<p class="note" id="sampled-note"><b>Estimated values.</b> phi was estimated by '
            f"sampling{detail}, not computed exactly; the {level}confidence intervals "
            "[phi low, phi high] are shown in the table and as error bars. Differences "
            "smaller than the intervals are not significant.</p>"
        )
    parts += [
        "<h2>Window</h2>",
        _window_table(report),
        "<h2>Contribution versus received</h2>",
        _figure(
            "fig-contribution",
            _contribution_figure(orgs, sampled),
            "Shapley value phi (what each organization's contribution entitles it to) "
            "against the utility psi it received, at the end of the window.",
        ),
        _org_table(orgs, sampled),
        "<h2>Surplus psi - phi over time</h2>",
        _figure(
            "fig-surplus",
            _curve_figure(report, "surplus", "psi - phi", "s", True, names),
            "Above zero: the organization received more than its fair share so far.",
        ),
        "<h2>Utilization per organization over time</h2>",
        _figure(
            "fig-utilization",
            _curve_figure(report, "utilization", "utilization", "u", False, names),
            "Share of the platform's capacity used by each organization's jobs from the "
            "start of the window up to t (work done / (machines x t)).",
        ),
        "<h2>Counterfactual policies</h2>",
        "<p>The same jobs and machines replayed under other policies: unfairness is the "
        "average unjustified delay per unit of work (seconds) against the exact fair "
        "schedule.</p>",
        _counterfactual_table(list(report.get("counterfactuals") or [])),
        "<h2>Excluded jobs</h2>",
        _excluded(report),
        "</body></html>",
    ]
    return "\n".join(parts)
