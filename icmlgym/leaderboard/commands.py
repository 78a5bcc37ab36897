"""The leaderboard's command-line commands: ``leaderboard``, ``compare`` and ``submit``.

``icmlgym.cli`` calls :func:`register` to add them to its Typer app.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, List, NoReturn, Optional

import typer

STORE_HELP = "Leaderboard store: an SQLAlchemy URL (sqlite:///..., postgresql+psycopg://...) or a file path. Default: $ICMLGYM_HOME/leaderboard.db, else ./icmlgym-results/leaderboard.db."
FORMAT_HELP = "Output: table (terminal), markdown, csv, or html (a self-contained report file with plots; see --output)."


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code`` (2: bad input)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def open_board(store: Optional[str]):
    """Open the store, or exit with the store's own error (a foreign or corrupt file is never touched)."""
    from icmlgym.leaderboard import Leaderboard, StoreError

    try:
        return Leaderboard(store)
    except (StoreError, ValueError) as err:
        fail(str(err))


def _emit(text: str, output: Optional[Path]) -> None:
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}")


def _check_format(fmt: str) -> None:
    from icmlgym.leaderboard import FORMATS

    if fmt not in FORMATS:
        fail(f"unknown --format {fmt!r}; choose one of {', '.join(FORMATS)}")


def parse_kv(items: Optional[List[str]], flag: str) -> dict[str, Any]:
    """``key=value`` pairs from a repeatable option; values are parsed as JSON where they can be."""
    out: dict[str, Any] = {}
    for item in items or []:
        if "=" not in item:
            fail(f"{flag} takes key=value, got {item!r}")
        k, v = item.split("=", 1)
        try:
            out[k] = json.loads(v)
        except json.JSONDecodeError:
            out[k] = v
    return out


def register(app: typer.Typer) -> None:
    """Add ``leaderboard``, ``compare`` and ``submit`` to ``app``."""

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

        _check_format(fmt)
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
                        _emit("\n".join(texts), output)
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

        _check_format(fmt)
        board = open_board(store)
        try:
            try:
                df = board.compare(a, b, env=env, suite=suite, tier=tier, metric=metric, n_boot=boot, seed=seed)
            except (UnknownEnvError, KeyError, ValueError) as err:
                fail(str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err))
            _emit(render(df, fmt, title=f"{a} vs {b}" + (f" · suite {suite}" if suite else "") + (f" · {tier}" if tier else "")), output)
        finally:
            board.close()

    @app.command("submit")
    def submit_cmd(
        agent: str = typer.Argument(..., help="The agent: a shipped name (see `icmlgym agents`), module:Class, or path/to/file.py[:Class]."),
        suite: str = typer.Option(..., "--suite", "-s", help="The suite to run on (see `icmlgym list`; `installed` = every installed env)."),
        seeds: int = typer.Option(3, help="Seeds per task (0..N-1)."),
        tier: str = typer.Option("smoke", help="Budget tier: smoke, standard or full."),
        store: Optional[str] = typer.Option(None, help=STORE_HELP),
        timeout: float = typer.Option(600.0, help="Seconds a run may take before it is killed and stored as timeout."),
        memory_mb: Optional[int] = typer.Option(None, "--memory-mb", help="Address-space limit per run in MB (a run past it is stored as failed)."),
        workers: Optional[int] = typer.Option(None, help="Concurrent worker processes (default: cores)."),
        agent_kwarg: Optional[List[str]] = typer.Option(None, "--agent-kwarg", "-k", help="key=value for the agent's constructor (repeatable; values parsed as JSON)."),
        device: str = typer.Option("cpu", help="Torch device for agents that use torch: cpu, cuda or auto."),
        resume: bool = typer.Option(True, help="Skip runs already stored successfully (same env, tier, agent source, kwargs and seed)."),
        fmt: str = typer.Option("table", "--format", "-f", help="Format of the summary printed at the end: table, markdown or csv."),
        executor: str = typer.Option("process", help="process (a child process per run) or ray (a Ray task per run, extra [ray])."),
        address: Optional[str] = typer.Option(None, help="Ray cluster address (auto, host:port, ray://...); default: a private local instance."),
        max_retries: int = typer.Option(2, help="Ray: times a run whose worker died is retried before it is stored as failed."),
    ) -> None:
        """Submit an agent: run it on every task of a suite over seeds, each run in a child process
        with a timeout and a memory limit, and add the records to the leaderboard. The agent's source
        hash is recorded with each run; a submission that fails to import or crashes is stored as
        failed runs with the error, and the store is unharmed. Prints the suite's leaderboard after.

        Examples:

          icmlgym submit ucb1 --suite bandits --seeds 5

          icmlgym submit my_agents.py:MyAgent --suite bandits --seeds 3 --timeout 120 --memory-mb 4000
        """
        import icmlgym
        from icmlgym.leaderboard import render
        from icmlgym.runner import make_tasks, run_tasks
        from icmlgym.runner.api import split_done

        if fmt == "html":
            fail("submit prints a summary; use `icmlgym leaderboard --format html` for the report")
        _check_format(fmt)
        if seeds < 1:
            fail(f"--seeds must be at least 1, got {seeds}")
        if timeout <= 0:
            fail(f"--timeout must be positive, got {timeout}")
        if memory_mb is not None and memory_mb <= 0:
            fail(f"--memory-mb must be positive, got {memory_mb}")
        if executor not in ("process", "ray"):
            fail(f"--executor must be process or ray (submissions run isolated from this process), got {executor!r}")
        try:
            members = icmlgym.suite(suite)
        except KeyError as err:
            fail(str(err.args[0]))
        kwargs = parse_kv(agent_kwarg, "--agent-kwarg")
        tasks = []
        for env_id, env_kwargs in members:
            c = icmlgym.card(env_id)
            try:
                c.tier(tier)
            except ValueError as err:
                fail(str(err))
            if not c.installed:
                typer.echo(f"skipped {c.id}: its extra [{c.extra}] is not installed (pip install \"icmlgym[{c.extra}]\")", err=True)
                continue
            tasks += make_tasks(c.id, agent, seeds, tier, env_kwargs, kwargs, None, device, suite=suite)
        if not tasks:
            fail(f"nothing to run: no installed env in suite {suite!r}")
        board = open_board(store)
        try:
            if resume:
                tasks, done = split_done(tasks, board.run_keys("ok"))
                if done:
                    typer.echo(f"resuming: {len(done)} run(s) already stored, {len(tasks)} to go", err=True)
            records = run_tasks(
                tasks, executor=executor, workers=workers, timeout=timeout, memory_limit_mb=memory_mb,
                on_record=board.add, progress=sys.stderr.isatty(),
                executor_options={"address": address, "max_retries": max_retries} if executor == "ray" else None,
            )
            bad = [r for r in records if r.status != "ok"]
            typer.echo(f"stored {len(records)} run(s) of {agent} on suite {suite} ({tier}) in {board.url}; {len(bad)} not ok", err=True)
            for r in bad[:20]:
                first = r.error.strip().splitlines()[0] if r.error.strip() else ""
                typer.echo(f"  {r.status}: {r.env_id} seed {r.seed}: {first}", err=True)
            if records or not tasks:
                df = board.table(suite=suite, tier=tier, level="task")
                _emit(render(df, fmt, title=f"suite {suite} · {tier}"), None)
                agg = board.table(suite=suite, tier=tier, level="suite")
                if agg["iqm"].notna().any():
                    _emit(render(agg, fmt, title=f"suite {suite} · {tier} · aggregate"), None)
        finally:
            board.close()
        if records and len(bad) == len(records):
            raise typer.Exit(1)
