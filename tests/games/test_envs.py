"""The family's envs: PettingZoo and Gymnasium API checks, determinism, bad actions, runner integration."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import parallel_api_test, parallel_seed_test

import icmlgym
from icmlgym.envs.games.repeated_game import RepeatedGameEnv
from icmlgym.envs.games.stability_prediction import StabilityPredictionEnv
from icmlgym.envs.games.vs_ftrl import RepeatedGameVsFTRLEnv


@pytest.mark.parametrize("feedback", ["full", "bandit"])
def test_repeated_game_parallel_api_and_seed(feedback):
    make = lambda: icmlgym.make_parallel("icmlgym/RepeatedGame-v0", horizon=60, feedback=feedback, payoff_noise=0.1)
    parallel_api_test(make(), num_cycles=100)
    parallel_seed_test(make, num_cycles=100)


def test_repeated_game_registered_in_pettingzoo_registry():
    from pettingzoo.env_registry.registration import make as pz_make

    icmlgym.envs.register_all()
    env = pz_make("parallel", "icmlgym/RepeatedGame-v0", horizon=5)
    assert env.possible_agents == ["player_0", "player_1", "player_2"]


def _play(env, seed, rng_seed=0):
    obs, infos = env.reset(seed=seed)
    rng = np.random.default_rng(rng_seed)
    out = []
    while env.agents:
        acts = {}
        for a in env.agents:
            sp = env.action_space(a)
            acts[a] = int(rng.integers(sp.n)) if hasattr(sp, "n") else rng.dirichlet(np.ones(sp.shape[0])).astype(np.float32)
        obs, rew, term, trunc, infos = env.step(acts)
        out.append((obs, rew))
    return out, infos


def test_repeated_game_metrics_and_determinism():
    env = RepeatedGameEnv(horizon=200, feedback="bandit", payoff_noise=0.5)
    a, infos = _play(env, 3)
    b, _ = _play(env, 3)
    c, _ = _play(env, 4)
    assert all(np.array_equal(x[0]["player_0"], y[0]["player_0"]) for x, y in zip(a, b))
    assert any(not np.array_equal(x[0]["player_0"], y[0]["player_0"]) for x, y in zip(a, c))
    m = infos["player_1"]["metrics"]
    for key in ("external_regret", "cce_gap", "cce_distance", "sink_mass_final", "absorbed", "time_to_absorption",
                "closure_violations", "leak_span", "leak_drift", "external_regret_player_2"):
        assert key in m and np.isscalar(m[key]) and np.isfinite(m[key])
    assert infos["player_0"]["sink_mass_curve"].shape[1] == m["n_sinks"]
    assert infos["player_0"]["cost"]["rounds"] == 200


def test_repeated_game_full_information_observation_is_payoff_vector():
    env = RepeatedGameEnv(game="rock_paper_scissors", horizon=3, feedback="full")
    env.reset(seed=0)
    x = np.array([1.0, 0.0, 0.0], dtype=np.float32)  # column player plays rock
    obs, rew, *_ = env.step({"player_0": np.array([0, 1, 0], dtype=np.float32), "player_1": x})
    assert np.allclose(obs["player_0"], [0.0, 1.0, -1.0])  # rock ties, paper wins, scissors loses
    assert rew["player_0"] == 1.0 and rew["player_1"] == -1.0
    # weights are normalised; the all-zero vector means uniform
    obs, rew, *_ = env.step({"player_0": np.zeros(3, np.float32), "player_1": np.array([0.5, 0.5, 0], np.float32)})
    assert rew["player_0"] == pytest.approx(0.0)


def test_repeated_game_rejects_bad_actions_and_arguments():
    env = RepeatedGameEnv(horizon=5, feedback="bandit")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action space"):
        env.step({"player_0": 7, "player_1": 0, "player_2": 0})
    with pytest.raises(ValueError, match="missing"):
        env.step({"player_0": 0})
    env = RepeatedGameEnv(horizon=5, feedback="full")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action space"):
        env.step({a: np.array([-1, 0, 0], np.float32) for a in env.agents})
    with pytest.raises(ValueError, match="feedback"):
        RepeatedGameEnv(feedback="partial")
    with pytest.raises(ValueError, match="rho applies only"):
        RepeatedGameEnv(game="random", rho=0.5)


def test_vs_ftrl_check_env_and_determinism():
    env = RepeatedGameVsFTRLEnv(horizon=50)
    check_env(env)
    g = icmlgym.make("icmlgym/RepeatedGameVsFTRL-v0", horizon=50)
    check_env(g.unwrapped)

    def roll(seed):
        obs, _ = env.reset(seed=seed)
        seq = [obs]
        for t in range(50):
            obs, r, term, trunc, info = env.step(t % 3)
            seq.append(obs)
        return np.array(seq), info

    a, info = roll(1)
    b, _ = roll(1)
    c, _ = roll(2)
    assert np.array_equal(a, b) and not np.array_equal(a, c)
    m = info["metrics"]
    assert {"learner_regret", "learner_average_payoff", "opponent_regret", "cce_distance"} <= set(m)
    with pytest.raises(ValueError, match="action space"):
        env.reset(seed=0)
        env.step(3)


def test_stability_prediction_check_env_and_metrics():
    env = StabilityPredictionEnv(n_games=3, n_inits=8, rounds=200)
    check_env(env)
    obs, _ = env.reset(seed=0)
    assert obs.shape == (81,)
    total = 0
    while True:
        obs, r, term, trunc, info = env.step(np.ones(9, dtype=np.int8))
        total += 1
        if trunc:
            break
    assert total == 3
    m = info["metrics"]
    assert 0.0 <= m["prediction_accuracy"] <= 1.0 and m["recall"] == 1.0
    assert m["prediction_accuracy"] == pytest.approx(m["observed_fraction"])
    assert info["cost"]["dynamics_rounds"] == 3 * 8 * 200
    with pytest.raises(ValueError, match="action space"):
        env.reset(seed=0)
        env.step(np.full(9, 2))


@pytest.mark.parametrize("agent", ["ucb1", "games-exp3", "random"])
def test_vs_ftrl_accepts_bandit_agents(agent):
    (rec,) = icmlgym.run("icmlgym/RepeatedGameVsFTRL-v0", agent, seeds=1, tier="smoke", env_kwargs={"horizon": 200})
    assert rec.status == "ok", rec.error
    assert np.isfinite(rec.metric("learner_regret")[0])


def test_vs_ftrl_accepts_sb3_ppo():
    pytest.importorskip("stable_baselines3", reason="needs the [rl] extra")
    (rec,) = icmlgym.run(
        "icmlgym/RepeatedGameVsFTRL-v0",
        "sb3-ppo",
        seeds=1,
        tier="smoke",
        env_kwargs={"horizon": 100},
        agent_kwargs={"algo_kwargs": {"n_steps": 64, "batch_size": 32, "n_epochs": 1}},
    )
    assert rec.status == "ok", rec.error
    assert np.isfinite(rec.metric("learner_regret")[0])


def test_every_card_agent_runs_at_smoke_tier():
    for c in icmlgym.catalog.cards():
        if c.family != "games":
            continue
        for agent in c.agents:
            (rec,) = icmlgym.run(c.id, agent, seeds=1, tier="smoke", env_kwargs=_tiny(c.id))
            assert rec.status == "ok", f"{c.id} {agent}: {rec.error}"
            assert np.isfinite(rec.metric(c.primary_metric)[0])


def _tiny(env_id):
    return {"rounds": 200, "n_inits": 8, "n_games": 2} if "Stability" in env_id else {"horizon": 100}


def test_full_information_baselines_refuse_bandit_feedback():
    (rec,) = icmlgym.run(
        "icmlgym/RepeatedGame-v0", "games-fictitious-play", seeds=1, env_kwargs={"feedback": "bandit", "horizon": 10}
    )
    assert rec.status == "failed" and "full-information" in rec.error


def test_bandit_mode_runs_exp3():
    (rec,) = icmlgym.run("icmlgym/RepeatedGame-v0", "games-exp3", seeds=1, env_kwargs={"feedback": "bandit", "horizon": 300})
    assert rec.status == "ok", rec.error


def test_repeated_game_takes_arrays_and_named_games():
    from icmlgym.envs.games.counterexample import leaky_hexagon_game

    env = RepeatedGameEnv(game=np.asarray(leaky_hexagon_game().payoffs), horizon=10)
    assert env.game.n_actions == (3, 2, 2) and env.action_space("player_0").shape == (3,)
    assert [sorted(s) for s in env.sinks] == [sorted(s) for s in RepeatedGameEnv(game="leaky_hexagon", horizon=10).sinks]
    env = RepeatedGameEnv(game="covariant", rho=-0.5, n_players=2, n_actions=4, horizon=10)
    assert env.game.n_actions == (4, 4)
