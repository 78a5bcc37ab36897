"""A tiny env whose episodes end at different steps per seed, and its ``ragged_ends`` vector form.

Sub-env ``i`` of :class:`RaggedWalkVectorEnv` behaves as :class:`RaggedWalkEnv` reset with
``seed[i]``: each episode draws its length limit (4-24 steps) and its noise at reset; it is
truncated at the limit and terminated early once the agent's total passes ``target`` (so the
end depends on the seed and on the agent). :class:`LockstepWalkVectorEnv` is the same env
without ``ragged_ends``: a batch of it must fall back to single runs."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.vector_seeds import sub_env_seeds

MAX_LIMIT = 24


class RaggedWalkEnv(gym.Env):
    """Reward ``0.5 * action + noise``; ends at a seeded limit or when the total passes ``target``."""

    def __init__(self, target: float = 6.0) -> None:
        self.target = float(target)
        self.action_space = spaces.Discrete(3)
        self.observation_space = spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float64)

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.limit = int(self.np_random.integers(4, MAX_LIMIT + 1))
        self.noise = self.np_random.random(self.limit)
        self.t, self.total, self.twos = 0, 0.0, 0
        return np.zeros(1), {"cost": {"env_steps": 0, "twos": 0}}

    def step(self, action):
        a = int(action)
        reward = a * 0.5 + self.noise[self.t]
        self.t += 1
        self.total += reward
        self.twos += a == 2
        terminated = self.total > self.target
        truncated = not terminated and self.t >= self.limit
        info: dict[str, Any] = {"cost": {"env_steps": self.t, "twos": self.twos}}
        if terminated or truncated:
            info["metrics"] = {"total": self.total, "length": float(self.t), "hit": float(terminated)}
        return np.array([self.total]), reward, terminated, truncated, info


class RaggedWalkVectorEnv(VectorEnv):
    """``num_envs`` RaggedWalk envs in arrays; sub-envs end at different steps (``ragged_ends``)."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}
    ragged_ends = True

    def __init__(self, num_envs: int = 1, target: float = 6.0) -> None:
        self.num_envs = int(num_envs)
        self.target = float(target)
        self.single_action_space = spaces.Discrete(3)
        self.single_observation_space = spaces.Box(-np.inf, np.inf, shape=(1,), dtype=np.float64)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)

    def reset(self, *, seed=None, options=None):
        n = self.num_envs
        self.limit = np.zeros(n, dtype=np.int64)
        self.noise = np.zeros((n, MAX_LIMIT))
        for i, s in enumerate(sub_env_seeds(seed, n)):
            rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(s)))  # gymnasium's np_random(seed)
            self.limit[i] = int(rng.integers(4, MAX_LIMIT + 1))
            self.noise[i, : self.limit[i]] = rng.random(int(self.limit[i]))
        self.t = np.zeros(n, dtype=np.int64)
        self.total = np.zeros(n)
        self.twos = np.zeros(n, dtype=np.int64)
        self.terminated = np.zeros(n, dtype=bool)
        self.truncated = np.zeros(n, dtype=bool)
        self.metrics = {k: np.zeros(n) for k in ("total", "length", "hit")}
        return np.zeros((n, 1)), {"cost": {"env_steps": self.t.copy(), "twos": self.twos.copy()}}

    def step(self, actions):
        a = np.asarray(actions)
        live = ~(self.terminated | self.truncated)
        if a.shape != (self.num_envs,) or np.any((a[live] < 0) | (a[live] > 2)):
            raise ValueError(f"actions {actions!r} are not in the action space")
        rows = np.flatnonzero(live)
        reward = np.zeros(self.num_envs)
        reward[rows] = a[rows] * 0.5 + self.noise[rows, self.t[rows]]
        self.t[rows] += 1
        self.total[rows] += reward[rows]
        self.twos[rows] += a[rows] == 2
        term = self.total[rows] > self.target
        trunc = ~term & (self.t[rows] >= self.limit[rows])
        self.terminated[rows] = term
        self.truncated[rows] = trunc
        ended = rows[term | trunc]
        self.metrics["total"][ended] = self.total[ended]
        self.metrics["length"][ended] = self.t[ended]
        self.metrics["hit"][ended] = self.terminated[ended]
        info: dict[str, Any] = {"cost": {"env_steps": self.t.copy(), "twos": self.twos.copy()}}
        if (self.terminated | self.truncated).any():
            info["metrics"] = {k: v.copy() for k, v in self.metrics.items()}
        return self.total.reshape(-1, 1).copy(), reward, self.terminated.copy(), self.truncated.copy(), info


class LockstepWalkVectorEnv(RaggedWalkVectorEnv):
    """The same vector env without the ``ragged_ends`` declaration."""

    ragged_ends = False
