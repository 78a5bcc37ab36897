"""The runner: the rollout (one episode loop), cost meter, provenance and executors (in process, process pool, Ray).

The executors, the task loop and the API are imported on first use (PEP 562): a process that
needs only part of the runner (the sandbox's agent host, which imports the channel) does not
pay for the executors' imports at every start.
"""

from typing import Any

from icmlgym.runner.record import EpisodeRecord, RunRecord
from icmlgym.runner.rollout import episode_seed, rollout

_LAZY = {
    "make_tasks": "icmlgym.runner.api", "run": "icmlgym.runner.api", "run_tasks": "icmlgym.runner.api",
    "EXECUTORS": "icmlgym.runner.executors", "get_executor": "icmlgym.runner.executors",
    "RunTask": "icmlgym.runner.loop", "execute": "icmlgym.runner.loop",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'icmlgym.runner' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "EXECUTORS",
    "EpisodeRecord",
    "RunRecord",
    "RunTask",
    "episode_seed",
    "execute",
    "get_executor",
    "make_tasks",
    "rollout",
    "run",
    "run_tasks",
]
