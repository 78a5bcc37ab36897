"""FairLinearBandit-v0: a finite-armed stochastic linear bandit scored by Nash and p-means regret.

## Description

The problem of *Improved Algorithms for Nash Welfare in Linear Bandits*
(Sarkar, Pandey & Ray Chowdhury, ICML 2026, arXiv 2601.22969; FairLinBandit),
after *Nash Regret Guarantees for Linear Bandits* (Sawarni, Pal & Barman,
NeurIPS 2023; LinNash). A fixed set of K arms ``x_1..x_K`` in R^d and an
unknown ``theta*``; pulling arm ``a`` pays ``<x_a, theta*>`` plus noise. Each
round's reward goes to a different individual, so besides the average reward
the collective welfare of the rounds matters: the Nash regret compares the
optimum with the *geometric* mean of the expected rewards collected, and the
p-means regret interpolates between fairness (p = 0 Nash, p -> -inf the worst
round) and utility (p = 1, the usual average regret).

## Action Space

``Discrete(K)``: the index of the arm to pull.

## Observation Space

``Dict(arms=Box(lo, hi, (K, d), float64), last_reward=Box(-inf, inf, (1,), float64))``
(``lo``/``hi``: the arms' smallest/largest coordinate rounded outward; the reward
box is ``[0, 1]`` for Bernoulli and ``[0, inf)`` for clipped noise):
the arm features (the same array every step; an agent reads them at reset) and
the reward of the previous pull (0 after reset). ``theta*`` and the mean
rewards are hidden. ``reset`` also puts ``horizon`` and ``n_arms``/``dim`` in
``info`` so agents can plan their phases.

## Rewards

``noise="gaussian"`` (default, the paper's): ``<x_a, theta*> + N(0, noise_var)``
with ``noise_var = 0.5``. Rewards can be negative, which the Nash-regret theory
excludes, hence two variants with non-negative rewards:
``"bernoulli"``: 1 with probability ``<x_a, theta*>`` (means lie in (0, 1]), else 0;
``"clipped"``: ``max(0, <x_a, theta*> + N(0, noise_var))`` (its expectation is
above the linear mean; the metrics still use the linear means, as the paper's
regret is defined on them).

## Starting State

The instance (arms and ``theta*``) is fixed when the env is built, from
``instance`` and ``instance_seed``; every mean reward lies in
``[min_reward, 1]``. ``reset(seed=...)`` seeds the reward noise only, so every
episode and every seed plays the same instance.

## Episode End

Truncated (never terminated) after ``horizon`` pulls.

## Arguments

- ``instance`` (str, default ``"synthetic"``): ``"synthetic"`` (K arms and theta
  uniform on the sphere), ``"diabetes"``, ``"wine"``, ``"breast_cancer"``
  (bundled with scikit-learn, extra ``[fair]``; SVD + Lasso construction), or
  ``"ltr"`` (an MSLR / Yahoo LTR file at ``ltr_path``).
- ``n_arms`` (int, default 100): K for synthetic; a row subsample for data instances (None: all rows).
- ``dim`` (int, default 10): d.
- ``horizon`` (int, default 10,000): T.
- ``noise`` (``"gaussian"`` | ``"bernoulli"`` | ``"clipped"``), ``noise_var`` (float, default 0.5).
- ``instance_seed`` (int, default 0), ``min_reward`` (float, default 0.05),
  ``lasso_alpha`` (float, default 0.01).
- ``ltr_path``, ``ltr_qid``, ``ltr_max_rows``: the LTR file, an optional query, a cap on lines read.
- ``arms``, ``theta``: an explicit instance (arrays), overriding ``instance``; mean rewards must be positive.

## Metrics

At episode end ``info["metrics"]`` holds, on the expected rewards of the arms
pulled (as the paper computes them): ``pmeans_regret[p=P]`` for P in
{1, 0.5, 0, -0.5, -1, -1.5, -2, -5}, ``nash_regret`` (p = 0, the primary
metric, lower is better), ``average_regret`` (p = 1), ``egalitarian_regret``
(p = -inf), ``pseudo_regret`` (cumulative, ``T * average_regret``) and
``optimal_arm_fraction``; for the ex-ante metrics (computed across runs by
:mod:`icmlgym.leaderboard.exante`): ``optimum`` (the best arm's mean) and
``expected_reward[rounds=a-b]``, the mean expected reward of the arms pulled in rounds
a..b, over at most 48 logarithmic blocks (one round each early on; see
docs/fairbandit.md). ``info["regret_curve"]`` holds the regrets of the
first t rounds at logarithmic checkpoints ``t``. ``info["cost"]`` counts
``env_steps``.

## Version History

- v0: initial release.
"""

from __future__ import annotations

from typing import Any, Sequence

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.fairbandit.instances import (
    SKLEARN_DATASETS,
    LinearInstance,
    ltr_instance,
    sklearn_instance,
    synthetic_instance,
)
from icmlgym.envs.fairbandit.pmeans import PAPER_P_GRID, block_metrics, log_checkpoints, metric_name, pmeans_metrics, pmeans_regret_prefixes

NOISES: tuple[str, ...] = ("gaussian", "bernoulli", "clipped")
INSTANCES: tuple[str, ...] = ("synthetic", *SKLEARN_DATASETS, "ltr")


def build_instance(
    instance: str = "synthetic",
    n_arms: int | None = 100,
    dim: int = 10,
    instance_seed: int = 0,
    min_reward: float = 0.05,
    lasso_alpha: float = 0.01,
    ltr_path: str | None = None,
    ltr_qid: str | None = None,
    ltr_max_rows: int | None = None,
) -> LinearInstance:
    """The instance an env with these arguments plays (see the module docstring)."""
    if instance == "synthetic":
        return synthetic_instance(100 if n_arms is None else n_arms, dim, instance_seed, min_reward)
    if instance in SKLEARN_DATASETS:
        return sklearn_instance(instance, dim, n_arms, instance_seed, lasso_alpha, min_reward)
    if instance == "ltr":
        if ltr_path is None:
            raise ValueError('instance="ltr" needs ltr_path=<path to an MSLR / Yahoo LTR file>')
        return ltr_instance(ltr_path, dim, n_arms, ltr_qid, instance_seed, lasso_alpha, min_reward, ltr_max_rows)
    raise ValueError(f"unknown instance {instance!r}; instances: {INSTANCES}")


class FairLinearBanditEnv(gym.Env):
    """FairLinearBandit-v0: a finite-armed stochastic linear bandit scored by Nash and p-means regret.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.fairbandit.fair_linear_bandit)``).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        instance: str = "synthetic",
        n_arms: int | None = 100,
        dim: int = 10,
        horizon: int = 10_000,
        noise: str = "gaussian",
        noise_var: float = 0.5,
        instance_seed: int = 0,
        min_reward: float = 0.05,
        lasso_alpha: float = 0.01,
        ltr_path: str | None = None,
        ltr_qid: str | None = None,
        ltr_max_rows: int | None = None,
        arms: Sequence[Sequence[float]] | np.ndarray | None = None,
        theta: Sequence[float] | np.ndarray | None = None,
        p_grid: Sequence[float] = PAPER_P_GRID,
    ) -> None:
        if noise not in NOISES:
            raise ValueError(f"noise must be one of {NOISES}, got {noise!r}")
        if not (np.isfinite(noise_var) and noise_var >= 0):
            raise ValueError(f"noise_var must be a non-negative number, got {noise_var!r}")
        if int(horizon) < 1:
            raise ValueError(f"horizon must be a positive integer, got {horizon}")
        if (arms is None) != (theta is None):
            raise ValueError("give both arms and theta for an explicit instance, or neither")
        if arms is not None:
            inst = LinearInstance(np.asarray(arms), np.asarray(theta), "custom")
        else:
            inst = build_instance(instance, n_arms, dim, instance_seed, min_reward, lasso_alpha, ltr_path, ltr_qid, ltr_max_rows)
        means = inst.means
        if np.any(means <= 0):
            raise ValueError(
                f"every mean reward <x, theta> must be positive (Nash regret needs it); the smallest is {means.min():g}"
            )
        if noise == "bernoulli" and np.any(means > 1):
            raise ValueError(f'noise="bernoulli" needs mean rewards in (0, 1]; the largest is {means.max():g}')
        self.instance = inst
        self.arms = inst.arms.copy()
        self.arms.setflags(write=False)
        self.theta = inst.theta
        self.means = means
        self.optimum = float(means.max())
        self.n_arms, self.dim = self.arms.shape
        self.horizon = int(horizon)
        self.noise = noise
        self.noise_sd = float(np.sqrt(noise_var))
        self.p_grid = tuple(float(p) for p in p_grid)
        self.action_space = spaces.Discrete(self.n_arms)
        self.observation_space = spaces.Dict(
            {
                "arms": spaces.Box(
                    float(np.floor(self.arms.min())), float(np.ceil(self.arms.max())), shape=self.arms.shape, dtype=np.float64
                ),
                "last_reward": spaces.Box(
                    -np.inf if noise == "gaussian" else 0.0,
                    1.0 if noise == "bernoulli" else np.inf,
                    shape=(1,),
                    dtype=np.float64,
                ),
            }
        )
        self._t = 0
        self._expected = np.zeros(self.horizon)
        self._draws = np.zeros(self.horizon)
        self._optimal_pulls = 0

    def _obs(self, reward: float) -> dict[str, np.ndarray]:
        # a fresh copy each call: Gymnasium requires that returned observations never share memory
        return {"arms": self.arms.copy(), "last_reward": np.array([reward])}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._t = 0
        self._optimal_pulls = 0
        self._expected = np.zeros(self.horizon)
        # the noise of every round is drawn up front (one vectorised draw instead of T scalar ones)
        if self.noise == "bernoulli":
            self._draws = self.np_random.random(self.horizon)
        else:
            self._draws = self.np_random.normal(0.0, self.noise_sd, self.horizon)
        info = {"cost": {"env_steps": 0}, "horizon": self.horizon, "n_arms": self.n_arms, "dim": self.dim}
        return self._obs(0.0), info

    def step(self, action):
        if type(action) is not int or not 0 <= action < self.n_arms:
            if not self.action_space.contains(action):
                raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._t >= self.horizon:
            raise RuntimeError("step() called after the episode ended; call reset()")
        a = int(action)
        mean = self.means[a]
        t = self._t
        if self.noise == "gaussian":
            reward = float(mean + self._draws[t])
        elif self.noise == "bernoulli":
            reward = float(self._draws[t] < mean)
        else:
            reward = max(0.0, float(mean + self._draws[t]))
        self._expected[t] = mean
        self._optimal_pulls += int(mean == self.optimum)
        self._t = t + 1
        truncated = self._t >= self.horizon
        info: dict[str, Any] = {"cost": {"env_steps": self._t}}
        if truncated:
            info["metrics"] = self.metrics()
            info["regret_curve"] = self.regret_curve()
        return self._obs(reward), reward, False, truncated, info

    def expected_rewards(self) -> np.ndarray:
        """The expected rewards of the arms pulled so far this episode (a copy)."""
        return self._expected[: self._t].copy()

    def metrics(self) -> dict[str, float]:
        """The end-of-episode metrics of the rounds played so far."""
        if self._t == 0:
            raise RuntimeError("no rounds played yet")
        r = self._expected[: self._t]
        out = pmeans_metrics(r, self.optimum, self.p_grid)
        out["pseudo_regret"] = float(self._t * self.optimum - r.sum())
        out["optimal_arm_fraction"] = float(self._optimal_pulls / self._t)
        out["optimum"] = self.optimum
        out.update(block_metrics(r))
        return out

    def regret_curve(self) -> dict[str, np.ndarray]:
        """p-means regret of the first t rounds at logarithmic checkpoints t."""
        r = self._expected[: self._t]
        cps = log_checkpoints(self._t)
        return {"t": cps, **{metric_name(p): pmeans_regret_prefixes(r, self.optimum, p, cps) for p in self.p_grid}}
