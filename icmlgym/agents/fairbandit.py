"""FairLinBandit (Sarkar, Pandey & Ray Chowdhury, ICML 2026, arXiv 2601.22969): the reference agents.

FairLinBandit is a meta-algorithm: a short fair exploration phase that keeps
every round's expected reward bounded away from zero (so the geometric mean
cannot collapse) and yields an initial estimate, an elimination of the arms that
are certainly suboptimal, then a base linear-bandit strategy on the surviving
arms, warm-started with the exploration data. The paper instantiates it with
Phased Elimination and with UCB; so do we.

The paper's text (its algorithm box and constants) was not available to us;
this is a reconstruction from its abstract, the issue, and the structure of
LinNash (Sawarni, Pal & Barman 2023), which it improves on. What we assumed
(see docs/fairbandit.md):

1. Exploration length ``T1 = ceil(sqrt(d T))`` ("about sqrt(T) rounds"; LinNash
   uses ``3 sqrt(T d nu log(TK))``, which is what makes it pay more).
2. Exploration distribution: each round, with probability 1/2 an arm of the
   G-optimal (Kiefer–Wolfowitz) design of all arms (for the estimate), else an arm
   uniformly at random (for the welfare of the exploration rounds).
3. Widths: the sub-Gaussian self-normalised radius of Abbasi-Yadkori et al.
   (2011) on ``||x||_{V^{-1}}``, rather than LinNash's estimate-scaled Nash
   widths (the paper's "new concentration" is what removes LinNash's extra
   dimension factor; we take the standard sub-Gaussian bound as its practical
   form). After exploration every arm whose UCB is below the best LCB is removed.
4. Bases: LinUCB on the surviving arms with the exploration data kept; phased
   elimination on the surviving arms whose first phase halves the largest
   remaining confidence width.
"""

from __future__ import annotations

import math

import numpy as np

from icmlgym.agents.linear_bandit import (
    DEFAULT_NOISE_SD,
    LinearBanditAgent,
    PhasedEliminationCore,
    RidgeStatistics,
    UCBCore,
    oful_radius,
)


class FairLinBandit(LinearBanditAgent):
    """FairLinBandit over a base strategy (``base="pe"`` or ``"ucb"``).

    Args:
        base: ``"pe"`` (phased elimination) or ``"ucb"`` (LinUCB).
        explore_rounds: length of the fair exploration phase (default ``ceil(sqrt(d T))``).
        uniform_mix: probability that an exploration round draws an arm uniformly
            at random instead of from the G-optimal design.
        noise_sd: sub-Gaussian scale of the reward noise (default: the paper's sqrt(0.5)).
        reg: ridge regulariser.
        theta_norm: bound S on ``||theta*||`` in the confidence radius.
        delta: confidence level (default 1/T).
    """

    name = "fairbandit-fairlin"

    def __init__(
        self,
        base: str = "pe",
        explore_rounds: int | None = None,
        uniform_mix: float = 0.5,
        noise_sd: float = DEFAULT_NOISE_SD,
        reg: float = 1.0,
        theta_norm: float = 1.0,
        delta: float | None = None,
    ) -> None:
        super().__init__(noise_sd, delta)
        if base not in ("pe", "ucb"):
            raise ValueError(f"base must be 'pe' or 'ucb', got {base!r}")
        if explore_rounds is not None and int(explore_rounds) < 1:
            raise ValueError(f"explore_rounds must be a positive integer, got {explore_rounds}")
        if not 0.0 <= uniform_mix <= 1.0:
            raise ValueError(f"uniform_mix must lie in [0, 1], got {uniform_mix}")
        if reg <= 0 or theta_norm < 0:
            raise ValueError(f"need reg > 0 and theta_norm >= 0; got {reg}, {theta_norm}")
        self.base = base
        self.explore_rounds = explore_rounds
        self.uniform_mix = uniform_mix
        self.reg, self.theta_norm = reg, theta_norm

    def _setup(self) -> None:
        t1 = self.explore_rounds or math.ceil(math.sqrt(self.d * self.T))
        self.t1 = min(int(t1), self.T)
        lam = self.designs.g_optimal(self.X)
        rng = self.np_random
        uniform = rng.random(self.t1) < self.uniform_mix
        self.queue = np.where(uniform, rng.integers(0, self.K, self.t1), rng.choice(self.K, self.t1, p=lam)).astype(np.int64)
        self.stats = RidgeStatistics(self.X, self.reg)
        self.core: UCBCore | PhasedEliminationCore | None = None
        self.active = np.arange(self.K)
        self.arm_norm = float(np.sqrt((self.X**2).sum(axis=1).max()))

    def _radius(self) -> float:
        s = self.stats
        return oful_radius(s.n, self.d, self.noise_sd, self.reg, self.arm_norm, self.theta_norm, self.delta)

    def _start_base(self) -> None:
        s = self.stats
        s.refresh()
        width = self._radius() * np.sqrt(np.maximum(s.w, 0.0))
        est = self.X @ s.theta
        keep = est + width >= np.max(est - width)
        self.active = np.flatnonzero(keep)
        if self.base == "ucb":
            self.core = UCBCore(s, self.active, self.noise_sd, self.theta_norm, self.delta)
        else:
            eps0 = min(0.5, float(width[self.active].max()) / 2.0)
            self.core = PhasedEliminationCore(self.X, self.active, self.noise_sd, self.delta, eps0=max(eps0, 1e-3),
                                              designs=self.designs)

    def _choose(self) -> int:
        if self.t < self.t1:
            return int(self.queue[self.t])
        if self.core is None:
            self._start_base()
        return self.core.choose()

    def _observe(self, arm: int, reward: float) -> None:
        if self.t < self.t1:
            self.stats.add(arm, reward)
        elif isinstance(self.core, PhasedEliminationCore):
            self.core.observe(arm, reward)
        else:
            self.stats.add(arm, reward)


class FairLinBanditPE(FairLinBandit):
    """FairLinBandit with Phased Elimination as the base."""

    name = "fairbandit-fairlin-pe"
    vectorized = "icmlgym.agents.fairbandit_vector:VectorFairLinBanditPE"

    def __init__(self, **kwargs) -> None:
        if "base" in kwargs:
            raise TypeError("FairLinBanditPE fixes base='pe'; use FairLinBandit(base=...) to choose")
        super().__init__(base="pe", **kwargs)


class FairLinBanditUCB(FairLinBandit):
    """FairLinBandit with LinUCB as the base."""

    name = "fairbandit-fairlin-ucb"
    vectorized = "icmlgym.agents.fairbandit_vector:VectorFairLinBanditUCB"

    def __init__(self, **kwargs) -> None:
        if "base" in kwargs:
            raise TypeError("FairLinBanditUCB fixes base='ucb'; use FairLinBandit(base=...) to choose")
        super().__init__(base="ucb", **kwargs)
