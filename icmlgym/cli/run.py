"""Running agents: ``icmlgym run`` (one env, one agent, over seeds) and ``icmlgym benchmark`` (a suite)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.table import Table

from icmlgym.cli.common import app, console, fail, open_board, parse_kv


RERUN_HELP = "Run seeds the store already holds as ok again, replacing their stored runs (default: skip them)."


def execute(tasks, executor, workers, timeout, address, max_retries, board, rerun: bool = False, batch_seeds: bool = False,
            memory_mb: Optional[int] = None):
    """Run tasks, streaming each record to the store (one current run per run key).

    Unless ``rerun``, tasks whose run key the store holds as ok are skipped and counted; failed
    and timed-out ones run again and replace theirs. Progress goes to stderr (a live bar in a
    terminal, a line per finished run elsewhere). Ctrl-C stops the sweep: the runs that finished
    are stored, and the same command continues where it stopped. Returns the records."""
    from icmlgym.leaderboard.store import PutResult
    from icmlgym.runner.api import run_tasks, split_done
    from icmlgym.runner.schedule import load_times, longest_first, record_times

    if executor not in ("inprocess", "process", "ray"):
        fail(f"--executor must be inprocess, process or ray, got {executor!r}")
    total = len(tasks)
    if board is not None and not rerun:
        tasks, done = split_done(tasks, board.run_keys("ok"))
        if done:
            typer.echo(
                f"skipping {len(done)} of {total} run(s) already stored as ok (same entry, env, kwargs, tier, seed and code); "
                "--rerun runs them again", err=True,
            )
    tasks = longest_first(tasks, load_times())  # the sweep's tail: see icmlgym/runner/schedule.py
    stored = PutResult()

    def store(rec) -> None:
        nonlocal stored
        stored += board.put(rec, on_conflict="replace")

    options = {"address": address, "max_retries": max_retries} if executor == "ray" else None
    writer = None
    if board is not None:  # a run the store cannot take after retries spills to a file beside it
        from icmlgym.leaderboard.spill import SpillingWriter

        writer = SpillingWriter(board, write=store, warn=lambda m: typer.echo(f"warning: {m}", err=True))
    try:
        records = run_tasks(tasks, executor, workers, timeout, memory_limit_mb=memory_mb, on_record=writer,
                            progress=bool(tasks), executor_options=options, batch_seeds=batch_seeds)
    except KeyboardInterrupt:
        where = f" in {board.url}" if board is not None else ""
        typer.echo(f"\ninterrupted: {stored.added + stored.replaced} finished run(s) stored{where}; "
                   "run the same command again to continue (stored seeds are skipped)", err=True)
        raise typer.Exit(130) from None
    try:
        record_times(records)
    except OSError as err:  # an unwritable home costs the next sweep its order, not this sweep its results
        typer.echo(f"warning: run times not recorded ({err})", err=True)
    if board is not None and records:
        typer.echo(f"stored {len(records)} run(s) in {board.url}: {stored.describe()}", err=True)
    if writer is not None and writer.spilled:
        typer.echo(writer.summary(), err=True)
    return records


def isolate_tasks(tasks, sandbox: str, timeout: Optional[float], board, batch_seeds: bool) -> None:
    """Give every task an :class:`~icmlgym.runner.evaluator.Isolation` (public seeds), or exit with why not."""
    from icmlgym.cli.submit import board_paths
    from icmlgym.runner.sandbox import SandboxOptions, resolve_mode
    from icmlgym.runner.submission import SubmissionError, identify

    try:
        mode = resolve_mode(sandbox)
    except (ValueError, RuntimeError) as err:
        fail(str(err))
    hide = board_paths(board) if board is not None else []
    isolations: dict[str, Any] = {}
    for t in tasks:
        if t.agent not in isolations:
            opts = SandboxOptions(mode=mode, hide=hide, **({"call_timeout": timeout, "load_timeout": timeout} if timeout else {}))
            try:
                isolations[t.agent] = identify(t.agent, None, opts)
            except SubmissionError as err:
                fail(str(err))
        t.isolation = isolations[t.agent]


def summary_table(records, title: str) -> Table:
    """A per (env, agent) table of this invocation's records: primary metric mean +- s.e. and statuses."""
    import numpy as np

    from icmlgym.catalog import card

    groups: dict[tuple[str, str], list] = {}
    for r in records:
        groups.setdefault((r.env_id, r.agent_name), []).append(r)
    table = Table(title=title)
    for col in ("env", "agent", "metric", "mean", "s.e.", "seeds ok", "no metric", "failed", "timeout", "wall s"):
        table.add_column(col)
    for (env_id, agent), recs in sorted(groups.items()):
        c = card(env_id)
        vals = []
        no_metric = 0  # ok runs whose episodes lack the primary metric: counted, never dropped silently
        for r in recs:
            if r.status == "ok":
                try:
                    vals.append(float(np.mean(r.metric(c.primary_metric))))
                except KeyError:
                    no_metric += 1
        mean = f"{np.mean(vals):.4g}" if vals else "-"
        se = f"{np.std(vals, ddof=1) / np.sqrt(len(vals)):.2g}" if len(vals) > 1 else "-"
        arrow = "↑" if c.direction == "max" else "↓"
        table.add_row(
            env_id, agent, f"{c.primary_metric} {arrow}", mean, se,
            str(sum(r.status == "ok" for r in recs)), str(no_metric), str(sum(r.status == "failed" for r in recs)),
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
    timeout: Optional[float] = typer.Option(600.0, help="Seconds per run before it is stopped and recorded as timeout."),
    address: Optional[str] = typer.Option(None, help="Ray cluster address for --executor ray (auto, host:port); default: a private local instance."),
    max_retries: int = typer.Option(2, help="Ray: times a run whose worker died is retried before it is recorded as failed."),
    rerun: bool = typer.Option(False, "--rerun", help=RERUN_HELP),
    resume: bool = typer.Option(False, "--resume", hidden=True, help="Skip stored seeds (the default; kept for old scripts)."),
    device: str = typer.Option("cpu", help="Torch device for agents that use torch: cpu, cuda or auto."),
    memory_mb: Optional[int] = typer.Option(None, "--memory-mb", help="Resident memory of each run's whole process tree in MB (process and ray executors; a run past it is killed and stored as failed)."),
    store: Optional[str] = typer.Option(None, help="Leaderboard store: SQLAlchemy URL or file (default ./icmlgym-results/leaderboard.db or $ICMLGYM_HOME)."),
    no_store: bool = typer.Option(False, "--no-store", help="Do not write the records to a store."),
    json_out: Optional[Path] = typer.Option(None, "--json", help="Also write the run records to this JSON file."),
    batch_seeds: bool = typer.Option(False, "--batch-seeds", help="Play each entry's seeds in one vector env where the env and agent have vector forms (the same records, many times faster on cheap envs; not with --executor ray)."),
    isolate: bool = typer.Option(False, "--isolate", help="Run the agent in a sandbox, reached through the evaluator's channel, as submit does (public seeds: the same metrics as a local run). See docs/security.md."),
    sandbox: str = typer.Option("auto", help="With --isolate: auto (bubblewrap when available), bwrap or none."),
) -> None:
    """Run an agent on an env over seeds; store the run records and print a summary.

    Seeds the store already holds as ok for this entry, env, kwargs, tier and code are skipped
    (each seed is one sample); --rerun runs them again and replaces them."""
    import icmlgym
    from icmlgym.agents import AgentLoadError, load_agent
    from icmlgym.catalog import MissingExtraError, UnknownEnvError
    from icmlgym.cli import validate
    from icmlgym.runner import make_tasks

    if resume and rerun:
        fail("give --rerun or --resume, not both (skipping stored seeds is the default)")
    if no_store and resume:
        fail("--resume needs a store (drop --no-store)")
    seed_values = validate.seeds(seeds, seed_list)
    validate.positive(episodes, "--episodes")
    validate.positive(timeout, "--timeout")
    validate.positive(workers, "--workers")
    env_kw = parse_kv(env_kwarg, "--env-kwarg")
    agent_kw = parse_kv(agent_kwarg, "--agent-kwarg")
    try:
        c = icmlgym.card(env_id)
        c.tier(tier)
        validate.env_kwargs(c, env_kw)
        if not isolate:  # an isolated agent is loaded in its sandbox only
            loaded = load_agent(agent, **agent_kw)
            validate.agent_kwargs(loaded, agent_kw)
    except (UnknownEnvError, AgentLoadError, MissingExtraError, ValueError) as err:
        fail(str(err.args[0]) if isinstance(err, KeyError) and err.args else str(err))
    tasks = make_tasks(c.id, agent, seed_values, tier, env_kw, agent_kw, episodes, device)
    board = None if no_store else open_board(store)
    if isolate:
        isolate_tasks(tasks, sandbox, timeout, board, batch_seeds)
    if batch_seeds and executor == "ray":
        fail("--batch-seeds runs on the inprocess and process executors, not on ray")
    if memory_mb is not None and (memory_mb <= 0 or executor == "inprocess"):
        fail(f"--memory-mb must be a positive number of MB and needs --executor process or ray; got {memory_mb} with {executor}")
    records = execute(tasks, executor, workers, timeout, address, max_retries, board, rerun, batch_seeds, memory_mb)
    if board is not None:
        from icmlgym.leaderboard.family import print_family_tables

        print_family_tables(board, tasks=[(c.id, env_kw)], tier=tier)  # every entry's seeds of this task
    elif records:
        console.print(summary_table(records, f"{c.id} · {tier}"))
    for r in records:
        if r.status != "ok":
            console.print(f"[red]{r.status}[/] seed {r.seed}: {r.error.strip().splitlines()[0] if r.error else ''}", highlight=False)
    if json_out:
        json_out.write_text(json.dumps([r.to_dict() for r in records], indent=1))
    if board is not None:
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
    rerun: bool = typer.Option(False, "--rerun", help=RERUN_HELP),
    resume: bool = typer.Option(False, "--resume", hidden=True, help="Skip stored seeds (the default; kept for old scripts)."),
    device: str = typer.Option("cpu", help="Torch device for agents that use torch: cpu, cuda or auto."),
    store: Optional[str] = typer.Option(None, help="Leaderboard store URL or file (default ./icmlgym-results/leaderboard.db or $ICMLGYM_HOME)."),
    batch_seeds: Optional[bool] = typer.Option(None, "--batch-seeds/--no-batch-seeds", help="Play each entry's seeds in one vector env where the env and agent have vector forms (the same records, faster on cheap envs). Default: on, except with --executor ray (which cannot) and --isolate."),
    isolate: bool = typer.Option(False, "--isolate", help="Run the agent in a sandbox, reached through the evaluator's channel, as submit does (public seeds: the same metrics as a local run). See docs/security.md."),
    sandbox: str = typer.Option("auto", help="With --isolate: auto (bubblewrap when available), bwrap or none."),
) -> None:
    """The main job: every installed env with its reference agent and baselines over 3 seeds at the
    smoke tier; results go to the leaderboard store, and it ends with one compact table per family
    (mean, 95% interval, rank interval, normalised score; the paper's method marked). Seeds the
    store already holds as ok are skipped (--rerun runs them again)."""
    import time

    import icmlgym
    from icmlgym.agents import AgentLoadError, load_agent
    from icmlgym.catalog import MissingExtraError
    from icmlgym.cli import validate
    from icmlgym.runner import make_tasks

    if resume and rerun:
        fail("give --rerun or --resume, not both (skipping stored seeds is the default)")
    seed_values = validate.seeds(seeds, None)
    validate.positive(timeout, "--timeout")
    validate.positive(workers, "--workers")
    try:
        members = icmlgym.suite(suite)
    except KeyError as err:
        fail(str(err.args[0]))
    for name in agent or []:
        try:
            load_agent(name)
        except (AgentLoadError, MissingExtraError) as err:
            fail(f"--agent: {err}")
    tasks = []
    skipped = []
    for env_id, kwargs in members:
        c = icmlgym.card(env_id)
        try:
            c.tier(tier)
        except ValueError as err:
            fail(f"--tier: {err}")
        if not c.installed:
            skipped.append(f"{c.id} (extra [{c.extra}] not installed)")
            continue
        for name in agent or c.agents:
            tasks += make_tasks(c.id, name, seed_values, tier, kwargs, None, None, device, suite=suite)
    for s in skipped:
        typer.echo(f"skipped {s}", err=True)
    if not tasks:
        fail(f"nothing to run: no installed env in suite {suite!r} has the agents asked for")
    if batch_seeds is None:  # the main job batches where it can: the same records, less per-run overhead
        batch_seeds = executor != "ray" and not isolate
    if executor == "process" and not isolate:
        from icmlgym.runner.worker import start_server

        start_server(tasks)  # its imports overlap the store's opening and the driver's other set-up
    board = open_board(store)
    if isolate:
        isolate_tasks(tasks, sandbox, timeout, board, batch_seeds)
    t0 = time.perf_counter()
    if batch_seeds and executor == "ray":
        fail("--batch-seeds runs on the inprocess and process executors, not on ray")
    records = execute(tasks, executor, workers, timeout, address, max_retries, board, rerun, batch_seeds)
    n_bad = sum(r.status != "ok" for r in records)
    typer.echo(f"{len(records)} run(s) ({n_bad} not ok) in {time.perf_counter() - t0:.1f} s", err=True)
    for r in records:
        if r.status != "ok":
            first = r.error.strip().splitlines()[0] if r.error else ""
            typer.echo(f"{r.status}: {r.env_id} {r.agent_name} seed {r.seed}: {first}", err=True)
    from icmlgym.leaderboard.family import print_family_tables

    try:
        print_family_tables(board, tasks=[(t.env_id, t.env_kwargs) for t in tasks], tier=tier)
    finally:
        board.close()
