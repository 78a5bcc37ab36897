"""Agents (FTRL, EXP3, baselines, predictors), basin experiments and play statistics."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import icmlgym
from icmlgym.agents.games import Exp3Agent, FTRLAgent, SinkPredictorAgent
from icmlgym.agents.protocol import AgentSpec
from icmlgym.baselines.games import (
    BestResponseAgent,
    FictitiousPlayAgent,
    OptimisticFTRLAgent,
    RegretMatchingAgent,
    StrictNashPredictorAgent,
)
from icmlgym.envs.games.basins import basin_statistics, predict_sinks, predict_strict_nash
from icmlgym.envs.games.counterexample import leaky_hexagon_game
from icmlgym.envs.games.metrics import PlayStatistics, absorption, leak_drift
from icmlgym.envs.games.normal_form import coordination_game, potential_game, rock_paper_scissors
from icmlgym.envs.games.preference_graph import adjacency_matrix, preference_graph, sink_components


def _spec(action_space, obs_space=None, **env_kwargs):
    obs_space = obs_space or gym.spaces.Box(0.0, 1.0, shape=(3,), dtype=np.float32)
    return AgentSpec("test", obs_space, action_space, env_kwargs=env_kwargs)


def test_hedge_agent_plays_softmax_of_scores_from_random_start():
    a = FTRLAgent(eta=0.5, init="uniform")
    a.reset(0, _spec(gym.spaces.Box(0, 1, (3,), np.float32)))
    x = a.act(np.zeros(3), {})
    assert np.allclose(x, 1 / 3)
    a.update(None, x, 0.0, np.array([1.0, 0.0, 0.0]), False, False, {})
    x = a.act(None, {})
    assert np.allclose(x, np.exp([0.5, 0, 0]) / np.exp([0.5, 0, 0]).sum(), atol=1e-6)
    b, c = FTRLAgent(), FTRLAgent()
    b.reset(1, _spec(gym.spaces.Box(0, 1, (3,), np.float32)))
    c.reset(2, _spec(gym.spaces.Box(0, 1, (3,), np.float32)))
    assert not np.allclose(b.act(None, {}), c.act(None, {}))  # random initial strategies differ by seed


def test_euclidean_ftrl_projects():
    a = FTRLAgent(regularizer="euclidean", eta=1.0, init="uniform")
    a.reset(0, _spec(gym.spaces.Box(0, 1, (3,), np.float32)))
    a.act(None, {})
    a.update(None, None, 0.0, np.array([2.0, 0.0, 0.0]), False, False, {})
    assert np.allclose(a.act(None, {}), [1.0, 0.0, 0.0])


def test_exp3_regret_is_sublinear_against_a_fixed_reward_vector():
    """EXP3 against fixed Bernoulli-free rewards (0.2, 0.5, 0.8): regret per round shrinks with T."""
    rewards = np.array([0.2, 0.5, 0.8])
    per_round = []
    for T in (500, 5000):
        regrets = []
        for seed in range(5):
            a = Exp3Agent()
            a.reset(seed, _spec(gym.spaces.Discrete(3), horizon=T))
            total = 0.0
            for _ in range(T):
                k = a.act(None, {})
                total += rewards[k]
                a.update(None, k, rewards[k], None, False, False, {})
            regrets.append(0.8 * T - total)
        per_round.append(np.mean(regrets) / T)
    assert per_round[1] < per_round[0] < 0.3
    with pytest.raises(TypeError, match="bandit feedback"):
        Exp3Agent().reset(0, _spec(gym.spaces.Box(0, 1, (3,), np.float32)))


def test_full_information_baselines():
    box = gym.spaces.Box(0, 1, (3,), np.float32)
    u = np.array([0.0, 1.0, 0.5])
    for cls in (FictitiousPlayAgent, BestResponseAgent):
        a = cls()
        a.reset(0, _spec(box))
        x0 = a.act(None, {})
        assert x0.sum() == pytest.approx(1.0)
        a.update(None, x0, 0.0, u, False, False, {})
        assert np.array_equal(a.act(None, {}), [0, 1, 0])
    rm = RegretMatchingAgent()
    rm.reset(0, _spec(box))
    x = rm.act(None, {})
    rm.update(None, x, 0.0, u, False, False, {})
    y = rm.act(None, {})
    regret = u - x @ u
    assert np.allclose(y, np.maximum(regret, 0) / np.maximum(regret, 0).sum(), atol=1e-6)
    o = OptimisticFTRLAgent(eta=1.0)
    o.reset(0, _spec(box))
    o.act(None, {})
    o.update(None, None, 0.0, u, False, False, {})
    z = o.act(None, {})
    assert np.argmax(z) == 1
    with pytest.raises(TypeError, match="full-information"):
        FictitiousPlayAgent().reset(0, _spec(gym.spaces.Discrete(3)))


def test_predictors_and_basins_on_a_potential_game():
    """In potential games every run is absorbed by a strict NE, and the sink predictor is exact."""
    g = potential_game(3, 2, seed=3)
    stats = basin_statistics(g, n_runs=32, rounds=3000, eta=0.5, seed=0)
    assert stats.unabsorbed == 0.0 and stats.fractions.sum() == pytest.approx(1.0)
    adj = adjacency_matrix(g)
    assert np.array_equal(predict_sinks(adj), predict_sinks(preference_graph(g)))
    assert np.array_equal(predict_strict_nash(adj), predict_strict_nash(preference_graph(g)))
    assert np.array_equal(predict_sinks(adj) | stats.observed, predict_sinks(adj))
    agent = SinkPredictorAgent()
    agent.reset(0, _spec(gym.spaces.MultiBinary(9), gym.spaces.Box(0, 1, (81,), np.float32)))
    assert np.array_equal(agent.act(adj.astype(np.float32).ravel(), {}).astype(bool), predict_sinks(adj))
    nash = StrictNashPredictorAgent()
    nash.reset(0, _spec(gym.spaces.MultiBinary(9), gym.spaces.Box(0, 1, (81,), np.float32)))
    assert nash.act(adj.ravel(), {}).sum() == len(sink_components(g))
    with pytest.raises(ValueError, match="square"):
        predict_sinks(np.zeros((3, 4)))


def test_rps_basins_and_cycle_prediction():
    g = rock_paper_scissors()
    adj = adjacency_matrix(g)
    assert predict_sinks(adj).all() and not predict_strict_nash(adj).any()


def test_play_statistics_absorption_and_regret():
    g = coordination_game(2, 2, seed=0)
    sinks = sink_components(g)
    stats = PlayStatistics(g, 100, sinks, n_checkpoints=10)
    for t in range(100):
        stats.add(index=g.profile_index((1, 1) if t >= 30 else (0, 1)), payoffs=g.payoff((0, 0)))
    m = stats.metrics()
    k = [i for i, s in enumerate(sinks) if (1, 1) in s][0]
    assert m["absorbed"] == 1.0 and m["absorbing_sink"] == k and m["time_to_absorption"] == 40.0
    assert m["closure_violations"] == 0.0 and m["tail_support_size"] == 1.0
    assert absorption(np.array([[0.5, 0.2]]), np.array([1]), 0.9) == (-1, pytest.approx(float("nan"), nan_ok=True))


def test_leak_drift_is_zero_on_the_hexagon_cycle_and_positive_at_111():
    g = leaky_hexagon_game(0.5)
    sigma = np.zeros(g.n_profiles)
    sigma[g.profile_index((1, 1, 1))] = 1.0
    # the span of {111} is 111 itself: every switch leaves it; player 0's switch to 0 gains the most (1)
    assert leak_drift(g, sigma, [(1, 1, 1)]) == pytest.approx(1.0)
    cube = [(a, b, c) for a in (0, 1) for b in (0, 1) for c in (0, 1)]
    assert leak_drift(g, sigma, cube) == pytest.approx(0.5)
    hexagon_play = np.zeros(g.n_profiles)
    for p in [(1, 0, 0), (1, 1, 0), (0, 1, 0), (0, 1, 1), (0, 0, 1), (1, 0, 1)]:
        hexagon_play[g.profile_index(p)] = 1 / 6
    assert leak_drift(g, hexagon_play, cube) == 0.0


def test_suite_lists_the_basin_experiments():
    icmlgym.envs.register_all()
    members = icmlgym.catalog.suite("games-basins")
    assert len(members) >= 7 and all(env_id == "icmlgym/StabilityPrediction-v0" for env_id, _ in members)


def test_tail_support_is_a_coverage_set():
    from icmlgym.envs.games.metrics import coverage_mask

    assert coverage_mask(np.full(1000, 1e-3), 0.01).sum() == 990
    d = np.array([0.5, 0.3, 0.195, 0.005])
    assert coverage_mask(d, 0.01).tolist() == [True, True, True, False]
    assert coverage_mask(np.stack([d, d[::-1]]), 0.01).sum(axis=1).tolist() == [3, 3]
    assert coverage_mask(np.array([1.0, 0.0]), 0.0).tolist() == [True, False]
    with pytest.raises(ValueError, match="tol"):
        coverage_mask(d, 1.0)
