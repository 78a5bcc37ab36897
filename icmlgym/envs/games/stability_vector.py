"""StabilityPrediction-v0 for N seeds at once: every seed's basin experiment in one stacked FTRL run.

``gym.make_vec("icmlgym/StabilityPrediction-v0", num_envs=N, vectorization_mode="vector_entry_point")``
builds :class:`StabilityPredictionVectorEnv`. Sub-env ``i`` behaves exactly as a
:class:`~icmlgym.envs.games.stability_prediction.StabilityPredictionEnv` reset with
``seed[i]``:

- each sub-env keeps its own generator and makes the single env's draws in the single
  env's order (a game seed per game, then the basin experiment's Dirichlet initial
  strategies, player by player);
- a step runs the basin experiments of all sub-envs as one FTRL dynamics over a
  ``(N, players, n_inits, actions)`` score array (:func:`stacked_tail_joint`): the
  choice maps, additions and products are elementwise, so they give each seed's
  doubles; the only reduction that mixes entries, the expected payoffs' matrix
  product, is one stacked ``matmul`` that runs the single run's 2-d BLAS kernel slice
  by slice on the same operands (the same doubles, tested);
- the sink components (networkx, whose member order fixes the summation order of each
  sink's mass; from the same preference graph, built once per game from the deviation
  edges that also give the observation), the tallies of the basins and the metrics are
  computed per seed by the single env's own functions.

So every observation, reward, metric and cost counter is bit for bit the single env's
(``tests/games/test_stability_vector.py``). All sub-envs play ``n_games`` games, so they
end together; autoreset is disabled (reset explicitly, as the runner does per episode).
``info`` follows Gymnasium's vector convention: one array per cost counter and, at the
end, one array per metric; the per-game extras (``observed``, ``basin_fractions``,
``sinks``) are lists with one entry per sub-env.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium.utils import seeding
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from icmlgym.envs.games.basins import tally_basins_many
from icmlgym.envs.games.dynamics import Regularizer, choice_map, random_strategies, step_size
from icmlgym.envs.games.generators import make_game
from icmlgym.envs.games.normal_form import NormalFormGame
from icmlgym.envs.games.preference_graph import deviation_edges_many, preference_graph, sink_components
from icmlgym.envs.games.stability_prediction import StabilityPredictionEnv
from icmlgym.envs.vector_seeds import checked_num_envs, sub_env_seeds

_PAD = -1e30  # run_ftrl's padding score for players with fewer actions (probability 0 under both choice maps)


@functools.lru_cache(maxsize=None)
def _columns_sum_like_reduce(width: int) -> bool:
    """Whether :func:`_row_sum` gives ``np.add.reduce(., axis=-1)``'s doubles for rows of ``width`` (checked on a probe)."""
    probe = np.exp(np.random.default_rng(width).normal(0.0, 3.0, size=(512, width)))
    return bool(np.array_equal(_columns_sum(probe), np.add.reduce(probe, axis=-1)))


def _columns_sum(e: np.ndarray) -> np.ndarray:
    """The sum over the last axis as column additions, in numpy's order for a contiguous row."""
    return _add_columns([e[..., k] for k in range(e.shape[-1])])


def _add_columns(cols: Sequence[np.ndarray], out: np.ndarray | None = None) -> np.ndarray:
    """The sum of the rows whose entries are ``cols[0][j], cols[1][j], ...``, in numpy's order for a contiguous row.

    numpy adds a row of fewer than 8 doubles left to right, and a longer one (up to 128) in 8
    running partial sums joined pairwise, then the remainder left to right. ``out``: where
    to write the sum of fewer than 8 columns (a longer sum allocates)."""
    w = len(cols)
    if w < 8:
        if w == 1:
            return cols[0].copy() if out is None else np.copyto(out, cols[0]) or out
        total = np.add(cols[0], cols[1], out=out)
        for k in range(2, w):
            np.add(total, cols[k], out=total)
        return total
    parts = list(cols[:8])
    i = 8
    while i < w - w % 8:
        parts = [parts[j] + cols[i + j] for j in range(8)]
        i += 8
    total = ((parts[0] + parts[1]) + (parts[2] + parts[3])) + ((parts[4] + parts[5]) + (parts[6] + parts[7]))
    for k in range(i, w):
        total = total + cols[k]
    return total


def _row_sum(e: np.ndarray) -> np.ndarray:
    """``np.add.reduce(e, axis=-1)`` (the same doubles): column additions for short rows, where numpy's
    reduction pays its per-row cost on rows of a few entries; the reduction itself otherwise."""
    w = e.shape[-1]
    if w <= 16 and _columns_sum_like_reduce(w):
        return _columns_sum(e)
    return np.add.reduce(e, axis=-1)


def softmax_rows(z: np.ndarray) -> np.ndarray:
    """:func:`icmlgym.envs.games.dynamics.softmax`'s values over the last axis (the maximum is exact in any order)."""
    top = z[..., 0]
    for k in range(1, z.shape[-1]):
        top = np.maximum(top, z[..., k])
    e = np.exp(z - top[..., None])
    return e / _row_sum(e)[..., None]


def softmax_columns(z: np.ndarray, out: np.ndarray, work: tuple[np.ndarray, np.ndarray] | None = None) -> np.ndarray:
    """:func:`softmax_rows` of ``np.moveaxis(z, 0, -1)`` (the softmax over axis 0) into ``out``, the same doubles.

    The operations run on whole columns ``z[k]``. ``z`` is overwritten (it holds the exponentials
    after the call); ``out`` has ``z``'s shape, any strides; ``work``: two arrays of ``z[0]``'s shape
    for the column maximum and sum (allocated when not given)."""
    w = z.shape[0]
    top, total = (np.empty(z.shape[1:]), np.empty(z.shape[1:])) if work is None else work
    np.copyto(top, z[0])
    for k in range(1, w):
        np.maximum(top, z[k], out=top)
    np.subtract(z, top, out=z)
    np.exp(z, out=z)
    if w <= 16 and _columns_sum_like_reduce(w):
        total = _add_columns(list(z), out=total)
    else:  # numpy's own reduction, over contiguous rows as in softmax_rows
        total = np.add.reduce(np.ascontiguousarray(np.moveaxis(z, 0, -1)), axis=-1)
    return np.divide(z, total, out=out)


def stacked_tail_joint(
    games: Sequence[NormalFormGame],
    init_strategies: Sequence[Sequence[np.ndarray]],
    rounds: int,
    eta: float,
    regularizer: Regularizer = "entropic",
    tail: float = 0.2,
) -> np.ndarray:
    """``run_ftrl(games[s], rounds, eta, regularizer, init_strategies=init_strategies[s], tail=tail).tail_joint`` for every ``s``.

    All games must have the same action counts. Returns ``(S, M, P)``. The values are
    :func:`icmlgym.envs.games.dynamics.run_ftrl`'s bit for bit: the same padded score
    layout, the same elementwise operations in the same order, and each seed's expected
    payoffs from one slice of a stacked ``matmul`` over the operands the single run
    multiplies (constant step size; the quantities ``run_ftrl`` computes beside
    ``tail_joint``, which do not feed it, are not computed).
    """
    if rounds < 1:
        raise ValueError(f"rounds must be at least 1, got {rounds}")
    if not 0.0 < tail <= 1.0:
        raise ValueError(f"tail must lie in (0, 1], got {tail}")
    if not games:
        raise ValueError("stacked_tail_joint needs at least one game")
    na = games[0].n_actions
    if any(g.n_actions != na for g in games):
        raise ValueError(f"every game must have the action counts {na}, got {sorted({g.n_actions for g in games})}")
    if len(init_strategies) != len(games):
        raise ValueError(f"need one list of initial strategies per game ({len(games)}), got {len(init_strategies)}")
    n, width, n_seeds = len(na), max(na), len(games)
    m = int(np.asarray(init_strategies[0][0]).shape[0])
    e1 = step_size(eta, "constant", 1)
    # The scores are kept actions first, ``S[k, i, s, r]`` (action k of player i, seed s, run r): the
    # choice map's operations over a row of ``width`` actions are then operations on whole columns
    # ``S[k]``. The strategies are written players first, ``X[i, s, r, k]``, the layout of the single
    # run's ``(players, runs, actions)`` array, whose slices are the BLAS operands it multiplies.
    S = np.full((width, n, n_seeds, m), _PAD)
    for s, xs0 in enumerate(init_strategies):
        for i, x in enumerate(xs0):
            x = np.array(x, dtype=np.float64, ndmin=2)
            S[: na[i], i, s] = (np.log(np.clip(x, 1e-300, None)) / e1 if regularizer == "entropic" else x / e1).T
    rows_map = None if regularizer == "entropic" else choice_map(regularizer)
    X = np.zeros((n, n_seeds, m, width))
    X_cols = X.transpose(3, 0, 1, 2)  # the same memory, actions first as S
    x_rows = [X[i] if na[i] == width else X[i, ..., : na[i]] for i in range(n)]
    x_cols = [X_cols[: na[i], i] for i in range(n)]
    p = games[0].n_profiles
    tail_start = rounds - max(1, int(round(tail * rounds)))
    tail_cols = np.zeros((p, n_seeds, m))
    # player i's payoff matrix of each game, strided as the single run's ``_mats[i].T``
    mats_t = [np.stack([g._mats[i] for g in games]).transpose(0, 2, 1) for i in range(n)]
    U = np.zeros((n, n_seeds, m, width))
    U_cols = U.transpose(3, 0, 1, 2)
    # the others' joint strategy of each player, C-ordered (runs, profiles) per seed as the single run's operand
    joint_rows = [None if n == 2 else np.empty((n_seeds, m, p // na[i])) for i in range(n)]
    Z = np.empty_like(S)
    work = (np.empty(S.shape[1:]), np.empty(S.shape[1:]))
    for t in range(1, rounds + 1):
        e = step_size(eta, "constant", t)
        if rows_map is None:
            softmax_columns(np.multiply(e, S, out=Z), X_cols, work)
        else:
            X[...] = rows_map(np.ascontiguousarray(np.moveaxis(e * S, 0, -1)))
        for i in range(n):
            if n == 2:
                joint = x_rows[1 - i]
            else:
                joint = joint_rows[i]
                np.copyto(joint.transpose(2, 0, 1), _product_columns([x_cols[j] for j in range(n) if j != i]))
            if na[i] == width:
                np.matmul(joint, mats_t[i], out=U[i])
            else:
                U[i, ..., : na[i]] = np.matmul(joint, mats_t[i])
        S += U_cols
        if t - 1 >= tail_start:
            tail_cols += _product_columns(x_cols)
    return np.ascontiguousarray(np.moveaxis(tail_cols, 0, -1)) / (rounds - tail_start)


def _product_columns(xs: Sequence[np.ndarray]) -> np.ndarray:
    """The product distribution of mixed strategies given actions first (each ``(n_j, ...)``), profiles first in C order.

    The products of :func:`icmlgym.envs.games.dynamics.joint_distribution` in its order (the
    joint of the first players times the next player's strategy), on whole columns."""
    joint = xs[0]
    for x in xs[1:]:
        # C order: the columns may be strided views whose action axis is the fastest in memory
        joint = np.multiply(joint[:, None], x[None, :], order="C").reshape((-1,) + x.shape[1:])
    return joint


class StabilityPredictionVectorEnv(VectorEnv):
    """``num_envs`` copies of StabilityPrediction-v0 (same arguments), each with its own seed.

    Args:
        num_envs: the number of sub-envs.
        **kwargs: StabilityPrediction-v0's arguments (validated by the single env).
    """

    metadata = {"render_modes": [], "autoreset_mode": AutoresetMode.DISABLED}

    def __init__(self, num_envs: int = 1, **kwargs: Any) -> None:
        self.num_envs = checked_num_envs(num_envs)
        self.single = StabilityPredictionEnv(**kwargs)  # validates kwargs; the spaces and the experiment's settings
        self.single_action_space = self.single.action_space
        self.single_observation_space = self.single.observation_space
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.n_profiles = self.single.n_profiles
        self._k = 0
        self._ended = True

    def _draw(self) -> None:
        """The single env's ``_draw`` for every sub-env: one game seed from each generator; then the
        games' deviation edges at once, which give both the observation and the preference graph
        (the single env computes them twice)."""
        s = self.single
        for i, rng in enumerate(self._rngs):
            seed = int(rng.integers(2**31 - 1))
            game = make_game(s.game_kind, n_players=s.n_players, n_actions=s.n_actions, seed=seed, **s._kw)
            if game.n_actions != s.shape:
                raise ValueError(f"game {s.game_kind!r} has actions {game.n_actions}, expected {s.shape}")
            self._games[i] = game
        edges = deviation_edges_many(np.stack([g.payoffs for g in self._games]))
        adj = np.zeros((self.num_envs, self.n_profiles, self.n_profiles), dtype=bool)
        for i, (game, e) in enumerate(zip(self._games, edges)):
            adj[i, e[:, 0].astype(int), e[:, 1].astype(int)] = True  # adjacency_matrix(game, edges=e)
            self._graphs[i] = preference_graph(game, edges=e)
        self._obs[...] = adj.reshape(self.num_envs, -1)

    def _cost(self) -> dict[str, np.ndarray]:
        k = self._k
        return {
            "games": np.full(self.num_envs, k, dtype=np.int64),
            "dynamics_rounds": np.full(self.num_envs, k * self.single.n_inits * self.single.rounds, dtype=np.int64),
        }

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict[str, Any] | None = None):
        seeds = sub_env_seeds(seed, self.num_envs)
        self._rngs = [seeding.np_random(sd)[0] for sd in seeds]
        self._games: list[NormalFormGame] = [None] * self.num_envs  # type: ignore[list-item]
        self._graphs: list[Any] = [None] * self.num_envs
        self._obs = np.zeros((self.num_envs,) + self.single_observation_space.shape, dtype=np.float32)
        self._k = 0
        self._acc: list[list[float]] = [[] for _ in range(self.num_envs)]
        self._exact: list[list[float]] = [[] for _ in range(self.num_envs)]
        self._tp = [0] * self.num_envs
        self._fp = [0] * self.num_envs
        self._fn = [0] * self.num_envs
        self._observed_frac: list[list[float]] = [[] for _ in range(self.num_envs)]
        self._absorbed: list[list[float]] = [[] for _ in range(self.num_envs)]
        self._n_sinks: list[list[int]] = [[] for _ in range(self.num_envs)]
        self._draw()
        self._ended = False
        return self._obs.copy(), {"cost": self._cost()}

    def _check(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs, self.n_profiles) or not np.all(np.logical_or(a == 0, a == 1)):
            raise ValueError(f"actions {actions!r} are not in the action space {self.action_space}")
        return a.astype(bool)

    def step(self, actions: Any):
        pred = self._check(actions)
        if self._ended:
            raise RuntimeError("step() called after the episodes ended (or before reset); call reset()")
        s = self.single
        sinks = [sink_components(g) for g in self._graphs]  # sink_components(game) builds this same graph
        inits = [random_strategies(g, s.n_inits, rng) for g, rng in zip(self._games, self._rngs)]
        tails = stacked_tail_joint(self._games, inits, s.rounds, s.eta, s.regularizer, s.tail)  # type: ignore[arg-type]
        stats = tally_basins_many(self._games, sinks, tails, s.rounds, s.absorption_threshold, s.support_tol)
        obs_lab = np.stack([st.observed for st in stats])
        # the single env's per-game reductions, row by row (sums and means of booleans: exact counts)
        rewards = np.mean(pred == obs_lab, axis=1)
        exact = np.all(pred == obs_lab, axis=1)
        tp, fp, fn = (np.sum(x, axis=1) for x in (pred & obs_lab, pred & ~obs_lab, ~pred & obs_lab))
        observed_frac = np.mean(obs_lab, axis=1)
        for i in range(self.num_envs):
            self._acc[i].append(float(rewards[i]))
            self._exact[i].append(float(exact[i]))
            self._tp[i] += int(tp[i])
            self._fp[i] += int(fp[i])
            self._fn[i] += int(fn[i])
            self._observed_frac[i].append(float(observed_frac[i]))
            self._absorbed[i].append(1.0 - stats[i].unabsorbed)
            self._n_sinks[i].append(len(sinks[i]))
        observed = list(obs_lab.astype(np.int8))
        fractions = [st.fractions for st in stats]
        self._k += 1
        truncated = self._k >= s.n_games
        info: dict[str, Any] = {
            "cost": self._cost(),
            "observed": observed,
            "basin_fractions": fractions,
            "sinks": [[sorted(c) for c in sk] for sk in sinks],
        }
        if truncated:
            self._ended = True
            info["metrics"] = self._metrics()
        else:
            self._draw()
        return self._obs.copy(), rewards, np.zeros(self.num_envs, dtype=bool), np.full(self.num_envs, truncated), info

    def _metrics(self) -> dict[str, np.ndarray]:
        """The single env's end-of-episode metrics, seed by seed (the same reductions over the same lists)."""
        rows = []
        for i in range(self.num_envs):
            tp, fp, fn = self._tp[i], self._fp[i], self._fn[i]
            rows.append({
                "prediction_accuracy": float(np.mean(self._acc[i])),
                "exact_match": float(np.mean(self._exact[i])),
                "precision": tp / (tp + fp) if tp + fp else 1.0,
                "recall": tp / (tp + fn) if tp + fn else 1.0,
                "observed_fraction": float(np.mean(self._observed_frac[i])),
                "absorbed_fraction": float(np.mean(self._absorbed[i])),
                "mean_sinks": float(np.mean(self._n_sinks[i])),
            })
        return {k: np.array([r[k] for r in rows]) for k in rows[0]}

    def close(self, **kwargs: Any) -> None:
        self.single.close()


__all__ = ["StabilityPredictionVectorEnv", "softmax_columns", "softmax_rows", "stacked_tail_joint"]
