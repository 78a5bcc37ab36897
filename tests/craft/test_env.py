"""Craft-v0 conformance: check_env (env and wrappers), seeding, action validation, levels, ends, metrics."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("crafter", reason="the Craft family needs the [craft] extra (crafter)")

from gymnasium.utils.env_checker import check_env  # noqa: E402

import icmlgym  # noqa: E402,F401
from icmlgym.envs.craft.tasks import UnknownTaskError  # noqa: E402
from icmlgym.envs.craft.wrappers import MotorOnly, SkillOnly  # noqa: E402

ID = "icmlgym/Craft-v0"


@pytest.fixture(scope="module")
def env():
    e = gym.make(ID, task="make_wood_pickaxe/hard")
    yield e
    e.close()


def test_check_env_craft_and_single_level_wrappers():
    check_env(gym.make(ID, task="collect_wood/hard", max_steps=60).unwrapped, skip_render_check=True)
    check_env(MotorOnly(gym.make(ID, task="collect_wood/hard", max_steps=60).unwrapped), skip_render_check=True)
    check_env(SkillOnly(gym.make(ID, task="place_table/hard", max_steps=60).unwrapped), skip_render_check=True)
    assert isinstance(MotorOnly(gym.make(ID).unwrapped).action_space, gym.spaces.Discrete)
    assert SkillOnly(gym.make(ID).unwrapped).action_space.n == len(gym.make(ID).unwrapped.skill_names)


def _rollout(env, seed: int, actions):
    obs, info = env.reset(seed=seed)
    frames = [obs["image"].copy()]
    positions = [info["player_pos"]]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        frames.append(obs["image"].copy())
        positions.append(info["player_pos"])
        if term or trunc:
            break
    return frames, positions


def test_reset_seed_determinism(env):
    rng = np.random.default_rng(0)
    actions = [{"motor": int(m)} for m in rng.integers(0, 17, 40)] + [{"skill": "collect wood"}, {"skill": "explore"}]
    f1, p1 = _rollout(env, 123, actions)
    f2, p2 = _rollout(env, 123, actions)
    f3, _ = _rollout(env, 124, actions)
    assert p1 == p2 and all(np.array_equal(a, b) for a, b in zip(f1, f2))
    assert not np.array_equal(f1[0], f3[0])  # another seed, another world


def test_invalid_actions_raise_value_error_naming_the_space(env):
    env.reset(seed=0)
    with pytest.raises(ValueError, match="action space"):
        env.step(3)
    with pytest.raises(ValueError, match="motor"):
        env.step({"motor": 17})
    with pytest.raises(ValueError, match="skill"):
        env.step({"skill": "collect wod"})
    with pytest.raises(ValueError, match="grounding"):
        env.step({"grounding": (0, 9, 0)})
    with pytest.raises(ValueError, match="not in the action space"):
        env.step({"levels": [0, 0, 1], "motor": 0, "jump": 1})
    with pytest.raises(ValueError, match="present but does not give"):
        env.step({"levels": [1, 0, 0]})
    with pytest.raises(ValueError, match="MotorOnly"):
        MotorOnly(gym.make(ID).unwrapped).step(99)


def test_unknown_task_lists_close_names():
    with pytest.raises(UnknownTaskError, match="make_stone_pickaxe/hard"):
        gym.make(ID, task="make_stone_pikaxe/hard")


def test_chain_of_action_executes_most_granular_level(env):
    env.reset(seed=1)
    _, _, _, _, info = env.step({"skill": "collect wood", "grounding": ("move_to", 4, 2), "motor": "noop"})
    chain = info["chain"]
    assert chain["levels"] == ["skill", "grounding", "motor"] and chain["executed"] == "motor"
    assert chain["primitive_steps"] == 1 and chain["skill"] == "collect wood"
    _, _, _, _, info = env.step({"skill": "explore", "grounding": ("move_to", 4, 2)})
    assert info["chain"]["executed"] == "grounding"
    _, _, _, _, info = env.step({"skill": "explore"})
    assert info["chain"]["executed"] == "skill" and info["chain"]["primitive_steps"] > 1
    _, _, _, _, info = env.step({})
    assert info["chain"]["executed"] == "none" and info["chain"]["primitive_steps"] == 1
    cost = info["cost"]
    assert cost["macro_steps"] == 4 and cost["motor_calls"] == 1 and cost["grounding_calls"] == 1
    assert cost["skill_calls"] == 1 and cost["env_steps"] >= 4


def test_skill_controller_completes_a_task_and_episode_ends_with_metrics():
    env = gym.make(ID, task="collect_wood/hard")
    env.reset(seed=0)
    total, info = 0.0, {}
    for _ in range(20):
        _, r, term, trunc, info = env.step({"skill": "collect wood"})
        total += r
        if term or trunc:
            break
    assert term and not trunc and total == 1.0
    m = info["metrics"]
    assert m["success"] == 1.0 and m["steps_to_success"] == m["steps"] and m["skill_calls"] >= 1
    assert all(isinstance(v, float) for v in m.values())
    with pytest.raises(RuntimeError, match="reset"):
        env.step({"motor": 0})


def test_simple_difficulty_inventory_and_make_skill():
    env = gym.make(ID, task="make_wood_pickaxe/simple")
    obs, info = env.reset(seed=0)
    assert info["inventory"]["wood"] == env.unwrapped.task.initial_inventory["wood"]
    assert int(obs["inventory"][list(env.unwrapped.tree.items).index("wood")]) == info["inventory"]["wood"]
    _, _, _, _, info = env.step({"skill": "place table"})
    assert info["chain"]["status"] == "done" and info["achievements"]["place_table"] == 1
    _, r, term, _, info = env.step({"skill": "make wood_pickaxe"})
    assert term and r == 1.0 and info["inventory"]["wood_pickaxe"] == 1


def test_ordered_goals_count_only_after_the_previous_goal():
    env = gym.make(ID, task="collect_wood_then_place_table/simple")
    env.reset(seed=0)
    _, _, term, _, info = env.step({"skill": "place table"})  # the second goal first: does not count
    assert not term and info["goal_index"] == 0
    for _ in range(10):
        _, _, term, _, info = env.step({"skill": "collect wood"})
        if info["goal_index"] == 1:
            break
    assert info["goal_index"] == 1
    need = env.unwrapped.tree.place["table"]["uses"]["wood"]
    while info["inventory"]["wood"] < need:
        _, _, _, _, info = env.step({"skill": "collect wood"})
    for _ in range(10):
        _, r, term, _, info = env.step({"skill": "place table"})
        if term:
            break
    assert term and r >= 1.0 and info["metrics"]["goals_completed"] == 1.0


def test_step_limit_truncates_and_death_terminates():
    env = gym.make(ID, task="collect_diamond/hard", max_steps=5)
    env.reset(seed=0)
    for i in range(5):
        _, _, term, trunc, info = env.step({"motor": "noop"})
    assert trunc and not term and info["metrics"]["success"] == 0.0 and np.isnan(info["metrics"]["steps_to_success"])
    env.reset(seed=0)
    env.unwrapped.backend.env._player.health = 0  # a test-only way to kill the player
    _, _, term, trunc, info = env.step({"motor": "noop"})
    assert term and not trunc and info["metrics"]["died"] == 1.0


def test_shaping_rewards_progress_once():
    env = gym.make(ID, task="make_wood_pickaxe/hard", shaping=True)
    env.reset(seed=0)
    rewards = []
    for _ in range(6):
        _, r, term, _, info = env.step({"skill": "collect wood"})
        rewards.append(r)
    assert rewards[0] == pytest.approx(0.1)  # first wood: collect_wood is on the path
    assert sum(rewards[1:]) == 0.0  # no reward for repeating it


def test_observation_options_and_render():
    env = gym.make(ID, semantic=False, render_mode="rgb_array")
    obs, _ = env.reset(seed=0)
    assert "semantic" not in obs and env.observation_space.contains(obs)
    assert env.render().shape == (64, 64, 3)
    obs2, _ = gym.make(ID).reset(seed=0)
    assert obs2["semantic"].shape == (9, 7) and obs2["semantic"][4, 3] == env.unwrapped.tree.semantic_id("player")


def test_constructor_rejects_bad_arguments():
    with pytest.raises(ValueError, match="max_steps"):
        gym.make(ID, max_steps=0)
    from icmlgym.envs.craft.craft_env import CraftEnv

    with pytest.raises(ValueError, match="render_mode"):
        CraftEnv(render_mode="human")
    with pytest.raises(ValueError, match="max_skill_steps"):
        gym.make(ID, max_skill_steps=0)


def test_sb3_runs_unchanged_on_single_level_wrappers(tmp_path, monkeypatch):
    import tempfile

    from icmlgym.catalog import extra_installed

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # plain SB3's logger makes a SB3-<time> folder there

    if not extra_installed("rl"):
        pytest.skip("stable-baselines3 needs the [rl] extra")
    from stable_baselines3 import PPO

    for wrapper in (SkillOnly, MotorOnly):
        env = wrapper(gym.make(ID, task="make_wood_pickaxe/hard", max_steps=40).unwrapped, image=False)
        model = PPO("MultiInputPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0, device="cpu")
        model.learn(32)
        obs, _ = env.reset(seed=0)
        action, _ = model.predict(obs)
        assert env.action_space.contains(int(action))
