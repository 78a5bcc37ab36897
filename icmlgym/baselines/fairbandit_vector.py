"""Vector twins of the linear-bandit baselines (FairLinearBandit-v0): N seeds in lock step, bit for bit.

- :class:`VectorLinUCBAgent` and :class:`VectorExploreThenCommitAgent`: the single agents'
  arithmetic over stacked arrays (:class:`~icmlgym.agents.fairbandit_vector.VectorRidgeStatistics`;
  see :mod:`icmlgym.agents.fairbandit_vector` for which products batch to the same doubles).
- :class:`VectorLinTSAgent`, :class:`VectorPhasedEliminationAgent`, :class:`VectorLinNashAgent`:
  one single agent per seed (:class:`~icmlgym.agents.fairbandit_vector.PerSeedLinearAgents`):
  their work is a Cholesky factor and a Gaussian draw per round, or designs solved per
  phase on each seed's surviving arms (once per distinct problem in the batch); the env and
  the runner's loop are batched, and so are the phase queues' rounds (``PhaseQueues``).
"""

from __future__ import annotations

import math

import numpy as np

from icmlgym.agents.fairbandit_vector import PerSeedLinearAgents, VectorLinearBanditAgent, VectorRidgeStatistics, VectorUCBChoice
from icmlgym.agents.linear_bandit import DEFAULT_NOISE_SD
from icmlgym.baselines.fairbandit import ExploreThenCommitAgent, LinNashAgent, LinTSAgent, LinUCBAgent, PhasedEliminationAgent
from icmlgym.envs.fairbandit.design import design_allocation, g_optimal_design


class VectorLinUCBAgent(VectorLinearBanditAgent):
    """N seeds of :class:`~icmlgym.baselines.fairbandit.LinUCBAgent`."""

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, reg: float = 1.0, theta_norm: float = 1.0, alpha: float = 1.0,
                 delta: float | None = None) -> None:
        super().__init__(noise_sd, delta)
        LinUCBAgent(noise_sd, reg, theta_norm, alpha, delta)  # the single agent's checks and messages
        self.reg, self.theta_norm, self.alpha = reg, theta_norm, alpha

    def _setup(self) -> None:
        self.stats = VectorRidgeStatistics(self.X, self.num, self.reg)
        self.core = VectorUCBChoice(self.stats, [np.arange(self.K)] * self.num, self.noise_sd, self.theta_norm, self.delta, self.alpha)

    def _choose(self) -> np.ndarray:
        return self.core.choose()

    def _observe(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        self.stats.add(arms, rewards)


class VectorExploreThenCommitAgent(VectorLinearBanditAgent):
    """N seeds of :class:`~icmlgym.baselines.fairbandit.ExploreThenCommitAgent`."""

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, explore_rounds: int | None = None) -> None:
        super().__init__(noise_sd, None)
        ExploreThenCommitAgent(noise_sd, explore_rounds)
        self.explore_rounds = explore_rounds

    def _setup(self) -> None:
        n = self.explore_rounds or math.ceil(self.d ** (1 / 3) * self.T ** (2 / 3))
        n = min(int(n), self.T)
        lam = g_optimal_design(self.X)  # the same for every seed
        queue = np.repeat(np.arange(self.K), design_allocation(lam, n))
        self.queue = np.ascontiguousarray(np.stack([queue[rng.permutation(len(queue))] for rng in self.rngs]).T)
        self.stats = VectorRidgeStatistics(self.X, self.num, 1e-6)
        self.best: np.ndarray | None = None

    def _choose(self) -> np.ndarray:
        if self.t < len(self.queue):
            return self.queue[self.t].copy()
        if self.best is None:
            self.stats.refresh()
            theta = self.stats.theta
            self.best = np.array([int(np.argmax(self.X @ theta[i])) for i in range(self.num)], dtype=np.int64)
        return self.best.copy()

    def _observe(self, arms: np.ndarray, rewards: np.ndarray) -> None:
        if self.t < len(self.queue):
            self.stats.add(arms, rewards)


class VectorLinTSAgent(PerSeedLinearAgents):
    """N seeds of :class:`~icmlgym.baselines.fairbandit.LinTSAgent`, one single agent per seed."""

    single = LinTSAgent


class VectorPhasedEliminationAgent(PerSeedLinearAgents):
    """N seeds of :class:`~icmlgym.baselines.fairbandit.PhasedEliminationAgent`, one single agent per seed."""

    single = PhasedEliminationAgent

    def _players(self) -> tuple[list, list]:
        return [a.core for a in self.agents], [a.core.choose for a in self.agents]


class VectorLinNashAgent(PerSeedLinearAgents):
    """N seeds of :class:`~icmlgym.baselines.fairbandit.LinNashAgent`, one single agent per seed."""

    single = LinNashAgent

    def _players(self) -> tuple[list, list]:
        return self.agents, [a._choose for a in self.agents]


__all__ = ["VectorExploreThenCommitAgent", "VectorLinNashAgent", "VectorLinTSAgent", "VectorLinUCBAgent", "VectorPhasedEliminationAgent"]
