"""Reading the leaderboard: ``icmlgym leaderboard`` and ``icmlgym compare``."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from icmlgym.cli.common import FORMAT_HELP, STORE_HELP, app, check_format, emit, fail, open_board


LEVELS = ("family", "task", "suite")


def _selection_names(board, env, suite, agent) -> None:
    """Exit with a one-line error for a name that is neither in the catalog nor in the store."""
    from icmlgym.catalog import UnknownEnvError, card, suites
    from icmlgym.cli.validate import did_you_mean

    stored = board.stored_names()
    for e in env or []:
        if e in stored["env"]:
            continue
        try:
            card(e)
        except UnknownEnvError as err:
            fail(f"--env: {err.args[0]}")
    if suite is not None and suite not in suites() and suite not in stored["suite"]:
        fail(f"--suite: no suite {suite!r}{did_you_mean(suite, list(suites()) + sorted(stored['suite'] - {''}))}; `icmlgym suites` lists them")
    known_agents = stored["agent"]
    for a in agent or []:
        if a not in known_agents:
            fail(f"--agent: no runs of agent {a!r} in {board.url}{did_you_mean(a, known_agents)}")


def _split_by_env(df):
    """One frame per env, without the cost columns that env never reports (columns chosen per env)."""
    out = []
    for _, sub in df.groupby("env_id", sort=True):
        keep = [c for c in sub.columns if not (c.startswith("cost.") and sub[c].isna().all())]
        part = sub[keep].reset_index(drop=True)
        part.attrs = dict(df.attrs)
        out.append(part)
    return out


@app.command("leaderboard")
def leaderboard_cmd(
    env: Optional[List[str]] = typer.Option(None, "--env", help="Only this env id (repeatable)."),
    suite: Optional[str] = typer.Option(None, "--suite", "-s", help="Only the tasks of a suite (see `icmlgym suites`); a family suite adds the aggregate over its tasks (IQM, mean, median of normalised scores)."),
    tier: Optional[str] = typer.Option(None, help="Only this budget tier (smoke, standard, full); a suite aggregate needs one when the store holds several."),
    agent: Optional[List[str]] = typer.Option(None, "--agent", "-a", help="Only this agent name (repeatable)."),
    metric: Optional[str] = typer.Option(None, help="Score this metric instead of each env's primary metric."),
    level: Optional[str] = typer.Option(None, help="family (compact tables per family; the default for the terminal), task (every column, one table per env) or suite (the aggregate only)."),
    columns: Optional[str] = typer.Option(None, "--columns", help="Comma-separated columns of the compact tables: entry, ref, rank, mean, 95% CI, normalised, seeds, failed (default: as many as fit the terminal)."),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file instead of stdout."),
    store: Optional[str] = typer.Option(None, help=STORE_HELP),
    boot: int = typer.Option(2000, help="Bootstrap resamples for the confidence intervals."),
    ci: float = typer.Option(0.95, help="Confidence level of the intervals."),
    seed: int = typer.Option(0, help="Seed of the bootstrap (tables are reproducible)."),
    export: Optional[Path] = typer.Option(None, help="Also export the selected runs (episodes and provenance included) to a .csv or .parquet file."),
    merge: Optional[List[str]] = typer.Option(None, help="First import runs from an export (.csv/.parquet) or another store (URL or .db) into --store (repeatable); runs whose key is already stored keep the stored run. Also takes a spill file (.jsonl) a sweep wrote when the store could not be written. Without --merge or --delete the store is opened read-only."),
    delete: Optional[List[str]] = typer.Option(None, "--delete", help="Delete an entry's runs (as the tables name it; repeatable), within --env/--suite/--tier if given; asks for confirmation."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask before --delete."),
    submissions: bool = typer.Option(False, "--submissions", help="Only runs evaluated on the board's hidden seeds (icmlgym submit); by default both kinds are shown, each entry marked with its kind when they mix."),
) -> None:
    """Show the leaderboard. With no options: one compact table per family, each env's entries
    with mean, 95% percentile-bootstrap interval, rank interval, normalised score (random 0,
    reference 1) and seeds, the paper's method marked *. --level task shows every column (standard
    error, failures, cost counters, Pareto front), one table per env; a family --suite adds the
    aggregate (IQM, mean, median of normalised scores with stratified bootstrap intervals) over the
    entries that ran every task. Scores are recomputed from the stored episodes.

    Examples:

      icmlgym leaderboard

      icmlgym leaderboard --env icmlgym/Bandit-v0 --level task

      icmlgym leaderboard --suite fairbandit --format markdown

      icmlgym leaderboard --suite bandits --format html -o report.html

      icmlgym leaderboard --delete my-agent --env icmlgym/Bandit-v0
    """
    from icmlgym.catalog import UnknownEnvError
    from icmlgym.leaderboard import StoreError, render, report_html
    from icmlgym.leaderboard.family import COLUMNS, family_tables_text, format_aggregate
    from icmlgym.terminal import terminal_width

    check_format(fmt)
    if level is not None and level not in LEVELS:
        fail(f"--level must be one of {', '.join(LEVELS)}, got {level!r}")
    if env and suite:
        fail("give --env or --suite, not both")
    cols = [c.strip() for c in columns.split(",")] if columns else None
    if cols:
        unknown = [c for c in cols if c not in COLUMNS]
        if unknown:
            fail(f"--columns: unknown column(s) {', '.join(map(repr, unknown))}; columns are {', '.join(COLUMNS)}")
    if delete and (merge or export or output):
        fail("--delete changes the store; run it on its own (without --merge, --export or --output)")
    board = open_board(store, must_exist=not merge, read_only=not merge and not delete)
    try:
        for src in merge or []:
            try:
                n = board.import_(src)
            except (ValueError, FileNotFoundError, StoreError) as err:
                fail(f"--merge {src}: {err}")
            typer.echo(f"merged {n} new run(s) from {src}", err=True)
        if len(board) == 0:
            typer.echo(f"no runs in {board.url} yet: run `icmlgym run`, `icmlgym benchmark` or `icmlgym submit` first", err=True)
            return
        _selection_names(board, env, suite, agent)
        if delete:
            _delete(board, delete, env, suite, tier, yes)
            return
        damaged = board.damaged()
        if damaged:
            typer.echo(f"warning: {len(damaged)} stored run(s) no longer match their content hash and are reported as damaged, "
                       f"never scored: {', '.join(sorted(damaged)[:5])}{' ...' if len(damaged) > 5 else ''}", err=True)
        try:
            if fmt == "html":
                emit(report_html(board, env=env, suite=suite, tier=tier, metric=metric, n_boot=boot, ci=ci, seed=seed), output)
            else:
                task_df, suite_df = board.tables(env=env, suite=suite, tier=tier, metric=metric, agent=agent, n_boot=boot, ci=ci, seed=seed,
                                                 seeds="hidden" if submissions else None)
                what = f"suite {suite}" if suite else ", ".join(env) if env else "all runs"
                title = f"icmlgym leaderboard · {what}" + (f" · {tier}" if tier else "")
                for note in task_df.attrs.get("notes", []):
                    typer.echo(f"note: {note}", err=True)
                if task_df.empty:
                    fail("no runs match the selection", code=1)
                lv = level or ("family" if fmt == "table" else "task")
                if lv == "suite" and suite_df is None:
                    fail("--level suite needs a family --suite (or a cross-family suite with a declared reason)")
                if fmt == "csv":
                    emit(render(suite_df if lv == "suite" else task_df, "csv"), output)
                elif lv == "family" and fmt == "table":
                    width = terminal_width()
                    text = family_tables_text(task_df, width, cols)
                    if suite_df is not None:
                        text += "\n" + format_aggregate(suite_df, f"{suite} · aggregate over entries that ran every task", width)
                    emit(text, output)
                else:
                    frames = [suite_df] if lv == "suite" else _split_by_env(task_df)
                    if lv == "family" and suite_df is not None:
                        frames.append(suite_df)
                    texts = [render(f, fmt, title=title + (" · aggregate" if f is suite_df else f" · {f['env_id'].iloc[0]}" if len(frames) > 1 else "")) for f in frames]
                    emit("\n".join(texts), output)
            if export is not None:
                n = board.export(export, env=env, suite=suite, tier=tier, agent=agent)
                typer.echo(f"exported {n} run(s) to {export}", err=True)
        except (UnknownEnvError, KeyError, ValueError) as err:
            fail(str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err))
    finally:
        board.close()


def _delete(board, entries: List[str], env, suite, tier, yes: bool) -> None:
    """Delete entries' runs after saying how many and asking (unless --yes)."""
    import sys

    try:
        counts = {e: board.delete(e, env=env, suite=suite, tier=tier, dry_run=True) for e in entries}
    except ValueError as err:
        fail(f"--delete: {err}")
    total = sum(counts.values())
    scope = "".join(f" {k} {v}" for k, v in (("on", ", ".join(env or [])), ("in suite", suite or ""), ("at tier", tier or "")) if v)
    summary = ", ".join(f"{n} run(s) of {e}" for e, n in counts.items())
    if not yes:
        if not sys.stdin.isatty():
            fail(f"--delete would remove {summary}{scope} from {board.url}; add --yes to confirm (stdin is not a terminal)")
        if not typer.confirm(f"delete {summary}{scope} from {board.url}?", default=False, err=True):
            typer.echo("nothing deleted", err=True)
            raise typer.Exit(1)
    deleted = sum(board.delete(e, env=env, suite=suite, tier=tier) for e in entries)
    typer.echo(f"deleted {deleted} run(s) ({summary}{scope}) from {board.url}", err=True)


@app.command("compare")
def compare_cmd(
    a: str = typer.Argument(..., help="Entry A (an agent name as the leaderboard shows it)."),
    b: str = typer.Argument(..., help="Entry B."),
    env: Optional[List[str]] = typer.Option(None, "--env", help="Only this env id (repeatable)."),
    suite: Optional[str] = typer.Option(None, "--suite", "-s", help="Only the tasks of this suite."),
    tier: Optional[str] = typer.Option(None, help="Budget tier (needed when the store holds several)."),
    metric: Optional[str] = typer.Option(None, help="Compare on this metric instead of each env's primary metric."),
    fmt: str = typer.Option("table", "--format", "-f", help="table, markdown, csv or html."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file instead of the terminal."),
    store: Optional[str] = typer.Option(None, help=STORE_HELP),
    boot: int = typer.Option(2000, help="Bootstrap resamples."),
    seed: int = typer.Option(0, help="Seed of the bootstrap."),
) -> None:
    """Compare two entries task by task: the difference of means (A − B) with a 95% bootstrap
    interval, and the probability that A improves on B (Mann–Whitney, oriented by each task's
    direction) with its interval; a last row averages the probability over tasks and gives the
    IQM difference of normalised scores (stratified bootstrap), as in Agarwal et al. 2021.

    Example:

      icmlgym compare bandit-thompson ucb1 --suite bandit --tier smoke
    """
    from icmlgym.catalog import UnknownEnvError
    from icmlgym.leaderboard import render

    check_format(fmt)
    if env and suite:
        fail("give --env or --suite, not both")
    board = open_board(store, must_exist=True, read_only=True)
    try:
        _selection_names(board, env, suite, None)
        try:
            df = board.compare(a, b, env=env, suite=suite, tier=tier, metric=metric, n_boot=boot, seed=seed)
        except (UnknownEnvError, KeyError, ValueError) as err:
            fail(str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err))
        emit(render(df, fmt, title=f"{a} vs {b}" + (f" · suite {suite}" if suite else "") + (f" · {tier}" if tier else "")), output)
    finally:
        board.close()
