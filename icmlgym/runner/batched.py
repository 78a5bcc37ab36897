"""Batched seeds: all seeds of one entry in one vector env, one record per seed, bit-identical to single runs.

For an env that steps in microseconds, a run's cost is Python's per-step overhead
(the agent's ``act``, the env's ``step``, the loop) paid once per seed. When the
card names a ``vector_entry_point`` and the agent class names its vector twin
(``vectorized``, see :mod:`icmlgym.agents.vector`), :func:`execute_batch` plays
every seed of a group of tasks in lock step: episode ``e`` resets sub-env ``i``
with ``episode_seed(seed_i, e, "env")`` and the agent's seed ``i`` with
``episode_seed(seed_i, e, "agent")`` (all seeds at once by
:func:`~icmlgym.runner.rollout.episode_seeds`), exactly as :func:`icmlgym.runner.rollout.rollout`
seeds a single run, so each seed's returns, metrics and cost counters equal its
single run's bit for bit (``tests/core/test_batched.py``). Wall time is the
batch's divided among its seeds.

**Ragged ends.** By default every sub-env of a batch must end at the same step (a batch
whose seeds end apart raises, and its tasks run singly). A vector env class that sets the
class attribute ``ragged_ends = True`` declares that its sub-envs may end at different
steps, and promises that after sub-env ``i`` ends (terminated or truncated) its ``step``
ignores action ``i``, returns reward ``0.0`` for it, keeps ``terminated[i]`` and
``truncated[i]`` as they were at its end, and keeps ``info["metrics"][k][i]`` and
``info["cost"][k][i]`` (arrays of shape ``(N,)``) at the values of its ending step. The
runner then keeps a done mask: each seed's ``steps`` and return count up to its own end,
the episode ends when every seed has ended, and each seed's metrics and cost are read from
its frozen entries (a seed cut by the tier's ``max_steps`` before its env ended it gets no
metrics, as in a single run). The agent twin still gets ``act`` and ``update`` for all N
seeds every step; it must ignore the entries of ended seeds (their actions are discarded;
any extra draws it makes for them do not matter, since every episode reseeds the agent).

**Multi-agent envs** (PettingZoo Parallel) batch when the card's vector env stacks each
seed's players on axis 1 and the agent's joint twin (what a single run plays,
:func:`icmlgym.agents.multi.lift`) declares a ``vectorized`` twin over seeds: the episode
loop is :func:`icmlgym.runner.batched_multi.multi_episode` (RepeatedGame-v0 with
``games-hedge`` / ``games-ftrl-euclidean``, ``tests/games/test_repeated_vector.py``).

**Blocks of steps.** A vector env with ``step_block(actions)`` (``actions`` of shape ``(B, N)``:
``B`` steps in one call, rewards ``(B, N)``, the rest of the return the last step's) and
``steps_left``, played by a twin with ``act_block(limit)`` and ``update_block(actions,
rewards)`` (:mod:`icmlgym.agents.vector`), is stepped a block at a time wherever the twin's
``act_block`` returns its next rounds' actions (rounds whose actions do not depend on what
they return: a phase of phased elimination), and a step at a time where it returns None.
Returns add up step by step within a block, so the records are the same doubles
(``tests/fairbandit/test_vector.py``). Not for ragged envs.

A group falls back to single runs (same records, no speed-up) when the env or
the agent has no vector form, the agent trains, the env has a time limit from its
spec, or anything in the batch raises (so failures are recorded exactly as
single runs record them).
"""

from __future__ import annotations

import functools
import importlib
import json
import time
from dataclasses import dataclass
from typing import Any, Iterable

import gymnasium as gym
import numpy as np

from icmlgym.agents.loading import LoadedAgent, load_agent
from icmlgym.agents.protocol import AgentSpec, with_episode
from icmlgym.agents.vector import vector_class
from icmlgym.catalog import TaskCard, card
from icmlgym.codehash import env_source_hash
from icmlgym.envs import register_all
from icmlgym.nn.runtime import RunContext, determinism, run_context
from icmlgym.redaction import redact
from icmlgym.runner import provenance
from icmlgym.runner.batch_records import episode_records
from icmlgym.runner.batched_multi import multi_episode, multi_specs, multi_vector_class
from icmlgym.runner.loop import execute
from icmlgym.runner.task import RunTask, add_cost, agent_meta, base_record, ensure_registered, task_env_kwargs
from icmlgym.runner.record import EpisodeRecord, RunRecord
from icmlgym.runner.rollout import episode_seeds


@dataclass
class BatchTask:
    """Several tasks that differ only in their seed, executed together (picklable like a RunTask)."""

    tasks: list[RunTask]

    @property
    def env_id(self) -> str:
        return self.tasks[0].env_id

    @property
    def seeds(self) -> list[int]:
        return [int(t.seed) for t in self.tasks]


def _group_key(task: RunTask) -> str | None:
    if not isinstance(task.agent, str):
        return None  # an agent object: run it alone
    return json.dumps(  # a sandboxed run groups with runs of the same submission and sandbox (runner/evaluator.py)
        [task.env_id, task.agent, task.tier, task.env_kwargs, task.agent_kwargs, task.episodes, task.device, task.suite,
         repr(getattr(task, "isolation", None))],
        sort_keys=True,
        default=repr,
    )


def group_tasks(tasks: Iterable[RunTask]) -> list[RunTask | BatchTask]:
    """Tasks grouped by everything but the seed: a :class:`BatchTask` per group of two or more, in first-seen order."""
    groups: dict[str, list[RunTask]] = {}
    out: list[Any] = []
    for task in tasks:
        key = _group_key(task)
        if key is None:
            out.append(task)
            continue
        if key not in groups:
            groups[key] = []
            out.append(groups[key])
        groups[key].append(task)
    return [BatchTask(g) if isinstance(g, list) and len(g) > 1 else (g[0] if isinstance(g, list) else g) for g in out]


def _vector_env_class(c: TaskCard) -> Any:
    """The card's vector env constructor, with the card's ``default_kwargs`` under the caller's (as ``gym.make`` does)."""
    module, _, name = (c.vector_entry_point or "").partition(":")
    cls = getattr(importlib.import_module(module), name)
    return functools.partial(cls, **c.default_kwargs) if c.default_kwargs else cls


def why_not_batched(c: TaskCard, loaded: LoadedAgent) -> str:
    """Empty when tasks of this env and agent can run batched, else the reason they cannot."""
    if not c.vector_entry_point:
        return f"{c.id} has no vector_entry_point"
    if c.kind == "multi":  # the players stacked per seed (runner/batched_multi.py)
        if multi_vector_class(loaded.cls) is None:
            return f"agent {loaded.name!r} declares no vectorized twin of its joint form"
    elif gym.spec(c.id).max_episode_steps is not None:
        return f"{c.id} has a time limit from its spec"
    elif vector_class(loaded.cls) is None:
        return f"agent {loaded.name!r} declares no vectorized twin"
    if callable(getattr(loaded.cls, "train", None)):
        return f"agent {loaded.name!r} trains"
    return ""


def _blocks(venv, agent, ragged: bool) -> tuple[Any, Any, Any]:
    """The agent's ``act_block`` / ``update_block`` and the env's ``step_block`` where all three exist (else Nones):
    blocks of steps whose actions do not depend on what they return, one call each (see the module docstring)."""
    names = (getattr(agent, "act_block", None), getattr(agent, "update_block", None), getattr(venv, "step_block", None))
    if ragged or any(f is None for f in names) or not hasattr(venv, "steps_left"):
        return None, None, None
    return names


def _batched_episode(venv, agent, seeds: list[int], spec: AgentSpec, ep: int, max_steps: int | None) -> list[EpisodeRecord]:
    t0 = time.perf_counter()
    n = len(seeds)
    ragged = bool(getattr(venv, "ragged_ends", False))
    agent.reset(episode_seeds(seeds, ep, "agent"), spec)
    obs, info = venv.reset(seed=episode_seeds(seeds, ep, "env"))
    ret = np.zeros(n)
    lengths = np.zeros(n, dtype=np.int64)  # each seed's steps up to its own end (set when it ends)
    running = np.ones(n, dtype=bool)
    env_ended = np.zeros(n, dtype=bool)  # ended by the env (not cut by the runner's max_steps)
    all_running = True  # until the first seed ends, a step needs no masks
    steps = 0
    act, update, step = agent.act, agent.update, venv.step
    act_block, update_block, step_block = _blocks(venv, agent, ragged)
    while True:
        block = None
        if act_block is not None:
            room = venv.steps_left if max_steps is None else min(venv.steps_left, max_steps - steps)
            block = act_block(room) if room > 0 else None
        if block is None:
            actions = act(obs, info)
            next_obs, rewards, terminated, truncated, info = step(actions)
            steps += 1
        else:
            next_obs, rewards, terminated, truncated, info = step_block(block)
            steps += len(block)
        ended = np.logical_or(terminated, truncated)
        cut = max_steps is not None and steps >= max_steps
        if cut:
            truncated = np.ones(n, dtype=bool)
        if block is None:
            update(obs, actions, rewards, next_obs, terminated, truncated, info)
        else:
            update_block(block, rewards)
        obs = next_obs
        if all_running:
            if block is None:
                ret += rewards
            else:
                for r in rewards:  # step by step, as the returns of single runs add up
                    ret += r
            n_ended = np.count_nonzero(ended)
            if not n_ended and not cut:
                continue
            if not ragged and n_ended != n and not cut:
                raise RuntimeError("the sub-envs of a batch ended at different steps; run these seeds singly")
            all_running = False
        else:
            np.add(ret, rewards, out=ret, where=running)  # an ended seed's return stays as it was at its end
        newly = ended & running
        if not np.count_nonzero(newly) and not cut:
            continue  # no seed ended this step: the masks stay as they are (and some seed still runs)
        lengths[newly] = steps
        env_ended |= newly
        running &= ~ended
        if cut:
            lengths[running] = steps
            running[:] = False
        if not running.any():
            break
    wall = (time.perf_counter() - t0) / n
    # a ragged env's seed that the runner cut at max_steps before its end has no end-of-episode metrics (as singly)
    return episode_records(ep, ret, lengths, info, wall, env_ended if ragged else None)


def execute_batch(batch: BatchTask | list[RunTask]) -> list[RunRecord]:
    """Run a group of tasks (same env, agent, tier, kwargs; different seeds) and return one record per task.

    Batched when :func:`why_not_batched` allows it, else (or on any error) task by task
    with :func:`icmlgym.runner.loop.execute`; the records are the same either way."""
    tasks = list(batch.tasks if isinstance(batch, BatchTask) else batch)
    if len(tasks) < 2:
        return [execute(t) for t in tasks]
    if getattr(tasks[0], "isolation", None) is not None:
        from icmlgym.runner.evaluator import evaluate_batch

        return evaluate_batch(tasks, _batched_episode, _vector_env_class)
    register_all()
    first = tasks[0]
    threads = max(1, int((first.card.resources.num_cpus if first.card is not None else 1) or 1))
    with run_context(first.device, threads) as ctx:
        records = _execute_batch(tasks, ctx)
    return records if records is not None else [execute(t) for t in tasks]


def _execute_batch(tasks: list[RunTask], ctx: RunContext) -> list[RunRecord] | None:
    """The batch's records, or None when it must run task by task (mirrors ``loop._execute``)."""
    t_start = time.perf_counter()
    try:
        ensure_registered(tasks[0])
        c = card(tasks[0].env_id)
        loaded = load_agent(tasks[0].agent, **tasks[0].agent_kwargs)
        if why_not_batched(c, loaded) or tasks[0].device != "cpu":
            return None
        first = tasks[0]
        tier = c.tier(first.tier)
        kwargs = task_env_kwargs(c, first)
        venv = _vector_env_class(c)(num_envs=len(tasks), **kwargs)
        if c.kind == "multi":
            agent = multi_vector_class(loaded.cls)(**loaded.kwargs)  # type: ignore[misc]
            spec: Any = multi_specs(c, venv, kwargs, first.tier, first.device)
            env_spec = {"id": c.id, "kwargs": redact(kwargs), "entry_point": c.entry_point}  # a PettingZoo env has no spec
            episode = multi_episode
        else:
            agent = vector_class(loaded.cls)(**loaded.kwargs)
            spec = AgentSpec(c.id, venv.single_observation_space, venv.single_action_space, c, kwargs, first.tier, 0, None, first.device)
            env_spec = {"id": c.id, "kwargs": kwargs, "entry_point": c.entry_point, "max_episode_steps": None}
            episode = _batched_episode
        meta = agent_meta(loaded, c)  # one agent, one env: hash their code once for the whole batch
        env_hash = env_source_hash(c.entry_point)  # and the env's once
        records = [base_record(t, None, meta=meta, env_hash=env_hash) for t in tasks]
        seeds = [int(t.seed) for t in tasks]
        n_episodes = first.episodes if first.episodes is not None else tier.episodes
        for ep in range(n_episodes):
            spec = with_episode(spec, ep)
            for rec, e in zip(records, episode(venv, agent, seeds, spec, ep, tier.max_steps)):
                rec.episodes.append(e)
        venv.close()
        device = {**provenance.device_info(first.device), "determinism": determinism()}
        meter = ctx.meter.as_dict()
        gpu = provenance.gpu_name()
    except Exception:  # noqa: BLE001 - single runs record the failure as they always do
        return None
    wall = (time.perf_counter() - t_start) / len(tasks)
    for rec in records:
        rec.env_spec = dict(env_spec)
        rec.device = dict(device)
        for e in rec.episodes:
            add_cost(rec.cost, e.cost)
        add_cost(rec.cost, {k: v / len(tasks) for k, v in meter.items()})
        rec.hardware = {**rec.hardware, "gpu": gpu}
        rec.wall_time = wall
    return records


__all__ = ["BatchTask", "execute_batch", "group_tasks", "why_not_batched"]
