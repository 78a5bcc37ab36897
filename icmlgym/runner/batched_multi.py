"""Batched seeds of a multi-agent (PettingZoo Parallel) env: the players of every seed stacked in one array.

The multi-agent side of :mod:`icmlgym.runner.batched`. A multi-agent card batches when its
``vector_entry_point`` names a vector env whose sub-envs stack the players on axis 1
(observations and actions ``(N, players, ...)``, rewards ``(N, players)``, the players in
the single env's ``possible_agents`` order, e.g.
:class:`icmlgym.envs.games.repeated_vector.RepeatedGameVectorEnv`), and the agent's joint
twin (the class the single run plays, :func:`icmlgym.agents.multi.lift`) declares a
``vectorized`` twin over seeds (e.g. :class:`icmlgym.agents.games_vector.VectorJointFTRLAgent`).

:func:`multi_episode` plays one episode of every seed as :func:`icmlgym.runner.rollout.rollout`
plays it singly (the same seeds per episode and stream, the same end: every player
truncated or terminated, or ``max_steps``), and each seed's return is the single run's
sum over steps of the players' rewards added in player order.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from icmlgym.agents.multi import joint_class
from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.vector import vector_class
from icmlgym.catalog import TaskCard
from icmlgym.runner.batch_records import episode_records
from icmlgym.runner.record import EpisodeRecord
from icmlgym.runner.rollout import episode_seeds


def multi_vector_class(agent_cls: Any) -> type | None:
    """The vector twin of the joint twin of ``agent_cls`` (None when either is missing)."""
    joint = joint_class(agent_cls)
    return vector_class(joint) if joint is not None else None


def multi_specs(c: TaskCard, venv: Any, kwargs: dict[str, Any], tier: str, device: str) -> dict[str, AgentSpec]:
    """The per-player specs of a single run (:func:`icmlgym.runner.loop.execute`'s), from the vector env's single env."""
    return {
        a: AgentSpec(c.id, venv.agent_observation_space(a), venv.agent_action_space(a), c, kwargs, tier, 0, a, device)
        for a in venv.possible_agents
    }


def multi_episode(venv: Any, agent: Any, seeds: list[int], specs: dict[str, AgentSpec], ep: int,
                  max_steps: int | None) -> list[EpisodeRecord]:
    """Episode ``ep`` of every seed in lock step; one record per seed (the single runs' values)."""
    t0 = time.perf_counter()
    n = len(seeds)
    agent.reset(episode_seeds(seeds, ep, "agent"), specs)
    obs, info = venv.reset(seed=episode_seeds(seeds, ep, "env"))
    ret = np.zeros(n)
    steps = 0
    act, update, step = agent.act, agent.update, venv.step
    while True:
        actions = act(obs, info)
        next_obs, rewards, terminated, truncated, info = step(actions)
        steps += 1
        if max_steps is not None and steps >= max_steps:
            truncated = np.ones(n, dtype=bool)
        update(obs, actions, rewards, next_obs, terminated, truncated, info)
        total = 0.0 + rewards[:, 0]  # sum(rewards.values()): 0, then the players' rewards in order
        for j in range(1, rewards.shape[1]):
            total = total + rewards[:, j]
        ret += total
        obs = next_obs
        ended = np.count_nonzero(np.logical_or(terminated, truncated))
        if ended == n:
            break
        if ended:
            raise RuntimeError("the sub-envs of a batch ended at different steps; run these seeds singly")
    return episode_records(ep, ret, [steps] * n, info, (time.perf_counter() - t0) / n)


__all__ = ["multi_episode", "multi_specs", "multi_vector_class"]
