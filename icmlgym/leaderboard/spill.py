"""Finished runs are never lost to a store that cannot be written.

:class:`SpillingWriter` stores each record as the runner reports it, retrying a
write that fails (a lock held too long, a full disk, a server gone away); when the
retries are spent it appends the record to a spill file next to the store
(``<store>.spill.jsonl``, one ``RunRecord.to_dict()`` per line) and the sweep goes
on. ``icmlgym leaderboard --merge <spill file>`` (or :meth:`Leaderboard.import_`)
takes spilled records back; merging twice adds nothing.
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable

from icmlgym.runner.record import RunRecord

SPILL_SUFFIX = ".spill.jsonl"


def spill_path(board: Any) -> Path:
    """Where records for ``board`` spill: beside an SQLite file, else in ``$ICMLGYM_HOME`` or the working folder."""
    path = getattr(board._store, "path", None)
    if path is not None:
        return Path(f"{path}{SPILL_SUFFIX}")
    folder = Path(os.environ.get("ICMLGYM_HOME") or Path.cwd() / "icmlgym-results")
    return folder / f"{board.store_id or 'store'}{SPILL_SUFFIX}"


class SpillingWriter:
    """``on_record`` for the runner: store each record, spilling it to a file when the store fails.

    Args:
        board: the :class:`~icmlgym.leaderboard.Leaderboard` to write.
        retries: attempts per record before it spills.
        backoff: seconds before the second attempt (doubling after each).
        warn: called once with a message when the first record spills.
        write: how one record is stored (default ``board.add``).
    """

    def __init__(self, board: Any, retries: int = 3, backoff: float = 1.0, warn: Callable[[str], None] | None = None,
                 write: Callable[[RunRecord], Any] | None = None) -> None:
        self.board = board
        self.write = write
        self.retries = max(1, int(retries))
        self.backoff = float(backoff)
        self.warn = warn
        self.path = spill_path(board)
        self.spilled = 0
        self.errors: list[str] = []

    def __call__(self, record: RunRecord) -> None:
        delay = self.backoff
        for attempt in range(1, self.retries + 1):
            try:
                (self.write or self.board.add)(record)
                return
            except Exception as err:  # noqa: BLE001 - any store failure spills, never aborts the sweep
                last = f"{type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}"
                if attempt < self.retries:
                    time.sleep(delay)
                    delay *= 2
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(record.to_dict(), allow_nan=True) + "\n")
        self.spilled += 1
        self.errors.append(last)
        if self.spilled == 1 and self.warn is not None:
            self.warn(f"could not store a finished run after {self.retries} attempts ({last}); "
                      f"spilling finished runs to {self.path} (merge them with `icmlgym leaderboard --merge {self.path}`)")

    def summary(self) -> str:
        """What to tell the user at the end (empty when nothing spilled)."""
        if not self.spilled:
            return ""
        return (f"{self.spilled} finished run(s) could not be stored and were written to {self.path}; "
                f"take them back with: icmlgym leaderboard --merge {self.path}")


def read_spill(path: str | os.PathLike) -> list[RunRecord]:
    """The records of a spill file (a line that does not parse is an error naming the line)."""
    out = []
    with open(path, encoding="utf-8") as fh:
        for i, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                out.append(RunRecord.from_dict(json.loads(line)))
            except (ValueError, TypeError) as err:
                raise ValueError(f"{path}, line {i}: not a run record ({err})") from None
    return out


__all__ = ["SPILL_SUFFIX", "SpillingWriter", "read_spill", "spill_path"]
