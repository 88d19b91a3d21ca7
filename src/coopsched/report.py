"""Tables the command line prints, built by the package (the CLI only renders them).

A :class:`Report` is a title, columns, rows of raw values (numbers stay numbers), notes,
and optionally the JSON document a command emits with ``--format json``. The CLI shows it
as a rich table (``table``), CSV (``csv``) or JSON (``json``); CSV and JSON never round or
truncate a number.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

FORMATS = ("table", "json", "csv")


@dataclass(frozen=True)
class Column:
    """A column: the row key, its header, and how the table shows a value."""

    key: str
    header: str | None = None
    fmt: Callable[[Any], str] | None = None
    left: bool = False

    def show(self, value: Any) -> str:
        """The value as the rich table prints it (``-`` for a missing value)."""
        if value is None:
            return "-"
        if self.fmt is not None:
            return self.fmt(value)
        if isinstance(value, bool):
            return str(value)
        if isinstance(value, int):
            return f"{value:,}"
        if isinstance(value, float):
            return f"{value:,.4g}"
        return str(value)


@dataclass
class Report:
    """A printable result: ``rows`` are dicts keyed by the columns' keys."""

    title: str
    columns: list[Column]
    rows: list[dict]
    notes: list[str] = field(default_factory=list)
    #: the --format json output (default: title, rows, notes); a function without
    #: arguments is called only then (a schedule's document lists every job)
    document: Any = None

    def to_csv(self) -> str:
        """The rows as CSV (headers are the column keys; raw values)."""
        out = io.StringIO()
        w = csv.writer(out, lineterminator="\n")
        w.writerow([c.key for c in self.columns])
        for r in self.rows:
            w.writerow(["" if r.get(c.key) is None else r.get(c.key) for c in self.columns])
        return out.getvalue()

    def to_json(self) -> str:
        """``document`` (or title, rows and notes) as one line of JSON."""
        doc = self.document() if callable(self.document) else self.document
        if doc is None:
            doc = {"title": self.title, "rows": self.rows, "notes": self.notes}
        return json.dumps(doc, default=_jsonable)

    def to_frame(self):
        """The rows as a pandas DataFrame."""
        import pandas as pd

        return pd.DataFrame.from_records(self.rows, columns=[c.key for c in self.columns])


def _jsonable(x: Any) -> Any:
    if hasattr(x, "item"):  # numpy scalars
        return x.item()
    if hasattr(x, "tolist"):
        return x.tolist()
    return str(x)


def pct(x: float) -> str:
    """A fraction as a percentage with one decimal."""
    return f"{x:.1%}"


def num(digits: int) -> Callable[[float], str]:
    """A formatter with thousands separators and ``digits`` decimals."""
    return lambda x: f"{x:,.{digits}f}"
