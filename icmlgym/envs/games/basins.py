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
    mass = set_mass(res.tail_joint, game, sinks)  # (M, S)
    winner = np.where(mass.max(axis=1) >= threshold, mass.argmax(axis=1), -1)
    fractions = np.array([np.mean(winner == k) for k in range(len(sinks))])
    observed = coverage_mask(res.tail_joint, support_tol).any(axis=0)
    return BasinStats(sinks, fractions, float(np.mean(winner < 0)), res.tail_joint, observed, rounds)


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
