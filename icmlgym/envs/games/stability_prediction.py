"""StabilityPrediction-v0: predict from the preference graph alone where FTRL play ends up.

## Description

The leaderboard task of the games family (paper: "What preferences can — and
cannot — predict in multi-agent online learning", ICML 2026). Each step shows
the preference graph of a freshly drawn game; the agent labels every pure
profile as one that long-run play can use or not. The env then runs a basin
experiment — Hedge from ``n_inits`` uniformly random initial mixed strategies for
``rounds`` rounds — and scores the labels against the profiles the runs'
tail play actually uses (in some run, among the fewest profiles that hold
``1 - support_tol`` of that run's tail mass). The
paper's predictor (sink components of the preference graph) is the reference
agent ``games-sink-predictor``.

## Action Space

``MultiBinary(P)`` with ``P = n_actions ** n_players``: 1 = "this profile carries
long-run play", in C order of the profiles (player 0's action varies slowest).

## Observation Space

``Box(0, 1, (P * P,), float32)``: the flattened adjacency matrix of the
preference graph (entry ``[a, b]`` is 1 when one player strictly gains by the
switch ``a -> b``). Payoffs are not shown.

## Rewards

Per game, the fraction of profiles labelled correctly.

## Starting State

``reset(seed=...)`` seeds the stream of games and the random initialisations of
the basin experiments.

## Episode End

Truncated after ``n_games`` games.

## Arguments

- ``game`` (generator name, default ``"random"``; see ``make_game``), ``n_players`` (2),
  ``n_actions`` (3), ``rho`` (covariant games only).
- ``n_games`` (8): games per episode.
- ``n_inits`` (32), ``rounds`` (1500), ``eta`` (0.5), ``regularizer`` (``"entropic"``),
  ``tail`` (0.2), ``support_tol`` (0.01), ``absorption_threshold`` (0.9): the basin experiment.

## Metrics

``prediction_accuracy`` (primary, higher is better): mean over games of the
per-profile accuracy; ``exact_match`` (fraction of games whose labels are all
right), ``precision``, ``recall`` (pooled over games; 1 when nothing is predicted
or observed, respectively), ``observed_fraction`` (share of profiles observed
stable), ``absorbed_fraction`` (share of runs some sink absorbed) and
``mean_sinks``. Each step's ``info`` holds that game's ``observed`` labels,
``basin_fractions`` and ``sinks``. ``info["cost"]`` counts ``games`` and
``dynamics_rounds`` (runs x rounds simulated).

## Version History

- v0: initial release.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("games", what="icmlgym/StabilityPrediction-v0")

from icmlgym.envs.games.basins import basin_statistics  # noqa: E402
from icmlgym.envs.games.generators import make_game  # noqa: E402
from icmlgym.envs.games.preference_graph import adjacency_matrix, sink_components  # noqa: E402


class StabilityPredictionEnv(gym.Env):
    """StabilityPrediction-v0: predict from the preference graph alone where FTRL play ends up.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.games.stability_prediction)``).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        game: str = "random",
        n_players: int = 2,
        n_actions: int = 3,
        rho: float | None = None,
        n_games: int = 8,
        n_inits: int = 32,
        rounds: int = 1500,
        eta: float = 0.5,
        regularizer: str = "entropic",
        tail: float = 0.2,
        support_tol: float = 1e-2,
        absorption_threshold: float = 0.9,
    ) -> None:
        if not isinstance(game, str):
            raise ValueError(f"game must be a generator name (games are drawn per step), got {type(game).__name__}")
        if rho is not None and game != "covariant":
            raise ValueError(f"rho applies only to game='covariant', got game={game!r}")
        for name, v in (("n_games", n_games), ("n_inits", n_inits), ("rounds", rounds)):
            if int(v) < 1:
                raise ValueError(f"{name} must be a positive integer, got {v}")
        self._kw = {} if rho is None else {"rho": float(rho)}
        self.game_kind = game
        self.n_players, self.n_actions = int(n_players), int(n_actions)
        probe = make_game(game, n_players=self.n_players, n_actions=self.n_actions, seed=0, **self._kw)
        self.shape = probe.n_actions
        self.n_profiles = probe.n_profiles
        self.n_games, self.n_inits, self.rounds = int(n_games), int(n_inits), int(rounds)
        self.eta, self.regularizer, self.tail = float(eta), regularizer, float(tail)
        self.support_tol, self.absorption_threshold = float(support_tol), float(absorption_threshold)
        self.observation_space = spaces.Box(0.0, 1.0, shape=(self.n_profiles**2,), dtype=np.float32)
        self.action_space = spaces.MultiBinary(self.n_profiles)
        self._k = 0

    def _draw(self) -> None:
        seed = int(self.np_random.integers(2**31 - 1))
        self._game = make_game(self.game_kind, n_players=self.n_players, n_actions=self.n_actions, seed=seed, **self._kw)
        if self._game.n_actions != self.shape:
            raise ValueError(f"game {self.game_kind!r} has actions {self._game.n_actions}, expected {self.shape}")
        self._adj = adjacency_matrix(self._game)

    def _cost(self) -> dict[str, int]:
        return {"games": self._k, "dynamics_rounds": self._k * self.n_inits * self.rounds}

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict[str, Any]]:
        super().reset(seed=seed)
        self._k = 0
        self._acc: list[float] = []
        self._exact: list[float] = []
        self._tp = self._fp = self._fn = 0
        self._observed_frac: list[float] = []
        self._absorbed: list[float] = []
        self._n_sinks: list[int] = []
        self._draw()
        return self._adj.astype(np.float32).ravel(), {"cost": self._cost()}

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict[str, Any]]:
        if not self.action_space.contains(np.asarray(action)):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._k >= self.n_games:
            raise RuntimeError("step() called after the episode ended; call reset()")
        pred = np.asarray(action).astype(bool)
        sinks = sink_components(self._game)
        stats = basin_statistics(
            self._game,
            n_runs=self.n_inits,
            rounds=self.rounds,
            eta=self.eta,
            regularizer=self.regularizer,  # type: ignore[arg-type]
            threshold=self.absorption_threshold,
            tail=self.tail,
            support_tol=self.support_tol,
            seed=self.np_random,
            sinks=sinks,
        )
        obs_lab = stats.observed
        acc = float(np.mean(pred == obs_lab))
        self._acc.append(acc)
        self._exact.append(float(np.all(pred == obs_lab)))
        self._tp += int(np.sum(pred & obs_lab))
        self._fp += int(np.sum(pred & ~obs_lab))
        self._fn += int(np.sum(~pred & obs_lab))
        self._observed_frac.append(float(obs_lab.mean()))
        self._absorbed.append(1.0 - stats.unabsorbed)
        self._n_sinks.append(len(sinks))
        self._k += 1
        truncated = self._k >= self.n_games
        info: dict[str, Any] = {
            "cost": self._cost(),
            "observed": obs_lab.astype(np.int8),
            "basin_fractions": stats.fractions,
            "sinks": [sorted(s) for s in sinks],
        }
        if truncated:
            info["metrics"] = {
                "prediction_accuracy": float(np.mean(self._acc)),
                "exact_match": float(np.mean(self._exact)),
                "precision": self._tp / (self._tp + self._fp) if self._tp + self._fp else 1.0,
                "recall": self._tp / (self._tp + self._fn) if self._tp + self._fn else 1.0,
                "observed_fraction": float(np.mean(self._observed_frac)),
                "absorbed_fraction": float(np.mean(self._absorbed)),
                "mean_sinks": float(np.mean(self._n_sinks)),
            }
            next_obs = self._adj.astype(np.float32).ravel()
        else:
            self._draw()
            next_obs = self._adj.astype(np.float32).ravel()
        return next_obs, acc, False, truncated, info
