"""Views of leaderboard tables: terminal (rich), Markdown, CSV, and a self-contained HTML report.

The HTML report is one file: plots are matplotlib (Agg) PNGs embedded as
base64, the table sorts with a few lines of inline JavaScript, and nothing is
fetched from a network or served.
"""

from __future__ import annotations

import base64
import html
import io
import math
import os
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Sequence

import numpy as np
import pandas as pd

from icmlgym.catalog import MissingExtraError
from icmlgym.leaderboard.family import number_format
from icmlgym.terminal import terminal_width

FORMATS = ("table", "markdown", "csv", "html")
MAX_PLOTS = 60


def _num(x: Any, digits: int = 4) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else ""
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    if isinstance(x, (float, np.floating)):
        if float(x).is_integer() and abs(x) < 1e15:
            return str(int(x))
        return f"{float(x):.{digits}g}"
    return str(x)


def _rank(best: Any, worst: Any) -> str:
    if best is None or pd.isna(best):
        return "–"
    b, w = int(best), int(worst)
    return str(b) if b == w else f"{b}–{w}"


def _ci(lo: Any, hi: Any) -> str:
    if pd.isna(lo) or pd.isna(hi):
        return "–"
    return f"[{_num(lo, 3)}, {_num(hi, 3)}]"


def display_frame(df: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Human columns for a leaderboard table, and the raw value behind each (for sorting).

    Task-level and suite-level tables from :meth:`Leaderboard.table` and comparison tables from
    :meth:`Leaderboard.compare` get combined columns (rank interval, CI); other frames pass through.
    """
    if df.empty:
        return df.astype(str), df
    cols: dict[str, tuple[list[str], list[Any]]] = {}

    def put(name: str, shown: Sequence[str], raw: Sequence[Any]) -> None:
        cols[name] = (list(shown), list(raw))

    if {"task", "entry", "mean", "ci_low"} <= set(df.columns):  # task level
        arrow = np.where(df["direction"] == "min", " ↓", " ↑")
        for c in ("task", "tier", "entry"):
            put(c, df[c].astype(str), df[c])
        put("rank", [_rank(b, w) for b, w in zip(df["rank"], df["rank_worst"])], df["rank"])
        put("metric", df["metric"].astype(str) + arrow, df["metric"])
        # one number format per task for its means and intervals (never 0.0001942 beside 7.6e-05)
        fmts = {t: number_format(list(g["mean"]) + list(g["ci_low"]) + list(g["ci_high"])) for t, g in df.groupby("task")}
        put("mean", [fmts[t](v) for t, v in zip(df["task"], df["mean"])], df["mean"])
        put("s.e.", [_num(v, 2) for v in df["se"]], df["se"])
        put("95% CI", ["–" if pd.isna(a) or pd.isna(b) else f"[{fmts[t](a)}, {fmts[t](b)}]" for t, a, b in zip(df["task"], df["ci_low"], df["ci_high"])], df["ci_low"])
        put("normalised", [_num(v, 3) if pd.notna(v) else "–" for v in df["norm"]], df["norm"])
        req = df["seeds_required"]
        # "2/3 ⚠": fewer successful seeds than the tier asks; otherwise just the count
        put("seeds", [f"{int(s)}/{int(r)} ⚠" if f and pd.notna(r) else str(int(s)) for s, r, f in zip(df["seeds"], req, df["few_seeds"])], df["seeds"])
        put("failed", [str(int(v)) for v in df["failed"]], df["failed"])
        put("timeout", [str(int(v)) for v in df["timeout"]], df["timeout"])
        put("wall s", [_num(v, 3) for v in df["wall_time"]], df["wall_time"])
        for c in [c for c in df.columns if c.startswith("cost.")]:
            put(c[5:], [_num(v, 4) for v in df[c]], df[c])
        put("pareto", ["★" if p else "" for p in df["pareto"]], df["pareto"].astype(int))
    elif {"entry", "iqm", "iqm_low"} <= set(df.columns):  # suite level
        put("entry", df["entry"].astype(str), df["entry"])
        put("rank", [_rank(b, w) for b, w in zip(df["rank"], df["rank_worst"])], df["rank"])
        for m in ("iqm", "mean", "median"):
            label = m.upper() if m == "iqm" else m
            put(label, [_num(v, 3) for v in df[m]], df[m])
            put(f"{label} 95% CI", [_ci(a, b) for a, b in zip(df[f"{m}_low"], df[f"{m}_high"])], df[f"{m}_low"])
        put("tasks", [f"{t}" + (f" (-{m})" if m else "") for t, m in zip(df["tasks"], df["tasks_missing"])], df["tasks"])
        put("runs", df["runs"].astype(str), df["runs"])
        put("failed", df["failed"].astype(str), df["failed"])
        put("timeout", df["timeout"].astype(str), df["timeout"])
        put("few-seed tasks", df["few_seeds_tasks"].astype(str), df["few_seeds_tasks"])
        put("wall s", [_num(v, 3) for v in df["wall_time"]], df["wall_time"])
    elif {"task", "p_improve", "diff"} <= set(df.columns):  # comparison
        a, b = df.attrs.get("a", "A"), df.attrs.get("b", "B")
        put("task", df["task"].astype(str), df["task"])
        put("metric", df["metric"].astype(str) + np.where(df["direction"] == "min", " ↓", " ↑"), df["metric"])
        put(f"{a}", [_num(v) for v in df["mean_a"]], df["mean_a"])
        put(f"{b}", [_num(v) for v in df["mean_b"]], df["mean_b"])
        put(f"{a} − {b}", [_num(v) for v in df["diff"]], df["diff"])
        put("95% CI", [_ci(x, y) for x, y in zip(df["diff_low"], df["diff_high"])], df["diff_low"])
        put(f"P({a} better)", [_num(v, 3) for v in df["p_improve"]], df["p_improve"])
        put("P 95% CI", [_ci(x, y) for x, y in zip(df["p_low"], df["p_high"])], df["p_low"])
    else:
        return df.map(_num), df
    shown = pd.DataFrame({k: v[0] for k, v in cols.items()})
    raw = pd.DataFrame({k: list(v[1]) for k, v in cols.items()})
    return shown, raw


def _rich(df: pd.DataFrame, title: str = "") -> str:
    from rich.console import Console
    from rich.table import Table

    shown, _ = display_frame(df)
    width = terminal_width()
    buf = io.StringIO()
    natural = sum(max([len(str(c))] + [len(str(v)) for v in shown[c]]) + 3 for c in shown.columns) + 1
    if natural > width and len(shown.columns) > 2:
        # too wide to be a table here: one block per row, ids on their own line, never cut
        import textwrap

        if title:
            buf.write(f"{title}\n")
        ids = [c for c in ("task", "tier", "entry") if c in shown.columns] or [shown.columns[0]]
        for row in shown.to_dict("records"):
            buf.write(" · ".join(str(row[c]) for c in ids) + "\n")
            rest = ", ".join(f"{c} {row[c]}" for c in shown.columns if c not in ids and str(row[c]) not in ("", "–"))
            buf.write(textwrap.fill(rest, width=max(20, width), initial_indent="  ", subsequent_indent="  ") + "\n")
    else:
        table = Table(title=title or None)
        for c in shown.columns:
            table.add_column(str(c), no_wrap=c in ("task", "entry"), overflow="fold")
        for row in shown.itertuples(index=False):
            table.add_row(*[str(v) for v in row])
        Console(file=buf, width=width, force_terminal=False, color_system=None).print(table)
    for note in df.attrs.get("notes", []):
        buf.write(f"note: {note}\n")
    return buf.getvalue()


def _markdown(df: pd.DataFrame) -> str:
    shown, _ = display_frame(df)

    def cell(v: Any) -> str:
        return str(v).replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(c) for c in shown.columns) + " |", "|" + "|".join("---" for _ in shown.columns) + "|"]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in shown.itertuples(index=False)]
    for note in df.attrs.get("notes", []):
        lines.append(f"\nNote: {note}")
    return "\n".join(lines) + "\n"


def html_table(df: pd.DataFrame, table_id: str = "leaderboard") -> str:
    """A sortable HTML table (click a header; sorting uses each cell's raw value in ``data-v``)."""
    shown, raw = display_frame(df)
    head = "".join(f'<th scope="col" role="button" tabindex="0" data-col="{i}">{html.escape(str(c))}</th>' for i, c in enumerate(shown.columns))
    body = []
    for srow, rrow in zip(shown.itertuples(index=False), raw.itertuples(index=False)):
        cells = []
        for s, r in zip(srow, rrow):
            v = "" if r is None or (isinstance(r, float) and math.isnan(r)) else str(r.item() if hasattr(r, "item") else r)
            cells.append(f'<td data-v="{html.escape(v, quote=True)}">{html.escape(str(s))}</td>')
        body.append("<tr>" + "".join(cells) + "</tr>")
    return f'<table class="sortable" id="{html.escape(table_id)}"><thead><tr>{head}</tr></thead><tbody>{"".join(body)}</tbody></table>'


_CSS = """
body{font-family:system-ui,-apple-system,'Segoe UI',sans-serif;margin:2em;color:#222;max-width:1400px}
h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}
table.sortable{border-collapse:collapse;font-size:.85em;margin:.5em 0}
table.sortable th,table.sortable td{border:1px solid #ccc;padding:3px 7px;text-align:right;white-space:nowrap}
table.sortable td:first-child,table.sortable th:first-child{text-align:left}
table.sortable th{background:#f2f2f2;cursor:pointer;user-select:none}
table.sortable th[aria-sort=ascending]::after{content:" ▲"}table.sortable th[aria-sort=descending]::after{content:" ▼"}
table.sortable tbody tr:nth-child(even){background:#fafafa}
.note{color:#8a5a00}.plots img{max-width:100%;margin:.5em 0}.meta{color:#666;font-size:.85em}
"""

_JS = """
(function(){
  function key(td){var v=td.getAttribute('data-v');var n=parseFloat(v);
    return (v!==''&&isFinite(n)&&String(n)!=='NaN'&&/^[-+0-9.eE]+$/.test(v))?{n:true,v:n}:{n:false,v:v===''?null:v};}
  function cmp(a,b){if(a.v===null&&b.v===null)return 0;if(a.v===null)return 1;if(b.v===null)return -1;
    if(a.n&&b.n)return a.v-b.v;return String(a.v).localeCompare(String(b.v),undefined,{numeric:true});}
  function sortBy(table,col,dir){var tb=table.tBodies[0];var rows=Array.prototype.slice.call(tb.rows);
    rows.sort(function(r1,r2){var c=cmp(key(r1.cells[col]),key(r2.cells[col]));return dir==='ascending'?c:-c;});
    rows.forEach(function(r){tb.appendChild(r);});
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
      if(i===col)th.setAttribute('aria-sort',dir);else th.removeAttribute('aria-sort');});}
  document.querySelectorAll('table.sortable').forEach(function(table){
    Array.prototype.forEach.call(table.tHead.rows[0].cells,function(th,i){
      function go(){sortBy(table,i,th.getAttribute('aria-sort')==='ascending'?'descending':'ascending');}
      th.addEventListener('click',go);
      th.addEventListener('keydown',function(e){if(e.key==='Enter'||e.key===' '){e.preventDefault();go();}});});});
})();
"""


def _page(title: str, body: str) -> str:
    return (
        "<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<title>{html.escape(title)}</title><style>{_CSS}</style></head><body>"
        f"{body}<script>{_JS}</script></body></html>"
    )


def render(df: pd.DataFrame, fmt: str = "table", title: str = "") -> str:
    """Render a leaderboard DataFrame as ``table`` (rich, for a terminal), ``markdown``, ``csv``
    (the raw columns) or ``html`` (one self-contained page with a sortable table)."""
    if fmt == "table":
        return _rich(df, title)
    if fmt == "markdown":
        return _markdown(df)
    if fmt == "csv":
        return df.to_csv(index=False)
    if fmt == "html":
        notes = "".join(f'<p class="note">{html.escape(n)}</p>' for n in df.attrs.get("notes", []))
        return _page(title or "icmlgym leaderboard", f"<h1>{html.escape(title or 'icmlgym leaderboard')}</h1>{html_table(df)}{notes}")
    raise ValueError(f"unknown format {fmt!r}; choose one of {FORMATS}")


# -- the HTML report ------------------------------------------------------------------------------


def _plt():
    try:
        import matplotlib
    except ImportError:
        raise MissingExtraError("report", "the HTML report's plots", "matplotlib") from None
    matplotlib.use("Agg", force=True)
    import matplotlib.pyplot as plt

    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    _plt().close(fig)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _interval_plot(labels: list[str], mean: np.ndarray, lo: np.ndarray, hi: np.ndarray, xlabel: str, title: str, mark: Sequence[bool] | None = None) -> str:
    plt = _plt()
    n = len(labels)
    fig, ax = plt.subplots(figsize=(7, 0.45 * n + 1.2))
    y = np.arange(n)[::-1]
    ok = ~np.isnan(mean)
    # a deterministic entry's interval has zero width, and its bootstrap bounds can sit an ulp on
    # the wrong side of the mean: clip so that matplotlib gets no negative error bar
    err = np.vstack([np.where(np.isnan(lo), 0, mean - lo), np.where(np.isnan(hi), 0, hi - mean)])
    err = np.clip(np.nan_to_num(err, nan=0.0), 0.0, None)
    ax.errorbar(mean[ok], y[ok], xerr=err[:, ok], fmt="o", color="#1f5fa8", ecolor="#6b9bd1", capsize=3)
    if mark is not None:
        m = np.asarray(mark, dtype=bool) & ok
        ax.plot(mean[m], y[m], "*", color="#d08000", markersize=12, label="Pareto front")
    ax.set_yticks(y)
    ax.set_yticklabels(labels)
    ax.set_xlabel(xlabel)
    ax.set_title(title, fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return _png(fig)


def _cost_plot(sub: pd.DataFrame, cost_col: str, title: str) -> str | None:
    """Score versus cost with the Pareto front drawn, or None where it says nothing: fewer than
    two entries with both, or every entry at the same cost. Points carry numbers and the legend
    names them, so that labels never overlap however close the points are."""
    plt = _plt()
    d = sub[sub["mean"].notna() & sub[cost_col].notna()].reset_index(drop=True)
    if len(d) < 2 or np.ptp(d[cost_col].to_numpy(dtype=float)) <= 1e-12 * max(1.0, float(d[cost_col].abs().max())):
        return None
    fig, ax = plt.subplots(figsize=(7, 4))
    front = d[d["pareto"]].sort_values(cost_col)
    if len(front):
        ax.plot(front[cost_col], front["mean"], "-", color="#d08000", linewidth=2, zorder=1,
                label="Pareto front" if len(front) > 1 else "Pareto front (one entry)")
    for i, r in d.iterrows():
        on = bool(r["pareto"])
        ax.scatter([r[cost_col]], [r["mean"]], s=70 if on else 45, color="#d08000" if on else "#1f5fa8", zorder=2,
                   edgecolor="black", linewidth=0.5, label=f"{i + 1}: {r['entry']}")
        ax.annotate(str(i + 1), (r[cost_col], r["mean"]), fontsize=7, ha="center", va="center", color="white", zorder=3)
    pos = d[cost_col].to_numpy(dtype=float)
    if (pos > 0).all() and pos.max() / max(pos.min(), 1e-300) > 50:
        ax.set_xscale("log")
    ax.set_xlabel(f"{cost_col} per run (lower is cheaper)")
    ax.set_ylabel(f"{d['metric'].iloc[0]} ({'higher' if d['direction'].iloc[0] == 'max' else 'lower'} is better)")
    ax.set_title(title, fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5), frameon=False)
    return _png(fig)


def report_html(board: Any, env: Any = None, suite: Any = None, tier: str | None = None, metric: str | None = None,
                n_boot: int = 2000, ci: float = 0.95, seed: int = 0, refs: Any = None, title: str | None = None) -> str:
    """The HTML report as a string: summary, aggregate table and IQM plot (for a suite), per-task table,
    per-task score plots with intervals, score-versus-cost plots with Pareto fronts, and failures."""
    tasks, agg = board.tables(env=env, suite=suite, tier=tier, metric=metric, refs=refs, n_boot=n_boot, ci=ci, seed=seed)
    what = f"suite {suite}" if isinstance(suite, str) else (f"env {env}" if isinstance(env, str) else "all runs")
    title = title or f"icmlgym leaderboard · {what}" + (f" · {tier}" if tier else "")
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    parts = [f"<h1>{html.escape(title)}</h1>",
             f'<p class="meta">store {html.escape(board.url)} · generated {now} · {int(tasks["runs"].sum()) if len(tasks) else 0} runs · '
             f"{ci:.0%} percentile bootstrap intervals over runs ({n_boot} resamples); rank intervals: best rank = 1 + entries "
             "whose interval lies entirely above, worst = entries minus those entirely below.</p>"]
    if agg is not None:
        parts.append("<h2>Aggregate over the suite (normalised: random = 0, reference = 1)</h2>")
        parts.append(html_table(agg, "aggregate"))
        parts += [f'<p class="note">{html.escape(n)}</p>' for n in agg.attrs.get("notes", [])]
        d = agg[agg["iqm"].notna()]
        if len(d):
            src = _interval_plot(list(d["entry"]), d["iqm"].to_numpy(float), d["iqm_low"].to_numpy(float), d["iqm_high"].to_numpy(float),
                                 "IQM of normalised score", f"IQM with {ci:.0%} stratified bootstrap CI")
            parts.append(f'<div class="plots"><img alt="aggregate IQM plot" src="{src}"></div>')
    parts.append("<h2>Per task</h2>")
    parts.append(html_table(tasks, "leaderboard"))
    parts += [f'<p class="note">{html.escape(n)}</p>' for n in tasks.attrs.get("notes", [])]  # e.g. why no aggregate
    few = tasks[tasks["few_seeds"]] if len(tasks) else tasks
    if len(few):
        parts.append(f'<p class="note">⚠ {len(few)} entr{"y has" if len(few) == 1 else "ies have"} fewer successful seeds than the tier asks.</p>')
    if len(tasks):
        plots, costs = [], []
        groups = list(tasks.groupby(["task", "tier"], sort=True))
        if len(groups) > MAX_PLOTS:
            parts.append(f'<p class="note">Plots show the first {MAX_PLOTS} of {len(groups)} tasks; the tables list all of them.</p>')
        for (task, t), sub in groups[:MAX_PLOTS]:
            arrow = "↓ lower is better" if sub["direction"].iloc[0] == "min" else "↑ higher is better"
            plots.append(_interval_plot(list(sub["entry"]), sub["mean"].to_numpy(float), sub["ci_low"].to_numpy(float), sub["ci_high"].to_numpy(float),
                                        f"{sub['metric'].iloc[0]} ({arrow})", f"{task} · {t}", mark=list(sub["pareto"])))
            c = _cost_plot(sub, sub["pareto_cost"].iloc[0], f"{task} · {t}: score vs cost")
            if c:
                costs.append(c)
        parts.append("<h2>Scores with intervals</h2><div class=\"plots\">" + "".join(f'<img alt="scores" src="{s}">' for s in plots) + "</div>")
        parts.append("<h2>Score versus cost</h2>")
        if len(costs) < len(groups[:MAX_PLOTS]):
            parts.append(f'<p class="note">{len(groups[:MAX_PLOTS]) - len(costs)} task(s) have no score-versus-cost plot: '
                         "their entries all have the same cost (or fewer than two have a score), so there is no trade-off to draw.</p>")
        parts.append("<div class=\"plots\">" + "".join(f'<img alt="score vs cost" src="{s}">' for s in costs) + "</div>")
    fails = board.failures(env=env, suite=suite, tier=tier)
    parts.append(f"<h2>Failed and timed-out runs ({len(fails)})</h2>")
    if len(fails):
        parts.append(html_table(fails.drop(columns=["run_id"]), "failures"))
    return _page(title, "".join(parts))


def write_report(board: Any, path: str | os.PathLike, **kwargs: Any) -> Path:
    """Write :func:`report_html` to ``path`` (one self-contained file) and return the path."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_text(report_html(board, **kwargs), encoding="utf-8")
    return p
