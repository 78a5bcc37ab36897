"""Preference graphs: components against a brute-force reachability check, closure, subgames, span."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from icmlgym.envs.games.normal_form import NormalFormGame, potential_game, random_game, rock_paper_scissors, shapley_game
from icmlgym.envs.games.preference_graph import (
    adjacency_matrix,
    all_subgames,
    closure_violations,
    graph_from_adjacency,
    is_preferentially_stable,
    is_subgame,
    leak,
    preference_graph,
    sink_components,
    span,
    strict_nash_equilibria,
    strongly_connected_components,
    subgame_profiles,
)


def brute_force_components(game: NormalFormGame):
    """SCCs and sinks from a transitive closure built by explicit profile-by-profile deviations."""
    profiles = list(game.profiles())
    index = {p: k for k, p in enumerate(profiles)}
    n = len(profiles)
    reach = np.eye(n, dtype=bool)
    for p in profiles:
        for i in range(game.n_players):
            for b in range(game.n_actions[i]):
                q = p[:i] + (b,) + p[i + 1 :]
                if game.payoffs[(i,) + q] > game.payoffs[(i,) + p]:
                    reach[index[p], index[q]] = True
    for k in range(n):  # Floyd-Warshall closure
        reach |= reach[:, [k]] & reach[[k], :]
    comps = {frozenset(profiles[j] for j in range(n) if reach[i, j] and reach[j, i]) for i in range(n)}
    sinks = {c for c in comps if all(profiles[j] in c for i in map(index.get, c) for j in np.flatnonzero(reach[i]))}
    return comps, sinks


@pytest.mark.parametrize("seed", range(30))
def test_components_match_brute_force(seed):
    rng = np.random.default_rng(seed)
    shape = [(2, 2), (3, 3), (2, 2, 2), (3, 2, 2), (4, 3)][seed % 5]
    if seed % 2:
        # integer payoffs in {0, 1, 2}: many ties, so components can merge beyond cycles
        game = NormalFormGame(rng.integers(0, 3, size=(len(shape),) + shape).astype(float))
    else:
        game = random_game(shape, seed=rng)
    comps, sinks = brute_force_components(game)
    assert set(strongly_connected_components(game)) == comps
    assert set(sink_components(game)) == sinks
    for s in sinks:
        assert is_preferentially_stable(game, s)


def test_rock_paper_scissors_is_one_component_of_all_nine_profiles():
    # with ties (draws), the graph joins all 9 profiles; computed, not assumed
    comps = strongly_connected_components(rock_paper_scissors())
    assert len(comps) == 1 and len(comps[0]) == 9
    assert sink_components(rock_paper_scissors()) == comps


def test_shapley_game_sink_is_a_six_cycle():
    sinks = sink_components(shapley_game())
    assert [len(s) for s in sinks] == [6]
    assert not is_subgame(sinks[0])


def test_potential_game_sinks_are_strict_nash():
    for seed in range(5):
        g = potential_game(3, 3, seed=seed)
        sinks = sink_components(g)
        assert all(len(s) == 1 for s in sinks)
        assert sorted(next(iter(s)) for s in sinks) == sorted(strict_nash_equilibria(g))


def test_adjacency_roundtrip_and_edge_gains():
    g = random_game(3, 2, seed=0)
    adj = adjacency_matrix(g)
    G = preference_graph(g)
    assert adj.sum() == G.number_of_edges()
    H = graph_from_adjacency(adj, g.n_actions)
    assert set(H.edges()) == set(G.edges())
    for a, b, d in G.edges(data=True):
        i = d["player"]
        assert d["gain"] == pytest.approx(g.payoffs[(i,) + b] - g.payoffs[(i,) + a])
    with pytest.raises(ValueError, match="does not match"):
        graph_from_adjacency(adj[:3, :3], g.n_actions)


def test_closure_span_subgames_and_leak():
    g = NormalFormGame(np.array([[[3.0, 0.0], [0.0, 1.0]], [[3.0, 0.0], [0.0, 1.0]]]))  # coordination
    assert is_preferentially_stable(g, [(0, 0)])
    assert closure_violations(g, [(0, 1)]) and not is_preferentially_stable(g, [(0, 1)])
    assert span([(0, 0), (1, 1)]) == ((0, 1), (0, 1))
    assert is_subgame([(0, 0), (0, 1)]) and not is_subgame([(0, 0), (1, 1)])
    assert subgame_profiles(((0, 1), (1,))) == {(0, 1), (1, 1)}
    assert len(list(all_subgames(g))) == 9
    assert leak(g, [(0, 0)]) == 0.0
    assert leak(g, [(0, 1)]) == pytest.approx(3.0)  # player 1 leaves (0, 1) for (0, 0): gain 3
    with pytest.raises(ValueError, match="empty"):
        span([])
    for sub in itertools.islice(all_subgames(g), 9):
        assert is_subgame(subgame_profiles(sub))


def test_sink_components_are_the_condensations_members_in_their_order() -> None:
    """The sinks are networkx's condensation's member sets, iterated in the same order (each sink's mass
    is summed in that order, so StabilityPrediction-v0's records depend on it)."""
    import networkx as nx

    from icmlgym.envs.games.generators import make_game

    def by_condensation(g: nx.DiGraph) -> list[frozenset]:
        cond = nx.condensation(g)
        return sorted((frozenset(cond.nodes[c]["members"]) for c in cond.nodes if cond.out_degree(c) == 0), key=min)

    graphs = [preference_graph(make_game(kind, n_players=p, n_actions=a, seed=s))
              for kind in ("random", "zero_sum", "covariant") for p, a in ((2, 3), (3, 2), (3, 3)) for s in range(6)]
    graphs.append(preference_graph(rock_paper_scissors()))
    rng = np.random.default_rng(1)
    graphs += [graph_from_adjacency(rng.random((9, 9)) < q, (3, 3)) for q in (0.05, 0.1, 0.2, 0.4) for _ in range(10)]
    for g in graphs:
        want = by_condensation(g)
        got = sink_components(g)
        assert got == want and [list(s) for s in got] == [list(s) for s in want]
