"""Reading the leaderboard: ``icmlgym leaderboard`` and ``icmlgym compare``."""

from __future__ import annotations

from pathlib import Path
from typing import List, Optional

import typer

from icmlgym.cli.common import FORMAT_HELP, STORE_HELP, app, check_format, emit, fail, open_board


@app.command("leaderboard")
def leaderboard_cmd(
    env: Optional[List[str]] = typer.Option(None, "--env", "-e", help="Only this env id (repeatable)."),
    suite: Optional[str] = typer.Option(None, "--suite", "-s", help="A suite (see `icmlgym list`): adds the aggregate over its tasks (IQM, mean, median of normalised scores)."),
    tier: Optional[str] = typer.Option(None, help="Only this budget tier (smoke, standard, full); a suite aggregate needs one when the store holds several."),
    agent: Optional[List[str]] = typer.Option(None, "--agent", "-a", help="Only this agent name (repeatable)."),
    metric: Optional[str] = typer.Option(None, help="Score this metric instead of each env's primary metric."),
    level: Optional[str] = typer.Option(None, help="task (one row per task and entry) or suite (one row per entry; the default with --suite)."),
    fmt: str = typer.Option("table", "--format", "-f", help=FORMAT_HELP),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write to this file (html default: ./icmlgym-results/report.html)."),
    store: Optional[str] = typer.Option(None, help=STORE_HELP),
    boot: int = typer.Option(2000, help="Bootstrap resamples for the confidence intervals."),
    ci: float = typer.Option(0.95, help="Confidence level of the intervals."),
    seed: int = typer.Option(0, help="Seed of the bootstrap (tables are reproducible)."),
    export: Optional[Path] = typer.Option(None, help="Also export the selected runs (episodes and provenance included) to a .csv or .parquet file."),
    merge: Optional[List[str]] = typer.Option(None, help="First import runs from an export (.csv/.parquet) or another store (URL or .db) into --store (repeatable); runs already present are skipped."),
) -> None:
    """Show the leaderboard: per task, each entry's mean of the primary metric over seeds with its
    standard error, 95% percentile-bootstrap interval, normalised score, rank interval, seeds run
    (flagged when fewer than the tier asks), failed and timed-out runs, cost counters and the
    score-versus-cost Pareto front; with --suite, also IQM / mean / median of normalised scores
    with stratified bootstrap intervals and rank intervals. Scores are recomputed from the stored
    episodes.

    Examples:

      icmlgym leaderboard --env icmlgym/Bandit-v0

      icmlgym leaderboard --suite bandits --tier smoke --format markdown

      icmlgym leaderboard --suite bandits --format html -o report.html
    """
    from icmlgym.catalog import UnknownEnvError
    from icmlgym.leaderboard import render, write_report

    check_format(fmt)
    if env and suite:
        fail("give --env or --suite, not both")
    board = open_board(store)
    try:
        for src in merge or []:
            try:
                n = board.import_(src)
            except (ValueError, FileNotFoundError) as err:
                fail(str(err))
            typer.echo(f"merged {n} new run(s) from {src}", err=True)
        if len(board) == 0:
            typer.echo(f"no runs in {board.url} yet: run `icmlgym run`, `icmlgym benchmark` or `icmlgym submit` first", err=True)
            return
        try:
            if fmt == "html":
                path = write_report(board, output or Path("icmlgym-results") / "report.html", env=env, suite=suite, tier=tier, metric=metric, n_boot=boot, ci=ci, seed=seed)
                typer.echo(f"wrote {path}")
            else:
                what = f"suite {suite}" if suite else ", ".join(env) if env else "all runs"
                title = f"icmlgym leaderboard · {what}" + (f" · {tier}" if tier else "")
                # with --suite and no --level: the per-task table, then the aggregate
                levels = [level] if level else (["task", "suite"] if suite and fmt != "csv" else ["task"])
                task_df, suite_df = board.tables(env=env, suite=suite, tier=tier, metric=metric, agent=agent, n_boot=boot, ci=ci, seed=seed)
                frames = {"task": task_df, "suite": suite_df}
                if task_df.empty:
                    typer.echo("no runs match the selection", err=True)
                else:
                    if "suite" in levels and suite_df is None:
                        fail("--level suite needs --suite")
                    texts = [render(frames[lv], fmt, title=title + (" · aggregate" if lv == "suite" else "")) for lv in levels]
                    emit("\n".join(texts), output)
            if export is not None:
                n = board.export(export, env=env, suite=suite, tier=tier, agent=agent)
                typer.echo(f"exported {n} run(s) to {export}", err=True)
        except (UnknownEnvError, KeyError, ValueError) as err:
            fail(str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err))
    finally:
        board.close()

@app.command("compare")
def compare_cmd(
    a: str = typer.Argument(..., help="Entry A (an agent name as the leaderboard shows it)."),
    b: str = typer.Argument(..., help="Entry B."),
    env: Optional[List[str]] = typer.Option(None, "--env", "-e", help="Only this env id (repeatable)."),
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

      icmlgym compare bandit-thompson ucb1 --suite bandits --tier smoke
    """
    from icmlgym.catalog import UnknownEnvError
    from icmlgym.leaderboard import render

    check_format(fmt)
    board = open_board(store)
    try:
        try:
            df = board.compare(a, b, env=env, suite=suite, tier=tier, metric=metric, n_boot=boot, seed=seed)
        except (UnknownEnvError, KeyError, ValueError) as err:
            fail(str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err))
        emit(render(df, fmt, title=f"{a} vs {b}" + (f" · suite {suite}" if suite else "") + (f" · {tier}" if tier else "")), output)
    finally:
        board.close()
