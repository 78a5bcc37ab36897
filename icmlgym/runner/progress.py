"""Progress of a sweep: a live bar with an ETA in a terminal, one line per finished run otherwise.

In a terminal (stderr is a TTY) a rich progress bar shows done/total, elapsed time and the
estimated time left. Anywhere else (CI logs, ``| tee``, a file) the bar would print nothing
until the end, so each finished run prints one plain line to stderr instead::

    [ 12/180] icmlgym/Bandit-v0 ucb1 seed 2: ok in 0.4 s · 1m02s elapsed, about 4m10s left

``every`` thins the lines out for long sweeps (a line per N runs, plus every run that is not ok).
"""

from __future__ import annotations

import sys
import time
from typing import IO

from icmlgym.runner.record import RunRecord


def _clock(seconds: float) -> str:
    seconds = max(0, int(round(seconds)))
    h, rest = divmod(seconds, 3600)
    m, s = divmod(rest, 60)
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s" if m else f"{s}s"


class RunProgress:
    """Reports finished runs of a sweep of ``total`` runs (see the module docstring).

    Args:
        total: runs in the sweep.
        stream: where to write (default stderr).
        live: a live bar (default: when ``stream`` is a terminal).
        every: with lines, print one per ``every`` finished runs (runs that are not ok always print).
    """

    def __init__(self, total: int, stream: IO[str] | None = None, live: bool | None = None, every: int = 1) -> None:
        self.total = int(total)
        self.stream = stream if stream is not None else sys.stderr
        self.live = bool(getattr(self.stream, "isatty", lambda: False)()) if live is None else live
        self.every = max(1, int(every))
        self.done = 0
        self.t0 = time.monotonic()
        self._bar = None
        self._tid = None

    def __enter__(self) -> "RunProgress":
        if self.live and self.total:
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn, TimeRemainingColumn

            self._bar = Progress(
                TextColumn("[bold]runs"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(), TextColumn("eta"),
                TimeRemainingColumn(), TextColumn("{task.description}", markup=False),
                console=Console(file=self.stream), transient=False,
            )
            self._bar.start()
            self._tid = self._bar.add_task("", total=self.total)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._bar is not None:
            self._bar.stop()

    def eta(self) -> float | None:
        """Seconds left at the mean pace so far (None before the first run finishes)."""
        if not self.done:
            return None
        return (time.monotonic() - self.t0) / self.done * (self.total - self.done)

    def line(self, rec: RunRecord) -> str:
        """The plain line for a finished run."""
        width = len(str(self.total))
        elapsed = time.monotonic() - self.t0
        left = self.eta()
        tail = f"{_clock(elapsed)} elapsed" + (f", about {_clock(left)} left" if left and self.done < self.total else "")
        return f"[{self.done:>{width}}/{self.total}] {rec.env_id} {rec.agent_name} seed {rec.seed}: {rec.status} in {rec.wall_time:.1f} s · {tail}"

    def update(self, rec: RunRecord) -> None:
        """Count a finished run and show it."""
        self.done += 1
        if self._bar is not None:
            self._bar.update(self._tid, advance=1, description=f"{rec.env_id} {rec.agent_name} seed {rec.seed}: {rec.status}")
        elif self.done % self.every == 0 or self.done == self.total or rec.status != "ok":
            print(self.line(rec), file=self.stream, flush=True)


__all__ = ["RunProgress"]
