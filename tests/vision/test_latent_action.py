"""LatentActionTransfer-v0: the sprite world, the episode protocol, bad input, and the agents end to end."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.catalog import extra_installed
from icmlgym.corpora import sprites
from icmlgym.envs.vision.latent_action import CONTROL, QUERY, LatentActionTransferEnv

ENV = "icmlgym/LatentActionTransfer-v0"
needs_torch = pytest.mark.skipif(not extra_installed("vision"), reason="needs the [vision] extra (torch): pip install 'icmlgym[vision]'")


def test_vectorised_renderer_equals_the_plain_loop_in_every_context():
    rng = np.random.default_rng(0)
    for cid in range(sprites.N_CONTEXTS):
        a, d = sprites.random_states(64, rng)
        ctx = sprites.context(cid)
        assert np.array_equal(sprites.render(ctx, a, d), sprites.render_loop(ctx, a, d))


def test_contexts_differ_in_background_skin_scale_and_distractor_motion():
    ctxs = [sprites.context(c) for c in range(sprites.N_CONTEXTS)]
    assert len({c.texture for c in ctxs}) == 4 and {c.scale for c in ctxs} == {2, 3, 4}
    assert len({tuple(c.sprite_colour) for c in ctxs}) == sprites.N_CONTEXTS
    assert len({int(np.argmax(c.distractor_probs)) for c in ctxs[: sprites.N_TRAIN]}) >= 3
    for c in ctxs:
        assert c.distractor_probs.sum() == pytest.approx(1.0)
        # the sprite is bright, the distractor low-contrast: what tells them apart in a new context
        bg = c.background.reshape(-1, 3).mean(0)
        assert np.abs(c.sprite_colour - bg).sum() > np.abs(c.distractor_colour.astype(float) - bg).sum()


def test_a_move_into_the_border_leaves_the_sprite_in_place():
    assert sprites.step_agent(np.array([[0, 0]]), np.array([1]))[0].tolist() == [0, 0]
    assert sprites.step_agent(np.array([[0, 0]]), np.array([2]))[0].tolist() == [1, 0]
    assert sprites.step_agent(np.array([[8, 8]]), np.array([4]))[0].tolist() == [8, 8]


def test_labelled_transitions_are_balanced_and_every_move_is_visible():
    before, after, actions = sprites.transitions(6, 100, np.random.default_rng(1))
    assert np.bincount(actions).tolist() == [20] * 5
    moved = np.abs(after.astype(int) - before.astype(int)).sum(axis=(1, 2, 3))
    assert (moved[actions > 0] > 0).all()  # a stay may leave the frame unchanged (the distractor may stay too); a move never


def test_clips_count_frames_and_come_from_training_contexts_only():
    env = LatentActionTransferEnv(train_contexts=[1, 3], clip_len=5)
    env.reset(seed=0)
    clips = env.clips(53, seed=4)
    assert clips.shape == (10, 5, 36, 36, 3) and clips.dtype == np.uint8
    assert env.clip_frames_served == 50
    assert np.array_equal(clips, env.clips(53, seed=4))
    bgs = {sprites.context(c).background[0, 0].tobytes() for c in (1, 3)}
    corners = {bytes(f[0, 0]) for f in clips[:, 0]}  # the sprites never reach the top-left pixel... unless at cell 0
    assert corners & bgs


def test_episode_protocol_rewards_and_metrics():
    env = LatentActionTransferEnv(n_labels=8, n_queries=4, demo_len=3)
    obs, info = env.reset(seed=3)
    assert info["labelled"]["before"].shape == (8, 36, 36, 3) and len(info["source_labelled"]["action"]) == 64
    assert set(info["source_labelled"]["context"].tolist()) == set(sprites.TRAIN_CONTEXTS)
    assert (info["labelled"]["context"] == 6).all()
    total, phases = 0.0, []
    for t in range(4):
        phases.append(obs["phase"])
        obs, r, term, trunc, step_info = env.step(int(env._queries[2][t]))  # white-box: the right answer
        total += r
    for k in range(3):
        phases.append(obs["phase"])
        obs, r, term, trunc, step_info = env.step(int(env._demo_actions[k]))
        total += r
    assert phases == [QUERY] * 4 + [CONTROL] * 3
    assert term and not trunc and total == pytest.approx(2.0)
    m = step_info["metrics"]
    assert m["action_accuracy"] == 1.0 and m["transfer_accuracy"] == 1.0 and m["transfer_success"] == 1.0 and m["goal_distance"] == 0.0
    with pytest.raises(RuntimeError, match="ended"):
        env.step(0)


def test_the_demonstration_goal_is_demo_len_cells_away_and_shown_in_the_demo_context():
    env = LatentActionTransferEnv(demo_len=7)
    for seed in range(20):
        env.reset(seed=seed)
        assert int(np.abs(env._goal - env._cell).sum()) == 7
    bg = sprites.context(7).background
    assert np.mean(env._demo_frames[0] == bg) > 0.8


def test_more_labels_extend_the_same_pool():
    small = LatentActionTransferEnv(n_labels=8).reset(seed=5)[1]["labelled"]
    large = LatentActionTransferEnv(n_labels=64).reset(seed=5)[1]["labelled"]
    assert np.array_equal(small["before"], large["before"][:8]) and np.array_equal(small["action"], large["action"][:8])


@pytest.mark.parametrize("kwargs, message", [
    ({"n_labels": 65}, "n_labels=65 is larger than the eval context's data"),
    ({"n_labels": 100, "label_pool": 32}, "label pool holds 32"),
    ({"eval_context": 3}, "unknown eval_context 3"),
    ({"eval_context": 42}, "unknown eval_context 42"),
    ({"demo_context": "park"}, "unknown demo_context 'park'"),
    ({"train_contexts": [0, 9]}, "unknown training context 9"),
    ({"train_contexts": []}, "distinct and non-empty"),
    ({"demo_context": 6}, "demo_context must differ from eval_context"),
    ({"n_queries": 0}, "n_queries must be an integer in 1..4096"),
    ({"n_labels": -1}, "n_labels must be an integer >= 0"),
])
def test_bad_arguments_are_refused_with_the_reason(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LatentActionTransferEnv(**kwargs)


def test_invalid_actions_and_clip_requests_name_the_problem():
    env = LatentActionTransferEnv()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not in the action space Discrete"):
        env.step(5)
    with pytest.raises(ValueError, match="less than one clip"):
        env.clips(3)


def test_passes_stable_baselines3_check_env():
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker", reason="needs stable-baselines3 (the [rl] extra)")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3.check_env(LatentActionTransferEnv(n_queries=4, demo_len=2), warn=True)


@needs_torch
def test_linear_probe_separates_separable_data():
    from icmlgym.agents.vision import LinearProbe

    rng = np.random.default_rng(0)
    y = np.arange(100) % 5
    x = np.eye(5)[y] * 3 + rng.normal(0, 0.3, (100, 5))
    assert (LinearProbe().fit(x, y).predict(x) == y).mean() == 1.0


@needs_torch
def test_agents_refuse_a_missing_budget_and_missing_labels():
    from icmlgym.agents.vision import SeqDeltaREPAAgent, labelled_set

    env = icmlgym.make(ENV)
    with pytest.raises(ValueError, match="budget in frames > 0"):
        SeqDeltaREPAAgent().train(env, 0)
    _, info = LatentActionTransferEnv(n_labels=0, source_labels=0).reset(seed=0)
    with pytest.raises(ValueError, match="no labelled transitions"):
        labelled_set(info)


@needs_torch
def test_every_agent_runs_through_the_runner_and_the_card_counts_labels():
    recs = icmlgym.run(ENV, "lapo", seeds=1, env_kwargs={"n_queries": 8, "demo_len": 2}, agent_kwargs={"min_steps": 5, "epochs": 0.1})
    recs += icmlgym.run(ENV, "bc-labels", seeds=1, env_kwargs={"n_queries": 8, "demo_len": 2}, agent_kwargs={"steps": 5})
    for r in recs:
        assert r.status == "ok", r.error
        assert r.cost["labelled_transitions"] == 72.0
        assert 0.0 <= r.metric("action_accuracy")[0] <= 1.0
    assert recs[0].cost["gradient_steps"] == 5


@needs_torch
def test_training_is_deterministic_given_the_seed():
    from icmlgym.agents.vision import train_lam

    clips, _, _ = sprites.clips(sprites.TRAIN_CONTEXTS, 12, 4, np.random.default_rng(0))
    feats = np.random.default_rng(1).normal(size=(12, 4, 6)).astype(np.float32)
    a, fa = train_lam(clips, seed=3, steps=4, features=feats)
    b, fb = train_lam(clips, seed=3, steps=4, features=feats)
    assert fa == fb and fa["align"] > 0
    for (k, v), (_, w) in zip(a.state_dict().items(), b.state_dict().items()):
        assert np.array_equal(v.numpy(), w.numpy()), k


@needs_torch
def test_the_shipped_encoder_weights_match_the_current_code():
    """A change to icmlgym/zoo/sprites.py or icmlgym/corpora/sprites.py changes the key: re-ship with scripts/zoo_weights.py."""
    import json

    from icmlgym.zoo.registry import shipped_paths
    from icmlgym.zoo.sprites import MEMBER

    card = json.loads(shipped_paths("sprite-ssl", "smoke")[0].read_text())
    assert card["key"] == MEMBER.key(MEMBER.config("smoke"), 0)
    assert card["quality"]["position_r2"] > 0.3
