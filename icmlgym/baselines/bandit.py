"""Baselines for Bernoulli bandits."""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.baselines.generic import DiscreteValueAgent


class BernoulliThompsonAgent(DiscreteValueAgent):
    """Thompson sampling with Beta(alpha, beta) priors on each arm's success probability."""

    name = "bandit-thompson"
    vectorized = "icmlgym.baselines.vector:VectorBernoulliThompsonAgent"

    def __init__(self, alpha: float = 1.0, beta: float = 1.0) -> None:
        super().__init__()
        if alpha <= 0 or beta <= 0:
            raise ValueError(f"alpha and beta must be positive, got {alpha}, {beta}")
        self.alpha, self.beta = alpha, beta

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        wins = self.sums
        losses = self.counts - self.sums
        draws = self.np_random.beta(self.alpha + wins, self.beta + losses)
        return self.start + int(np.argmax(draws))
