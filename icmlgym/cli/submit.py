"""``icmlgym submit``: run an agent over a suite, isolated per run, and store the records."""

from __future__ import annotations

import sys
from typing import List, Optional

import typer

from icmlgym.cli.common import STORE_HELP, app, check_format, emit, fail, open_board, parse_kv


def board_paths(board) -> list[str]:
    """The store's files (database, WAL, shared memory), masked if they lie in the agent's folder."""
    path = getattr(board._store, "path", None)
    if path is None:
        return []
    return [str(path), f"{path}-wal", f"{path}-shm", f"{path}.spill.jsonl"]


@app.command("submit")
def submit_cmd(
    agent: str = typer.Argument(..., help="The agent: a shipped name (see `icmlgym agents`), module:Class, or path/to/file.py[:Class]."),
    suite: str = typer.Option(..., "--suite", "-s", help="The suite to run on (see `icmlgym list`; `installed` = every installed env)."),
    seeds: int = typer.Option(3, help="Seeds per task (0..N-1)."),
    tier: str = typer.Option("smoke", help="Budget tier: smoke, standard or full."),
    store: Optional[str] = typer.Option(None, help=STORE_HELP),
    timeout: float = typer.Option(600.0, help="Seconds a run may take before it is killed and stored as timeout."),
    memory_mb: Optional[int] = typer.Option(None, "--memory-mb", help="Resident memory of the agent's whole process tree in MB (a run past it is stored as failed)."),
    name: Optional[str] = typer.Option(None, "--name", help="The entry's name on the leaderboard (default: the file's stem; shipped agent names are reserved)."),
    sandbox: str = typer.Option("auto", help="auto (bubblewrap when available), bwrap, or none (a scrubbed child process; entries are marked)."),
    max_processes: int = typer.Option(64, "--max-processes", help="Live processes the agent may run at once."),
    cpu_seconds: Optional[float] = typer.Option(None, "--cpu-seconds", help="CPU time of the agent's process tree per run."),
    workers: Optional[int] = typer.Option(None, help="Concurrent worker processes (default: cores)."),
    agent_kwarg: Optional[List[str]] = typer.Option(None, "--agent-kwarg", "-k", help="key=value for the agent's constructor (repeatable; values parsed as JSON)."),
    device: str = typer.Option("cpu", help="Torch device for agents that use torch: cpu, cuda or auto."),
    resume: bool = typer.Option(True, help="Skip runs already stored successfully (same env, tier, agent source, kwargs and seed)."),
    fmt: str = typer.Option("table", "--format", "-f", help="Format of the summary printed at the end: table, markdown or csv."),
    executor: str = typer.Option("process", help="process (a child process per run) or ray (a Ray task per run, extra [ray])."),
    address: Optional[str] = typer.Option(None, help="Ray cluster address (auto, host:port, ray://...); default: a private local instance."),
    max_retries: int = typer.Option(2, help="Ray: times a run whose worker died is retried before it is stored as failed."),
) -> None:
    """Submit an agent: run it on every task of a suite over seeds and add the records to the
    leaderboard. This process never imports the submission: its name comes from --name (default the
    file's stem) and its source hash from the file's bytes. Each run's env, metrics and record live
    in an evaluator process; the agent runs in a sandbox (bubblewrap: no network, no view of the
    store, limits over its whole process tree; see docs/security.md) and sees only observations,
    rewards, infos and the public spec. Evaluation seeds are hidden (derived from the board's
    secret). A submission that fails to import, crashes or breaks a limit is stored as failed runs
    with the reason; its output goes to a capped per-run log. Prints the suite's leaderboard after.

    Examples:

      icmlgym submit ucb1 --suite bandits --seeds 5

      icmlgym submit my_agents.py:MyAgent --suite bandits --seeds 3 --timeout 120 --memory-mb 4000
    """
    import icmlgym
    from icmlgym.leaderboard import render
    from icmlgym.leaderboard.spill import SpillingWriter
    from icmlgym.runner import make_tasks, run_tasks
    from icmlgym.runner.api import split_done
    from icmlgym.runner.sandbox import SandboxOptions, resolve_mode
    from icmlgym.runner.submission import SubmissionError, identify

    if fmt == "html":
        fail("submit prints a summary; use `icmlgym leaderboard --format html` for the report")
    check_format(fmt)
    if seeds < 1:
        fail(f"--seeds must be at least 1, got {seeds}")
    if timeout <= 0:
        fail(f"--timeout must be positive, got {timeout}")
    if memory_mb is not None and memory_mb <= 0:
        fail(f"--memory-mb must be positive, got {memory_mb}")
    if max_processes < 1:
        fail(f"--max-processes must be at least 1, got {max_processes}")
    if cpu_seconds is not None and cpu_seconds <= 0:
        fail(f"--cpu-seconds must be positive, got {cpu_seconds}")
    try:
        mode = resolve_mode(sandbox)
    except (ValueError, RuntimeError) as err:
        fail(str(err))
    if mode == "none":
        typer.echo("warning: bubblewrap is not available: the agent runs in a scrubbed child process only "
                   "(no file-system, network or PID isolation); its entries are marked [sandbox: none]", err=True)
    options = SandboxOptions(mode=mode, memory_mb=memory_mb, max_processes=max_processes, cpu_seconds=cpu_seconds,
                             call_timeout=timeout, load_timeout=timeout)
    try:
        isolation = identify(agent, name, options)
    except SubmissionError as err:
        fail(str(err))
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
        options.hidden_seeds = board.seed_secret()
        options.hide = board_paths(board)
        for t in tasks:
            t.isolation = isolation
        writer = SpillingWriter(board, warn=lambda m: typer.echo(f"warning: {m}", err=True))
        if resume:
            tasks, done = split_done(tasks, board.run_keys("ok"))
            if done:
                typer.echo(f"resuming: {len(done)} run(s) already stored, {len(tasks)} to go", err=True)
        records = run_tasks(
            tasks, executor=executor, workers=workers, timeout=timeout,
            on_record=writer, progress=sys.stderr.isatty(),
            executor_options={"address": address, "max_retries": max_retries} if executor == "ray" else None,
        )
        if writer.spilled:
            typer.echo(writer.summary(), err=True)
        bad = [r for r in records if r.status != "ok"]
        typer.echo(f"stored {len(records)} run(s) of {isolation.name} ({agent}) on suite {suite} ({tier}) in {board.url}; {len(bad)} not ok", err=True)
        for r in bad[:20]:
            first = r.error.strip().splitlines()[0][:200] if r.error.strip() else ""
            typer.echo(f"  {r.status}: {r.env_id} seed {r.seed}: {first}", err=True)
        if records or not tasks:
            df = board.table(suite=suite, tier=tier, level="task")
            emit(render(df, fmt, title=f"suite {suite} · {tier}"), None)
            # a suite across families gets no aggregate (Leaderboard.aggregate_refusal says why)
            agg = None if board.aggregate_refusal(suite) else board.table(suite=suite, tier=tier, level="suite")
            if agg is not None and agg["iqm"].notna().any():
                emit(render(agg, fmt, title=f"suite {suite} · {tier} · aggregate"), None)
    finally:
        board.close()
    if records and len(bad) == len(records):
        raise typer.Exit(1)
