"""ChoiceArena-v0 and ChoiceMarket-v0: API conformance, determinism, errors, agents."""

from __future__ import annotations


import numpy as np
import pytest
from PIL import Image, ImageDraw
from pettingzoo.test import parallel_api_test, parallel_seed_test

import icmlgym
from icmlgym.envs.arena.choice_arena import ChoiceArenaEnv
from icmlgym.envs.arena.choice_market import ChoiceMarketEnv
from icmlgym.envs.arena.choosers import Chooser, MalformedAnswerError, SyntheticChooser

SMALL = {"image_size": 32, "edit_budget": 5, "queries_per_step": 8}


def _rollout(env, seed, n_steps=None):
    env.action_space.seed(seed)
    obs, info = env.reset(seed=seed)
    frames = [obs]
    infos = [info]
    rewards = []
    while True:
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        frames.append(obs)
        rewards.append(r)
        infos.append(info)
        if term or trunc:
            return frames, rewards, infos


def test_arena_is_deterministic_under_seed():
    a = _rollout(ChoiceArenaEnv(**SMALL), 7)
    b = _rollout(ChoiceArenaEnv(**SMALL), 7)
    c = _rollout(ChoiceArenaEnv(**SMALL), 8)
    for fa, fb in zip(a[0], b[0]):
        for k in fa:
            assert np.array_equal(fa[k], fb[k]), k
    assert a[1] == b[1]
    assert a[2][-1]["metrics"] == b[2][-1]["metrics"]
    assert not np.array_equal(a[0][0]["target"], c[0][0]["target"]) or a[1] != c[1]


def test_arena_episode_structure_and_metrics():
    env = ChoiceArenaEnv(**SMALL)
    frames, rewards, infos = _rollout(env, 0)
    assert len(rewards) == SMALL["edit_budget"]
    last = infos[-1]
    assert last["cost"]["queries"] == (SMALL["edit_budget"] + 1) * SMALL["queries_per_step"]
    assert last["cost"]["edits"] == SMALL["edit_budget"]
    m = last["metrics"]
    for key in ("objective", "win_rate_gain", "final_win_rate", "initial_win_rate", "ssim", "order_flip_rate"):
        assert isinstance(m[key], float), key
    assert np.isclose(m["objective"], m["win_rate_gain"] - 0.5 * (1 - m["ssim"]))
    assert m["eval_exact"] == 1.0
    # the rewards telescope: estimate change minus the drift penalty
    assert np.isclose(sum(rewards), (m["estimated_win_rate"] - infos[0]["win_rate"]) - 0.5 * (1 - m["ssim"]), atol=1e-6)
    hist = frames[-1]["history"]
    assert hist[:, -1].sum() == SMALL["edit_budget"]
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"edit": 0, "magnitude": np.zeros(1, np.float32)})


def test_arena_query_budget_ends_the_episode_early():
    env = ChoiceArenaEnv(image_size=32, edit_budget=10, queries_per_step=8, query_budget=32)
    _, rewards, infos = _rollout(env, 1)
    assert len(rewards) == 3 and infos[-1]["cost"]["queries"] == 32


def test_arena_undoing_an_edit_restores_the_photo():
    env = ChoiceArenaEnv(**SMALL)
    obs, _ = env.reset(seed=3)
    start = obs["target"]
    obs, *_ = env.step({"edit": 3, "magnitude": np.array([0.9], np.float32)})
    assert not np.array_equal(obs["target"], start)
    obs, *_ = env.step({"edit": 3, "magnitude": np.array([0.0], np.float32)})
    assert np.array_equal(obs["target"], start) and obs["ssim"][0] == 1.0


@pytest.mark.parametrize(
    "action",
    [
        {"edit": 7, "magnitude": np.array([0.5], np.float32)},
        {"edit": 0, "magnitude": np.array([1.5], np.float32)},
        {"edit": 0},
        3,
    ],
)
def test_arena_rejects_invalid_actions(action):
    env = ChoiceArenaEnv(**SMALL)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action space"):
        env.step(action)


def test_arena_rejects_bad_arguments():
    with pytest.raises(ValueError, match="even"):
        ChoiceArenaEnv(queries_per_step=3)
    with pytest.raises(ValueError, match="query_budget"):
        ChoiceArenaEnv(queries_per_step=8, query_budget=10)
    with pytest.raises(ValueError, match="unknown category"):
        ChoiceArenaEnv(category="car")


class _FlakyChooser(Chooser):
    """Answers every third query malformed; otherwise picks the first image."""

    name = "flaky"

    def _decide(self, images, ids, prompt, layout):
        if len(self.log) % 3 == 2:
            raise MalformedAnswerError("scripted malformed answer")
        p = np.zeros(len(images))
        p[0] = 1.0
        return p, 0, False, "1"


def test_arena_counts_chooser_errors_and_never_counts_them_as_choices():
    env = ChoiceArenaEnv(chooser=_FlakyChooser(), eval_queries=30, **SMALL)
    _, _, infos = _rollout(env, 0)
    cost = infos[-1]["cost"]
    assert cost["chooser_errors"] > 0
    errors = [r for r in env.chooser.log if r.error]
    assert all(r.choice is None for r in errors)
    # a first-slot chooser wins exactly half of counterbalanced queries for the target
    assert infos[0]["win_rate"] == 0.5
    assert infos[-1]["metrics"]["eval_exact"] == 0.0
    assert infos[-1]["metrics"]["order_flip_rate"] == 1.0


def test_arena_with_a_folder_of_user_photos(tmp_path):
    for k, colour in enumerate([(200, 20, 20), (20, 200, 20), (20, 20, 200), (200, 200, 20)]):
        im = Image.new("RGB", (50, 50), (235, 235, 235))
        ImageDraw.Draw(im).rectangle([10 + k, 12, 38, 40 - k], fill=colour)
        im.save(tmp_path / f"p{k}.png")
    env = ChoiceArenaEnv(images=str(tmp_path), image_size=32, n_competitors=3, edit_budget=3, queries_per_step=4)
    _, _, infos = _rollout(env, 0)
    assert "metrics" in infos[-1]
    with pytest.raises(ValueError, match="need 5 images"):
        ChoiceArenaEnv(images=str(tmp_path), image_size=32, n_competitors=4).reset(seed=0)


MARKET_SMALL = {"n_sellers": 3, "rounds": 3, "queries_per_round": 6, "image_size": 32}


def test_market_passes_pettingzoo_tests():
    env = icmlgym.make("icmlgym/ChoiceMarket-v0", **MARKET_SMALL)
    parallel_api_test(env, num_cycles=10)
    parallel_seed_test(lambda: ChoiceMarketEnv(**MARKET_SMALL))


def test_market_is_in_the_pettingzoo_registry():
    from pettingzoo.env_registry.registration import parallel_registry

    assert "icmlgym/ChoiceMarket-v0" in parallel_registry
    env = icmlgym.make_parallel("icmlgym/ChoiceMarket-v0", **MARKET_SMALL)
    assert isinstance(env, ChoiceMarketEnv)


def test_market_rewards_are_choice_shares_and_metrics_reach_every_agent():
    env = ChoiceMarketEnv(drift_penalty=0.0, **MARKET_SMALL)
    obs, _ = env.reset(seed=2)
    noop = {a: {"edit": 0, "magnitude": np.zeros(1, np.float32)} for a in env.agents}
    while env.agents:
        obs, rewards, terms, truncs, infos = env.step(noop)
        assert np.isclose(sum(rewards.values()), 1.0)
    assert all(truncs.values())
    m = infos["seller_0"]["metrics"]
    assert all(infos[a]["metrics"] == m for a in infos)
    assert m["mean_appeal_gain"] == 0.0 and m["mean_ssim"] == 1.0
    # own seat first in the share history
    assert np.isclose(obs["seller_1"]["shares"][0, 0], obs["seller_0"]["shares"][0, 1])
    with pytest.raises(RuntimeError, match="reset"):
        env.step(noop)


def test_market_rejects_bad_actions():
    env = ChoiceMarketEnv(**MARKET_SMALL)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="missing"):
        env.step({"seller_0": {"edit": 0, "magnitude": np.zeros(1, np.float32)}})
    bad = {a: {"edit": 9, "magnitude": np.zeros(1, np.float32)} for a in env.agents}
    with pytest.raises(ValueError, match="action space"):
        env.step(bad)


AGENTS = ["arena-vpo", "arena-no-edit", "random", "arena-greedy", "arena-cem", "arena-ucb"]


@pytest.mark.parametrize("env_id,kwargs", [("icmlgym/ChoiceArena-v0", SMALL), ("icmlgym/ChoiceMarket-v0", MARKET_SMALL)])
def test_every_listed_agent_runs(env_id, kwargs):
    card = icmlgym.card(env_id)
    assert set(card.agents) == set(AGENTS)
    for name in card.agents:
        recs = icmlgym.run(env_id, name, seeds=[0, 1], env_kwargs=kwargs)
        for r in recs:
            assert r.status == "ok", r.error
            assert len(r.metric(card.primary_metric)) == 1
    no_edit = icmlgym.run(env_id, "arena-no-edit", seeds=[0], env_kwargs=kwargs)[0]
    assert no_edit.metric(card.primary_metric) == [0.0]


def test_runs_are_reproducible():
    a = icmlgym.run("icmlgym/ChoiceArena-v0", "arena-vpo", seeds=[4], env_kwargs=SMALL)[0]
    b = icmlgym.run("icmlgym/ChoiceArena-v0", "arena-vpo", seeds=[4], env_kwargs=SMALL)[0]
    assert a.metric("objective") == b.metric("objective")


def test_agents_reject_bad_arguments():
    from icmlgym.agents.arena import VisualPromptOptimizer
    from icmlgym.baselines.arena import CrossEntropyAgent, GreedyCoordinateAgent, UCBEditAgent

    with pytest.raises(ValueError):
        VisualPromptOptimizer(step=0)
    with pytest.raises(ValueError):
        GreedyCoordinateAgent(step=2)
    with pytest.raises(ValueError):
        CrossEntropyAgent(elite=6, population=6)
    with pytest.raises(ValueError):
        UCBEditAgent(levels=(2.0,))


def test_synthetic_chooser_kwargs_reach_the_env():
    env = ChoiceArenaEnv(chooser_kwargs={"position_bias": (), "temperature": 0.5}, **SMALL)
    assert isinstance(env.chooser, SyntheticChooser) and env.chooser.position_bias == () and env.chooser.temperature == 0.5


def test_arena_query_log_feeds_the_revealed_preference_report():
    env = ChoiceArenaEnv(image_size=32, edit_budget=8, queries_per_step=16)
    with pytest.raises(ValueError, match="no queries"):
        env.analyze()
    for seed in range(4):
        _rollout(env, seed)
    report = env.analyze()
    assert report["n_queries"] == 4 * 9 * 16 and report["errors"] == 0
    assert set(report["themes"]["drives"]) <= {"toward", "away", "unclear"}
    assert len(report["edit_themes"]) == 14
    pb = report["position_bias"]
    assert 0 <= pb.order_flip_rate <= 1 and pb.n_flip_pairs > 0
