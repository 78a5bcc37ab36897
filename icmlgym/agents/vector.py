"""Vectorised agents: one object playing N seeds of the same agent in lock step.

The runner's batched mode (``icmlgym.run(..., batch_seeds=True)``, ``icmlgym run
--batch-seeds``) steps a vector env (the card's ``vector_entry_point``) with a
vector agent. An agent class opts in with a ``vectorized`` attribute naming its
vector twin (``"module:Class"``); the twin takes the same constructor arguments
and must reproduce the single agent seed by seed, bit for bit: seed ``i`` of
``reset(seeds, spec)`` is the seed the single agent's ``reset`` would get, and
its random draws must come from ``np.random.default_rng(seeds[i])`` in the same
order as the single agent's. ``tests/core/test_batched.py`` checks every pair.

Protocol (arrays have the seeds on axis 0)::

    agent.reset(seeds, spec)                 # spec: the single env's AgentSpec
    actions = agent.act(obs, info)           # obs: (N, ...) -> actions: (N, ...)
    agent.update(obs, actions, rewards, next_obs, terminated, truncated, info)

**Blocks of rounds** (optional). A twin whose next actions do not depend on what the
coming rounds return (the rounds of a phase queue: phased elimination, LinNash) may offer
them a block at a time::

    actions = agent.act_block(limit)        # (B, N), 1 <= B <= limit, or None: use act
    agent.update_block(actions, rewards)    # rewards (B, N): the B rounds, as B update calls

The runner's batched loop uses them with a vector env that has ``step_block``
(:mod:`icmlgym.runner.batched`); ``update_block`` gets no observations or infos, so only a
twin whose updates read actions and rewards alone offers blocks.

**Seeds that end early.** A vector env with ``ragged_ends = True`` (see
:mod:`icmlgym.runner.batched`) lets its sub-envs end at different steps. The runner still
calls ``act`` and ``update`` with all N rows until the last seed ends; once
``terminated[i] or truncated[i]`` has been true, row ``i`` is padding: the env ignores
action ``i`` and returns reward 0.0 for it, so a twin may act on it as it likes (it must
still return an array of N valid actions and not raise), and the generator draws it makes
for an ended seed do not matter, because the next episode reseeds every seed. A twin whose
state must not move for ended seeds masks its updates with ``~(terminated | truncated)``.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

import numpy as np

from icmlgym.agents.protocol import AgentSpec, declared_twin


@runtime_checkable
class VectorAgent(Protocol):
    """N seeds of one agent stepped together (see the module docstring)."""

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None: ...

    def act(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray: ...

    def update(
        self,
        obs: np.ndarray,
        actions: np.ndarray,
        rewards: np.ndarray,
        next_obs: np.ndarray,
        terminated: np.ndarray,
        truncated: np.ndarray,
        info: dict[str, Any],
    ) -> None: ...


class VectorBaseAgent:
    """Keeps the spec and one generator per seed (``rngs[i]`` is what ``np_random`` is for seed ``i``)."""

    def __init__(self, **kwargs: Any) -> None:
        if kwargs:
            raise TypeError(f"{type(self).__name__} got unexpected arguments {sorted(kwargs)}")
        self.spec: AgentSpec | None = None
        self.rngs: list[np.random.Generator] = []
        self.num = 0

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        self.spec = spec
        self.rngs = [np.random.default_rng(s) for s in seeds]
        self.num = len(self.rngs)

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        return None


class PerSeedAgents(VectorBaseAgent):
    """N instances of a single agent class (``single``, set by subclasses), stepped seed by seed.

    The twin of an agent whose per-step logic does not vectorise without changing its draws:
    seed ``i``'s agent is the single agent itself, reset with seed ``i``, so its actions are
    its single run's by construction; the env and the runner's loop are batched, the agent's
    work is not. Rows of ended seeds (``terminated | truncated`` seen in ``update``) are no
    longer stepped: their action is ``idle`` (a valid action of the env, set by subclasses).
    Each agent sees its own observation row and an empty info dict (the single agents this
    serves ignore info). Constructor arguments go to the single class, which validates them.
    """

    single: type = object
    idle: Any = 0

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.kwargs = kwargs
        self.single(**kwargs)  # the single agent's argument checks and messages
        self.agents: list[Any] = []

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        self.agents = []
        for s in seeds:
            a = self.single(**self.kwargs)
            a.reset(s, spec)
            self.agents.append(a)
        self.live = list(range(len(self.agents)))
        self._idle = np.asarray(self.idle)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        agents, empty = self.agents, {}
        if len(self.live) == len(agents):
            return np.stack([a.act(obs[i], empty) for i, a in enumerate(agents)])
        out = np.empty((len(agents),) + self._idle.shape, dtype=np.int64)
        out[:] = self._idle
        for i in self.live:
            out[i] = agents[i].act(obs[i], empty)
        return out

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        agents, empty = self.agents, {}
        rewards = np.asarray(rewards, dtype=np.float64).tolist()
        term, trunc = np.asarray(terminated).tolist(), np.asarray(truncated).tolist()
        ended = False
        for i in self.live:
            agents[i].update(obs[i], actions[i], rewards[i], next_obs[i], term[i], trunc[i], empty)
            ended = ended or term[i] or trunc[i]
        if ended:
            self.live = [i for i in self.live if not (term[i] or trunc[i])]


def vector_class(agent_cls: Any) -> type | None:
    """The vector twin an agent class declares with ``vectorized = "module:Class"`` (None without one).

    Only the class's own declaration counts: a subclass that changes ``act`` does not
    inherit its parent's twin."""
    return declared_twin(agent_cls, "vectorized")


__all__ = ["PerSeedAgents", "VectorAgent", "VectorBaseAgent", "vector_class"]
