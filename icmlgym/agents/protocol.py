"""The agent protocol every reference agent, baseline and submission implements.

The runner drives an agent like this, for every episode of a run::

    agent.reset(seed, spec)                 # seed derived from the run seed and episode index
    obs, info = env.reset(seed=...)
    while not done:
        action = agent.act(obs, info)
        next_obs, reward, terminated, truncated, info = env.step(action)
        agent.update(obs, action, reward, next_obs, terminated, truncated, info)
        obs = next_obs

and, once before the first episode, ``agent.train(env, budget)`` when the agent
defines it (``budget`` = the tier's ``train_steps``). Agents see the spaces and
the catalog card through ``spec``, never the env's hidden state.

**Order of calls, always: ``reset(train_seed, spec)``, then ``train(env, budget)``
once (agents that train), then ``reset(episode_seed, spec)`` before every
evaluation episode. So ``reset`` runs before ``train`` too: one-time set-up goes
in ``__init__`` or ``train``; ``reset`` only clears per-episode state and must
keep what ``train`` learned.** (``tests/core/test_runner.py`` checks this order.)
Each episode gets its own frozen ``spec`` (``spec.episode`` is its index).

Multi-agent envs (PettingZoo Parallel) are driven through :class:`MultiAgent`:
the same four methods over dicts keyed by PettingZoo agent id. Any single-agent
class is lifted to it with :class:`icmlgym.agents.multi.DictAgent`, one instance
per PettingZoo agent.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field, replace
from typing import Any, Protocol, runtime_checkable

import gymnasium as gym
import numpy as np

from icmlgym.catalog import TaskCard


@dataclass(frozen=True)
class AgentSpec:
    """What an agent may know about the task it is about to play (frozen: the runner hands each
    episode its own copy, ``with_episode(spec, e)``, and never changes a spec an agent holds)."""

    env_id: str
    observation_space: gym.Space
    action_space: gym.Space
    card: TaskCard | None = None
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    tier: str = "smoke"
    episode: int = 0
    agent_id: str | None = None  # the PettingZoo agent this spec is for, in multi-agent envs
    device: str = "cpu"  # torch device the agent should use ("cpu", "cuda", ...)


def with_episode(spec: "AgentSpec | dict[str, AgentSpec]", episode: int) -> "AgentSpec | dict[str, AgentSpec]":
    """A copy of ``spec`` (or of each spec of a multi-agent dict) for episode ``episode``."""
    if isinstance(spec, dict):
        return {a: replace(s, episode=episode) for a, s in spec.items()}
    return replace(spec, episode=episode)


@runtime_checkable
class Agent(Protocol):
    """The single-agent protocol (structural: any object with these methods is an Agent)."""

    def reset(self, seed: int | None, spec: AgentSpec) -> None: ...

    def act(self, obs: Any, info: dict[str, Any]) -> Any: ...

    def update(
        self,
        obs: Any,
        action: Any,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None: ...


@runtime_checkable
class MultiAgent(Protocol):
    """The protocol for a joint policy over a PettingZoo Parallel env (dicts keyed by agent id)."""

    multi_agent: bool

    def reset(self, seed: int | None, spec: dict[str, AgentSpec]) -> None: ...

    def act(self, observations: dict[str, Any], infos: dict[str, dict]) -> dict[str, Any]: ...

    def update(
        self,
        observations: dict[str, Any],
        actions: dict[str, Any],
        rewards: dict[str, float],
        next_observations: dict[str, Any],
        terminations: dict[str, bool],
        truncations: dict[str, bool],
        infos: dict[str, dict],
    ) -> None: ...


class BaseAgent:
    """A small base class: keeps the spec, a seeded ``np_random``, and no-op ``update``.

    Subclasses implement :meth:`act` and usually extend :meth:`reset` (call
    ``super().reset(seed, spec)`` first). ``name`` is what the leaderboard shows
    when the agent is not loaded by a registered name.
    """

    name: str = ""

    def __init__(self, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected arguments {sorted(kwargs)}")
        self.spec: AgentSpec | None = None
        self.np_random: np.random.Generator = np.random.default_rng()

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        self.spec = spec
        self.np_random = np.random.default_rng(seed)

    def act(self, obs: Any, info: dict[str, Any]) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError(f"{type(self).__name__} must implement act(obs, info)")

    def update(
        self,
        obs: Any,
        action: Any,
        reward: float,
        next_obs: Any,
        terminated: bool,
        truncated: bool,
        info: dict[str, Any],
    ) -> None:
        return None

    @property
    def action_space(self) -> gym.Space:
        if self.spec is None:
            raise RuntimeError(f"{type(self).__name__}.reset(seed, spec) has not been called")
        return self.spec.action_space


REQUIRED_METHODS: tuple[str, ...] = ("reset", "act", "update")


def missing_methods(obj: Any) -> list[str]:
    """Protocol methods ``obj`` (an instance or a class) does not provide as callables."""
    return [m for m in REQUIRED_METHODS if not callable(getattr(obj, m, None))]


def declared_twin(agent_cls: Any, attr: str) -> type | None:
    """The twin class an agent class declares with ``<attr> = "module:Class"`` (None without one).

    ``vectorized`` (:func:`icmlgym.agents.vector.vector_class`) and ``joint``
    (:func:`icmlgym.agents.multi.joint_class`) are declared this way. Only the class's own
    declaration counts: a subclass that changes ``act`` does not inherit its parent's twin."""
    target = vars(agent_cls).get(attr) if isinstance(agent_cls, type) else None
    if not target:
        return None
    if not isinstance(target, str) or ":" not in target:
        return target if isinstance(target, type) else None
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
