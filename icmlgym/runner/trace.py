"""Opt-in timestamps of a sweep's stages, to find where its wall time goes outside the runs.

With ``$ICMLGYM_TRACE`` set to a file path, the process executor's driver and its workers
append one JSON line per stage of every unit of work (a run, or a batch of seeds)::

    {"ev": "exec0", "key": "icmlgym/Bandit-v0 ucb1 0", "t": 1234.5678, "cpu": 0.21, "pid": 4242}

``t`` is ``time.monotonic()`` (one clock for every process of the machine), ``cpu`` the
process's own CPU seconds (``time.process_time()``; a worker's count starts at its fork).
Driver stages: ``submit`` (before the worker is forked), ``started`` (the fork server
returned its pid), ``ready`` (its records were read and checked), ``stored`` (the records
were handed to the sweep's ``on_record``, i.e. written to the store). Worker stages:
``child`` (the forked process runs), ``exec0`` / ``exec1`` (around the run itself), ``sent``
(its records were serialised and sent). ``benchmarks/mainjob_trace.py`` turns a trace into
the per-stage split. Unset (the default), nothing is written and nothing is timed.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

ENV_VAR = "ICMLGYM_TRACE"


def enabled() -> bool:
    """Whether this process traces (``$ICMLGYM_TRACE`` is set)."""
    return bool(os.environ.get(ENV_VAR))


def work_key(work: Any) -> str:
    """``"<env id> <agent> <seed>"`` of a run task, or of a batch's first task."""
    task = work.tasks[0] if hasattr(work, "tasks") else work
    agent = task.agent if isinstance(task.agent, str) else type(task.agent).__name__
    return f"{task.env_id} {agent} {task.seed}"


def mark(event: str, work: Any = None, key: str | None = None, **fields: Any) -> None:
    """Append one stage of ``work`` (or of the run named ``key``) to the trace file (a no-op unless tracing)."""
    path = os.environ.get(ENV_VAR)
    if not path:
        return
    line = json.dumps({"ev": event, "key": key if key is not None else work_key(work), "t": time.monotonic(), "cpu": time.process_time(),
                       "pid": os.getpid(), **fields})
    # one write of one line in append mode: lines of concurrent processes do not interleave
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, (line + "\n").encode())
    finally:
        os.close(fd)


__all__ = ["ENV_VAR", "enabled", "mark", "work_key"]
