"""Checking what a worker reports before it becomes a record.

A worker's result crosses a pipe (or Ray's object store); whatever arrives is
checked here, so that a malformed result, or a record for another task, is a
``failed`` run with the reason instead of a crash of the driver or a forged entry.
"""

from __future__ import annotations

from typing import Any

from icmlgym.runner.channel import cap_text
from icmlgym.runner.record import RunRecord


def checked_record(task: Any, message: Any, elapsed: float = 0.0, meta: dict[str, str] | None = None) -> RunRecord:
    """The record a worker reported for ``task``, or a ``failed`` record saying what was wrong with it.

    The record's env id, agent (name, entry point and, when the task fixes it, source
    hash), seed and tier must be the task's."""
    from icmlgym.catalog import card
    from icmlgym.runner.loop import failed_record
    from icmlgym.runner.task import task_identity

    def bad(why: str) -> RunRecord:
        return failed_record(task, "failed", cap_text(f"the worker's result was rejected: {why}"), elapsed, meta)

    if not isinstance(message, dict):
        return bad(f"a {type(message).__name__}, not a run record")
    try:
        rec = RunRecord.from_dict(dict(message))
    except Exception as err:  # noqa: BLE001 - any malformed record
        return bad(f"not a valid run record ({type(err).__name__}: {str(err)[:300]})")
    # the identity a record must carry, without hashing code here (the driver checks every record)
    c = task.card or card(task.env_id)
    want = task_identity(task, task.isolation.meta(c) if task.isolation is not None else (meta or {}))
    mismatched = [f for f in ("env_id", "seed", "tier", "agent_kwargs", "env_kwargs") if getattr(rec, f) != want[f]]
    if task.isolation is not None:
        mismatched += [f for f in ("agent_name", "agent_entry_point", "agent_source_hash") if getattr(rec, f) != want[f]]
    if mismatched:
        return bad(f"it does not match the task that was sent ({', '.join(mismatched)} differ)")
    return rec


__all__ = ["checked_record"]
