"""Months side by side as one self-contained HTML page (``coopsched audit LOG --by-month
--html page.html``): a chart of each organization's surplus period by period, the table of
:func:`coopsched.audit.periods.render_table`, and who was short-changed persistently
(:data:`~coopsched.audit.periods.PERSISTENT_RULE`). Same style and figures as the audit's
page (:mod:`coopsched.audit.html`): inline SVG by matplotlib, no external file."""

from __future__ import annotations

import numpy as np

from .html import _RC, _colors, _esc, _legend, _new_figure, _svg, page_head
from .periods import PERSISTENT_RULE, cell

#: Organizations named in the chart's legend at most (the persistently short-changed
#: first, then the most short-changed over the periods); the others grey.
NAMED = 10


def _chart(report: dict) -> str | None:
    labels = [p["label"] for p in report["periods"]]
    rows = report["organizations"]
    if not rows or not labels:
        return None
    short = report["persistent"]["short_changed"]
    order = short + [r["name"] for r in rows if r["name"] not in short]
    named = set(order[:NAMED])
    x = np.arange(len(labels))
    fig = _new_figure(10.5, 4.0)
    ax = fig.add_subplot()
    handles, names = [], []
    grey = None
    for r in rows:
        if r["name"] in named:
            continue
        y = np.array([np.nan if v is None else float(v) for v in r["surplus_core_hours"]])
        (grey,) = ax.plot(x, y, color="#b5b5b5", lw=0.7, marker=".", alpha=0.8)
    colors = iter(_colors(len(named)))
    for name in order[:NAMED]:
        r = next(r for r in rows if r["name"] == name)
        y = np.array([np.nan if v is None else float(v) for v in r["surplus_core_hours"]])
        (line,) = ax.plot(x, y, color=next(colors), lw=1.6, marker="o", ms=3)
        handles.append(line)
        names.append(name + (" (persistent)" if name in short else ""))
    if grey is not None:
        handles.append(grey)
        names.append(f"{len(rows) - len(named)} others (grey)")
    ax.axhline(0, color="#555", lw=0.8)
    ax.set_xticks(
        x,
        labels,
        rotation=45 if len(labels) > 6 else 0,
        ha="right" if len(labels) > 6 else "center",
    )
    ax.set_ylabel("core-hours ahead (+) / behind (−)")
    ax.grid(alpha=0.3)
    _legend(ax, handles, names)
    return _svg(fig, "p")


def render_html(report: dict) -> str:
    """The page (module doc)."""
    import matplotlib

    by = report["by"]
    with matplotlib.rc_context(_RC):
        svg = _chart(report)
    labels = [p["label"] for p in report["periods"]]
    short = report["persistent"]["short_changed"]
    head = "".join(f"<th>{_esc(x)}</th>" for x in labels)
    body = []
    for r in report["organizations"]:
        cells = "".join(
            f'<td class="{"neg" if s == "-" else "pos" if s == "+" else ""}">{_esc(cell(x, s))}</td>'
            for x, s in zip(r["surplus_core_hours"], r["sign"], strict=True)
        )
        mark = "short-changed" if r["name"] in short else ""
        body.append(f'<tr><td class="name">{_esc(r["name"])}</td>{cells}<td>{mark}</td></tr>')
    notes = "".join(
        f"<li>{_esc(p['label'])}: {_esc(p['note'])}</li>" for p in report["periods"] if "note" in p
    )
    title = f"Fairness audit by {by}: {report['log']}"
    parts = [
        page_head(title),
        f"<p>Each {by} audited on its own, with its own backlog (jobs waiting at its start "
        "released then, jobs running then pinned). Surplus: core-hours of work ahead (+) or "
        f"behind (−) the fair share, on average over the {by}; “?”: the sign was not decided "
        f"(sampled audit); “·”: not audited that {by}.</p>",
        f'<p id="persistent" class="note"><b>Short-changed persistently:</b> '
        f"{_esc(', '.join(short) or 'none')}. Rule: {_esc(PERSISTENT_RULE)}.</p>",
        f'<figure class="chart" id="fig-periods">{svg or ""}<figcaption>Surplus by {by}, '
        "core-hours.</figcaption></figure>"
        if svg
        else "",
        '<div class="scroll"><table id="periods"><thead><tr><th class="name">organization</th>'
        f"{head}<th>persistent</th></tr></thead><tbody>{''.join(body)}</tbody></table></div>",
        f"<ul>{notes}</ul>" if notes else "",
        "</body></html>",
    ]
    return "\n".join(p for p in parts if p)
