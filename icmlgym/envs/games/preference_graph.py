"""Preference graphs of normal-form games, their components, subgames and preferential stability.

The preference graph of a game has one node per pure profile and an arrow
``a -> b`` when ``b`` differs from ``a`` in exactly one player's action and that
player strictly prefers ``b`` (payoff gain above ``tol``). Ties make no arrow,
so with ties a strongly connected component can be larger than the textbook
cycle: in rock-paper-scissors all 9 profiles form one component. Components are
always computed from the graph (networkx), never assumed.

A set of profiles is *preferentially stable* when it is closed under profitable
deviations: no arrow leaves it. Sink components (components with no outgoing
arrow; Biggar & Papadimitriou's sink equilibria) are the minimal such sets. A
*subgame* is a product of action subsets; the *span* of a set is the smallest
subgame containing it.
"""

from __future__ import annotations

import itertools
from typing import Iterable, Iterator, Sequence

import networkx as nx
import numpy as np

from icmlgym.envs.games.normal_form import NormalFormGame, Profile


def deviation_edges(game: NormalFormGame, tol: float = 0.0) -> np.ndarray:
    """Every arrow of the preference graph as rows ``(from_index, to_index, player, gain)``.

    Profile indices are C-order flat indices (:meth:`NormalFormGame.profile_index`).
    """
    if tol < 0:
        raise ValueError(f"tol must be non-negative, got {tol}")
    shape = game.n_actions
    idx = np.arange(game.n_profiles).reshape(shape)
    rows = []
    for i, n in enumerate(shape):
        u = game.payoffs[i]
        for b in range(n):
            # gain of switching to action b from every profile (0 where a_i == b)
            target = np.take(u, [b], axis=i)
            gain = target - u
            mask = gain > tol
            if not mask.any():
                continue
            to_idx = np.broadcast_to(np.take(idx, [b], axis=i), shape)
            rows.append(
                np.column_stack(
                    [idx[mask], to_idx[mask], np.full(int(mask.sum()), i), gain[mask]]
                )
            )
    if not rows:
        return np.zeros((0, 4))
    return np.concatenate(rows)


def deviation_edges_many(payoffs: np.ndarray, tol: float = 0.0) -> list[np.ndarray]:
    """:func:`deviation_edges` of each of ``G`` games of one shape, from their stacked payoffs ``(G, N, n_1, ..., n_N)``.

    The same rows in the same order (player, then target action, then source profile in C
    order) and the same gains, from array operations over all games at once."""
    if tol < 0:
        raise ValueError(f"tol must be non-negative, got {tol}")
    payoffs = np.asarray(payoffs, dtype=np.float64)
    n_games, n = payoffs.shape[0], payoffs.shape[1]
    shape = payoffs.shape[2:]
    if len(shape) != n:
        raise ValueError(f"payoffs must have shape (G, N, n_1, ..., n_N), got {payoffs.shape}")
    size = int(np.prod(shape))
    width = max(shape)
    gains = np.zeros((n_games, n, width, size))
    valid = np.zeros((1, n, width, 1), dtype=bool)  # target actions a player has
    for i, k in enumerate(shape):
        u = payoffs[:, i]
        for b in range(k):
            gains[:, i, b] = (np.take(u, [b], axis=1 + i) - u).reshape(n_games, size)
        valid[0, i, :k] = True
    g, i, b, frm = np.nonzero((gains > tol) & valid)  # C order: game, player, target action, source profile
    strides = np.array([int(np.prod(shape[j + 1 :])) for j in range(n)])
    own = (frm // strides[i]) % np.asarray(shape)[i]  # the deviating player's action at the source
    rows = np.column_stack([frm, frm + (b - own) * strides[i], i, gains[g, i, b, frm]])
    cuts = np.cumsum(np.bincount(g, minlength=n_games))[:-1]
    return [r if len(r) else np.zeros((0, 4)) for r in np.split(rows, cuts)]


def preference_graph(game: NormalFormGame, tol: float = 0.0, edges: np.ndarray | None = None) -> nx.DiGraph:
    """The preference graph as a ``networkx.DiGraph`` over profile tuples.

    Each edge carries ``player`` (who deviates) and ``gain`` (the payoff gain);
    the graph keeps the game's action counts in ``graph.graph["n_actions"]``.
    ``edges``: :func:`deviation_edges` of the game at ``tol``, when the caller has them.
    """
    g = nx.DiGraph(n_actions=game.n_actions, n_players=game.n_players)
    nodes = list(game.profiles())  # C order: nodes[k] is game.profile_at(k)
    g.add_nodes_from(nodes)
    for f, t, p, gain in deviation_edges(game, tol) if edges is None else edges:
        g.add_edge(nodes[int(f)], nodes[int(t)], player=int(p), gain=float(gain))
    return g


def adjacency_matrix(game: NormalFormGame, tol: float = 0.0, edges: np.ndarray | None = None) -> np.ndarray:
    """Boolean ``(P, P)`` adjacency of the preference graph in C-order profile indices (``edges`` as in
    :func:`preference_graph`)."""
    adj = np.zeros((game.n_profiles, game.n_profiles), dtype=bool)
    e = deviation_edges(game, tol) if edges is None else edges
    if len(e):
        adj[e[:, 0].astype(int), e[:, 1].astype(int)] = True
    return adj


def graph_from_adjacency(adj: np.ndarray, n_actions: Sequence[int]) -> nx.DiGraph:
    """Rebuild a preference graph (profile-tuple nodes) from its adjacency matrix."""
    adj = np.asarray(adj).astype(bool)
    n_actions = tuple(int(n) for n in n_actions)
    size = int(np.prod(n_actions))
    if adj.shape != (size, size):
        raise ValueError(f"adjacency of shape {adj.shape} does not match {size} profiles of actions {n_actions}")
    g = nx.DiGraph(n_actions=n_actions, n_players=len(n_actions))
    nodes = [tuple(int(a) for a in np.unravel_index(k, n_actions)) for k in range(size)]
    g.add_nodes_from(nodes)
    src, dst = np.nonzero(adj)
    g.add_edges_from((nodes[s], nodes[d]) for s, d in zip(src, dst))
    return g


def _graph(game_or_graph: NormalFormGame | nx.DiGraph) -> nx.DiGraph:
    return preference_graph(game_or_graph) if isinstance(game_or_graph, NormalFormGame) else game_or_graph


def strongly_connected_components(game_or_graph: NormalFormGame | nx.DiGraph) -> list[frozenset[Profile]]:
    """All strongly connected components, largest first (ties broken by smallest profile)."""
    comps = [frozenset(c) for c in nx.strongly_connected_components(_graph(game_or_graph))]
    return sorted(comps, key=lambda c: (-len(c), min(c)))


def sink_components(game_or_graph: NormalFormGame | nx.DiGraph) -> list[frozenset[Profile]]:
    """Components with no arrow leaving them (sink equilibria), sorted by their smallest profile."""
    g = _graph(game_or_graph)
    succ = g.succ
    # the components networkx's condensation takes as its members (the same sets, so the same member
    # order), without building the condensation: a sink is a component no arrow leaves
    sinks = [frozenset(c) for c in nx.strongly_connected_components(g) if all(v in c for u in c for v in succ[u])]
    return sorted(sinks, key=min)


def strict_nash_equilibria(game: NormalFormGame) -> list[Profile]:
    """Pure profiles where every unilateral deviation strictly loses."""
    out = []
    for a in game.profiles():
        if all(
            np.all(np.delete(game.deviation_payoffs(a, i), a[i]) < game.payoffs[(i,) + a])
            for i in range(game.n_players)
        ):
            out.append(a)
    return out


def closure_violations(
    game: NormalFormGame, profiles: Iterable[Sequence[int]], tol: float = 0.0
) -> list[tuple[Profile, Profile, int, float]]:
    """Profitable deviations that leave the set: ``(from, to, player, gain)`` with ``gain > tol``."""
    s = {tuple(int(a) for a in p) for p in profiles}
    out = []
    for a in sorted(s):
        game._check_profile(a)
        for i in range(game.n_players):
            dev = game.deviation_payoffs(a, i)
            for b in np.flatnonzero(dev - dev[a[i]] > tol):
                target = a[:i] + (int(b),) + a[i + 1 :]
                if target not in s:
                    out.append((a, target, i, float(dev[b] - dev[a[i]])))
    return out


def is_preferentially_stable(game: NormalFormGame, profiles: Iterable[Sequence[int]], tol: float = 0.0) -> bool:
    """Whether the set is closed under profitable deviations (no arrow of gain > tol leaves it)."""
    return not closure_violations(game, profiles, tol)


def span(profiles: Iterable[Sequence[int]], n_players: int | None = None) -> tuple[tuple[int, ...], ...]:
    """The smallest subgame containing the set: per player, the actions that appear in it."""
    ps = [tuple(int(a) for a in p) for p in profiles]
    if not ps:
        raise ValueError("the span of an empty set of profiles is undefined")
    n = len(ps[0]) if n_players is None else n_players
    return tuple(tuple(sorted({p[i] for p in ps})) for i in range(n))


def subgame_profiles(action_subsets: Sequence[Sequence[int]]) -> frozenset[Profile]:
    """All profiles of the subgame ``prod_i action_subsets[i]``."""
    return frozenset(itertools.product(*[sorted(set(s)) for s in action_subsets]))


def is_subgame(profiles: Iterable[Sequence[int]]) -> bool:
    """Whether the set is a product of action subsets (equals its own span)."""
    s = frozenset(tuple(int(a) for a in p) for p in profiles)
    return bool(s) and s == subgame_profiles(span(s))


def all_subgames(game: NormalFormGame) -> Iterator[tuple[tuple[int, ...], ...]]:
    """Every subgame as a tuple of per-player action subsets (``prod (2^n_i - 1)`` of them)."""
    per_player = []
    for n in game.n_actions:
        subsets = [c for k in range(1, n + 1) for c in itertools.combinations(range(n), k)]
        per_player.append(subsets)
    return itertools.product(*per_player)


def leak(game: NormalFormGame, profiles: Iterable[Sequence[int]]) -> float:
    """The largest payoff gain of stepping out of the set's span from one of its pure profiles.

    Zero exactly when the span (a subgame) is closed under profitable deviations.
    See :func:`icmlgym.envs.games.metrics.leak_drift` for the aggregate version.
    """
    sp = span(profiles)
    worst = 0.0
    for a in subgame_profiles(sp):
        for i in range(game.n_players):
            dev = game.deviation_payoffs(a, i)
            outside = [b for b in range(game.n_actions[i]) if b not in sp[i]]
            if outside:
                worst = max(worst, float(np.max(dev[outside]) - dev[a[i]]))
    return worst

