"""Bandit-v0 for N seeds at once: one array step instead of N Python steps.

``gym.make_vec("icmlgym/Bandit-v0", num_envs=N, vectorization_mode="vector_entry_point")``
builds :class:`BernoulliBanditVectorEnv`. Sub-env ``i`` behaves exactly as a
:class:`~icmlgym.envs.bandit.bernoulli_bandit.BernoulliBanditEnv` reset with
``seed[i]``: the single env draws one ``np_random.random()`` per pull, so the
vector env draws each sub-env's whole horizon of uniforms at reset from a
generator seeded the same way (``random(T)`` yields the same doubles as ``T``
calls of ``random()``), and every observation, reward, metric and cost counter
is bit for bit the single env's (tested in ``tests/core/test_batched.py``).

All sub-envs share the horizon, so they end at the same step; autoreset is
disabled (reset explicitly, as the runner does per episode). ``info`` follows
Gymnasium's vector convention: ``info["cost"]["env_steps"]`` is an array, and at
the end ``info["metrics"]`` holds one array per metric.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.bandit.bernoulli_bandit import BernoulliBanditEnv
from icmlgym.envs.vector_seeds import checked_num_envs, discrete_actions, sub_env_seeds


class BernoulliBanditVectorEnv(VectorEnv):
    """``num_envs`` Bernoulli bandits with the same arms, each with its own reward stream."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = checked_num_envs(num_envs)
        self.single = BernoulliBanditEnv(**kwargs)  # validates kwargs; the arms and spaces of every sub-env
        self.means = self.single.means
        self.gaps = self.single.gaps
        self.horizon = self.single.horizon
        self.single_action_space = self.single.action_space
        self.single_observation_space = self.single.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._draws = np.zeros((self.horizon, self.num_envs))  # step-major: one step's draws are contiguous
        # the arms pulled, step-major; the regret and optimal pulls are summed from them at the end, over the
        # steps in order (a reduction over axis 0 adds row after row: the single env's running sums, bit for bit)
        self._pulls = np.zeros((self.horizon, self.num_envs), dtype=np.intp)
        self._rows = np.arange(self.num_envs)
        self._shape = (self.num_envs,)
        # terminated / truncated flags: the same two read-only arrays every step
        self._false, self._true = np.zeros(self.num_envs, dtype=bool), np.ones(self.num_envs, dtype=bool)
        self._false.flags.writeable = self._true.flags.writeable = False
        self._t = 0
        self._ended = True

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        seeds = sub_env_seeds(seed, self.num_envs)
        for i, s in enumerate(seeds):
            rng, _ = seeding.np_random(s)
            self._draws[:, i] = rng.random(self.horizon)
        self._t = 0
        self._ended = False
        self._reward_sum = np.zeros(self.num_envs)
        obs = np.zeros((self.num_envs, 2), dtype=np.float32)
        return obs, {"cost": {"env_steps": np.zeros(self.num_envs, dtype=np.int64)}}

    def step(self, actions: Any):
        a = discrete_actions(actions, self._shape, self.single.n_arms)
        if a is None:
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        means = self.means[a]
        if self._ended:
            raise RuntimeError("step() called after the episodes ended (or before reset); call reset()")
        rewards = (self._draws[self._t] < means).astype(np.float64)
        self._pulls[self._t] = a
        self._t += 1
        self._reward_sum += rewards
        truncated = self._t >= self.horizon
        obs = np.empty((self.num_envs, 2), dtype=np.float32)
        obs[:, 0] = rewards
        obs[:, 1] = self._t / self.horizon
        steps = np.empty(self.num_envs, dtype=np.int64)
        steps.fill(self._t)
        info: dict[str, Any] = {"cost": {"env_steps": steps}}
        if truncated:
            self._ended = True
            gaps = self.gaps[self._pulls[: self._t]]
            info["metrics"] = {
                "pseudo_regret": np.add.reduce(gaps, axis=0),
                "cumulative_reward": self._reward_sum.copy(),
                "optimal_arm_fraction": np.count_nonzero(gaps == 0.0, axis=0) / self._t,
            }
        return obs, rewards, self._false, self._true if truncated else self._false, info


__all__ = ["BernoulliBanditVectorEnv"]
