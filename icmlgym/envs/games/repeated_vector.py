"""RepeatedGame-v0 for N seeds at once: every seed's round of mixed play as one ``(N, players, actions)`` array step.

:class:`RepeatedGameVectorEnv` holds ``num_envs`` copies of
:class:`~icmlgym.envs.games.repeated_game.RepeatedGameEnv` (the same game: it is fixed
by the env's arguments, and with full information a seed changes nothing in the env;
the seeds differ through their agents). Sub-env ``i`` reset with ``seed[i]`` is bit for
bit the single env reset with that seed, with the players' observations, actions and
rewards stacked on a players axis in ``possible_agents`` order:

- actions ``(N, players, n)`` (mixed strategies; checked and normalised row by row as
  the single env does, an all-zero row becoming uniform), observations ``(N, players, n)``
  float32 (``u_i(., x_{-i})``), rewards ``(N, players)``;
- the round is :meth:`NormalFormGame.round_arrays` over the stacked profiles: the same
  gathers and elementwise products, and each seed's payoff vectors and payoffs from one
  slice of a stacked ``matmul`` whose slices are the single round's vector-matrix and
  dot products (the same BLAS calls on the same operands, tested);
- the play statistics are :class:`~icmlgym.envs.games.metrics.PlayStatistics`'s running
  sums as ``(N, profiles)`` arrays, added round after round (the single env's sums in
  the same order), the sink-mass windows seed by seed (its vector-matrix product), and
  every seed's metrics are computed by the single env's own ``PlayStatistics``
  (:meth:`~icmlgym.envs.games.metrics.PlayStatistics.metrics_many`, whose one-row case is the
  single env's: regret, the CCE gap and distance, absorption, closure and leak).

Full information with equal action counts only (what the runner's batched mode plays:
``games-hedge``, ``games-ftrl-euclidean``); other arguments raise ``ValueError`` at
construction, and the runner then plays those seeds singly. All sub-envs share the
horizon, so they end together; ``info`` holds one array per cost counter and, at the end,
one array per metric (and per-seed lists of the sink-mass curves).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.games.normal_form import NormalFormGame
from icmlgym.envs.games.repeated_game import RepeatedGameEnv
from icmlgym.envs.vector_seeds import checked_num_envs, sub_env_seeds


def stacked_round_arrays(game: NormalFormGame, x: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:meth:`NormalFormGame.round_arrays` for a stack of profiles ``x`` of shape ``(S, N, n)``: ``(U, pay, left)``.

    ``U`` is ``(S, N, n)``, ``pay`` ``(S, N)`` and ``left`` ``(S, P / n)``; slice ``s`` of each
    is ``game.round_arrays(x[s])``'s value bit for bit."""
    others, mats_t = game._round_plan
    n_seeds = x.shape[0]
    joint = x.take(others[0], 1)
    for idx in others[1:]:
        joint = (joint[..., :, None] * x.take(idx, 1)[..., None, :]).reshape(n_seeds, x.shape[1], -1)
    u = np.matmul(joint[:, :, None, :], mats_t).reshape(x.shape)
    pay = np.matmul(x[:, :, None, :], u[:, :, :, None]).reshape(x.shape[:2])
    return u, pay, joint[:, -1]


class RepeatedGameVectorEnv(VectorEnv):
    """``num_envs`` copies of RepeatedGame-v0 (full information, equal action counts), players stacked on axis 1.

    Args:
        num_envs: the number of sub-envs.
        **kwargs: RepeatedGame-v0's arguments (validated by the single env).
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = checked_num_envs(num_envs)
        self.single = RepeatedGameEnv(**kwargs)  # validates kwargs; the game, sinks, spaces and statistics
        s = self.single
        if s.feedback != "full" or s._joint_shape is None:
            raise ValueError(
                "RepeatedGameVectorEnv batches full-information play with equal action counts; "
                f"got feedback={s.feedback!r}, actions {s.game.n_actions}"
            )
        self.game = s.game
        self.horizon = s.horizon
        self.possible_agents = list(s.possible_agents)
        self.n_players, self.n = s._joint_shape
        a0 = self.possible_agents[0]
        low, high = float(s.observation_space(a0).low.min()), float(s.observation_space(a0).high.max())
        self.single_observation_space = spaces.Box(low, high, shape=s._joint_shape, dtype=np.float32)
        self.single_action_space = spaces.Box(0.0, 1.0, shape=s._joint_shape, dtype=np.float32)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self._t = 0
        self._ended = True

    def agent_observation_space(self, agent: str) -> spaces.Space:
        """One player's observation space, the single env's ``observation_space(agent)``."""
        return self.single.observation_space(agent)

    def agent_action_space(self, agent: str) -> spaces.Space:
        """One player's action space, the single env's ``action_space(agent)``."""
        return self.single.action_space(agent)

    def _cost(self) -> dict[str, np.ndarray]:
        return {"rounds": np.full(self.num_envs, self._t, dtype=np.int64)}

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        sub_env_seeds(seed, self.num_envs)  # the seeds' checks; with full information they draw nothing
        st = self.single.stats
        p = self.game.n_profiles
        self._total = np.zeros((self.num_envs, p))
        self._tail_total = np.zeros((self.num_envs, p))
        self._window_total = np.zeros((self.num_envs, p))
        self._window_count = 0
        self._payoff_sum = np.zeros((self.num_envs, self.n_players))
        self._tail_start, self._window = st.tail_start, st.window
        # each window's sink mass per sub-env (the single env's curve rows); a window ends every `window` rounds and at the horizon
        self._curves = np.empty((self.num_envs, -(-self.horizon // self._window), st._sink_index.shape[1]))
        self._curve_times: list[int] = []
        self._t = 0
        self._ended = False
        obs = np.zeros((self.num_envs, self.n_players, self.n), dtype=np.float32)
        return obs, {"cost": self._cost()}

    def _mixed(self, actions: Any) -> np.ndarray:
        """The single env's checks and normalisation, row by row (``normalise_mixed``'s values and errors)."""
        x = np.asarray(actions, dtype=np.float64)
        if x.shape != (self.num_envs, self.n_players, self.n) or not (x.min() >= 0.0) or not (x.max() <= 1.0 + 1e-6):
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space} (non-negative weights)")
        s = np.add.reduce(x, axis=2)
        if s.min() > 0:
            return x / s[:, :, None]
        return np.where(s[:, :, None] > 0, x / np.where(s > 0, s, 1.0)[:, :, None], 1.0 / self.n)

    def step(self, actions: Any):
        if self._ended:
            raise RuntimeError("step() called after the episodes ended (or before reset); call reset()")
        x = self._mixed(actions)
        us, pay, left = stacked_round_arrays(self.game, x)
        self._record(left, x[:, -1], pay)
        self._t += 1
        done = self._t >= self.horizon
        info: dict[str, Any] = {"cost": self._cost()}
        if done:
            self._ended = True
            info["metrics"], info["sink_mass_curve"] = self._metrics()
            info["sink_mass_times"] = np.asarray(self._curve_times)
        truncated = np.full(self.num_envs, done)
        return us.astype(np.float32), pay, np.zeros(self.num_envs, dtype=bool), truncated, info

    def _record(self, left: np.ndarray, right: np.ndarray, pay: np.ndarray) -> None:
        """:meth:`PlayStatistics.add_product` for every sub-env: the product distribution, added to the running sums."""
        dist = (left[:, :, None] * right[:, None, :]).reshape(self.num_envs, -1)
        self._total += dist
        self._window_total += dist
        if self._t >= self._tail_start:
            self._tail_total += dist
        self._payoff_sum += pay
        self._window_count += 1
        if self._window_count == self._window or self._t + 1 == self.horizon:
            index, k = self.single.stats._sink_index, len(self._curve_times)
            for i in range(self.num_envs):  # row by row, as the single env's vector-matrix product
                self._curves[i, k] = self._window_total[i] @ index / self._window_count
            self._curve_times.append(self._t + 1)
            self._window_total[:] = 0.0
            self._window_count = 0

    def _metrics(self) -> tuple[dict[str, np.ndarray], list[np.ndarray]]:
        """Each sub-env's metrics by the single env's ``PlayStatistics`` (:meth:`PlayStatistics.metrics_many` of
        every sub-env's sums, row by row the single env's :meth:`PlayStatistics.metrics`)."""
        st = self.single.stats
        curves = self._curves[:, : len(self._curve_times), : len(st.sinks)]
        rows = st.metrics_many(self._t, self._total, self._tail_total, curves, self._curve_times, self._payoff_sum)
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}, list(curves)

    def close(self, **kwargs: Any) -> None:
        self.single.close()


__all__ = ["RepeatedGameVectorEnv", "stacked_round_arrays"]
