"""Browsing the catalog: ``icmlgym list``, ``icmlgym info`` and ``icmlgym agents``."""

from __future__ import annotations

import inspect
import json
import sys
from typing import Optional

import typer
from rich.table import Table

from icmlgym.cli.common import app, console, fail


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

