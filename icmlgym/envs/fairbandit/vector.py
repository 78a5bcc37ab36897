"""FairLinearBandit-v0 for N seeds at once: one array step instead of N Python steps.

``gym.make_vec("icmlgym/FairLinearBandit-v0", num_envs=N, vectorization_mode="vector_entry_point")``
builds :class:`FairLinearBanditVectorEnv`. Sub-env ``i`` behaves exactly as a
:class:`~icmlgym.envs.fairbandit.fair_linear_bandit.FairLinearBanditEnv` reset with
``seed[i]``: the single env draws its whole horizon of noise at reset, and so does the
vector env for each sub-env, from a generator seeded the same way; a step's rewards are
the single env's elementwise arithmetic over the seeds, and the end-of-episode metrics
are the single env's :meth:`~FairLinearBanditEnv.metrics` of each seed's arms pulled (its
p-means row by row over an ``(N, T)`` array: the same doubles). So every observation,
reward, metric and cost counter is bit for bit the single env's
(``tests/fairbandit/test_vector.py``, ``tests/core/test_batched.py``).

All sub-envs play the same instance and share the horizon, so they end at the same step;
autoreset is disabled (reset explicitly, as the runner does per episode). The ``arms``
observation is one read-only ``(N, K, d)`` broadcast of the arm matrix (the single env
copies it every step; a vector of N copies would cost N K d doubles a step). ``info``
follows Gymnasium's vector convention: ``info["cost"]["env_steps"]`` and the reset's
``horizon``, ``n_arms``, ``dim`` are arrays, and at the end ``info["metrics"]`` holds one
array per metric and ``info["regret_curve"]`` a sequence of the sub-envs' single-env curves
(each computed when read: the runner records scalar metrics only).

Beyond Gymnasium's API, :meth:`~FairLinearBanditVectorEnv.step_block` plays ``B`` steps of
given actions in one call (the same rewards as ``B`` steps), for the batched runner's blocks
of rounds whose actions do not depend on what they return (:mod:`icmlgym.runner.batched`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.fairbandit.fair_linear_bandit import FairLinearBanditEnv
from icmlgym.envs.fairbandit.pmeans import block_metrics_rows, pmeans_metrics_rows
from icmlgym.envs.vector_seeds import checked_num_envs, discrete_actions, sub_env_seeds


class FairLinearBanditVectorEnv(VectorEnv):
    """``num_envs`` FairLinearBandit-v0 envs on the same instance, each with its own noise stream."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = checked_num_envs(num_envs)
        self.single = FairLinearBanditEnv(**kwargs)  # validates kwargs; the instance, spaces and metrics
        s = self.single
        self.means, self.optimum, self.horizon, self.noise = s.means, s.optimum, s.horizon, s.noise
        self.n_arms, self.dim = s.n_arms, s.dim
        self.single_action_space = s.action_space
        self.single_observation_space = s.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self._arms = np.broadcast_to(s.arms, (self.num_envs,) + s.arms.shape)  # read-only view
        self._draws = np.zeros((self.horizon, self.num_envs))  # step-major: one step's draws are contiguous
        self._pulls = np.zeros((self.horizon, self.num_envs), dtype=np.intp)
        self._shape = (self.num_envs,)
        self._false, self._true = np.zeros(self.num_envs, dtype=bool), np.ones(self.num_envs, dtype=bool)
        self._false.flags.writeable = self._true.flags.writeable = False
        self._t = 0
        self._ended = True

    def _obs(self, rewards: np.ndarray) -> dict[str, np.ndarray]:
        return {"arms": self._arms, "last_reward": rewards.reshape(self.num_envs, 1).copy()}

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        seeds = sub_env_seeds(seed, self.num_envs)
        for i, sd in enumerate(seeds):
            rng, _ = seeding.np_random(sd)
            if self.noise == "bernoulli":  # the single env's reset, draw for draw
                self._draws[:, i] = rng.random(self.horizon)
            else:
                self._draws[:, i] = rng.normal(0.0, self.single.noise_sd, self.horizon)
        self._t = 0
        self._ended = False
        n = self.num_envs
        info = {
            "cost": {"env_steps": np.zeros(n, dtype=np.int64)},
            "horizon": np.full(n, self.horizon),
            "n_arms": np.full(n, self.n_arms),
            "dim": np.full(n, self.dim),
        }
        return self._obs(np.zeros(n)), info

    def step(self, actions: Any):
        a = discrete_actions(actions, self._shape, self.n_arms)
        if a is None:
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        if self._ended:
            raise RuntimeError("step() called after the episodes ended (or before reset); call reset()")
        rewards = self._rewards(a, self._draws[self._t])
        self._pulls[self._t] = a
        self._t += 1
        return self._stepped(rewards, rewards)

    @property
    def steps_left(self) -> int:
        """Steps to the horizon (0 once the episodes ended or before reset): the longest block :meth:`step_block` takes."""
        return 0 if self._ended else self.horizon - self._t

    def step_block(self, actions: Any):
        """``B`` steps in one call: ``actions`` is ``(B, num_envs)``, row ``s`` the actions of the ``s``-th step.

        The rewards are the ``B`` :meth:`step` calls' (the same elementwise arithmetic on the same
        draws), returned as one ``(B, num_envs)`` array; the observation, ``terminated``,
        ``truncated`` and ``info`` are those of the block's last step. For an agent whose next
        actions do not depend on what the coming steps return (a phase of phased elimination):
        the batched runner steps such a phase in one call (:mod:`icmlgym.runner.batched`). A
        block must not cross the horizon (:attr:`steps_left`)."""
        a = np.asarray(actions)
        if a.ndim != 2 or len(a) < 1 or discrete_actions(a, (len(a), self.num_envs), self.n_arms) is None:
            raise ValueError(f"a block of actions must be a (steps, {self.num_envs}) array of arms in "
                             f"[0, {self.n_arms}), got {actions!r}")
        if self._ended:
            raise RuntimeError("step_block() called after the episodes ended (or before reset); call reset()")
        t, n = self._t, len(a)
        if n > self.horizon - t:
            raise ValueError(f"a block of {n} steps crosses the horizon: {self.horizon - t} steps are left")
        rewards = self._rewards(a, self._draws[t:t + n])
        self._pulls[t:t + n] = a
        self._t = t + n
        return self._stepped(rewards[-1], rewards)

    def _rewards(self, a: np.ndarray, draws: np.ndarray) -> np.ndarray:
        """The rewards of arms ``a`` on ``draws`` (one step's, or a block's of the same shape)."""
        means = self.means[a]
        if self.noise == "gaussian":
            return means + draws
        if self.noise == "bernoulli":
            return (draws < means).astype(np.float64)
        return np.maximum(0.0, means + draws)  # means > 0: a sum is never -0.0, so max(0.0, .) agrees

    def _stepped(self, last: np.ndarray, rewards: np.ndarray):
        """The step's return: observation of the ``last`` rewards, ``rewards`` as given, the end's metrics."""
        truncated = self._t >= self.horizon
        steps = np.empty(self.num_envs, dtype=np.int64)
        steps.fill(self._t)
        info: dict[str, Any] = {"cost": {"env_steps": steps}}
        if truncated:
            self._ended = True
            info["metrics"], info["regret_curve"] = self._metrics()
        return self._obs(last), rewards, self._false, self._true if truncated else self._false, info

    def _metrics(self) -> tuple[dict[str, np.ndarray], "RegretCurves"]:
        """The single env's :meth:`~FairLinearBanditEnv.metrics` of every sub-env, as one array per metric.

        The same doubles as the single env's code seed by seed (``tests/fairbandit/test_vector.py``):
        its p-means and block metrics over the ``(N, T)`` expected rewards row by row
        (:func:`pmeans_metrics_rows`, :func:`block_metrics_rows`), its other figures elementwise."""
        s = self.single
        T = self._t
        expected = np.ascontiguousarray(self.means[self._pulls[:T]].T)  # (N, T)
        out = pmeans_metrics_rows(expected, self.optimum, s.p_grid)
        out["pseudo_regret"] = T * self.optimum - expected.sum(axis=1)
        out["optimal_arm_fraction"] = np.count_nonzero(expected == self.optimum, axis=1) / T
        out["optimum"] = np.full(self.num_envs, self.optimum)
        out.update(block_metrics_rows(expected))
        return out, RegretCurves(self, expected)

    def _load(self, i: int, expected: np.ndarray) -> None:
        """Put sub-env ``i``'s rounds into the single env (whose metrics code then computes its figures)."""
        s = self.single
        s._t = expected.shape[1]
        s._expected = expected[i].copy()
        s._optimal_pulls = int(np.count_nonzero(expected[i] == self.optimum))

    def close(self, **kwargs: Any) -> None:
        self.single.close()


class RegretCurves(Sequence):
    """``info["regret_curve"]`` of a vector episode: sub-env ``i``'s single-env curve, computed when indexed."""

    def __init__(self, env: FairLinearBanditVectorEnv, expected: np.ndarray) -> None:
        self._env, self._expected = env, expected

    def __len__(self) -> int:
        return self._expected.shape[0]

    def __getitem__(self, i):  # type: ignore[override]
        if isinstance(i, slice):
            return [self[j] for j in range(len(self))[i]]
        i = range(len(self))[i]
        self._env._load(i, self._expected)
        return self._env.single.regret_curve()


__all__ = ["FairLinearBanditVectorEnv", "RegretCurves"]
