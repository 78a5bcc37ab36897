"""RepeatedGameVsFTRL-v0 for N seeds at once: the learner's round for every seed in one array step.

``gym.make_vec("icmlgym/RepeatedGameVsFTRL-v0", num_envs=N, vectorization_mode="vector_entry_point")``
builds :class:`RepeatedGameVsFTRLVectorEnv`. Sub-env ``i`` behaves exactly as a
:class:`~icmlgym.envs.games.vs_ftrl.RepeatedGameVsFTRLEnv` reset with ``seed[i]``:

- the single env's generator draws the opponents' initial strategies at reset and then
  one uniform per opponent per round (``Generator.choice(n, p=x)`` draws one
  ``random()`` and returns ``searchsorted(cdf, u, "right")``); the vector env draws
  the same initial strategies and then each sub-env's ``horizon x (N - 1)`` uniforms
  in one call (the same doubles), and samples by counting ``cdf <= u``;
- the opponents' FTRL scores, choice maps and deviation payoffs are the single env's
  arithmetic row by row; the play statistics are kept as ``(N, profiles)`` arrays and
  each sub-env's metrics are computed by the single env's :class:`PlayStatistics` (``metrics_many``, one row per sub-env).

So every observation, reward, metric and cost counter is bit for bit the single
env's (``tests/core/test_batched.py``). All sub-envs share the horizon, so they end
together; autoreset is disabled (reset explicitly, as the runner does per episode).
``info`` follows Gymnasium's vector convention: one array per cost counter and, at
the end, one array per metric.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.games.dynamics import step_size
from icmlgym.envs.games.vs_ftrl import RepeatedGameVsFTRLEnv
from icmlgym.envs.vector_seeds import checked_num_envs, sub_env_seeds


class RepeatedGameVsFTRLVectorEnv(VectorEnv):
    """``num_envs`` copies of RepeatedGameVsFTRL-v0 (same game and opponents), each with its own seed."""

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = checked_num_envs(num_envs)
        self.single = RepeatedGameVsFTRLEnv(**kwargs)  # validates kwargs; the game, spaces and statistics
        s = self.single
        self.game = s.game
        self.horizon = s.horizon
        self.single_action_space = s.action_space
        self.single_observation_space = s.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        payoffs = self.game.payoffs
        self.n_players = self.game.n_players
        self.n_actions = self.game.n_actions
        # player j's payoff with its own action on the last axis: indexing by the others' actions gives (N, n_j)
        self._own_last = [np.moveaxis(payoffs[j], j, -1) for j in range(self.n_players)]
        self._rows = np.arange(self.num_envs)
        self._t = 0
        self._ended = True

    def _strategies(self, j: int) -> np.ndarray:
        e = step_size(self.single.opponent_eta, self.single.opponent_schedule, self._t + 1)
        return self.single._Q(e * self._scores[j])

    def _obs(self, others: list[np.ndarray] | None, payoff: np.ndarray) -> np.ndarray:
        o = np.zeros((self.num_envs,) + self.single_observation_space.shape, dtype=np.float32)
        if others is not None:
            for j, a in enumerate(others):
                o[self._rows, self.single._offsets[j] + a] = 1.0
        o[:, -2] = payoff
        o[:, -1] = self._t / self.horizon
        return o

    def _cost(self) -> dict[str, np.ndarray]:
        t = self._t
        return {
            "env_steps": np.full(self.num_envs, t, dtype=np.int64),
            "opponent_updates": np.full(self.num_envs, t * (self.n_players - 1), dtype=np.int64),
        }

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        seeds = sub_env_seeds(seed, self.num_envs)
        s = self.single
        e1 = step_size(s.opponent_eta, s.opponent_schedule, 1)
        n_opp = self.n_players - 1
        scores: dict[int, list[np.ndarray]] = {j: [] for j in range(1, self.n_players)}
        self._draws = np.empty((self.num_envs, self.horizon, n_opp))
        for i, sd in enumerate(seeds):
            rng, _ = seeding.np_random(sd)
            for j in range(1, self.n_players):  # the single env's reset, draw for draw
                n = self.n_actions[j]
                x = np.full(n, 1.0 / n) if s.opponent_init == "uniform" else rng.dirichlet(np.ones(n))
                scores[j].append(np.log(np.clip(x, 1e-300, None)) / e1 if s.opponent_regularizer == "entropic" else x / e1)
            self._draws[i] = rng.random(self.horizon * n_opp).reshape(self.horizon, n_opp)
        self._scores = {j: np.stack(v) for j, v in scores.items()}
        p = self.game.n_profiles
        self._total = np.zeros((self.num_envs, p))
        self._tail_total = np.zeros((self.num_envs, p))
        self._window_total = np.zeros((self.num_envs, p))
        self._window_count = 0
        st = self.single.stats  # each window's sink mass per sub-env (the single env's curve rows), as in RepeatedGame-v0's
        self._curves = np.empty((self.num_envs, -(-self.horizon // st.window), st._sink_index.shape[1]))
        self._curve_times: list[int] = []
        self._payoff_sum = np.zeros((self.num_envs, self.n_players))
        self._t = 0
        self._ended = False
        return self._obs(None, np.zeros(self.num_envs)), {"cost": self._cost()}

    def step(self, actions: Any):
        a0 = np.asarray(actions)
        if a0.shape != (self.num_envs,) or a0.dtype.kind not in "iu" or a0.min() < 0 or a0.max() >= self.n_actions[0]:
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        if self._ended:
            raise RuntimeError("step() called after the episodes ended (or before reset); call reset()")
        a0 = a0.astype(np.int64)
        profile = [a0]
        for j in range(1, self.n_players):
            x = self._strategies(j)
            cdf = x.cumsum(axis=1)
            cdf /= cdf[:, -1:]
            u = self._draws[:, self._t, j - 1]
            profile.append(np.count_nonzero(cdf <= u[:, None], axis=1))  # = searchsorted(cdf, u, "right")
        pay = self.game.payoffs[(slice(None),) + tuple(profile)].T  # (N, players)
        for j in range(1, self.n_players):
            others = tuple(profile[k] for k in range(self.n_players) if k != j)
            self._scores[j] = self._scores[j] + self._own_last[j][others]
        self._record(np.ravel_multi_index(tuple(profile), self.n_actions), pay)
        self._t += 1
        truncated = self._t >= self.horizon
        info: dict[str, Any] = {"cost": self._cost()}
        if truncated:
            self._ended = True
            info["metrics"] = self._metrics()
        obs = self._obs(profile[1:], pay[:, 0])
        rewards = pay[:, 0].astype(np.float64)
        return obs, rewards, np.zeros(self.num_envs, dtype=bool), np.full(self.num_envs, truncated), info

    def _record(self, index: np.ndarray, pay: np.ndarray) -> None:
        """:meth:`PlayStatistics.add` for every sub-env (realised profiles)."""
        st = self.single.stats
        self._total[self._rows, index] += 1.0
        self._window_total[self._rows, index] += 1.0
        if self._t >= st.tail_start:
            self._tail_total[self._rows, index] += 1.0
        self._payoff_sum += pay
        self._window_count += 1
        if self._window_count == st.window or self._t + 1 == self.horizon:
            k = len(self._curve_times)
            for i in range(self.num_envs):  # row by row, as the single env's vector-matrix product
                self._curves[i, k] = self._window_total[i] @ st._sink_index / self._window_count
            self._curve_times.append(self._t + 1)
            self._window_total[:] = 0.0
            self._window_count = 0

    def _metrics(self) -> dict[str, np.ndarray]:
        st = self.single.stats
        curves = self._curves[:, : len(self._curve_times), : len(st.sinks)]
        rows = st.metrics_many(self._t, self._total, self._tail_total, curves, self._curve_times, self._payoff_sum)
        for i, m in enumerate(rows):
            m["learner_regret"] = m["external_regret_player_0"]
            m["learner_average_payoff"] = float(self._payoff_sum[i, 0] / self._t)
            m["opponent_regret"] = float(np.mean([m[f"external_regret_player_{j}"] for j in range(1, self.n_players)]))
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}

    def close(self, **kwargs: Any) -> None:
        self.single.close()


__all__ = ["RepeatedGameVsFTRLVectorEnv"]
