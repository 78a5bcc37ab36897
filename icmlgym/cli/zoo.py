"""``icmlgym zoo list|build|info`` and ``icmlgym cache list|clear``: the model zoo and the shared cache."""

from __future__ import annotations

import json
import time
from typing import List, Optional

import typer
from rich.table import Table

from icmlgym.cli.common import app, console, fail

zoo_app = typer.Typer(help="The model zoo: small models icmlgym trains, caches and loads (list, build, info).", no_args_is_help=True)
cache_app = typer.Typer(help="The shared on-disk cache under $ICMLGYM_HOME (list, clear).", no_args_is_help=True)
app.add_typer(zoo_app, name="zoo")
app.add_typer(cache_app, name="cache")


def _check_size(size: str) -> None:
    from icmlgym.zoo import SIZES

    if size not in SIZES:
        fail(f"unknown --size {size!r}; sizes: {', '.join(SIZES)}")


@zoo_app.command("list")
def zoo_list(size: str = typer.Option("smoke", help="Which size's build status to show (smoke, standard).")) -> None:
    """Every zoo member: kind, what it is, whether it is built at SIZE, and its held-out quality."""
    from icmlgym import zoo

    _check_size(size)
    table = Table("member", "kind", "built", "params", "train s", "quality", "description")
    for m in zoo.members():
        card = zoo.cached_card(m.name, size) if size in m.configs else None
        q = f"{m.quality}={card['quality'][m.quality]}" if card else ""
        table.add_row(m.name, m.kind, "yes" if card else "no", str(card["parameters"]) if card else "",
                      f"{card['train_seconds']:.1f}" if card else "", q, m.description)
    console.print(table)


@zoo_app.command("build")
def zoo_build(
    names: Optional[List[str]] = typer.Argument(None, help="Members to build (see `icmlgym zoo list`)."),
    all_: bool = typer.Option(False, "--all", help="Build every member."),
    size: str = typer.Option("smoke", help="smoke (about a minute each on 2 cores) or standard."),
    seed: int = typer.Option(0, help="Training seed (part of the cache key)."),
    force: bool = typer.Option(False, help="Retrain even when a cached entry exists."),
    threads: int = typer.Option(1, help="torch threads while training (the recorded times say how many)."),
) -> None:
    """Train members (or load them from the cache) and print time and held-out quality."""
    import torch

    from icmlgym import zoo

    _check_size(size)
    if threads < 1:
        fail(f"--threads must be >= 1, got {threads}")
    if all_ and names:
        fail("give member names or --all, not both")
    if not all_ and not names:
        fail("name members to build, or pass --all")
    try:
        chosen = [m.name for m in zoo.members()] if all_ else [zoo.get(n).name for n in names]
    except zoo.ZooError as err:
        fail(str(err))
    # members others depend on first (an SAE needs its base model)
    chosen.sort(key=lambda n: len(zoo.get(n).depends))
    torch.set_num_threads(threads)
    for name in chosen:
        t0 = time.perf_counter()
        try:
            z = zoo.load(name, size, seed=seed, force=force)
        except zoo.ZooError as err:
            fail(str(err))
        wall = time.perf_counter() - t0
        head = z.card["headline"]
        how = f"trained in {z.card['train_seconds']:.1f} s" if z.source == "trained" else f"loaded from {z.source} in {wall:.3f} s"
        typer.echo(f"{name} ({size}): {how}; {head} = {z.card['quality'][head]}; quality {json.dumps(z.card['quality'])}")


@zoo_app.command("info")
def zoo_info(name: str = typer.Argument(..., help="A zoo member."), size: str = typer.Option("smoke", help="Size whose card to show.")) -> None:
    """A member's card: configuration, data, parameters, training time and held-out quality (when built)."""
    from icmlgym import zoo

    _check_size(size)
    try:
        data = zoo.info(name, size)
    except zoo.ZooError as err:
        fail(str(err))
    typer.echo(json.dumps(data, indent=2, sort_keys=True, default=str))


@cache_app.command("list")
def cache_list() -> None:
    """Files and bytes per cache namespace."""
    from icmlgym import cache

    rows = cache.report()
    table = Table("namespace", "files", "MB", "path")
    for u in rows:
        table.add_row(u.namespace, str(u.files), f"{u.bytes / 2**20:.2f}", u.path)
    console.print(table)
    typer.echo(f"total: {sum(u.files for u in rows)} files, {sum(u.bytes for u in rows) / 2**20:.2f} MB under {cache.home()}")


@cache_app.command("clear")
def cache_clear(
    namespace: Optional[str] = typer.Argument(None, help="One namespace (see `icmlgym cache list`); none: all of them."),
    yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
) -> None:
    """Delete cached files (zoo models, embeddings, query answers, screening arrays)."""
    from icmlgym import cache

    present = [u.namespace for u in cache.report()]
    if namespace is not None and namespace not in present:
        fail(f"no cache namespace {namespace!r}; present: {', '.join(present) or 'none'}")
    what = f"namespace {namespace!r}" if namespace else f"every namespace ({', '.join(present) or 'none'})"
    if not yes and not typer.confirm(f"delete {what} under {cache.home()}?"):
        fail("nothing deleted", code=1)
    files, nbytes = cache.clear(namespace)
    typer.echo(f"deleted {files} files ({nbytes / 2**20:.2f} MB)")
