"""RepeatedGame-v0: N players repeat a normal-form game; the family's multi-agent env.

## Description

From "What preferences can — and cannot — predict in multi-agent online learning"
(ICML 2026): how far a game's preference graph (pure profiles as nodes, an arrow
when one player strictly gains by a unilateral switch) predicts where no-regret
learners such as follow-the-regularized-leader (FTRL) end up. The env is a
PettingZoo ``ParallelEnv``: ``player_0 .. player_{N-1}`` play the game for
``horizon`` rounds, and at the end the episode metrics say which sink component
of the preference graph absorbed play, whether the tail support of play is closed
under profitable deviations, and how much regret each player has.

## Action Space

- ``feedback="bandit"``: ``Discrete(n_i)``, the pure action of player ``i``.
- ``feedback="full"``: ``Box(0, 1, (n_i,), float32)``, a mixed strategy. Any
  non-negative weight vector is accepted and normalised to the simplex (the
  all-zero vector means uniform), so ``action_space.sample()`` is a valid action.

## Observation Space

- ``bandit``: ``Box(lo, hi, (1,), float32)``: the player's own realised payoff of the
  last round (0 at reset) — nothing about the others' actions.
- ``full``: ``Box(lo, hi, (n_i,), float32)``: the payoff vector ``u_i(., x_{-i})`` of
  the last round, each own action against the others' mixed strategies (zeros at
  reset). ``lo``/``hi`` are ``min(0, min payoff)`` and ``max(0, max payoff)``.

## Rewards

``bandit``: the realised payoff ``u_i(a)`` (plus Gaussian noise of std
``payoff_noise``, drawn from the env's seeded generator). ``full``: the expected
payoff ``u_i(x)`` of the mixed profile.

## Starting State

The game is fixed for the env instance: generator ``game`` with ``game_seed``
(or an array / file). ``reset(seed=...)`` seeds only the payoff noise.

## Episode End

Every agent is truncated after ``horizon`` rounds (the agents list then empties).

## Arguments

- ``game`` (str | array, default ``"random"``): a generator name of
  :func:`icmlgym.envs.games.generators.make_game` (``random``, ``covariant``,
  ``potential``, ``zero_sum``, ``coordination``, ``rock_paper_scissors``,
  ``shapley``, ``leaky_hexagon``), a ``.npy``/``.npz``/``.json`` path, or a payoff array.
- ``n_players`` (int, default 3), ``n_actions`` (int, default 3), ``game_seed`` (int, default 0),
  ``rho`` (float, covariant games only).
- ``horizon`` (int, default 1000), ``feedback`` (``"full"`` | ``"bandit"``, default ``"full"``),
  ``payoff_noise`` (float, default 0).
- ``n_checkpoints`` (50), ``tail`` (0.2), ``absorption_threshold`` (0.9), ``support_tol`` (0.01):
  how the metrics below are measured.

## Metrics

At the end every agent's ``info["metrics"]`` holds (over the distribution of play:
realised profiles in bandit mode, products of mixed strategies in full mode):
``external_regret`` (the primary metric: mean over players of external regret per
round, lower is better), ``external_regret_player_<i>``, ``max_external_regret``,
``cce_gap`` (largest fixed-deviation gain against the time-averaged play) and
``cce_distance`` (its total-variation distance to the set of coarse correlated
equilibria, a linear program), ``n_sinks``, ``sink_mass_final`` (mass of the last
window on sink components), ``absorbed`` / ``absorbing_sink`` (index into
``info["sinks"]``, -1 if none) / ``time_to_absorption`` (the round from which the
absorbing sink kept at least ``absorption_threshold`` of each window's mass; the
horizon when none did), ``tail_support_size``, ``closure_violations`` and
``closure_violation_max_gain`` (profitable deviations leaving the tail support: the
fewest profiles holding ``1 - support_tol`` of the last ``tail`` fraction of play),
``leak_span`` (largest gain of leaving the tail support's span from one of its
profiles) and ``leak_drift`` (aggregate payoff drift out of that span under the
tail distribution; our approximation of the paper's leaklessness, see
docs/games.md) and ``average_payoff``. Non-scalar extras: ``info["sink_mass_curve"]``
(``(K, n_sinks)``), ``info["sink_mass_times"]``, ``info["sinks"]``.
``info["cost"]["rounds"]`` counts rounds.

## Version History

- v0: initial release.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from icmlgym.catalog import require_extra

require_extra("games", what="icmlgym/RepeatedGame-v0")

from icmlgym.envs.fastspaces import contains_fn  # noqa: E402
from icmlgym.envs.games.metrics import PlayStatistics  # noqa: E402
from icmlgym.envs.games.generators import make_game  # noqa: E402
from icmlgym.envs.games.normal_form import NormalFormGame  # noqa: E402
from icmlgym.envs.games.preference_graph import sink_components  # noqa: E402

FEEDBACK = ("full", "bandit")
_MIN, _MAX, _SUM = np.minimum.reduce, np.maximum.reduce, np.add.reduce


def game_from_kwargs(game: Any, n_players: int, n_actions: int, game_seed: int, rho: float | None) -> NormalFormGame:
    """The env's game from its keyword arguments (``rho`` only for covariant games)."""
    kw = {} if rho is None else {"rho": float(rho)}
    if rho is not None and game != "covariant":
        raise ValueError(f"rho applies only to game='covariant', got game={game!r}")
    return make_game(game, n_players=int(n_players), n_actions=int(n_actions), seed=int(game_seed), **kw)


def normalise_mixed(action: Any, space: spaces.Box, who: str) -> np.ndarray:
    """A weight vector in ``space`` normalised to the simplex; ValueError naming the space otherwise."""
    x = np.asarray(action, dtype=np.float64)
    # min/max propagate NaN and the comparisons below are False for it, so this refuses exactly the
    # non-finite, negative and above-1 weights, in two reductions instead of four (the ufuncs' own
    # reductions: what ndarray.min/max/sum call, without their Python wrappers)
    if x.shape != space.shape or not (_MIN(x) >= 0.0) or not (_MAX(x) <= 1.0 + 1e-6):
        raise ValueError(f"action {action!r} of {who} is not in the action space {space} (non-negative weights)")
    s = _SUM(x)
    return np.full(len(x), 1.0 / len(x)) if s <= 0 else x / s


class RepeatedGameEnv(ParallelEnv):
    """RepeatedGame-v0: N players repeat a normal-form game; the family's multi-agent env.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.games.repeated_game)``).
    """

    metadata = {"name": "icmlgym_repeated_game_v0", "render_modes": [], "is_parallelizable": True}

    def __init__(
        self,
        game: Any = "random",
        n_players: int = 3,
        n_actions: int = 3,
        game_seed: int = 0,
        rho: float | None = None,
        horizon: int = 1000,
        feedback: str = "full",
        payoff_noise: float = 0.0,
        n_checkpoints: int = 50,
        tail: float = 0.2,
        absorption_threshold: float = 0.9,
        support_tol: float = 1e-2,
    ) -> None:
        if feedback not in FEEDBACK:
            raise ValueError(f"feedback must be one of {FEEDBACK}, got {feedback!r}")
        if int(horizon) < 1:
            raise ValueError(f"horizon must be a positive integer, got {horizon}")
        if payoff_noise < 0:
            raise ValueError(f"payoff_noise must be non-negative, got {payoff_noise}")
        self.game = game_from_kwargs(game, n_players, n_actions, game_seed, rho)
        self.horizon = int(horizon)
        self.feedback = feedback
        self.payoff_noise = float(payoff_noise)
        self.sinks = sink_components(self.game)
        self.stats = PlayStatistics(
            self.game, self.horizon, self.sinks, n_checkpoints, tail, absorption_threshold, support_tol
        )
        self.possible_agents = [f"player_{i}" for i in range(self.game.n_players)]
        self.agents: list[str] = []
        lo = float(min(0.0, self.game.payoffs.min()))
        hi = float(max(0.0, self.game.payoffs.max()))
        if self.payoff_noise > 0 and feedback == "bandit":
            lo, hi = -np.inf, np.inf
        self._obs_spaces = {}
        self._act_spaces = {}
        for i, a in enumerate(self.possible_agents):
            n = self.game.n_actions[i]
            if feedback == "bandit":
                self._obs_spaces[a] = spaces.Box(lo, hi, shape=(1,), dtype=np.float32)
                self._act_spaces[a] = spaces.Discrete(n)
            else:
                self._obs_spaces[a] = spaces.Box(lo, hi, shape=(n,), dtype=np.float32)
                self._act_spaces[a] = spaces.Box(0.0, 1.0, shape=(n,), dtype=np.float32)
        self._valid = {a: contains_fn(s) for a, s in self._act_spaces.items()}
        # full information with equal action counts: the mixed actions are checked and normalised as one array
        self._joint_shape = (self.game.n_players, self.game.n_actions[0]) if len(set(self.game.n_actions)) == 1 else None
        self.np_random = np.random.default_rng()
        self._t = 0

    @functools.lru_cache(maxsize=None)
    def observation_space(self, agent: str) -> spaces.Space:
        return self._obs_spaces[agent]

    @functools.lru_cache(maxsize=None)
    def action_space(self, agent: str) -> spaces.Space:
        return self._act_spaces[agent]

    def _zero_obs(self) -> dict[str, np.ndarray]:
        return {a: np.zeros(self._obs_spaces[a].shape, dtype=np.float32) for a in self.possible_agents}

    def reset(
        self, seed: int | None = None, options: dict | None = None
    ) -> tuple[dict[str, np.ndarray], dict[str, dict]]:
        if seed is not None or not hasattr(self, "_seeded"):
            self.np_random = np.random.default_rng(seed)
            self._seeded = True
        self.agents = list(self.possible_agents)
        self._t = 0
        self.stats.reset()
        infos = {a: {"cost": {"rounds": 0}} for a in self.agents}
        return self._zero_obs(), infos

    def step(self, actions: dict[str, Any]) -> tuple[dict, dict, dict, dict, dict]:
        if not self.agents:
            raise RuntimeError("step() called after the episode ended; call reset()")
        missing = [a for a in self.agents if a not in actions]
        if missing:
            raise ValueError(f"actions missing for agents {missing}; every live agent acts each round")
        g = self.game
        if self.feedback == "bandit":
            profile = []
            for a in self.agents:
                if not self._valid[a](actions[a]):
                    raise ValueError(f"action {actions[a]!r} of {a} is not in the action space {self._act_spaces[a]}")
                profile.append(int(actions[a]))
            pay = g.payoffs[(slice(None),) + tuple(profile)].copy()
            if self.payoff_noise > 0:
                pay = pay + self.np_random.normal(0.0, self.payoff_noise, size=len(pay))
            self.stats.add(index=g.profile_index(profile), payoffs=g.payoffs[(slice(None),) + tuple(profile)])
            obs = {a: np.array([pay[i]], dtype=np.float32) for i, a in enumerate(self.agents)}
            rewards = {a: float(pay[i]) for i, a in enumerate(self.agents)}
        else:
            x = self._mixed_array(actions) if self._joint_shape is not None else None
            if x is not None:
                # equal action counts: the round in a fixed number of array operations, the same values
                us, pay, left = g.round_arrays(x)
                self.stats.add_product(left, x[-1], pay)
                us32 = us.astype(np.float32)
            else:
                xs = self._mixed_actions(actions)
                us, joint = g.payoffs_and_joint(xs)
                pay = np.array([float(x @ u) for x, u in zip(xs, us)])
                self.stats.add(dist=joint, payoffs=pay)
                us32 = [u.astype(np.float32) for u in us]
            obs = dict(zip(self.agents, us32))  # rows of one array: views, no copies
            rewards = dict(zip(self.agents, pay.tolist()))
        self._t += 1
        done = self._t >= self.horizon
        terms = dict.fromkeys(self.agents, False)
        truncs = dict.fromkeys(self.agents, done)
        t = self._t
        infos: dict[str, dict] = {a: {"cost": {"rounds": t}} for a in self.agents}
        if done:
            metrics = self.stats.metrics()
            curve = self.stats.sink_mass_curve()
            for a in self.agents:
                infos[a]["metrics"] = dict(metrics)
                infos[a]["sink_mass_curve"] = curve
                infos[a]["sink_mass_times"] = np.asarray(self.stats.curve_times)
                infos[a]["sinks"] = [sorted(s) for s in self.sinks]
            self.agents = []
        return obs, rewards, terms, truncs, infos

    def _mixed_array(self, actions: dict[str, Any]) -> np.ndarray | None:
        """With equal action counts, the players x actions array of mixed actions normalised to the simplex.

        The same comparisons, row sums and divisions elementwise as :func:`normalise_mixed`;
        ``None`` for anything it would refuse or treat apart (an all-zero row), which then goes
        player by player through :meth:`_mixed_actions`."""
        try:
            x = np.array([actions[a] for a in self.agents], dtype=np.float64)
        except (TypeError, ValueError):
            return None
        # min/max propagate NaN, so NaN fails both comparisons (ndarray's methods: the ufuncs' reductions)
        if x.shape == self._joint_shape and x.min() >= 0.0 and x.max() <= 1.0 + 1e-6:
            s = _SUM(x, axis=1)
            if min(s.tolist()) > 0:  # finite non-negative row sums: Python's min is exact here
                return x / s[:, None]
        return None

    def _mixed_actions(self, actions: dict[str, Any]) -> list[np.ndarray]:
        """Every player's mixed action normalised to the simplex (:func:`normalise_mixed`'s values and errors)."""
        return [normalise_mixed(actions[a], self._act_spaces[a], a) for a in self.agents]

    def close(self) -> None:
        return None
