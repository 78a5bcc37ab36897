"""The width text output is laid out for (shared by the CLI and the leaderboard's tables)."""

from __future__ import annotations

import os
import shutil
import sys


def terminal_width(default: int = 100) -> int:
    """``$COLUMNS`` when set, else the terminal's width, else ``default`` (pipes, files, CI logs)."""
    env = os.environ.get("COLUMNS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    if sys.stdout.isatty():
        return shutil.get_terminal_size((default, 24)).columns
    return default


__all__ = ["terminal_width"]
