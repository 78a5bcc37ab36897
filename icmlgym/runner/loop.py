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
from dataclasses import dataclass, field
from typing import Any, Callable

from icmlgym.agents.loading import LoadedAgent, load_agent
from icmlgym.agents.multi import DictAgent
from icmlgym.agents.protocol import AgentSpec
from icmlgym.catalog import TaskCard, card, short_hash
from icmlgym.codehash import code_hash, env_source_hash
from icmlgym.envs import make, register_all
from icmlgym.nn.runtime import RunContext, determinism, run_context
from icmlgym.redaction import redact, redact_text, secret_values
from icmlgym.runner import provenance
from icmlgym.runner.channel import cap_text
from icmlgym.runner.lean_env import runner_env
from icmlgym.runner.record import RunRecord
from icmlgym.runner.rollout import episode_seed, rollout


@dataclass
class RunTask:
    """Everything a worker needs to execute one run (picklable when ``agent`` is a string)."""

    env_id: str
    agent: Any
    seed: int
    tier: str = "smoke"
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    agent_kwargs: dict[str, Any] = field(default_factory=dict)
    episodes: int | None = None  # overrides the tier's episode count
    device: str = "cpu"
    suite: str = ""
    card: TaskCard | None = None  # carried so workers know envs registered at run time
    isolation: Any = None  # an icmlgym.runner.evaluator.Isolation: run the agent sandboxed (see evaluate)
    timeout: float | None = None  # seconds for this run, overriding the executor's timeout (process and ray)

    def __post_init__(self) -> None:
        if self.card is None:
            self.card = card(self.env_id)


def task_env_kwargs(c: TaskCard, task: RunTask) -> dict[str, Any]:
    """The kwargs a task's env is made with: the tier's, then the task's own (and the device for torch envs)."""
    kwargs = {**c.tier(task.tier).env_kwargs, **task.env_kwargs}
    if c.resources.device:  # an env that computes with torch gets the run's device (unless the user set one)
        kwargs.setdefault("device", task.device)
    return kwargs


def spec_dict(c: TaskCard, env, kwargs: dict[str, Any]) -> dict[str, Any]:
    """The env spec a record stores: id, kwargs, entry point and the registered step limit."""
    spec = getattr(env, "spec", None)
    out: dict[str, Any] = {"id": c.id, "kwargs": redact(kwargs), "entry_point": c.entry_point}
    if spec is not None and hasattr(spec, "max_episode_steps"):
        out["max_episode_steps"] = spec.max_episode_steps
    return out


def base_record(task: RunTask, loaded: LoadedAgent | None, meta: dict[str, str] | None = None) -> RunRecord:
    c = task.card or card(task.env_id)
    kwargs = task_env_kwargs(c, task)
    if task.isolation is not None:  # a submission's identity comes from its bytes, never from loading it
        meta = task.isolation.meta(c)
    else:
        meta = agent_meta(loaded, c) if loaded else (meta or {})
        if not meta.get("code_hash"):
            # the worker died or timed out before it reported: hash the code here, as task_key does
            meta = {**_task_meta(task), **{k: v for k, v in meta.items() if v}}
    return RunRecord(
        env_id=c.id,
        agent_name=meta.get("name") or _agent_label(task),
        seed=int(task.seed),
        tier=task.tier,
        env_kwargs=redact(dict(task.env_kwargs)),
        env_spec={"id": c.id, "kwargs": redact(kwargs), "entry_point": c.entry_point},
        agent_entry_point=meta.get("entry_point") or _agent_label(task),
        agent_source_hash=meta.get("source_hash", ""),
        code_hash=meta.get("code_hash", ""),
        env_source_hash=env_source_hash(c.entry_point),
        agent_kwargs=redact(dict(task.agent_kwargs)),
        hardware=provenance.hardware(),
        versions=provenance.versions(),
        git_commit=provenance.git_commit(),
        suite=task.suite,
        device={"requested": task.device, "type": "cpu", "name": provenance.cpu_model()},
    )


def add_cost(total: dict[str, float], cost: dict[str, Any]) -> None:
    """Add an episode's cost counters into a run's totals."""
    for k, v in cost.items():
        total[k] = total.get(k, 0.0) + float(v)


def add_gpu_seconds(record: RunRecord) -> None:
    """GPU-seconds as a cost counter of a run on CUDA: each episode's wall time plus an equal
    share of the training time, so that the episodes (which scoring sums) add up to the run."""
    share = record.train_wall_time / max(1, len(record.episodes))
    for e in record.episodes:
        e.cost["gpu_seconds"] = e.wall_time + share


def ensure_registered(task: RunTask) -> None:
    """In a worker process, register a card the parent registered at run time."""
    from icmlgym.catalog import UnknownEnvError
    from icmlgym.registry import register

    try:
        card(task.env_id)
    except UnknownEnvError:
        if task.card is None:
            raise
        register(task.card)


def agent_meta(loaded: LoadedAgent, c: TaskCard | None = None) -> dict[str, str]:
    """The loaded agent's name, entry point, source hash and (given the env's card) code hash."""
    meta = {"name": loaded.name, "entry_point": loaded.entry_point, "source_hash": loaded.source_hash}
    if c is not None:
        meta["code_hash"] = code_hash(loaded.source_hash, loaded.code_files, c.entry_point)
    return meta


def _task_meta(task: RunTask) -> dict[str, str]:
    """Agent metadata of a task, loading the agent here (empty when it cannot be loaded)."""
    try:
        loaded = load_agent(task.agent, **task.agent_kwargs)
    except Exception:
        return {}
    return agent_meta(loaded, task.card or card(task.env_id))


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
    threads = max(1, int((task.card.resources.num_cpus if task.card is not None else 1) or 1))
    with run_context(task.device, threads) as ctx:
        return _execute(task, on_loaded, ctx)


def _execute(task: RunTask, on_loaded: Callable[[dict[str, str]], None] | None, ctx: RunContext) -> RunRecord:
    t_start = time.perf_counter()
    loaded: LoadedAgent | None = None
    record: RunRecord | None = None
    env = None
    try:
        ensure_registered(task)
        c = card(task.env_id)
        loaded = load_agent(task.agent, **task.agent_kwargs)
        if on_loaded is not None:
            on_loaded(agent_meta(loaded, c))
        record = base_record(task, loaded)
        tier = c.tier(task.tier)
        kwargs = task_env_kwargs(c, task)
        env = runner_env(c, kwargs)
        record.env_spec = spec_dict(c, env, kwargs)
        n_episodes = task.episodes if task.episodes is not None else tier.episodes
        agent = loaded()
        if c.kind == "multi":
            if not getattr(agent, "multi_agent", False):
                agent = DictAgent(lambda: loaded())
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


def _agent_label(task: RunTask) -> str:
    if task.isolation is not None:
        return task.isolation.name
    a = task.agent
    if isinstance(a, str):
        return a  # a shipped name is its own label; a spec string is the best name we have
    if isinstance(a, LoadedAgent):
        return a.name
    return getattr(a, "name", "") or getattr(a, "__name__", "") or type(a).__name__


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
    meta = task.isolation.meta(c) if task.isolation is not None else _task_meta(task)
    name, code = meta.get("name") or _agent_label(task), meta.get("code_hash", "")
    hidden = task.isolation is not None and bool(task.isolation.options.hidden_seeds)
    return run_key(c.id, redact(task.env_kwargs), task.tier, name, code, task.seed, redact(task.agent_kwargs), task.device, hidden)


__all__ = ["RunTask", "episode_seed", "execute", "failed_record", "task_key", "short_hash"]
