"""Baselines for Bernoulli bandits."""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec
from icmlgym.baselines.draws import BetaBlocks
from icmlgym.baselines.generic import DiscreteValueAgent


class BernoulliThompsonAgent(DiscreteValueAgent):
    """Thompson sampling with Beta(alpha, beta) priors on each arm's success probability.

    The posterior samples come from :class:`icmlgym.baselines.draws.BetaBlocks` (exact Beta
    draws from blocks of normals and uniforms), so that the vector twin reproduces them for
    N seeds with array arithmetic instead of one ``Generator.beta`` call per seed and step."""

    name = "bandit-thompson"
    vectorized = "icmlgym.baselines.vector:VectorBernoulliThompsonAgent"

    def __init__(self, alpha: float = 1.0, beta: float = 1.0) -> None:
        super().__init__()
        if alpha <= 0 or beta <= 0:
            raise ValueError(f"alpha and beta must be positive, got {alpha}, {beta}")
        self.alpha, self.beta = alpha, beta

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._beta = BetaBlocks([self.np_random], self.n)
        self._beta.set_shapes(np.full((1, self.n), self.alpha + 0.0), np.full((1, self.n), self.beta + 0.0))

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        return self.start + int(np.argmax(self._beta.sample()[0]))

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        super().update(obs, action, reward, next_obs, terminated, truncated, info)
        a = int(action) - self.start  # the posterior of the pulled arm: Beta(alpha + wins, beta + losses)
        self._beta.set_arm(0, a, self.alpha + self.sums[a], self.beta + (self.counts[a] - self.sums[a]))
