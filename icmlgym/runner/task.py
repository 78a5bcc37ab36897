"""A run task and what is derived from it before any episode runs: the env kwargs, the
spec and the skeleton record, the agent's identity. Shared by the in-process loop
(:mod:`icmlgym.runner.loop`), the sandboxed evaluator and the batched executor."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from icmlgym.agents.loading import LoadedAgent, load_agent
from icmlgym.catalog import TaskCard, card
from icmlgym.codehash import code_hash, env_source_hash
from icmlgym.redaction import redact
from icmlgym.runner import provenance
from icmlgym.runner.record import RunRecord


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


def task_identity(task: RunTask, meta: dict[str, str]) -> dict[str, Any]:
    """The fields of a task's record that name the work (env, seed, tier, kwargs, agent), given the agent's ``meta``."""
    c = task.card or card(task.env_id)
    return {
        "env_id": c.id,
        "agent_name": meta.get("name") or agent_label(task),
        "seed": int(task.seed),
        "tier": task.tier,
        "env_kwargs": redact(dict(task.env_kwargs)),
        "agent_entry_point": meta.get("entry_point") or agent_label(task),
        "agent_source_hash": meta.get("source_hash", ""),
        "agent_kwargs": redact(dict(task.agent_kwargs)),
    }


def base_record(task: RunTask, loaded: LoadedAgent | None, meta: dict[str, str] | None = None, env_hash: str | None = None) -> RunRecord:
    """A task's record before its episodes: identity, provenance, the env's source hash (``env_hash`` when the
    caller computed it already, e.g. once for a batch of seeds of one env)."""
    c = task.card or card(task.env_id)
    kwargs = task_env_kwargs(c, task)
    if task.isolation is not None:  # a submission's identity comes from its bytes, never from loading it
        meta = task.isolation.meta(c)
    else:
        meta = agent_meta(loaded, c) if loaded else (meta or {})
        if not meta.get("code_hash"):
            # the worker died or timed out before it reported: hash the code here, as task_key does
            meta = {**task_meta(task), **{k: v for k, v in meta.items() if v}}
    ident = task_identity(task, meta)
    return RunRecord(
        env_id=ident["env_id"],
        agent_name=ident["agent_name"],
        seed=ident["seed"],
        tier=ident["tier"],
        env_kwargs=ident["env_kwargs"],
        env_spec={"id": c.id, "kwargs": redact(kwargs), "entry_point": c.entry_point},
        agent_entry_point=ident["agent_entry_point"],
        agent_source_hash=ident["agent_source_hash"],
        code_hash=meta.get("code_hash", ""),
        env_source_hash=env_hash if env_hash is not None else env_source_hash(c.entry_point),
        agent_kwargs=ident["agent_kwargs"],
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


def task_meta(task: RunTask) -> dict[str, str]:
    """Agent metadata of a task, loading the agent here (empty when it cannot be loaded)."""
    try:
        loaded = load_agent(task.agent, **task.agent_kwargs)
    except Exception:
        return {}
    return agent_meta(loaded, task.card or card(task.env_id))


def agent_label(task: RunTask) -> str:
    if task.isolation is not None:
        return task.isolation.name
    a = task.agent
    if isinstance(a, str):
        return a  # a shipped name is its own label; a spec string is the best name we have
    if isinstance(a, LoadedAgent):
        return a.name
    return getattr(a, "name", "") or getattr(a, "__name__", "") or type(a).__name__
