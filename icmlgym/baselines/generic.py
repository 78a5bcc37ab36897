"""Generic baselines: random for any env, epsilon-greedy and UCB1 over Discrete actions."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent


class RandomAgent(BaseAgent):
    """Samples the action space uniformly, seeded by the agent's own seed (not the env's)."""

    name = "random"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._space = spec.action_space
        self._space.seed(int(self.np_random.integers(2**31 - 1)))

    def act(self, obs: Any, info: dict[str, Any]) -> Any:
        return self._space.sample()


class _DiscreteValueAgent(BaseAgent):
    """Keeps per-action counts and reward sums over a Discrete action space."""

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        space = spec.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise TypeError(f"{type(self).__name__} needs a Discrete action space, got {space}")
        self.n = int(space.n)
        self.start = int(space.start)
        self.counts = np.zeros(self.n)
        self.sums = np.zeros(self.n)
        self.t = 0

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        a = int(action) - self.start
        self.counts[a] += 1
        self.sums[a] += float(reward)
        self.t += 1

    def _argmax(self, values: np.ndarray) -> int:
        best = np.flatnonzero(values == values.max())
        return int(best[0] if len(best) == 1 else self.np_random.choice(best))


class EpsilonGreedyAgent(_DiscreteValueAgent):
    """Explores uniformly with probability ``epsilon``, else plays the best sample mean."""

    name = "epsilon-greedy"

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon = epsilon

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        untried = np.flatnonzero(self.counts == 0)
        if len(untried):
            return self.start + int(untried[0])
        if self.np_random.random() < self.epsilon:
            return self.start + int(self.np_random.integers(self.n))
        return self.start + self._argmax(self.sums / self.counts)


class UCB1Agent(_DiscreteValueAgent):
    """UCB1: plays each action once, then argmax of mean + c * sqrt(2 ln t / n)."""

    name = "ucb1"

    def __init__(self, c: float = 1.0) -> None:
        super().__init__()
        if c < 0:
            raise ValueError(f"c must be non-negative, got {c}")
        self.c = c

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        untried = np.flatnonzero(self.counts == 0)
        if len(untried):
            return self.start + int(untried[0])
        means = self.sums / self.counts
        bonus = self.c * np.sqrt(2.0 * np.log(self.t) / self.counts)
        return self.start + self._argmax(means + bonus)
