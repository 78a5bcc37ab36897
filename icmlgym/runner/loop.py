"""One run = one (env, agent, seed, tier): optional training, then several evaluation
episodes, each played by :func:`icmlgym.runner.rollout.rollout`.

Seeding is explicit so that a run's metrics are identical bit for bit wherever
it executes (in process, in a worker process, on a Ray worker): episode ``e`` of
seed ``s`` resets the env with ``episode_seed(s, e, "env")`` and the agent with
``episode_seed(s, e, "agent")``; training gets ``episode_seed(s, -1, ...)``.
"""

from __future__ import annotations

import time
import traceback
from typing import Callable

from icmlgym.agents.loading import LoadedAgent, load_agent
from icmlgym.agents.multi import lift
from icmlgym.agents.protocol import AgentSpec
from icmlgym.catalog import card, short_hash
from icmlgym.envs import make, register_all
from icmlgym.nn.runtime import RunContext, determinism, run_context
from icmlgym.redaction import redact, redact_text, secret_values
from icmlgym.runner import provenance
from icmlgym.runner.channel import cap_text
from icmlgym.runner.lean_env import runner_env
from icmlgym.runner.record import RunRecord
from icmlgym.runner.rollout import episode_seed, rollout
from icmlgym.runner.task import (
    RunTask,
    add_cost,
    add_gpu_seconds,
    agent_label,
    agent_meta,
    base_record,
    ensure_registered,
    spec_dict,
    task_env_kwargs,
    task_meta,
)


def execute(task: RunTask, on_loaded: Callable[[dict[str, str]], None] | None = None) -> RunRecord:
    """Run one task and return its record. Never raises for the agent's or env's errors:
    they become a record with ``status="failed"`` and the traceback as ``error``.
    ``on_loaded`` is told the agent's name, entry point and source hash once it is loaded.

    The run executes inside :func:`icmlgym.nn.runtime.run_context` (its device, and torch
    threads = the card's ``resources.num_cpus``); the record's ``device["determinism"]``
    says which determinism mode applied, and counters that training added to the
    context's meter (gradient steps, examples, FLOPs) join the record's cost.
    A task with ``isolation`` runs in :func:`icmlgym.runner.evaluator.evaluate` (agent sandboxed)."""
    if task.isolation is not None:
        from icmlgym.runner.evaluator import evaluate

        return evaluate(task)
    register_all()
    with run_context(task.device, run_threads(task)) as ctx:
        return _execute(task, on_loaded, ctx)


def run_threads(task: RunTask) -> int:
    """The threads a run may use: its card's ``resources.num_cpus`` (1 when unset)."""
    return max(1, int((task.card.resources.num_cpus if task.card is not None else 1) or 1))


def _execute(task: RunTask, on_loaded: Callable[[dict[str, str]], None] | None, ctx: RunContext) -> RunRecord:
    t_start = time.perf_counter()
    loaded: LoadedAgent | None = None
    record: RunRecord | None = None
    env = None
    try:
        ensure_registered(task)
        c = card(task.env_id)
        loaded = load_agent(task.agent, **task.agent_kwargs)
        meta = agent_meta(loaded, c)  # hashed once: the message and the record carry the same identity
        if on_loaded is not None:
            on_loaded(meta)
        record = base_record(task, None, meta)
        tier = c.tier(task.tier)
        kwargs = task_env_kwargs(c, task)
        env = runner_env(c, kwargs)
        record.env_spec = spec_dict(c, env, kwargs)
        n_episodes = task.episodes if task.episodes is not None else tier.episodes
        agent = loaded()
        if c.kind == "multi":
            agent = lift(loaded, agent)
            specs = {
                a: AgentSpec(c.id, env.observation_space(a), env.action_space(a), c, kwargs, task.tier, 0, a, task.device)
                for a in env.possible_agents
            }
        else:
            spec = AgentSpec(c.id, env.observation_space, env.action_space, c, kwargs, task.tier, 0, None, task.device)
        if callable(getattr(agent, "train", None)):
            t0 = time.perf_counter()
            train_env = make(c.id, **kwargs)
            try:
                if c.kind == "multi":
                    agent.reset(episode_seed(task.seed, -1, "agent"), specs)
                else:
                    agent.reset(episode_seed(task.seed, -1, "agent"), spec)
                train_seed = episode_seed(task.seed, -1, "train")
                train_env.reset(seed=train_seed)  # single- and multi-agent training envs alike
                if c.kind == "single":
                    train_env.action_space.seed(train_seed)
                else:
                    for i, a in enumerate(train_env.possible_agents):
                        train_env.action_space(a).seed(train_seed + i)
                agent.train(train_env, tier.train_budget)
            finally:
                train_env.close()
            record.train_wall_time = time.perf_counter() - t0
        for ep in range(n_episodes):  # the rollout hands the agent a copy of the spec for episode ep
            record.episodes.append(rollout(env, agent, task.seed, specs if c.kind == "multi" else spec, episode=ep, max_steps=tier.max_steps))
        record.device = {**provenance.device_info(task.device), "determinism": determinism()}
        on_gpu = record.device.get("type") == "cuda"
        if on_gpu:
            add_gpu_seconds(record)
        for e in record.episodes:
            add_cost(record.cost, e.cost)
        # training counters of the run (agent.train and other metered work); on a GPU the
        # run's wall time is already its gpu_seconds
        add_cost(record.cost, {k: v for k, v in ctx.meter.as_dict().items() if not (on_gpu and k == "gpu_seconds")})
        # a GPU the agent used shows up in the hardware too (torch may be imported only by now)
        record.hardware = {**record.hardware, "gpu": provenance.gpu_name()}
    except BaseException as err:  # noqa: BLE001 - every failure becomes a record
        if isinstance(err, KeyboardInterrupt):
            raise
        if record is None:
            record = base_record(task, loaded)
        record.status = "failed"
        error = f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=20)}"
        # capped, and without the values of credential-named kwargs or environment variables
        record.error = redact_text(cap_text(error), secret_values(task.env_kwargs, task.agent_kwargs))
    finally:
        if env is not None:
            try:
                env.close()
            except Exception:
                pass
    record.wall_time = time.perf_counter() - t_start
    return record


def failed_record(task: RunTask, status: str, error: str, wall_time: float = 0.0, meta: dict[str, str] | None = None) -> RunRecord:
    """A record for a run whose worker timed out or died before it could report.

    The agent is not loaded here (loading it may be what hung or crashed); ``meta``
    is the name and source hash the worker reported once it had loaded the agent."""
    rec = base_record(task, None, meta)
    rec.status = status
    rec.error = error
    rec.wall_time = wall_time
    return rec


def task_key(task: RunTask) -> str:
    """The run key of a task without running it (for resuming sweeps)."""
    from icmlgym.runner.record import run_key

    c = task.card or card(task.env_id)
    # an isolated task is never imported here: its identity came from its bytes
    meta = task.isolation.meta(c) if task.isolation is not None else task_meta(task)
    name, code = meta.get("name") or agent_label(task), meta.get("code_hash", "")
    hidden = task.isolation is not None and bool(task.isolation.options.hidden_seeds)
    return run_key(c.id, redact(task.env_kwargs), task.tier, name, code, task.seed, redact(task.agent_kwargs), task.device, hidden)


__all__ = ["RunTask", "episode_seed", "execute", "failed_record", "task_key", "short_hash"]
