"""The linear-bandit cores shared by the FairLinBandit reference agents and the linear baselines.

Least-squares statistics kept incrementally (the inverse Gram matrix by Sherman–Morrison and
every arm's ``||x||^2_{V^{-1}}`` by the matching rank-one correction), the OFUL radius, the UCB
and phased-elimination cores, and :class:`LinearBanditAgent`, the base class that reads the arm
matrix from ``obs["arms"]`` and the horizon from the reset ``info``. An agent's shared core lives
here, on the agent side; :mod:`icmlgym.baselines.fairbandit` builds on it.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.envs.fairbandit.design import DIRECT, Designs, design_allocation

DEFAULT_NOISE_SD = math.sqrt(0.5)  # the paper's Gaussian noise has variance 0.5
DEFAULT_HORIZON = 10_000  # FairLinearBandit-v0's default horizon


class RidgeStatistics:
    """Ridge least squares over a fixed arm matrix, updated one pull at a time.

    Keeps ``V = reg * I + sum x x^T``, its inverse (Sherman–Morrison), ``b = sum r x``
    and ``w_i = x_i^T V^{-1} x_i`` for every arm (rank-one corrections). ``refresh``
    recomputes everything exactly; it runs every ``refresh_every`` updates so that
    rounding errors of the rank-one updates cannot accumulate.
    """

    def __init__(self, arms: np.ndarray, reg: float = 1.0, refresh_every: int = 2000) -> None:
        if reg <= 0:
            raise ValueError(f"the ridge regulariser must be positive, got {reg}")
        self.X = arms
        self.d = arms.shape[1]
        self.reg = float(reg)
        self.counts = np.zeros(arms.shape[0])  # pulls per arm: V is rebuilt from them exactly
        self.Vinv = np.eye(self.d) / self.reg
        self.b = np.zeros(self.d)
        self.w = np.einsum("ij,ij->i", arms, arms) / self.reg
        self.n = 0
        self.refresh_every = int(refresh_every)

    @property
    def V(self) -> np.ndarray:
        """The regularised Gram matrix ``reg * I + sum over pulls of x x^T``."""
        return self.reg * np.eye(self.d) + self.X.T @ (self.counts[:, None] * self.X)

    def add(self, arm: int, reward: float) -> None:
        x = self.X[arm]
        self.counts[arm] += 1.0
        self.b += reward * x
        self.n += 1
        if self.n % self.refresh_every == 0:
            self.refresh()
            return
        u = self.Vinv @ x
        inv_denom = 1.0 / (1.0 + x @ u)
        self.Vinv -= (u[:, None] * inv_denom) * u
        xu = self.X @ u
        self.w -= xu * xu * inv_denom

    def refresh(self) -> None:
        self.Vinv = np.linalg.inv(self.V)
        self.w = np.einsum("ij,jk,ik->i", self.X, self.Vinv, self.X)

    @property
    def theta(self) -> np.ndarray:
        return self.Vinv @ self.b


def oful_radius(t: int, d: int, noise_sd: float, reg: float, arm_norm: float, theta_norm: float, delta: float) -> float:
    """The self-normalised confidence radius of Abbasi-Yadkori et al. (2011, Theorem 2)."""
    return noise_sd * math.sqrt(2.0 * math.log(1.0 / delta) + d * math.log(1.0 + t * arm_norm**2 / (reg * d))) + math.sqrt(reg) * theta_norm


class UCBCore:
    """Optimistic arm choice over an active subset: argmax ``x theta + beta_t ||x||_{V^{-1}}``."""

    def __init__(self, stats: RidgeStatistics, active: np.ndarray, noise_sd: float, theta_norm: float, delta: float, alpha: float = 1.0):
        self.stats = stats
        self.active = np.asarray(active, dtype=np.int64)
        self.Xa = stats.X[self.active]
        self.noise_sd, self.theta_norm, self.delta, self.alpha = noise_sd, theta_norm, delta, alpha
        self.arm_norm = float(np.sqrt((stats.X**2).sum(axis=1).max()))
        self.all_arms = len(self.active) == stats.X.shape[0]

    def choose(self) -> int:
        s = self.stats
        beta = self.alpha * oful_radius(s.n, s.d, self.noise_sd, s.reg, self.arm_norm, self.theta_norm, self.delta)
        w = s.w if self.all_arms else s.w[self.active]
        ucb = self.Xa @ s.theta + beta * np.sqrt(np.maximum(w, 0.0))
        i = int(np.argmax(ucb))
        return i if self.all_arms else int(self.active[i])

    def observe(self, arm: int, reward: float) -> None:
        self.stats.add(arm, reward)


class PhasedEliminationCore:
    """Phased elimination with G-optimal designs (Lattimore & Szepesvári 2020, Algorithm 12).

    Phase l uses accuracy ``eps_l = eps0 * 2**-(l-1)``: it plays the G-optimal design
    of the active arms ``ceil(2 d sigma^2 / eps_l^2 * log(k l (l + 1) / delta))`` times,
    estimates theta from that phase's data only, and removes every arm ``a`` with
    ``max_b <theta, b - a> > 2 eps_l``. ``designs`` solves the designs (:data:`DIRECT`, or a
    batch's :class:`~icmlgym.envs.fairbandit.design.SharedDesigns`).
    """

    def __init__(self, arms: np.ndarray, active: np.ndarray, noise_sd: float, delta: float, eps0: float = 0.5, reg: float = 1e-6,
                 designs: Designs = DIRECT):
        self.X = arms
        self.designs = designs
        self.active = np.asarray(active, dtype=np.int64)
        self.noise_sd, self.delta, self.reg = noise_sd, delta, reg
        self.eps = float(eps0)
        self.phase = 0
        self.queue = np.zeros(0, dtype=np.int64)
        self.pos = 0
        self._pulled: list[int] = []
        self._rewards: list[float] = []
        self.design_calls = 0
        self.eliminated_history: list[int] = []
        self._ended = 0  # the last phase whose end has run

    def _start_phase(self) -> None:
        self.phase += 1
        if self.phase > 1:
            self.eps /= 2.0
        k = len(self.active)
        Xa = self.X[self.active]
        if k == 1:
            self.queue = self.active.copy()
        else:
            lam = self.designs.g_optimal(Xa)
            self.design_calls += 1
            lam = np.where(lam >= 1e-3 / k, lam, 0.0)
            lam /= lam.sum()
            r = min(Xa.shape[1], int(np.sum(lam > 0)))
            n = math.ceil(2.0 * r * self.noise_sd**2 / self.eps**2 * math.log(k * self.phase * (self.phase + 1) / self.delta))
            n = max(n, int(np.sum(lam > 0)))
            counts = design_allocation(lam, n)
            self.queue = np.repeat(self.active, counts)
        self.pos = 0
        self._pulled, self._rewards = [], []

    def _end_phase(self) -> None:
        if self._ended == self.phase:  # ended ahead of its ``choose`` (a batch solving its seeds' next designs together)
            return
        self._ended = self.phase
        if len(self.active) > 1 and self._pulled:
            idx = np.asarray(self._pulled)
            Xp = self.X[idx]
            V = Xp.T @ Xp + self.reg * np.eye(self.X.shape[1])
            theta = np.linalg.lstsq(V, Xp.T @ np.asarray(self._rewards), rcond=None)[0]
            est = self.X[self.active] @ theta
            keep = est >= est.max() - 2.0 * self.eps
            self.eliminated_history.append(int(np.sum(~keep)))
            self.active = self.active[keep]

    @property
    def settled(self) -> bool:
        """One arm left: every later ``choose`` returns it (each phase is one pull of it)."""
        return self.phase > 0 and len(self.active) == 1

    def choose(self) -> int:
        if self.pos >= len(self.queue):
            if self.phase > 0:
                self._end_phase()
            self._start_phase()
        a = int(self.queue[self.pos])
        self.pos += 1
        return a

    def observe(self, arm: int, reward: float) -> None:
        self._pulled.append(arm)
        self._rewards.append(reward)


def horizon_of(info: dict[str, Any], spec: AgentSpec | None) -> int:
    if "horizon" in info:
        return int(info["horizon"])
    if spec is not None and "horizon" in spec.env_kwargs:
        return int(spec.env_kwargs["horizon"])
    return DEFAULT_HORIZON


def arms_of(obs: Any) -> np.ndarray:
    if not isinstance(obs, dict) or "arms" not in obs:
        raise TypeError(
            "linear bandit agents need observations with an 'arms' entry (icmlgym/FairLinearBandit-v0); "
            f"got {type(obs).__name__}"
        )
    X = np.array(obs["arms"], dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"obs['arms'] must be a (K, d) array, got shape {X.shape}")
    return X


class LinearBanditAgent(BaseAgent):
    """Base class: reads the arms and horizon on the first ``act``, then ``_choose``/``_observe``.

    Subclasses ask ``self.designs`` for their designs: :data:`DIRECT` unless a vector twin
    gives its seeds' agents one :class:`~icmlgym.envs.fairbandit.design.SharedDesigns`."""

    designs: Designs = DIRECT

    def __init__(self, noise_sd: float = DEFAULT_NOISE_SD, delta: float | None = None) -> None:
        super().__init__()
        if not noise_sd > 0:
            raise ValueError(f"noise_sd must be positive, got {noise_sd}")
        if delta is not None and not 0 < delta < 1:
            raise ValueError(f"delta must lie in (0, 1), got {delta}")
        self.noise_sd = float(noise_sd)
        self.delta_arg = delta
        self._ready = False

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._ready = False
        self.t = 0

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        if not self._ready:
            self.X = arms_of(obs)
            self.K, self.d = self.X.shape
            self.T = horizon_of(info, self.spec)
            self.delta = self.delta_arg if self.delta_arg is not None else 1.0 / self.T
            self._setup()
            self._ready = True
        return self._choose()

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        self._observe(int(action), float(reward))
        self.t += 1

    def _setup(self) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def _choose(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError

    def _observe(self, arm: int, reward: float) -> None:  # pragma: no cover - abstract
        raise NotImplementedError
