"""Compact per-family tables: what the main job prints at its end and ``icmlgym leaderboard`` shows
with no arguments.

One table per family; inside it, one block per task (its id and primary metric on a line of its
own, so that ids are never cut to fit a column), then one row per entry: rank interval, mean,
95% interval, normalised score, seeds and failures, the paper's method marked ``*``. Numbers of a
task share one format (all fixed-point or all scientific, with the same decimals), so
``0.0001942`` never sits beside ``7.6e-05``. Tables fit the width they are printed at: optional
columns go first (failures, seeds, normalised score), and if an entry name alone is too long the
rows are written as ``name: value`` lines instead of being cut. ``columns`` picks the columns.
"""

from __future__ import annotations

import math
import sys
from typing import IO, Any, Iterable, Sequence

import numpy as np
import pandas as pd

from icmlgym.catalog import UnknownEnvError, card
from icmlgym.terminal import terminal_width

# the compact columns, in display order
COLUMNS = ("entry", "ref", "rank", "mean", "95% CI", "normalised", "seeds", "failed")
REQUIRED = ("entry", "mean", "95% CI")
# dropped in this order when a table is wider than the terminal
DROP_ORDER = ("failed", "seeds", "normalised", "rank", "ref")
MARK = "*"


def number_format(values: Iterable[float]) -> "callable":
    """One formatter for a set of numbers: fixed-point with enough decimals for 4 significant
    digits of the largest, or scientific (3 decimals) when they are all tiny or huge."""
    def clean(text: str) -> str:  # no "-0.000" beside "0.000"
        return text[1:] if text.startswith("-") and float(text) == 0 else text

    finite = [abs(float(v)) for v in values if v is not None and not (isinstance(v, float) and math.isnan(v)) and math.isfinite(float(v))]
    big = max(finite, default=0.0)
    nonzero = [v for v in finite if v > 0]
    if big and (big >= 1e6 or big < 1e-3):
        return lambda x: "–" if _missing(x) else clean(f"{float(x):.3e}")
    if not nonzero:
        return lambda x: "–" if _missing(x) else f"{float(x):.1f}" if float(x) != int(float(x)) else f"{float(x):.0f}"
    decimals = max(0, min(6, 3 - int(math.floor(math.log10(big)))))
    return lambda x: "–" if _missing(x) else clean(f"{float(x):.{decimals}f}")


def _missing(x: Any) -> bool:
    return x is None or (isinstance(x, float) and math.isnan(x)) or (isinstance(x, (np.floating,)) and np.isnan(x))


def _family(env_id: str) -> str:
    try:
        return card(env_id).family
    except UnknownEnvError:
        return "other"


def _reference(env_id: str) -> str:
    try:
        return card(env_id).reference_agent or ""
    except UnknownEnvError:
        return ""


def _rank(best: Any, worst: Any) -> str:
    if _missing(best):
        return "–"
    b, w = int(best), int(worst)
    return str(b) if b == w else f"{b}–{w}"


def compact_rows(task_table: pd.DataFrame) -> dict[str, list[tuple[str, str, list[dict[str, str]]]]]:
    """``{family: [(task, header, rows)]}`` from a task-level leaderboard table; each row maps the
    compact column names to display strings."""
    out: dict[str, list[tuple[str, str, list[dict[str, str]]]]] = {}
    if task_table.empty:
        return out
    several_tiers = task_table["tier"].nunique() > 1
    for (task, tier), t in task_table.groupby(["task", "tier"], sort=True):
        env_id = str(t["env_id"].iloc[0])
        fmt = number_format(list(t["mean"]) + list(t["ci_low"]) + list(t["ci_high"]))
        arrow = "↓ lower is better" if t["direction"].iloc[0] == "min" else "↑ higher is better"
        header = f"{task}" + (f" · {tier}" if several_tiers else "") + f" · {t['metric'].iloc[0]} {arrow}"
        ref = _reference(env_id)
        rows = []
        for r in t.itertuples(index=False):
            agent = str(getattr(r, "agent", "") or r.entry)
            seeds = f"{int(r.seeds)}" + (f"/{int(r.seeds_required)}" if bool(r.few_seeds) and not _missing(r.seeds_required) else "")
            rows.append({
                "entry": str(r.entry),
                "ref": MARK if ref and agent == ref else "",
                "rank": _rank(r.rank, r.rank_worst),
                "mean": fmt(r.mean),
                "95% CI": "–" if _missing(r.ci_low) or _missing(r.ci_high) else f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]",
                "normalised": "–" if _missing(r.norm) else f"{float(r.norm) + 0.0:.2f}".replace("-0.00", "0.00"),
                "seeds": seeds,
                "failed": str(int(r.failed) + int(r.timeout)) if int(r.failed) + int(r.timeout) else "",
            })
        out.setdefault(_family(env_id), []).append((str(task), header, rows))
    return out


def _widths(blocks: Sequence[tuple[str, str, list[dict[str, str]]]], cols: Sequence[str]) -> dict[str, int]:
    return {c: max([len(c if c != "ref" else "")] + [len(r[c]) for _, _, rows in blocks for r in rows]) for c in cols}


def format_family(family: str, blocks: Sequence[tuple[str, str, list[dict[str, str]]]], width: int, columns: Sequence[str] | None = None) -> str:
    """One family's compact table at ``width`` characters (see the module docstring)."""
    cols = [c for c in (columns or COLUMNS) if c in COLUMNS]
    if columns:
        unknown = [c for c in columns if c not in COLUMNS]
        if unknown:
            raise ValueError(f"unknown column(s) {unknown}; columns are {', '.join(COLUMNS)}")

    def line_width(cs: Sequence[str]) -> int:
        w = _widths(blocks, cs)
        return 2 + sum(w.values()) + 2 * (len(cs) - 1)

    if columns is None and all(not r["failed"] for _, _, rows in blocks for r in rows):
        cols.remove("failed")  # nothing failed in this family: no empty column
    if columns is None:
        for c in DROP_ORDER:
            if c not in cols:
                continue
            if line_width(cols) <= width:
                break
            cols.remove(c)
    lines = [f"{family}", "=" * min(width, len(family))]
    if line_width(cols) > width:
        # an entry name too long for any table at this width: one "name: value" line each, never cut
        for _, header, rows in blocks:
            lines.append(header)
            for r in rows:
                lines.append(f"  {r['entry']}{' ' + MARK if r.get('ref') else ''}")
                lines.append("    " + ", ".join(f"{c} {r[c]}" for c in cols if c not in ("entry", "ref") and r[c]))
        return "\n".join(lines)
    w = _widths(blocks, cols)
    right = {"rank", "mean", "normalised", "seeds", "failed"}

    def fmt_row(cells: dict[str, str]) -> str:
        parts = [cells[c].rjust(w[c]) if c in right else cells[c].ljust(w[c]) for c in cols]
        return ("  " + "  ".join(parts)).rstrip()

    head = fmt_row({c: ("" if c == "ref" else c) for c in cols})
    for _, header, rows in blocks:
        lines.append(header)
        lines.append(head)
        lines += [fmt_row(r) for r in rows]
    return "\n".join(lines)


def family_tables_text(task_table: pd.DataFrame, width: int | None = None, columns: Sequence[str] | None = None) -> str:
    """Every family's compact table, separated by blank lines, with a legend."""
    width = width or terminal_width()
    fams = compact_rows(task_table)
    parts = [format_family(f, fams[f], width, columns) for f in sorted(fams)]
    legend = f"{MARK} the paper's method (the env's reference agent); rank: rank interval within the task; normalised: 0 = random, 1 = reference"
    return "\n\n".join(parts) + ("\n\n" + _wrap(legend, width) if parts else "") + "\n"


def _wrap(text: str, width: int) -> str:
    import textwrap

    return "\n".join(textwrap.wrap(text, width=max(20, width)))


def format_aggregate(agg: pd.DataFrame, title: str, width: int) -> str:
    """A suite aggregate as a compact table: the entries that ran every task, ranked, with the IQM
    and mean of normalised scores and their intervals; the others are named in a line below."""
    done = agg[agg["tasks_missing"] == 0]
    rest = agg[agg["tasks_missing"] > 0]
    lines = [title, "=" * min(width, len(title))]
    if done.empty:
        lines.append("no entry ran every task of the suite: nothing to aggregate")
    else:
        f = number_format(list(done["iqm"]) + list(done["mean"]))
        rows = [{
            "entry": str(r.entry), "rank": _rank(r.rank, r.rank_worst), "IQM": f(r.iqm),
            "IQM 95% CI": "–" if _missing(r.iqm_low) else f"[{f(r.iqm_low)}, {f(r.iqm_high)}]",
            "mean": f(r.mean), "tasks": str(int(r.tasks)), "failed": str(int(r.failed) + int(r.timeout)) if int(r.failed) + int(r.timeout) else "",
        } for r in done.itertuples(index=False)]
        cols = list(rows[0])
        w = {c: max(len(c), *(len(r[c]) for r in rows)) for c in cols}
        lines.append(("  " + "  ".join(c.ljust(w[c]) if c == "entry" else c.rjust(w[c]) for c in cols)).rstrip())
        lines += [("  " + "  ".join(r[c].ljust(w[c]) if c == "entry" else r[c].rjust(w[c]) for c in cols)).rstrip() for r in rows]
    if len(rest):
        lines.append(_wrap("not aggregated (missed some tasks): " + ", ".join(rest["entry"].astype(str)), width))
    return "\n".join(lines) + "\n"


def print_family_tables(
    board: Any,
    tasks: Sequence[tuple[str, dict]] | None = None,
    tier: str | None = None,
    env: Any = None,
    agent: Any = None,
    columns: Sequence[str] | None = None,
    width: int | None = None,
    file: IO[str] | None = None,
    n_boot: int = 2000,
    seed: int = 0,
) -> str:
    """Print (and return) the compact family tables of the board's runs, optionally only these
    ``tasks`` (``(env_id, env_kwargs)`` pairs), tier, envs or agents."""
    suite = None
    if tasks is not None:
        seen: dict[str, tuple[str, dict]] = {}
        for e, k in tasks:
            seen.setdefault(f"{e}{sorted(k.items())}", (e, dict(k)))
        suite = list(seen.values())
    df = board.table(env=env, suite=suite, tier=tier, agent=agent, level="task", n_boot=n_boot, seed=seed)
    text = family_tables_text(df, width, columns) if not df.empty else "no runs match the selection\n"
    out = file if file is not None else sys.stdout
    out.write(text)
    out.flush()
    return text


__all__ = ["COLUMNS", "compact_rows", "format_aggregate", "family_tables_text", "format_family", "number_format", "print_family_tables", "terminal_width"]
