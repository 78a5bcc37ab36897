"""Running agents: ``icmlgym run`` (one env, one agent, over seeds) and ``icmlgym benchmark`` (a suite)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.table import Table

from icmlgym.cli.common import app, console, fail, open_board, parse_kv


def execute(tasks, executor, workers, timeout, address, max_retries, board, resume: bool):
    """Run tasks, streaming each record to the store; with ``resume``, skip runs stored as ok."""
    from icmlgym.runner.api import run_tasks, split_done

    if executor not in ("inprocess", "process", "ray"):
        fail(f"--executor must be inprocess, process or ray, got {executor!r}")
    if resume:
        if board is None:
            fail("--resume needs a store (drop --no-store)")
        tasks, done = split_done(tasks, board.run_keys("ok"))
        if done:
            console.print(f"resuming: {len(done)} run(s) already stored as ok, {len(tasks)} to go")
    options = {"address": address, "max_retries": max_retries} if executor == "ray" else None
    return run_tasks(tasks, executor, workers, timeout, on_record=board.add if board is not None else None,
                     progress=True, executor_options=options)


def summary_table(records, title: str) -> Table:
    """A per (env, agent) table of this invocation's records: primary metric mean +- s.e. and statuses."""
    import numpy as np

    from icmlgym.catalog import card

    groups: dict[tuple[str, str], list] = {}
    for r in records:
        groups.setdefault((r.env_id, r.agent_name), []).append(r)
    table = Table(title=title)
    for col in ("env", "agent", "metric", "mean", "s.e.", "seeds ok", "failed", "timeout", "wall s"):
        table.add_column(col)
    for (env_id, agent), recs in sorted(groups.items()):
        c = card(env_id)
        vals = []
        for r in recs:
            if r.status == "ok":
                try:
                    vals.append(float(np.mean(r.metric(c.primary_metric))))
                except KeyError:
                    pass
        mean = f"{np.mean(vals):.4g}" if vals else "-"
        se = f"{np.std(vals, ddof=1) / np.sqrt(len(vals)):.2g}" if len(vals) > 1 else "-"
        arrow = "↑" if c.direction == "max" else "↓"
        table.add_row(
            env_id, agent, f"{c.primary_metric} {arrow}", mean, se,
            str(sum(r.status == "ok" for r in recs)), str(sum(r.status == "failed" for r in recs)),
            str(sum(r.status == "timeout" for r in recs)), f"{sum(r.wall_time for r in recs):.1f}",
        )
    return table


@app.command()
def run(
    env_id: str = typer.Argument(..., help="An env id, e.g. icmlgym/Bandit-v0."),
    agent: str = typer.Option(..., "--agent", "-a", help="A shipped name (see `icmlgym agents`), module:Class, or path/to/file.py[:Class]."),
    seeds: int = typer.Option(3, help="Number of seeds (0..N-1)."),
    seed_list: Optional[str] = typer.Option(None, "--seed-list", help="Explicit comma-separated seeds, instead of --seeds."),
    tier: str = typer.Option("smoke", help="Budget tier: smoke, standard or full."),
    episodes: Optional[int] = typer.Option(None, help="Override the tier's episodes per seed."),
    env_kwarg: Optional[List[str]] = typer.Option(None, "--env-kwarg", "-e", help="key=value passed to the env (repeatable; values parsed as JSON)."),
    agent_kwarg: Optional[List[str]] = typer.Option(None, "--agent-kwarg", "-k", help="key=value passed to the agent's constructor (repeatable)."),
    executor: str = typer.Option("process", help="inprocess, process (a worker per run, with --timeout) or ray."),
    workers: Optional[int] = typer.Option(None, help="Concurrent workers (default: cores)."),
    timeout: Optional[float] = typer.Option(600.0, help="Seconds per run before it is killed and recorded as timeout."),
    address: Optional[str] = typer.Option(None, help="Ray cluster address for --executor ray (auto, host:port); default: a private local instance."),
    max_retries: int = typer.Option(2, help="Ray: times a run whose worker died is retried before it is recorded as failed."),
    resume: bool = typer.Option(False, help="Skip runs the store already holds as ok (same env, kwargs, tier, agent source and seed)."),
    device: str = typer.Option("cpu", help="Torch device for agents that use torch: cpu, cuda or auto."),
    store: Optional[str] = typer.Option(None, help="Leaderboard store: SQLAlchemy URL or file (default ./icmlgym-results/leaderboard.db or $ICMLGYM_HOME)."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not write the records to a store."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the run records to this JSON file."),
) -> None:
    """Run an agent on an env over seeds; store the run records and print a summary."""
    import icmlgym
    from icmlgym.agents import AgentLoadError, load_agent
    from icmlgym.catalog import MissingExtraError, UnknownEnvError
    from icmlgym.runner import make_tasks

    try:
        c = icmlgym.card(env_id)
        c.tier(tier)
        load_agent(agent, **parse_kv(agent_kwarg, "--agent-kwarg"))
    except (UnknownEnvError, AgentLoadError, MissingExtraError, ValueError) as err:
        fail(str(err))
    seeds_arg: Any = [int(s) for s in seed_list.split(",")] if seed_list else seeds
    tasks = make_tasks(c.id, agent, seeds_arg, tier, parse_kv(env_kwarg, "--env-kwarg"), parse_kv(agent_kwarg, "--agent-kwarg"), episodes, device)
    board = None if no_store else open_board(store)
    records = execute(tasks, executor, workers, timeout, address, max_retries, board, resume)
    console.print(summary_table(records, f"{c.id} · {tier}"))
    for r in records:
        if r.status != "ok":
            console.print(f"[red]{r.status}[/] seed {r.seed}: {r.error.strip().splitlines()[0] if r.error else ''}")
    if json_out:
        json_out.write_text(json.dumps([r.to_dict() for r in records], indent=1))
    if board is not None:
        console.print(f"stored {len(records)} run(s) in {board.url}")
        board.close()
    if any(r.status != "ok" for r in records):
        raise typer.Exit(1)



@app.command()
def benchmark(
    suite: str = typer.Option("installed", help="Suite to run (default: every env whose extra is installed)."),
    seeds: int = typer.Option(3, help="Seeds per (env, agent)."),
    tier: str = typer.Option("smoke", help="Budget tier."),
    agent: Optional[List[str]] = typer.Option(None, "--agent", "-a", help="Only these agents (default: each env's reference agent and baselines)."),
    executor: str = typer.Option("process", help="inprocess, process or ray."),
    workers: Optional[int] = typer.Option(None, help="Concurrent workers (default: cores)."),
    timeout: Optional[float] = typer.Option(300.0, help="Seconds per run before it is recorded as timeout."),
    address: Optional[str] = typer.Option(None, help="Ray cluster address for --executor ray (auto, host:port); default: a private local instance."),
    max_retries: int = typer.Option(2, help="Ray: times a run whose worker died is retried before it is recorded as failed."),
    resume: bool = typer.Option(False, help="Skip runs the store already holds as ok (resume an interrupted sweep)."),
    device: str = typer.Option("cpu", help="Torch device for agents that use torch: cpu, cuda or auto."),
    store: Optional[str] = typer.Option(None, help="Leaderboard store URL or file (default ./icmlgym-results/leaderboard.db or $ICMLGYM_HOME)."),
) -> None:
    """The main job: every installed env with its reference agent and baselines over 3 seeds at the
    smoke tier; results go to the leaderboard store and a table is printed at the end."""
    import time

    import icmlgym
    from icmlgym.runner import make_tasks

    try:
        members = icmlgym.suite(suite)
    except KeyError as err:
        fail(str(err.args[0]))
    tasks = []
    skipped = []
    for env_id, kwargs in members:
        c = icmlgym.card(env_id)
        if not c.installed:
            skipped.append(f"{c.id} (extra [{c.extra}] not installed)")
            continue
        for name in agent or c.agents:
            tasks += make_tasks(c.id, name, seeds, tier, kwargs, None, None, device, suite=suite)
    for s in skipped:
        console.print(f"[yellow]skipped[/] {s}")
    board = open_board(store)
    t0 = time.perf_counter()
    records = execute(tasks, executor, workers, timeout, address, max_retries, board, resume)
    console.print(summary_table(records, f"icmlgym benchmark · suite {suite} · {tier} · {seeds} seeds"))
    n_bad = sum(r.status != "ok" for r in records)
    console.print(f"{len(records)} runs ({n_bad} not ok) in {time.perf_counter() - t0:.1f} s; stored in {board.url}")
    for r in records:
        if r.status != "ok":
            console.print(f"[red]{r.status}[/] {r.env_id} {r.agent_name} seed {r.seed}: {r.error.strip().splitlines()[0] if r.error else ''}")
    board.close()
