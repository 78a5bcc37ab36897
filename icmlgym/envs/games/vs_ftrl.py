"""RepeatedGameVsFTRL-v0: one learner repeats a normal-form game against FTRL opponents.

## Description

The single-agent view of the games family (paper: "What preferences can — and
cannot — predict in multi-agent online learning", ICML 2026). Player 0 is the
learner; players 1..N-1 run follow-the-regularized-leader (Hedge by default)
with full information about the realised actions of the others. The learner
sees only its own realised payoff and the opponents' last actions, so bandit
agents (``ucb1``, ``games-exp3``) and RL agents (``sb3-ppo``) play as they are.

## Action Space

``Discrete(n_0)``: the learner's pure action.

## Observation Space

``Box(float32)`` of size ``sum_{j>0} n_j + 2``: a one-hot of each opponent's last
realised action (zeros at reset), the learner's last realised payoff (0 at
reset), and the fraction of the horizon elapsed.

## Rewards

The learner's realised payoff ``u_0(a)``.

## Starting State

The game is fixed for the env instance (``game`` with ``game_seed``).
``reset(seed=...)`` draws the opponents' initial mixed strategies (uniformly from
their simplices, or uniform strategies with ``opponent_init="uniform"``) and
seeds their action sampling.

## Episode End

Truncated after ``horizon`` rounds.

## Arguments

- ``game``, ``n_players`` (default 2), ``n_actions`` (default 3), ``game_seed``, ``rho``:
  as in ``icmlgym/RepeatedGame-v0``.
- ``horizon`` (int, default 500).
- ``opponent_regularizer`` (``"entropic"`` | ``"euclidean"``), ``opponent_eta`` (0.1),
  ``opponent_schedule`` (``"constant"`` | ``"sqrt"`` | ``"linear"``),
  ``opponent_init`` (``"random"`` | ``"uniform"``).
- ``n_checkpoints``, ``tail``, ``absorption_threshold``, ``support_tol``: as in RepeatedGame-v0.

## Metrics

``learner_regret`` (primary, lower is better): the learner's external regret per
round against the opponents' realised actions; ``learner_average_payoff``;
``opponent_regret`` (mean over opponents, per round); and every metric of
RepeatedGame-v0 computed on the realised profiles (``cce_gap``, ``cce_distance``,
sink mass, absorption, closure violations, leak). ``info["cost"]`` counts
``env_steps`` and ``opponent_updates``.

## Version History

- v0: initial release.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("games", what="icmlgym/RepeatedGameVsFTRL-v0")

from icmlgym.envs.fastspaces import contains_fn  # noqa: E402
from icmlgym.envs.games.dynamics import choice_map, step_size  # noqa: E402
from icmlgym.envs.games.metrics import PlayStatistics  # noqa: E402
from icmlgym.envs.games.preference_graph import sink_components  # noqa: E402
from icmlgym.envs.games.repeated_game import game_from_kwargs  # noqa: E402


class RepeatedGameVsFTRLEnv(gym.Env):
    """RepeatedGameVsFTRL-v0: one learner repeats a normal-form game against FTRL opponents.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.games.vs_ftrl)``).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        game: Any = "random",
        n_players: int = 2,
        n_actions: int = 3,
        game_seed: int = 0,
        rho: float | None = None,
        horizon: int = 500,
        opponent_regularizer: str = "entropic",
        opponent_eta: float = 0.1,
        opponent_schedule: str = "constant",
        opponent_init: str = "random",
        n_checkpoints: int = 50,
        tail: float = 0.2,
        absorption_threshold: float = 0.9,
        support_tol: float = 1e-2,
    ) -> None:
        if int(horizon) < 1:
            raise ValueError(f"horizon must be a positive integer, got {horizon}")
        if opponent_eta <= 0:
            raise ValueError(f"opponent_eta must be positive, got {opponent_eta}")
        if opponent_init not in ("random", "uniform"):
            raise ValueError(f"opponent_init must be 'random' or 'uniform', got {opponent_init!r}")
        step_size(1.0, opponent_schedule, 1)  # validates the schedule name
        self._Q = choice_map(opponent_regularizer)  # validates the regularizer name
        self.game = game_from_kwargs(game, n_players, n_actions, game_seed, rho)
        self.horizon = int(horizon)
        self.opponent_regularizer = opponent_regularizer
        self.opponent_eta = float(opponent_eta)
        self.opponent_schedule = opponent_schedule
        self.opponent_init = opponent_init
        self.sinks = sink_components(self.game)
        self.stats = PlayStatistics(
            self.game, self.horizon, self.sinks, n_checkpoints, tail, absorption_threshold, support_tol
        )
        na = self.game.n_actions
        self._offsets = np.concatenate([[0], np.cumsum(na[1:])])
        lo = float(min(0.0, self.game.payoffs[0].min()))
        hi = float(max(1.0, self.game.payoffs[0].max()))
        size = int(sum(na[1:])) + 2
        low = np.zeros(size, dtype=np.float32)
        high = np.ones(size, dtype=np.float32)
        low[-2], high[-2] = lo, hi
        self.observation_space = spaces.Box(low, high, dtype=np.float32)
        self.action_space = spaces.Discrete(na[0])
        self._valid_action = contains_fn(self.action_space)
        self._t = 0

    def _obs(self, others: list[int] | None, payoff: float) -> np.ndarray:
        o = np.zeros(self.observation_space.shape, dtype=np.float32)
        if others is not None:
            for j, a in enumerate(others):
                o[self._offsets[j] + a] = 1.0
        o[-2] = payoff
        o[-1] = self._t / self.horizon
        return o

    def _strategy(self, j: int) -> np.ndarray:
        e = step_size(self.opponent_eta, self.opponent_schedule, self._t + 1)
        return self._Q(e * self._scores[j][None])[0]

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._t = 0
        self.stats.reset()
        e1 = step_size(self.opponent_eta, self.opponent_schedule, 1)
        self._scores = {}
        for j in range(1, self.game.n_players):
            n = self.game.n_actions[j]
            if self.opponent_init == "uniform":
                x = np.full(n, 1.0 / n)
            else:
                x = self.np_random.dirichlet(np.ones(n))
            # scores whose choice map at round 1 is exactly x
            self._scores[j] = np.log(np.clip(x, 1e-300, None)) / e1 if self.opponent_regularizer == "entropic" else x / e1
        return self._obs(None, 0.0), {"cost": {"env_steps": 0, "opponent_updates": 0}}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self._valid_action(action):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._t >= self.horizon:
            raise RuntimeError("step() called after the episode ended; call reset()")
        g = self.game
        profile = [int(action)]
        for j in range(1, g.n_players):
            x = self._strategy(j)
            profile.append(int(self.np_random.choice(len(x), p=x)))
        pay = g.payoffs[(slice(None),) + tuple(profile)]
        for j in range(1, g.n_players):
            self._scores[j] = self._scores[j] + g.deviation_payoffs(profile, j)
        self.stats.add(index=g.profile_index(profile), payoffs=pay)
        self._t += 1
        truncated = self._t >= self.horizon
        info: dict[str, Any] = {"cost": {"env_steps": self._t, "opponent_updates": self._t * (g.n_players - 1)}}
        if truncated:
            m = self.stats.metrics()
            m["learner_regret"] = m["external_regret_player_0"]
            m["learner_average_payoff"] = float(self.stats.payoff_sum[0] / self._t)
            m["opponent_regret"] = float(
                np.mean([m[f"external_regret_player_{j}"] for j in range(1, g.n_players)])
            )
            info["metrics"] = m
            info["sink_mass_curve"] = self.stats.sink_mass_curve()
        return self._obs(profile[1:], float(pay[0])), float(pay[0]), False, truncated, info
