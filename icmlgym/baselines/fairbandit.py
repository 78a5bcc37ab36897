"""Baselines for finite-armed linear bandits (``icmlgym/FairLinearBandit-v0``).

All agents read the arm matrix from ``obs["arms"]`` and the horizon from the
reset ``info`` (or the tier's ``env_kwargs``), and keep their least-squares
statistics incrementally: the inverse Gram matrix by Sherman–Morrison and every
arm's ``||x||^2_{V^{-1}}`` by the matching rank-one correction, so a round costs
O(K d + d^2) rather than O(K d^2).

- :class:`LinUCBAgent`: LinUCB/OFUL (Abbasi-Yadkori, Pál & Szepesvári 2011).
- :class:`LinTSAgent`: linear Thompson sampling (Agrawal & Goyal 2013).
- :class:`PhasedEliminationAgent`: phased elimination with G-optimal designs
  (Lattimore & Szepesvári 2020, Bandit Algorithms, Algorithm 12).
- :class:`ExploreThenCommitAgent`: G-optimal exploration, then the greedy arm.
- :class:`LinNashAgent`: LinNash (Sawarni, Pal & Barman, NeurIPS 2023).

The cores they share with the reference agents (:class:`RidgeStatistics`, :class:`UCBCore`,
:class:`PhasedEliminationCore`, :class:`LinearBanditAgent`) live on the agent side, in
:mod:`icmlgym.agents.linear_bandit`.
"""

from __future__ import annotations

import math

import numpy as np

from icmlgym.agents.linear_bandit import (  # noqa: F401  (re-exported: the cores are part of this module's API)
    DEFAULT_HORIZON,
    DEFAULT_NOISE_SD,
    LinearBanditAgent,
    PhasedEliminationCore,
    RidgeStatistics,
    UCBCore,
    oful_radius,
)
from icmlgym.envs.fairbandit.design import design_allocation

class LinUCBAgent(LinearBanditAgent):
    """LinUCB / OFUL: ridge estimate plus the self-normalised confidence radius.

    Args:
        noise_sd: sub-Gaussian scale of the noise (default: the paper's sqrt(0.5)).
        reg: ridge regulariser lambda.
        theta_norm: a bound S on ``||theta*||`` (1 for the synthetic instances).
        alpha: multiplier of the radius (1 = the theoretical radius).
        delta: confidence level (default 1/T).
    """

    name = "fairbandit-linucb"
    vectorized = "icmlgym.baselines.fairbandit_vector:VectorLinUCBAgent"

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, reg: float = 1.0, theta_norm: float = 1.0, alpha: float = 1.0, delta: float | None = None):
        super().__init__(noise_sd, delta)
        if reg <= 0 or theta_norm < 0 or alpha < 0:
            raise ValueError(f"need reg > 0, theta_norm >= 0, alpha >= 0; got {reg}, {theta_norm}, {alpha}")
        self.reg, self.theta_norm, self.alpha = reg, theta_norm, alpha

    def _setup(self) -> None:
        self.stats = RidgeStatistics(self.X, self.reg)
        self.core = UCBCore(self.stats, np.arange(self.K), self.noise_sd, self.theta_norm, self.delta, self.alpha)

    def _choose(self) -> int:
        return self.core.choose()

    def _observe(self, arm: int, reward: float) -> None:
        self.stats.add(arm, reward)


class LinTSAgent(LinearBanditAgent):
    """Linear Thompson sampling: play argmax ``x theta~`` with ``theta~ ~ N(theta_hat, v^2 V^{-1})``.

    Args:
        scale: v / noise_sd (1: the Bayesian posterior under a N(0, I/reg) prior; Agrawal &
            Goyal's theoretical inflation is ``sqrt(9 d log(T/delta))``).
        reg: ridge regulariser (prior precision).
    """

    name = "fairbandit-lints"
    vectorized = "icmlgym.baselines.fairbandit_vector:VectorLinTSAgent"

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, reg: float = 1.0, scale: float = 1.0, delta: float | None = None):
        super().__init__(noise_sd, delta)
        if reg <= 0 or scale <= 0:
            raise ValueError(f"need reg > 0 and scale > 0; got {reg}, {scale}")
        self.reg, self.scale = reg, scale

    def _setup(self) -> None:
        self.stats = RidgeStatistics(self.X, self.reg)

    def _choose(self) -> int:
        s = self.stats
        L = np.linalg.cholesky(s.Vinv + 1e-12 * np.eye(self.d))
        theta = s.theta + self.scale * self.noise_sd * (L @ self.np_random.standard_normal(self.d))
        return int(np.argmax(self.X @ theta))

    def _observe(self, arm: int, reward: float) -> None:
        self.stats.add(arm, reward)


class PhasedEliminationAgent(LinearBanditAgent):
    """Phased elimination with G-optimal (Kiefer–Wolfowitz) designs over the surviving arms."""

    name = "fairbandit-pe"
    vectorized = "icmlgym.baselines.fairbandit_vector:VectorPhasedEliminationAgent"

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, eps0: float = 0.5, delta: float | None = None):
        super().__init__(noise_sd, delta)
        if not eps0 > 0:
            raise ValueError(f"eps0 must be positive, got {eps0}")
        self.eps0 = eps0

    def _setup(self) -> None:
        self.core = PhasedEliminationCore(self.X, np.arange(self.K), self.noise_sd, self.delta, self.eps0, designs=self.designs)

    def _choose(self) -> int:
        return self.core.choose()

    def _observe(self, arm: int, reward: float) -> None:
        self.core.observe(arm, reward)


class ExploreThenCommitAgent(LinearBanditAgent):
    """Explore with the G-optimal design for ``explore_rounds``, then always play the greedy arm.

    Default ``explore_rounds = ceil(d^(1/3) T^(2/3))``, the usual ETC tuning with the
    d directions of the design in place of K arms.
    """

    name = "fairbandit-etc"
    vectorized = "icmlgym.baselines.fairbandit_vector:VectorExploreThenCommitAgent"

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, explore_rounds: int | None = None):
        super().__init__(noise_sd, None)
        if explore_rounds is not None and int(explore_rounds) < 1:
            raise ValueError(f"explore_rounds must be positive, got {explore_rounds}")
        self.explore_rounds = explore_rounds

    def _setup(self) -> None:
        n = self.explore_rounds or math.ceil(self.d ** (1 / 3) * self.T ** (2 / 3))
        n = min(int(n), self.T)
        lam = self.designs.g_optimal(self.X)
        queue = np.repeat(np.arange(self.K), design_allocation(lam, n))
        self.queue = queue[self.np_random.permutation(len(queue))]
        self.stats = RidgeStatistics(self.X, 1e-6)
        self.best: int | None = None

    def _choose(self) -> int:
        if self.t < len(self.queue):
            return int(self.queue[self.t])
        if self.best is None:
            self.stats.refresh()
            self.best = int(np.argmax(self.X @ self.stats.theta))
        return self.best

    def _observe(self, arm: int, reward: float) -> None:
        if self.t < len(self.queue):
            self.stats.add(arm, reward)


class LinNashAgent(LinearBanditAgent):
    """LinNash (Sawarni, Pal & Barman, NeurIPS 2023), Algorithm 1 as we read it.

    Part I (``T~ = ceil(3 sqrt(T d nu log(T K)))`` rounds): each round plays an arm
    drawn, with probability 1/2 each, from the D-optimal design of all arms or from
    the John-ellipsoid distribution (whose mean is the ellipsoid centre, so every
    round's expected reward is at least ``mu* / (2 (d + 1))``). Then theta is
    estimated by least squares and arms are kept if their upper Nash confidence
    bound reaches the largest lower one, with the estimate-scaled widths
    ``c * sqrt(<x, theta> d nu log(T K) / n)`` (``c = 6``).

    Part II: phases of doubling length ``T'`` (starting from ``2 T~ / 3``): each plays
    the D-optimal design of the surviving arms ``ceil(lam_x T')`` times, re-estimates
    theta from the phase's data and eliminates with the same Nash confidence bounds.

    Args:
        nu: the sub-Poisson parameter of the rewards (1 for rewards in [0, 1]).
        width: the constant ``c`` of the Nash confidence widths.
    """

    name = "fairbandit-linnash"
    vectorized = "icmlgym.baselines.fairbandit_vector:VectorLinNashAgent"

    def __init__(self, nu: float = 1.0, width: float = 6.0, noise_sd: float = DEFAULT_NOISE_SD):
        super().__init__(noise_sd, None)
        if nu <= 0 or width < 0:
            raise ValueError(f"need nu > 0 and width >= 0; got {nu}, {width}")
        self.nu, self.width = nu, width

    def _setup(self) -> None:
        self.logTK = math.log(self.T * self.K)
        self.t1 = min(self.T, math.ceil(3.0 * math.sqrt(self.T * self.d * self.nu * self.logTK)))
        lam = self.designs.g_optimal(self.X)
        john = self.designs.john(self.X)
        rng = self.np_random
        from_john = rng.random(self.t1) < 0.5
        seq = np.where(from_john, rng.choice(self.K, self.t1, p=john), rng.choice(self.K, self.t1, p=lam))
        self.queue = seq.astype(np.int64)
        self.pos = 0
        self.active = np.arange(self.K)
        self.phase_len = 2.0 * self.t1 / 3.0
        self.phase = 0
        self._pulled: list[int] = []
        self._rewards: list[float] = []

    def _eliminate(self, n: float) -> None:
        idx = np.asarray(self._pulled)
        Xp = self.X[idx]
        V = Xp.T @ Xp + 1e-6 * np.eye(self.d)
        theta = np.linalg.lstsq(V, Xp.T @ np.asarray(self._rewards), rcond=None)[0]
        est = self.X[self.active] @ theta
        half = self.width * np.sqrt(np.maximum(est, 0.0) * self.d * self.nu * self.logTK / n)
        keep = est + half >= np.max(est - half)
        self.active = self.active[keep]

    def _next_phase(self) -> None:
        self._eliminate(len(self._pulled))
        self.phase += 1
        self.phase_len *= 2.0
        if len(self.active) == 1:
            counts = np.array([math.ceil(self.phase_len)])
        else:
            lam = self.designs.g_optimal(self.X[self.active])
            lam = np.where(lam >= 1e-3 / len(self.active), lam, 0.0)
            counts = np.ceil(lam / lam.sum() * self.phase_len).astype(np.int64)
        self.queue = np.repeat(self.active, counts)
        self.pos = 0
        self._pulled, self._rewards = [], []

    def _choose(self) -> int:
        if self.pos >= len(self.queue):
            self._next_phase()
        a = int(self.queue[self.pos])
        self.pos += 1
        return a

    def _observe(self, arm: int, reward: float) -> None:
        self._pulled.append(arm)
        self._rewards.append(reward)
