"""The ``icmlgym`` command line: list | info | agents | run | check | benchmark | findings | leaderboard | compare | submit | zoo | cache.

One module per command group; each decorates its commands with ``@app.command`` on the app in
:mod:`icmlgym.cli.common`. A new group is a new module here plus one name in the import below.
"""

from __future__ import annotations

from icmlgym.cli import browse, check, findings, leaderboard, run, submit, zoo  # noqa: F401  (registers the commands)
from icmlgym.cli.common import app

__all__ = ["app", "main"]


def main() -> None:
    """The console entry point (``icmlgym``)."""
    app()


if __name__ == "__main__":
    main()
