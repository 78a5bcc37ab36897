"""BOBA (ICML 2026): bandits over library partitions, the reference agents of ``icmlgym/Screening-v0``.

Each step the agent picks a partition (arm); the env draws a batch from it,
runs its surrogate, and evaluates the top predicted compounds; the step reward
is their mean objective. The agents keep, per arm, the rewards they received
and read ``obs["remaining"]`` to skip exhausted arms.

With hundreds of arms and a few hundred rounds, UCB1's initial sweep of every
arm eats most of the budget, so the reference optimism starts from a prior:

- :class:`BOBAAgent` (``screening-boba``, reference): Bayesian UCB with a
  Gaussian model per arm whose prior (mean and spread) is estimated from all
  rewards seen so far (empirical Bayes). An untried arm's index is the prior
  mean plus ``beta`` prior standard deviations, so a partition that keeps
  paying above that is exploited without first trying every arm.
- :class:`BOBAThompsonAgent` (``screening-boba-thompson``): Thompson sampling
  from the same posterior.
- :class:`BOBAUCB1Agent` (``screening-boba-ucb1``): UCB1 over partitions (every
  arm once in a random order, then mean + c * scale * sqrt(2 ln t / n)), the textbook variant,
  shipped to show the cost of the sweep.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent


class PartitionBandit(BaseAgent):
    """Per-arm reward statistics over a Discrete action space, with exhausted arms masked."""

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        space = spec.action_space
        if not hasattr(space, "n"):
            raise TypeError(f"{type(self).__name__} needs a Discrete action space (Screening-v0), got {space}")
        self.n = int(space.n)
        self.counts = np.zeros(self.n)
        self.sums = np.zeros(self.n)
        self.t = 0
        self._all: list[float] = []

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        a = int(action)
        self.counts[a] += 1
        self.sums[a] += float(reward)
        self._all.append(float(reward))
        self.t += 1

    def _available(self, obs: Any) -> np.ndarray:
        if isinstance(obs, dict) and "remaining" in obs:
            avail = np.asarray(obs["remaining"]) > 0
            if avail.any():
                return avail
        return np.ones(self.n, dtype=bool)

    def _argmax(self, values: np.ndarray, avail: np.ndarray) -> int:
        v = np.where(avail, values, -np.inf)
        best = np.flatnonzero(v == v.max())
        return int(best[0] if len(best) == 1 else self.np_random.choice(best))

    def _posterior(self) -> tuple[np.ndarray, np.ndarray]:
        """Gaussian posterior mean and std of each arm's mean reward (empirical-Bayes prior)."""
        if len(self._all) < 2:
            m0, s0 = (self._all[0] if self._all else 0.0), 1.0
        else:
            m0 = float(np.mean(self._all))
            s0 = max(float(np.std(self._all)), 1e-6)
        noise = s0 * s0  # per-step reward noise, taken as the spread of all rewards
        prec = 1.0 / (s0 * s0) + self.counts / noise
        mean = (m0 / (s0 * s0) + self.sums / noise) / prec
        return mean, 1.0 / np.sqrt(prec)


class BOBAAgent(PartitionBandit):
    """BOBA with Bayesian UCB over partitions (reference).

    Args:
        beta: optimism, in posterior standard deviations.
    """

    name = "screening-boba"

    def __init__(self, beta: float = 2.0) -> None:
        super().__init__()
        if beta < 0:
            raise ValueError(f"beta must be non-negative, got {beta}")
        self.beta = float(beta)

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        mean, std = self._posterior()
        return self._argmax(mean + self.beta * std, self._available(obs))


class BOBAThompsonAgent(PartitionBandit):
    """BOBA with Gaussian Thompson sampling over partitions."""

    name = "screening-boba-thompson"

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        mean, std = self._posterior()
        return self._argmax(self.np_random.normal(mean, std), self._available(obs))


class BOBAUCB1Agent(PartitionBandit):
    """BOBA with UCB1 over partitions: each available arm once (in a random order, so that a
    budget shorter than the sweep does not favour low arm indices), then
    mean + c * scale * sqrt(2 ln t / n).

    ``scale`` is the standard deviation of all rewards so far (rewards are not in [0, 1]).
    """

    name = "screening-boba-ucb1"

    def __init__(self, c: float = 1.0) -> None:
        super().__init__()
        if c < 0:
            raise ValueError(f"c must be non-negative, got {c}")
        self.c = float(c)

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        avail = self._available(obs)
        untried = np.flatnonzero((self.counts == 0) & avail)
        if len(untried):
            return int(self.np_random.choice(untried))
        scale = float(np.std(self._all)) if len(self._all) > 1 else 1.0
        means = self.sums / np.maximum(self.counts, 1)
        bonus = self.c * scale * np.sqrt(2.0 * np.log(max(self.t, 1)) / np.maximum(self.counts, 1))
        return self._argmax(means + bonus, avail)
