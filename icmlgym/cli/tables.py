"""Plain tables for the catalog commands, in four formats and without extra dependencies.

``table`` fits the terminal: columns are dropped from the right end of their priority list until
the rows fit, never cut, so that ids can be copied whole (``--columns`` picks them instead).
``markdown``, ``json`` and ``csv`` write every column.
"""

from __future__ import annotations

import csv
import io
import json
from typing import Any, Sequence

FORMATS = ("table", "markdown", "json", "csv")


def _cell(v: Any) -> str:
    if v is True:
        return "yes"
    if v is False:
        return "no"
    return "" if v is None else str(v)


def fit_columns(rows: Sequence[dict[str, Any]], columns: Sequence[str], keep: int, width: int) -> list[str]:
    """The first ``keep`` columns always, then as many of the rest (in order) as fit ``width``."""
    cols = list(columns)
    while len(cols) > keep:
        w = sum(max([len(c)] + [len(_cell(r.get(c))) for r in rows]) for c in cols) + 2 * (len(cols) - 1)
        if w <= width:
            break
        cols.pop()
    return cols


def render(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str, width: int = 100, keep: int = 1, title: str = "") -> str:
    """``rows`` (dicts) as text in ``fmt``; ``table`` keeps the first ``keep`` columns and fits ``width``."""
    if fmt == "json":
        return json.dumps([{c: r.get(c) for c in columns} for r in rows], indent=1, default=str) + "\n"
    if fmt == "csv":
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=list(columns), extrasaction="ignore", lineterminator="\n")
        w.writeheader()
        for r in rows:
            w.writerow({c: _cell(r.get(c)) for c in columns})
        return buf.getvalue()
    if fmt == "markdown":
        def md(v: Any) -> str:
            return _cell(v).replace("|", "\\|").replace("\n", " ")

        lines = ["| " + " | ".join(columns) + " |", "|" + "|".join("---" for _ in columns) + "|"]
        lines += ["| " + " | ".join(md(r.get(c)) for c in columns) + " |" for r in rows]
        return "\n".join(lines) + "\n"
    if fmt != "table":
        raise ValueError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS)}")
    cols = fit_columns(rows, columns, keep, width)
    widths = {c: max([len(c)] + [len(_cell(r.get(c))) for r in rows]) for c in cols}
    out = [title] if title else []
    out.append("  ".join(c.ljust(widths[c]) for c in cols).rstrip())
    out.append("  ".join("-" * widths[c] for c in cols))
    out += ["  ".join(_cell(r.get(c)).ljust(widths[c]) for c in cols).rstrip() for r in rows]
    if len(cols) < len(columns):
        import textwrap

        note = f"({len(columns) - len(cols)} more column(s) do not fit {width} characters: {', '.join(columns[len(cols):])}; --format markdown|json|csv shows every column)"
        out += textwrap.wrap(note, width=max(20, width))
    return "\n".join(out) + "\n"


__all__ = ["FORMATS", "fit_columns", "render"]
