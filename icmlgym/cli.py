"""The ``icmlgym`` command line: list | info | agents | run | check | benchmark | leaderboard | compare | submit."""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any, List, Optional

import typer
from rich.console import Console
from rich.table import Table

from icmlgym.leaderboard.commands import fail, open_board, parse_kv
from icmlgym.leaderboard.commands import register as register_leaderboard_commands

app = typer.Typer(
    name="icmlgym",
    help="ICML 2026 problems as registered Gymnasium / PettingZoo environments, a runner, and a leaderboard.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
console = Console(width=None if sys.stdout.isatty() else 160)


@app.command("list")
def list_cmd(
    family: Optional[str] = typer.Option(None, help="Only this family."),
    fmt: str = typer.Option("table", "--format", help="table, markdown or csv."),
) -> None:
    """List every registered environment: id, family, kind, primary metric, extra and whether it is installed."""
    import icmlgym

    df = icmlgym.tasks()
    if family:
        df = df[df["family"] == family]
        if df.empty:
            fail(f"no family {family!r}; families: {sorted(icmlgym.tasks()['family'].unique())}")
    cols = ["id", "family", "kind", "primary_metric", "direction", "cost_units", "extra", "installed", "reference_agent"]
    if fmt == "csv":
        sys.stdout.write(df[cols].to_csv(index=False))
        return
    if fmt == "markdown":
        sys.stdout.write(df[cols].to_markdown(index=False) if hasattr(df, "to_markdown") else df[cols].to_string(index=False))
        sys.stdout.write("\n")
        return
    table = Table(title=f"icmlgym environments ({len(df)})")
    for c in cols:
        table.add_column(c)
    for _, row in df[cols].iterrows():
        table.add_row(*["yes" if v is True else "no" if v is False else str(v) for v in row])
    console.print(table)


@app.command()
def info(env_id: str = typer.Argument(..., help="An env id, e.g. icmlgym/Bandit-v0.")) -> None:
    """Show an env's card, docstring, spaces, metrics, tiers, suites, and the agents that apply."""
    import icmlgym
    from icmlgym.catalog import AGENTS, UnknownEnvError, extra_installed

    try:
        c = icmlgym.card(env_id)
    except UnknownEnvError as err:
        fail(str(err))
    console.rule(f"[bold]{c.id}")
    console.print(f"[bold]family[/] {c.family}   [bold]kind[/] {c.kind}   [bold]paper[/] {c.paper}")
    console.print(f"[bold]primary metric[/] {c.primary_metric} ({'higher' if c.direction == 'max' else 'lower'} is better)   [bold]cost units[/] {', '.join(c.cost_units)}")
    console.print(f"[bold]extra[/] {c.extra or '(none)'}   installed: {extra_installed(c.extra)}")
    tiers = Table(title="budget tiers")
    for col in ("tier", "episodes/seed", "max steps", "env kwargs", "train steps", "seeds", "score refs (random, reference)"):
        tiers.add_column(col)
    for name, t in c.tiers.items():
        tiers.add_row(name, str(t.episodes), str(t.max_steps or "env"), json.dumps(t.env_kwargs), str(t.train_steps), str(t.seeds), str(c.score_refs.get(name, "-")))
    console.print(tiers)
    agents = Table(title="agents that apply")
    for col in ("name", "kind", "description"):
        agents.add_column(col)
    for name in c.agents:
        a = AGENTS.get(name)
        agents.add_row(name, a.kind if a else "?", a.description if a else "(not registered)")
    console.print(agents)
    suites = [s for s, members in icmlgym.suites().items() if any(m[0] == c.id for m in members)]
    console.print(f"[bold]suites[/] {', '.join(sorted(suites))}")
    doc = None
    module_name, _, attr = c.entry_point.partition(":")
    if extra_installed(c.extra):
        try:
            env = icmlgym.make(c.id, **c.tier("smoke").env_kwargs)
            if c.kind == "multi":
                a0 = env.possible_agents[0]
                console.print(f"[bold]agents[/] {env.possible_agents}")
                console.print(f"[bold]action space ({a0})[/] {env.action_space(a0)}")
                console.print(f"[bold]observation space ({a0})[/] {env.observation_space(a0)}")
            else:
                console.print(f"[bold]action space[/] {env.action_space}")
                console.print(f"[bold]observation space[/] {env.observation_space}")
            doc = inspect.getdoc(sys.modules[type(env.unwrapped if c.kind == 'single' else env).__module__])
            env.close()
        except Exception as err:  # show the card even if the env cannot be made here
            console.print(f"[yellow]could not make the env: {type(err).__name__}: {err}")
    else:
        console.print(f'[yellow]install the extra to make this env: pip install "icmlgym[{c.extra}]"')
    extra_info = _family_info(c.family, c.id)
    if doc:
        console.rule("docstring")
        console.print(doc, markup=False, highlight=False)
    if extra_info:
        console.rule("family")
        console.print(extra_info, markup=False, highlight=False)


def _family_info(family: str, env_id: str) -> str:
    """Optional extra text a family exposes as ``icmlgym.envs.<family>.describe(env_id) -> str``."""
    import importlib

    try:
        module = importlib.import_module(f"icmlgym.envs.{family}")
    except ImportError:
        return ""
    describe = getattr(module, "describe", None)
    if not callable(describe):
        return ""
    try:
        return str(describe(env_id))
    except Exception as err:
        return f"(describe failed: {type(err).__name__}: {err})"


@app.command()
def agents(env_id: Optional[str] = typer.Option(None, "--env", help="Only the agents listed for this env.")) -> None:
    """List shipped agents and baselines (names usable with --agent)."""
    import icmlgym
    from icmlgym.agents import agents_table

    rows = agents_table()
    if env_id:
        names = set(icmlgym.card(env_id).agents)
        rows = [r for r in rows if r["name"] in names]
    table = Table(title="agents")
    for col in ("name", "kind", "extra", "entry_point", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["kind"], r["extra"], r["entry_point"], r["description"])
    console.print(table)


def _execute(tasks, executor, workers, timeout, address, max_retries, board, resume: bool):
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


def _summary_table(records, title: str) -> Table:
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
    records = _execute(tasks, executor, workers, timeout, address, max_retries, board, resume)
    console.print(_summary_table(records, f"{c.id} · {tier}"))
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
def check(
    env_ids: Optional[List[str]] = typer.Argument(None, help="Env ids to check (default: every registered env)."),
    tier: str = typer.Option("smoke", help="Make the envs with this tier's kwargs."),
) -> None:
    """Check envs: Gymnasium's check_env (or PettingZoo's parallel_api_test and parallel_seed_test),
    seed determinism, and that an invalid action raises ValueError. Prints a pass/fail table."""
    import icmlgym
    from icmlgym.catalog import UnknownEnvError
    from icmlgym.envs.checking import check as check_env_id

    try:
        ids = [icmlgym.card(i).id for i in env_ids] if env_ids else [c.id for c in icmlgym.catalog.cards()]
    except UnknownEnvError as err:
        fail(str(err))
    table = Table(title="icmlgym check")
    for col in ("env", "check", "result", "seconds", "detail"):
        table.add_column(col)
    failed = 0
    for env_id in ids:
        with console.status(f"checking {env_id}"):
            results = check_env_id(env_id, tier=tier)
        for r in results:
            mark = "[green]pass" if r.passed else "[yellow]skip" if r.passed is None else "[red]FAIL"
            failed += r.passed is False
            table.add_row(r.env_id, r.check, mark, f"{r.seconds:.2f}", r.detail.splitlines()[0][:120] if r.detail else "")
    console.print(table)
    if failed:
        console.print(f"[red]{failed} check(s) failed")
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
    records = _execute(tasks, executor, workers, timeout, address, max_retries, board, resume)
    console.print(_summary_table(records, f"icmlgym benchmark · suite {suite} · {tier} · {seeds} seeds"))
    n_bad = sum(r.status != "ok" for r in records)
    console.print(f"{len(records)} runs ({n_bad} not ok) in {time.perf_counter() - t0:.1f} s; stored in {board.url}")
    for r in records:
        if r.status != "ok":
            console.print(f"[red]{r.status}[/] {r.env_id} {r.agent_name} seed {r.seed}: {r.error.strip().splitlines()[0] if r.error else ''}")
    board.close()


register_leaderboard_commands(app)  # leaderboard, compare, submit


def main() -> None:
    app()


if __name__ == "__main__":
    main()
