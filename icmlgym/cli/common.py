"""What every command shares: the Typer app, the console, error exits, store opening, option parsing.

A command group is a module of this package that decorates its functions with ``@app.command``;
``icmlgym/cli/__init__.py`` imports each group once. Heavy imports stay inside the commands so
that ``icmlgym --help`` is quick.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any, List, NoReturn, Optional

import typer
from rich.console import Console

app = typer.Typer(
    name="icmlgym",
    help="ICML 2026 problems as registered Gymnasium / PettingZoo environments, a runner, and a leaderboard.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,  # help texts are plain: "[ray]" is an extra's name, not markup
)
def _version(value: bool) -> None:
    if value:
        import icmlgym

        typer.echo(f"icmlgym {icmlgym.__version__}")
        raise typer.Exit()


@app.callback()
def _main(
    version: bool = typer.Option(False, "--version", callback=_version, is_eager=True, help="Print the version and exit."),
) -> None:
    """ICML 2026 problems as registered Gymnasium / PettingZoo environments, a runner, and a leaderboard."""


console = Console(width=None if sys.stdout.isatty() else 160)

STORE_HELP = "Leaderboard store: an SQLAlchemy URL (sqlite:///..., postgresql+psycopg://...) or a file path. Default: $ICMLGYM_HOME/leaderboard.db, else ./icmlgym-results/leaderboard.db."
FORMAT_HELP = "Output: table (terminal), markdown, csv, or html (a self-contained report file with plots; see --output)."


def fail(message: str, code: int = 2) -> NoReturn:
    """Print ``error: message`` to stderr and exit with ``code`` (2: bad input)."""
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def store_file(store: Optional[str]) -> Optional[Path]:
    """The SQLite file a ``--store`` value names (the default store too), without creating anything;
    None for a server URL or an in-memory store."""
    import os

    if store is None:
        home = os.environ.get("ICMLGYM_HOME")
        return (Path(home) if home else Path.cwd() / "icmlgym-results") / "leaderboard.db"
    if "://" not in store:
        return Path(store).expanduser()
    if store.startswith("sqlite:///"):
        rest = store[len("sqlite:///"):]
        return Path(rest) if rest and rest != ":memory:" else None
    return None


def open_board(store: Optional[str], must_exist: bool = False, read_only: bool = False):
    """Open the store, or exit with the store's own error (a foreign or corrupt file is never touched).

    ``must_exist``: for commands that only read, a store file that does not exist is an error
    (exit 2), never created. ``read_only``: SQLite's read-only mode (no schema write, no
    checkpoint; an empty file is not adopted)."""
    from icmlgym.leaderboard import Leaderboard, StoreError

    if must_exist:
        path = store_file(store)
        if path is not None and not path.is_file():
            where = "--store" if store is not None else "the default store"
            fail(f"{where} {path} does not exist: run `icmlgym benchmark` or `icmlgym run` first, or give --store")
    try:
        return Leaderboard(store, read_only=read_only)
    except (StoreError, ValueError) as err:
        fail(str(err))


def emit(text: str, output: Optional[Path]) -> None:
    """Write ``text`` to stdout, or to ``output`` (creating its folder) and say so."""
    if output is None:
        sys.stdout.write(text)
        sys.stdout.flush()
    else:
        output.parent.mkdir(parents=True, exist_ok=True)
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


def check_format(fmt: str) -> None:
    """Exit with an error unless ``fmt`` is one of the leaderboard's output formats."""
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

