"""Basin experiments and preference-graph predictors of where FTRL play ends up.

:func:`basin_statistics` runs Hedge (or Euclidean FTRL) from many random initial
mixed strategies at once and reports, for each sink component of the preference
graph, the fraction of runs it absorbed, and which profiles the runs' tail play
actually uses (the *observed* stable profiles).

Predictors look only at the preference graph (an adjacency matrix over profiles)
and label each profile as one that can carry long-run play or not:

- :func:`predict_sinks`: the profiles of sink components (the paper's
  preferential stability: every dynamically stable set lies in closed sets and
  the minimal closed sets are the sinks);
- :func:`predict_strict_nash`: only profiles with no outgoing arrow (pure strict
  Nash equilibria in generic games; misses cycling sinks).

:func:`predict_sinks_many` and :func:`predict_strict_nash_many` label a stack of graphs
at once (the predictors' vector twins, for the runner's batched seeds).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import networkx as nx
import numpy as np

from icmlgym.envs.games.dynamics import Regularizer, run_ftrl
from icmlgym.envs.games.metrics import coverage_mask, set_mass
from icmlgym.envs.games.normal_form import NormalFormGame, Profile
from icmlgym.envs.games.preference_graph import sink_components


@dataclass
class BasinStats:
    """Outcome of a basin experiment on one game.

    Attributes:
        sinks: the sink components (sorted by smallest profile).
        fractions: fraction of runs absorbed by each sink (tail mass >= threshold).
        unabsorbed: fraction of runs no sink absorbed.
        tail_joint: per run, the tail distribution over profiles, ``(M, P)``.
        observed: boolean ``(P,)``: profiles in the tail support of some run (the fewest
            profiles holding ``1 - support_tol`` of that run's tail mass).
        rounds: rounds per run (for cost accounting).
    """

    sinks: list[frozenset[Profile]]
    fractions: np.ndarray
    unabsorbed: float
    tail_joint: np.ndarray
    observed: np.ndarray
    rounds: int


def basin_statistics(
    game: NormalFormGame,
    n_runs: int = 32,
    rounds: int = 1500,
    eta: float = 0.5,
    regularizer: Regularizer = "entropic",
    threshold: float = 0.9,
    tail: float = 0.2,
    support_tol: float = 1e-2,
    seed: int | np.random.Generator | None = 0,
    sinks: Sequence[frozenset[Profile]] | None = None,
) -> BasinStats:
    """Run ``n_runs`` FTRL trajectories from uniformly random mixed strategies and tally the sinks."""
    sinks = list(sink_components(game) if sinks is None else sinks)
    res = run_ftrl(game, rounds, eta=eta, regularizer=regularizer, n_runs=n_runs, seed=seed, tail=tail)
    return tally_basins(game, sinks, res.tail_joint, rounds, threshold, support_tol)


def tally_basins(
    game: NormalFormGame,
    sinks: Sequence[frozenset[Profile]],
    tail_joint: np.ndarray,
    rounds: int,
    threshold: float = 0.9,
    support_tol: float = 1e-2,
) -> BasinStats:
    """The basin statistics of runs whose tail distributions over profiles are ``tail_joint`` (``(M, P)``).

    What :func:`basin_statistics` reports once its runs are played (the vector form of
    StabilityPrediction-v0 plays the runs of many games at once and tallies each game here)."""
    return _tally(game, list(sinks), tail_joint, coverage_mask(tail_joint, support_tol).any(axis=0), rounds, threshold)


def _tally(
    game: NormalFormGame, sinks: list[frozenset[Profile]], tail_joint: np.ndarray, observed: np.ndarray, rounds: int,
    threshold: float,
) -> BasinStats:
    """One game's basin statistics, its observed profiles given."""
    mass = set_mass(tail_joint, game, sinks)  # (M, S)
    winner = np.where(mass.max(axis=1) >= threshold, mass.argmax(axis=1), -1)
    m = np.float64(len(winner))  # a float64, so that no runs give NaN (and a warning) as np.mean does
    # each fraction is a count over M (np.mean of a boolean array is its count, a float64 sum, over its length)
    fractions = np.bincount(winner[winner >= 0], minlength=len(sinks)) / m
    return BasinStats(sinks, fractions, float(np.count_nonzero(winner < 0) / m), tail_joint, observed, rounds)


def tally_basins_many(
    games: Sequence[NormalFormGame],
    sinks: Sequence[Sequence[frozenset[Profile]]],
    tail_joints: np.ndarray,
    rounds: int,
    threshold: float = 0.9,
    support_tol: float = 1e-2,
) -> list[BasinStats]:
    """``[tally_basins(games[s], sinks[s], tail_joints[s], rounds, threshold, support_tol) for s ...]``, the same values.

    ``tail_joints`` is ``(S, M, P)``. The observed profiles of all games' runs come from one
    :func:`coverage_mask` over the ``S * M`` rows (row by row the same), the rest game by game."""
    tails = np.asarray(tail_joints, dtype=np.float64)
    n_games, m, p = tails.shape
    observed = coverage_mask(tails.reshape(n_games * m, p), support_tol).reshape(n_games, m, p).any(axis=1)
    return [_tally(game, list(sk), joint, obs, rounds, threshold)
            for game, sk, joint, obs in zip(games, sinks, tails, observed, strict=True)]


def predict_sinks(adjacency: np.ndarray | nx.DiGraph) -> np.ndarray:
    """Boolean ``(P,)``: the profiles that lie in a sink component of the preference graph.

    ``adjacency`` is a ``(P, P)`` matrix in C-order profile indices (as the env shows it)
    or a preference graph from :func:`preference_graph` (profile-tuple nodes).
    """
    if isinstance(adjacency, nx.DiGraph):
        na = tuple(adjacency.graph["n_actions"])
        out = np.zeros(int(np.prod(na)), dtype=bool)
        for s in sink_components(adjacency):
            for p in s:
                out[np.ravel_multi_index(p, na)] = True
        return out
    adj = np.asarray(adjacency).astype(bool)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adjacency must be a square matrix, got shape {adj.shape}")
    cond = nx.condensation(nx.from_numpy_array(adj.astype(np.int8), create_using=nx.DiGraph))
    out = np.zeros(adj.shape[0], dtype=bool)
    for c in cond.nodes:
        if cond.out_degree(c) == 0:
            out[list(cond.nodes[c]["members"])] = True
    return out


# above this many profiles the closure's (P, P) boolean products cost more than networkx's condensation
_CLOSURE_MAX_PROFILES = 128


def _square_adjacencies(adjacency: np.ndarray) -> np.ndarray:
    adj = np.asarray(adjacency).astype(bool)
    if adj.ndim != 3 or adj.shape[1] != adj.shape[2]:
        raise ValueError(f"adjacency must be a stack of square matrices (S, P, P), got shape {adj.shape}")
    return adj


def predict_sinks_many(adjacency: np.ndarray) -> np.ndarray:
    """Boolean ``(S, P)``: :func:`predict_sinks` of each of ``S`` adjacency matrices ``(S, P, P)``, as arrays.

    A profile lies in a sink component exactly when every profile it reaches reaches it
    back; reachability is the reflexive transitive closure, by repeated boolean squaring of
    the whole stack at once (the same labels as the condensation: a property of the graph).
    Stacks of more than 128 profiles go matrix by matrix through :func:`predict_sinks`."""
    adj = _square_adjacencies(adjacency)
    n = adj.shape[1]
    if n > _CLOSURE_MAX_PROFILES:
        return np.stack([predict_sinks(a) for a in adj]) if len(adj) else np.zeros((0, n), dtype=bool)
    reach = adj | np.eye(n, dtype=bool)
    while True:
        longer = np.matmul(reach, reach)  # paths of up to twice the length
        if np.array_equal(longer, reach):
            break
        reach = longer
    return ~np.any(reach & ~reach.transpose(0, 2, 1), axis=2)


def predict_strict_nash_many(adjacency: np.ndarray) -> np.ndarray:
    """Boolean ``(S, P)``: :func:`predict_strict_nash` of each of ``S`` adjacency matrices ``(S, P, P)``."""
    return ~_square_adjacencies(adjacency).any(axis=2)


def predict_strict_nash(adjacency: np.ndarray | nx.DiGraph) -> np.ndarray:
    """Boolean ``(P,)``: the profiles with no outgoing arrow."""
    if isinstance(adjacency, nx.DiGraph):
        na = tuple(adjacency.graph["n_actions"])
        out = np.zeros(int(np.prod(na)), dtype=bool)
        for p in adjacency.nodes:
            if adjacency.out_degree(p) == 0:
                out[np.ravel_multi_index(p, na)] = True
        return out
    adj = np.asarray(adjacency).astype(bool)
    if adj.ndim != 2 or adj.shape[0] != adj.shape[1]:
        raise ValueError(f"adjacency must be a square matrix, got shape {adj.shape}")
    return ~adj.any(axis=1)
