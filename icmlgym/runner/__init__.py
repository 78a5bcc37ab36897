"""The runner: the rollout (one episode loop), cost meter, provenance and executors (in process, process pool, Ray)."""

from icmlgym.runner.api import make_tasks, run, run_tasks
from icmlgym.runner.executors import EXECUTORS, get_executor
from icmlgym.runner.loop import RunTask, execute
from icmlgym.runner.record import EpisodeRecord, RunRecord
from icmlgym.runner.rollout import episode_seed, rollout

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
