"""Browsing the catalog: ``icmlgym list``, ``icmlgym info`` and ``icmlgym agents``."""

from __future__ import annotations

import inspect
import json
import sys
from typing import Optional

import typer
from rich.table import Table

from rich.markup import escape

from icmlgym.cli.common import app, console, fail


LIST_COLUMNS = ("id", "family", "kind", "primary_metric", "installed", "extra", "reference_agent", "direction", "cost_units", "paper")


@app.command("list")
def list_cmd(
    family: Optional[str] = typer.Option(None, help="Only this family."),
    fmt: str = typer.Option("table", "--format", "-f", help="table (fits the terminal), markdown, json or csv."),
) -> None:
    """List every registered environment: id, family, kind, primary metric, extra, whether it is
    installed, and the paper's method (its reference agent)."""
    from icmlgym.catalog import cards
    from icmlgym.cli import tables
    from icmlgym.cli.validate import did_you_mean
    from icmlgym.terminal import terminal_width

    if fmt not in tables.FORMATS:
        fail(f"unknown --format {fmt!r}; choose one of {', '.join(tables.FORMATS)}")
    rows = [c.to_row() for c in cards()]
    if family:
        families = sorted({r["family"] for r in rows})
        rows = [r for r in rows if r["family"] == family]
        if not rows:
            fail(f"--family: no family {family!r}{did_you_mean(family, families)}; families: {', '.join(families)}")
    title = f"icmlgym environments ({len(rows)})" if fmt == "table" else ""
    sys.stdout.write(tables.render(rows, LIST_COLUMNS, fmt, width=terminal_width(), keep=2, title=title))


@app.command("suites")
def suites_cmd(
    fmt: str = typer.Option("table", "--format", "-f", help="table, markdown, json or csv."),
) -> None:
    """List the suites: their envs, families, and whether the leaderboard aggregates them (a family
    suite, or a cross-family suite with a declared reason)."""
    from icmlgym.catalog import SUITE_REASONS, suite_families, suites
    from icmlgym.cli import tables
    from icmlgym.terminal import terminal_width

    if fmt not in tables.FORMATS:
        fail(f"unknown --format {fmt!r}; choose one of {', '.join(tables.FORMATS)}")
    rows = []
    for name, members in sorted(suites().items()):
        fams = suite_families(members)
        envs = sorted({e for e, _ in members})
        rows.append({
            "suite": name, "tasks": len(members), "families": ", ".join(fams),
            "aggregate": "yes" if len(fams) <= 1 else ("yes: " + SUITE_REASONS[name]) if name in SUITE_REASONS else "no (several families)",
            "envs": ", ".join(envs) if len(envs) <= 3 else f"{', '.join(envs[:3])}, ... ({len(envs)} envs)",
        })
    sys.stdout.write(tables.render(rows, ("suite", "tasks", "aggregate", "families", "envs"), fmt, width=terminal_width(), keep=2))


INFO_LINES = 25  # lines of a family's description shown without --all


@app.command()
def info(
    env_id: str = typer.Argument(..., help="An env id, e.g. icmlgym/Bandit-v0."),
    show_all: bool = typer.Option(False, "--all", help="Show long lists (a family's task list) in full."),
) -> None:
    """Show an env's card, docstring, spaces, metrics, tiers, suites, and the agents that apply."""
    import icmlgym
    from icmlgym.catalog import AGENTS, UnknownEnvError, agent_kind, extra_installed

    try:
        c = icmlgym.card(env_id)
    except UnknownEnvError as err:
        fail(str(err))
    console.rule(f"[bold]{escape(c.id)}")
    console.print(f"[bold]family[/] {escape(c.family)}   [bold]kind[/] {c.kind}   [bold]paper[/] {escape(c.paper)}")
    console.print(f"[bold]primary metric[/] {escape(c.primary_metric)} ({'higher' if c.direction == 'max' else 'lower'} is better)   [bold]cost units[/] {escape(', '.join(c.cost_units))}")
    console.print(f"[bold]extra[/] {escape(c.extra or '(none)')}   installed: {extra_installed(c.extra)}")
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
        agents.add_row(name, agent_kind(name), a.description if a else "(not registered)")
    console.print(agents)
    suites = [s for s, members in icmlgym.suites().items() if any(m[0] == c.id for m in members)]
    console.print(f"[bold]suites[/] {escape(', '.join(sorted(suites)))}")
    doc = None
    module_name, _, attr = c.entry_point.partition(":")
    if extra_installed(c.extra):
        try:
            env = icmlgym.make(c.id, **c.tier("smoke").env_kwargs)
            if c.kind == "multi":
                a0 = env.possible_agents[0]
                console.print(f"[bold]agents[/] {escape(str(env.possible_agents))}")
                console.print(f"[bold]action space ({escape(str(a0))})[/] {escape(str(env.action_space(a0)))}")
                console.print(f"[bold]observation space ({escape(str(a0))})[/] {escape(str(env.observation_space(a0)))}")
            else:
                console.print(f"[bold]action space[/] {escape(str(env.action_space))}")
                console.print(f"[bold]observation space[/] {escape(str(env.observation_space))}")
            doc = inspect.getdoc(sys.modules[type(env.unwrapped if c.kind == 'single' else env).__module__])
            env.close()
        except Exception as err:  # show the card even if the env cannot be made here
            console.print(f"[yellow]could not make the env: {escape(f'{type(err).__name__}: {err}')}")
    else:
        console.print("[yellow]install the extra to make this env: " + escape(f'pip install "icmlgym[{c.extra}]"'))
    extra_info = _family_info(c.family, c.id)
    if doc:
        console.rule("docstring")
        console.print(doc, markup=False, highlight=False)
    if extra_info:
        console.rule("family")
        lines = extra_info.splitlines()
        if len(lines) > INFO_LINES and not show_all:
            extra_info = "\n".join(lines[:INFO_LINES]) + f"\n... {len(lines) - INFO_LINES} more line(s): `icmlgym info {c.id} --all` shows them"
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

    from icmlgym.catalog import UnknownEnvError

    rows = agents_table()
    if env_id:
        try:
            names = set(icmlgym.card(env_id).agents)
        except UnknownEnvError as err:
            fail(f"--env: {err.args[0]}")
        rows = [r for r in rows if r["name"] in names]
    table = Table(title="agents")
    for col in ("name", "kind", "extra", "entry_point", "description"):
        table.add_column(col)
    for r in rows:
        table.add_row(r["name"], r["kind"], r["extra"], r["entry_point"], r["description"])
    console.print(table)

