"""The runner: episode loop, cost meter, provenance and executors (in process, process pool, Ray)."""

from icmlgym.runner.api import make_tasks, run, run_tasks
from icmlgym.runner.executors import EXECUTORS, get_executor
from icmlgym.runner.loop import RunTask, episode_seed, execute
from icmlgym.runner.record import EpisodeRecord, RunRecord

__all__ = [
    "EXECUTORS",
    "EpisodeRecord",
    "RunRecord",
    "RunTask",
    "episode_seed",
    "execute",
    "get_executor",
    "make_tasks",
    "run",
    "run_tasks",
]
