"""The findings table: claim, effect with its 95% interval, p-value, verdict."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from icmlgym.findings.evaluate import Result


def frame(results: Sequence[Result]) -> pd.DataFrame:
    return pd.DataFrame([r.row() for r in results])


def _num(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    return f"{x:.3g}" if abs(x) < 1000 else f"{x:.0f}"


def markdown(results: Sequence[Result]) -> str:
    """A Markdown table (the family docs embed the same rows)."""
    lines = [
        "| finding | claim | metric | units | treatment | control | effect [95% CI] | p | verdict |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        row = r.row()
        mark = "" if r.matches_declaration else f" (declared: {row['declared']})"
        lines.append(
            f"| {row['finding']} | {row['claim']} | {row['metric']} | {row['unit']} | {_num(row['treatment'])} | "
            f"{_num(row['control'])} | {_num(row['effect'])} [{_num(row['ci_low'])}, {_num(row['ci_high'])}] | "
            f"{_num(row['p_value'])} | {row['verdict']}{mark} |"
        )
    return "\n".join(lines)
