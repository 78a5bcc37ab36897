"""SketchAttack-v0: Gymnasium conformance, determinism, errors, metrics, agents and the two tracks."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import icmlgym
from icmlgym.envs.sketch import AGENTS, ATTACKERS, DEFENDER_TRACKS, ENV_ID, SUITES
from icmlgym.envs.sketch.attack_env import SketchAttackEnv
from icmlgym.envs.sketch.tracks import attacker_table, defender_table

SMALL = {"n_keys": 200, "space": 120, "update_budget": 150, "query_budget": 150, "min_scale": 20}


@pytest.mark.parametrize("defender", sorted(DEFENDER_TRACKS))
def test_check_env_passes_for_every_defender(defender):
    env = icmlgym.make(ENV_ID, **{**SMALL, **DEFENDER_TRACKS[defender]})
    check_env(env.unwrapped, skip_render_check=True)


def _rollout(env, seed, n=300):
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(123)  # the same action sequence every time
    trace = [obs.copy()]
    for _ in range(n):
        a = np.array([rng.integers(3), rng.integers(env.unwrapped.n_keys), rng.integers(env.unwrapped.max_increment)])
        obs, r, term, trunc, info = env.step(a)
        trace.append(np.append(obs, r))
        if term or trunc:
            break
    return np.concatenate(trace), info


@pytest.mark.parametrize("defender", ["bernoulli", "sample-hold", "dp-tree", "dp-median", "switching", "bottomk", "linear"])
def test_reset_seed_makes_episodes_reproducible_and_reseeds_the_defender(defender):
    kw = {**SMALL, **DEFENDER_TRACKS[defender]}
    a, b = icmlgym.make(ENV_ID, **kw), icmlgym.make(ENV_ID, **kw)
    ta, ia = _rollout(a, 7)
    tb, ib = _rollout(b, 7)
    np.testing.assert_array_equal(ta, tb)
    assert ia["cost"] == ib["cost"]


def test_each_episode_draws_fresh_secret_randomness():
    env = SketchAttackEnv(defender="bernoulli", **SMALL)
    env.reset(seed=7)
    salts = {env.defender.salt}
    for _ in range(3):
        env.reset()
        salts.add(env.defender.salt)
    env.reset(seed=7)
    assert len(salts) == 4 and env.defender.salt in salts


def test_invalid_actions_raise_value_error_naming_the_space():
    env = icmlgym.make(ENV_ID, **SMALL)
    env.reset(seed=0)
    for bad in ([3, 0, 0], [0, 200, 0], [0, 0, 4], [0, 0], [0.5, 0, 0], [-1, 0, 0]):
        with pytest.raises(ValueError, match="MultiDiscrete"):
            env.step(np.array(bad))


def test_bad_kwargs_fail_at_construction():
    with pytest.raises(ValueError, match="unknown defender"):
        SketchAttackEnv(defender="hll")
    with pytest.raises(ValueError, match="not cardinality"):
        SketchAttackEnv(defender="linear", statistic="cardinality")
    with pytest.raises(ValueError, match="update_budget"):
        SketchAttackEnv(update_budget=0)
    with pytest.raises(ValueError, match="epsilon"):
        SketchAttackEnv(epsilon=0)
    with pytest.raises(TypeError):
        SketchAttackEnv(defender="dp-tree", defender_kwargs={"bogus": 1})


def test_error_reward_cost_and_metrics_follow_the_definitions():
    """Against the exact defender the error is 0; against bernoulli the return equals the
    prefix-max error and a query reveals the estimate while updates do not."""
    env = SketchAttackEnv(defender="exact", **SMALL)
    obs, info = env.reset(seed=0)
    assert info["cost"] == {"updates": 0, "queries": 0} and obs.tolist() == [0.0, 150.0, 150.0]
    env.step(np.array([0, 5, 2]))
    obs, r, *_ = env.step(np.array([2, 0, 0]))
    assert obs[0] == 1.0 and r == 0.0
    env = SketchAttackEnv(defender="bernoulli", epsilon=10.0, **{k: v for k, v in SMALL.items()})
    env.reset(seed=1)
    total, done, t = 0.0, False, 0
    rng = np.random.default_rng(0)
    while not done:
        op = 2 if t % 2 else int(rng.integers(2))
        obs, r, term, trunc, info = env.step(np.array([op, rng.integers(200), rng.integers(4)]))
        assert r >= 0.0
        total += r
        t += 1
        done = term or trunc
    m = info["metrics"]
    assert set(m) == {"success", "prefix_max_error", "steps_to_failure", "defender_space", "true_value", "published", "updates", "queries"}
    assert total == pytest.approx(m["prefix_max_error"])
    assert m["success"] == 0.0 and m["steps_to_failure"] == t  # censored at the episode length
    assert info["cost"]["updates"] + info["cost"]["queries"] == t
    assert m["true_value"] == env.truth.exact_total()
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.array([2, 0, 0]))


def test_catalog_agents_and_suites_are_registered():
    card = icmlgym.card(ENV_ID)
    assert card.reference_agent == "sketch-probe-reset" and set(card.agents) == set(ATTACKERS)
    assert set(ATTACKERS) - {"random"} == set(AGENTS)
    for name in DEFENDER_TRACKS:
        assert icmlgym.suite(f"sketch-vs-{name}") == [(ENV_ID, DEFENDER_TRACKS[name])]
    assert len(icmlgym.suite("sketch-defenders")) == len(DEFENDER_TRACKS) == len(SUITES) - 1


@pytest.mark.parametrize("agent", ATTACKERS)
def test_every_attacker_runs_through_the_runner(agent):
    recs = icmlgym.run(ENV_ID, agent, seeds=[0], env_kwargs=SMALL, episodes=1)
    assert recs[0].status == "ok", recs[0].error
    assert 0.0 <= recs[0].metric("prefix_max_error")[0]


def test_two_tracks_through_the_ordinary_leaderboard(tmp_path):
    """Runs go through icmlgym.run into a Leaderboard; the track tables are built from its frames."""
    lb_mod = pytest.importorskip("icmlgym.leaderboard", reason="the leaderboard package is not in this build")
    board = lb_mod.Leaderboard(tmp_path / "lb.db")
    attackers = ["sketch-probe-reset", "sketch-oblivious-random"]
    small = {**SMALL, "min_scale": 30}
    for defender in ("bernoulli", "exact"):
        for a in attackers:
            board.add(icmlgym.run(ENV_ID, a, seeds=[0, 1], env_kwargs={**small, "defender": defender}, episodes=1))
    eps = board.episodes()
    att = attacker_table(eps)
    top = att[(att["defender"] == "bernoulli") & (att["rank"] == 1)].iloc[0]
    assert top["agent_name"] == "sketch-probe-reset" and top["success_rate"] == 1.0
    assert att[att["defender"] == "exact"]["success_rate"].max() == 0.0
    dt = defender_table(eps, attackers=attackers)
    assert list(dt["defender"]) == ["exact", "bernoulli"]  # exact never errs
    assert dt.iloc[0]["worst_error"] == 0.0 and dt.iloc[1]["worst_attacker"] == "sketch-probe-reset"
    assert dt["complete"].all()
    # the default attacker list flags what a defender has not met
    assert not defender_table(eps)["complete"].any()
    # the ordinary leaderboard table ranks the attackers of a suite by success
    table = board.table(env=ENV_ID)
    assert len(table) > 0


def test_track_tables_reject_frames_without_the_needed_columns():
    import pandas as pd

    with pytest.raises(KeyError, match="agent_name"):
        defender_table(pd.DataFrame({"x": [1]}))
    with pytest.raises(KeyError, match="prefix_max_error"):
        defender_table(pd.DataFrame({"agent_name": ["a"], "task": [ENV_ID]}))
