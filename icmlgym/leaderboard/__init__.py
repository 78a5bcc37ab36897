"""The leaderboard: an SQL store of run records, scoring with confidence intervals, and views.

    from icmlgym.leaderboard import Leaderboard, render
    board = Leaderboard()                        # ./icmlgym-results/leaderboard.db (or $ICMLGYM_HOME)
    board.add(icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=3))
    print(render(board.table(env="icmlgym/Bandit-v0"), "markdown"))
    write_report(board, "report.html", suite="bandit", tier="smoke")

Scores are recomputed from the stored episodes; see ``docs/leaderboard.md``.
"""

from icmlgym.leaderboard.board import EXPORT_FORMAT, Leaderboard
from icmlgym.leaderboard.schema import SCHEMA_VERSION
from icmlgym.leaderboard.store import StoreError, default_store_url, resolve_url
from icmlgym.leaderboard.views import FORMATS, render, report_html, write_report

__all__ = [
    "EXPORT_FORMAT",
    "FORMATS",
    "Leaderboard",
    "SCHEMA_VERSION",
    "StoreError",
    "default_store_url",
    "render",
    "report_html",
    "resolve_url",
    "write_report",
]
