"""One number format per quantity of the audit report, the same in the table and the HTML
page (the JSON report and the CSV carry the numbers themselves, at full precision).

:func:`number` writes a value with a given number of significant digits, never fewer than
its whole part: thousands separators, no exponent from :data:`SMALL` up to :data:`LARGE`,
scientific notation beyond (a utility of ``1.029e+13`` processor-seconds x seconds, a
share of ``2.1e-05``). Each quantity has its digits (:data:`DIGITS`): utilities (``psi``,
``phi``, surpluses) four, core-hours and seconds per unit of work three, half-widths two.
:func:`wait_hours` is the equivalent extra wait per job where it means something
(:data:`WAIT_RULE`).
"""

from __future__ import annotations

import math
from typing import Any

__all__ = ["number", "DIGITS", "LARGE", "SMALL", "WAIT_RULE", "wait_hours"]

#: Values from this magnitude on are written in scientific notation (more than six digits
#: before the point would not be read at a glance, and would claim more precision than the
#: digits shown).
LARGE = 1e6
#: Values (other than 0) below this magnitude are written in scientific notation.
SMALL = 1e-4

#: Significant digits per quantity.
DIGITS = {
    "utility": 4,  # psi, phi, surplus, vs_ref, Owen values: processor-seconds x seconds
    "core_hours": 3,  # surplus / window / 3600
    "per_unit": 3,  # surplus per unit of work, seconds
    "unfairness": 4,  # dpsi / p_tot, seconds
    "halfwidth": 2,  # an interval's half-width, in its quantity's unit
}


def number(value: Any, digits: int = 4, signed: bool = False) -> str:
    """``value`` with ``digits`` significant digits (its whole part always whole), thousands
    separators, trailing zeros of the fraction dropped; scientific notation below
    :data:`SMALL` and from :data:`LARGE` on; ``signed``: ``+`` before a positive value.
    ``"—"`` for a missing value (``None``, NaN)."""
    if value is None:
        return "—"
    x = float(value)
    if math.isnan(x):
        return "—"
    if math.isinf(x):
        return ("+" if signed and x > 0 else "") + ("∞" if x > 0 else "-∞")
    sign = "+" if signed and x > 0 else ""
    if x == 0:
        return "0"
    size = abs(x)
    if size >= LARGE or size < SMALL:
        return sign + f"{x:.{max(0, digits - 1)}e}"
    decimals = max(0, digits - 1 - math.floor(math.log10(size)))
    text = f"{x:,.{decimals}f}"
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", "0"):  # rounded away: say so with its exponent
        return sign + f"{x:.{max(0, digits - 1)}e}"
    return sign + text


#: When the equivalent extra wait per job is shown (docs/audit.md, the table's and the HTML
#: page's footnote).
WAIT_RULE = (
    "shown where the organization did enough work for its surplus to read as a wait: at "
    "least |surplus| / T, i.e. the wait is at most the window's length T (it assumes "
    "every job started that much earlier or later, still inside the window)"
)


def wait_hours(org: dict, horizon: float | None = None) -> float | None:
    """Equivalent extra wait per job, hours: ``-surplus / work / 3600``.

    ``psi`` adds, over every second of the window, the work (processor-seconds) done by then,
    so starting every job of the organization ``d`` seconds earlier raises its ``psi`` by
    ``d`` times the work those jobs did in the window (as long as they still end inside it).
    With ``d = -surplus / work`` that makes ``psi`` equal to ``phi``: its jobs waited, in
    effect, ``d`` longer each than under its fair share (``d`` negative: less). ``None``
    without work, and, given the window's length ``horizon`` (seconds), when ``|d|``
    exceeds it (:data:`WAIT_RULE`: a few seconds of work against a large surplus would read
    as a wait of years)."""
    work = org.get("work")
    if not work:
        return None
    d = -float(org.get("surplus") or 0.0) / float(work)
    if horizon and abs(d) > float(horizon):
        return None
    return d / 3600
