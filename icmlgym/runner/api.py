"""``run``: run an agent on an env over seeds and return run records."""

from __future__ import annotations

from typing import Any, Callable, Iterable, Sequence

from icmlgym.catalog import card
from icmlgym.runner.executors import get_executor
from icmlgym.runner.progress import RunProgress
from icmlgym.runner.loop import RunTask, task_key
from icmlgym.runner.record import RunRecord
from icmlgym.runner.trace import mark


def make_tasks(
    env_id: str,
    agent: Any,
    seeds: int | Sequence[int] = 3,
    tier: str = "smoke",
    env_kwargs: dict[str, Any] | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    episodes: int | None = None,
    device: str = "cpu",
    suite: str = "",
) -> list[RunTask]:
    """One task per seed. ``seeds`` is a count (seeds 0..n-1) or an explicit list."""
    c = card(env_id)
    c.tier(tier)  # validates the tier name
    seed_list = list(range(seeds)) if isinstance(seeds, int) else [int(s) for s in seeds]
    if not seed_list:
        raise ValueError("seeds must name at least one seed")
    return [
        RunTask(c.id, agent, s, tier, dict(env_kwargs or {}), dict(agent_kwargs or {}), episodes, device, suite)
        for s in seed_list
    ]


def split_done(tasks: Iterable[RunTask], done_keys: Iterable[str]) -> tuple[list[RunTask], list[RunTask]]:
    """Split tasks into (to run, already done) by their run key (see :func:`icmlgym.runner.loop.task_key`)."""
    done = set(done_keys)
    todo: list[RunTask] = []
    skipped: list[RunTask] = []
    for task in tasks:
        (skipped if done and task_key(task) in done else todo).append(task)
    return todo, skipped


def run_tasks(
    tasks: Iterable[RunTask],
    executor: str = "inprocess",
    workers: int | None = None,
    timeout: float | None = None,
    memory_limit_mb: int | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
    progress: Any = False,
    executor_options: dict[str, Any] | None = None,
    skip_keys: Iterable[str] | None = None,
    batch_seeds: bool = False,
) -> list[RunRecord]:
    """Execute tasks on an executor; ``on_record`` sees each record as its run finishes.

    ``skip_keys``: run keys already done (e.g. ``Leaderboard(store).run_keys()``); tasks
    with one of them are not run again, so a restarted sweep resumes where it stopped.
    ``batch_seeds``: run the seeds of each (env, agent, kwargs) entry together in one vector
    env where the env and agent have vector forms (:mod:`icmlgym.runner.batched`); the records
    are the same as without it. Not on the Ray executor."""
    tasks = list(tasks)
    if skip_keys is not None:
        tasks, _ = split_done(tasks, skip_keys)
        if not tasks:
            return []
    n_runs = len(tasks)
    if batch_seeds:
        if executor == "ray":
            raise ValueError("batch_seeds runs on the inprocess and process executors, not on ray")
        from icmlgym.runner.batched import group_tasks

        tasks = group_tasks(tasks)  # type: ignore[assignment]
    ex = get_executor(executor, workers=workers, timeout=timeout, memory_limit_mb=memory_limit_mb, **(executor_options or {}))
    records: list[RunRecord] = []

    # progress: False (silent), True (a bar in a terminal, a line per run elsewhere), or a RunProgress
    reporter = progress if isinstance(progress, RunProgress) else RunProgress(n_runs) if progress else None
    try:
        if reporter is not None:
            reporter.__enter__()
        for rec in ex.imap(tasks):
            records.append(rec)
            if on_record is not None:
                on_record(rec)
            mark("stored", key=f"{rec.env_id} {rec.agent_name} {rec.seed}")
            if reporter is not None:
                reporter.update(rec)
    finally:
        if reporter is not None:
            reporter.__exit__(None, None, None)
        close = getattr(ex, "close", None)
        if callable(close):
            close()
    records.sort(key=lambda r: (r.env_id, r.agent_name, r.seed))
    return records


def run(
    env_id: str,
    agent: Any,
    seeds: int | Sequence[int] = 3,
    tier: str = "smoke",
    env_kwargs: dict[str, Any] | None = None,
    agent_kwargs: dict[str, Any] | None = None,
    executor: str = "inprocess",
    workers: int | None = None,
    timeout: float | None = None,
    episodes: int | None = None,
    device: str = "cpu",
    on_record: Callable[[RunRecord], None] | None = None,
    progress: bool = False,
    batch_seeds: bool = False,
) -> list[RunRecord]:
    """Run ``agent`` on ``env_id`` for each seed at a budget tier and return the run records.

    Args:
        env_id: a registered id, e.g. ``"icmlgym/Bandit-v0"``.
        agent: a shipped agent name, ``"module:Class"``, ``"path/to/file.py[:Class]"``, an Agent class or instance.
        seeds: a count (seeds ``0..n-1``) or a list of seeds.
        tier: ``"smoke"``, ``"standard"`` or ``"full"`` (see the env's card).
        env_kwargs: keyword arguments for the env (override the tier's).
        agent_kwargs: keyword arguments for the agent's constructor.
        executor: ``"inprocess"``, ``"process"`` (a worker per run, with ``timeout``) or ``"ray"``.
        workers: concurrent workers for ``process``/``ray``.
        timeout: seconds per run before it is killed (``process`` and ``ray``).
        episodes: override the tier's number of evaluation episodes.
        device: torch device for agents that use torch (``cpu``, ``cuda``, ``auto``).
        on_record: called with each record as its run finishes (e.g. to store it).
        progress: show a progress bar.
        batch_seeds: play all seeds in one vector env when the env and agent have vector forms
            (cheap envs: many times the throughput); the records equal the single runs'.

    Failed and timed-out runs come back as records with ``status`` and ``error`` set;
    they never stop the other runs.
    """
    tasks = make_tasks(env_id, agent, seeds, tier, env_kwargs, agent_kwargs, episodes, device)
    return run_tasks(tasks, executor, workers, timeout, on_record=on_record, progress=progress, batch_seeds=batch_seeds)
