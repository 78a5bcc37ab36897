"""A K-armed Bernoulli bandit: the smallest worked example of icmlgym's conventions.

## Description

The classic stochastic multi-armed bandit (Lai & Robbins 1985; Auer et al. 2002):
K arms, arm ``k`` pays 1 with probability ``means[k]`` and 0 otherwise. It is
not from an ICML 2026 paper; it exists so that the registry, runner, CLI and
leaderboard are exercised by something small and honest, and as a template for
a family's env module (this docstring's headings are the ones every env has).

## Action Space

``Discrete(n_arms)``: the arm to pull.

## Observation Space

``Box(0, 1, (2,), float32)``: the last reward (0 before the first pull) and
the fraction of the horizon elapsed. The arm means are hidden.

## Rewards

The Bernoulli draw of the pulled arm, 0 or 1.

## Starting State

The arm means are fixed for the env instance: ``means`` if given, else drawn
uniformly in [0.05, 0.95] from ``instance_seed`` (so every episode and every
seed plays the same problem). ``reset(seed=...)`` seeds the reward draws.

## Episode End

Truncated (not terminated) after ``horizon`` pulls: the horizon is a time limit,
the task itself never ends.

## Arguments

- ``n_arms`` (int, default 10), ``horizon`` (int, default 1000)
- ``means`` (sequence of floats in [0, 1], optional; overrides ``n_arms``)
- ``instance_seed`` (int, default 0): the seed the means are drawn from.

## Metrics

At episode end ``info["metrics"]`` holds ``pseudo_regret`` (sum over pulls of
``max(means) - means[arm]``, the primary metric, lower is better),
``cumulative_reward`` and ``optimal_arm_fraction``. ``info["cost"]`` counts
``env_steps`` (pulls).

## Version History

- v0: initial release.
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.fastspaces import contains_fn


class BernoulliBanditEnv(gym.Env):
    """A K-armed Bernoulli bandit: the smallest worked example of icmlgym's conventions.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.bandit.bernoulli_bandit)``).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        n_arms: int = 10,
        horizon: int = 1000,
        means: Sequence[float] | None = None,
        instance_seed: int = 0,
    ) -> None:
        if means is not None:
            m = np.asarray(means, dtype=np.float64)
            if m.ndim != 1 or len(m) < 2 or np.any((m < 0) | (m > 1)) or not np.all(np.isfinite(m)):
                raise ValueError(f"means must be a sequence of at least 2 probabilities in [0, 1], got {means!r}")
            self.means = m
        else:
            if int(n_arms) < 2:
                raise ValueError(f"n_arms must be at least 2, got {n_arms}")
            self.means = np.random.default_rng(instance_seed).uniform(0.05, 0.95, int(n_arms))
        if int(horizon) < 1:
            raise ValueError(f"horizon must be a positive integer, got {horizon}")
        self.n_arms = len(self.means)
        self.horizon = int(horizon)
        self.best_mean = float(self.means.max())
        self.gaps = self.best_mean - self.means
        self._means_list = self.means.tolist()  # per-step lookups as Python floats (same doubles, no numpy scalars)
        self._gaps_list = self.gaps.tolist()
        self.action_space = spaces.Discrete(self.n_arms)
        self._valid_action = contains_fn(self.action_space)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(2,), dtype=np.float32)
        self._t = 0
        self._regret = 0.0
        self._reward_sum = 0.0
        self._optimal_pulls = 0

    def _obs(self, last_reward: float) -> np.ndarray:
        return np.array([last_reward, self._t / self.horizon], dtype=np.float32)

    def _info(self) -> dict[str, Any]:
        return {"cost": {"env_steps": self._t}}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._t = 0
        self._regret = 0.0
        self._reward_sum = 0.0
        self._optimal_pulls = 0
        return self._obs(0.0), self._info()

    def step(self, action):
        if not self._valid_action(action):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._t >= self.horizon:
            raise RuntimeError("step() called after the episode ended; call reset()")
        a = int(action)
        reward = float(self.np_random.random() < self._means_list[a])
        self._t += 1
        gap = self._gaps_list[a]
        self._regret += gap
        self._reward_sum += reward
        self._optimal_pulls += gap == 0.0
        truncated = self._t >= self.horizon
        info = self._info()
        if truncated:
            info["metrics"] = {
                "pseudo_regret": float(self._regret),
                "cumulative_reward": float(self._reward_sum),
                "optimal_arm_fraction": self._optimal_pulls / self._t,
            }
        return self._obs(reward), reward, False, truncated, info
