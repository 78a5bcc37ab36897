"""SB3 training leaves nothing behind: no ``<tmp>/SB3-<timestamp>`` directory per ``learn``.

SB3's default logger makes such an (empty) directory even at ``verbose=0``; every ``sb3-ppo``
and ``craft-ppo`` run used to leave one. ``learn_quietly`` hands the model a logger without
outputs, and training is unchanged: the same seed gives the same weights as a plain ``learn``.
"""

from __future__ import annotations

import tempfile

import gymnasium as gym
import pytest
import torch

pytest.importorskip("stable_baselines3")

import icmlgym  # noqa: E402,F401  (registers the envs)
from icmlgym.agents.protocol import AgentSpec  # noqa: E402
from icmlgym.agents.sb3 import PPOAgent, learn_quietly  # noqa: E402

COG = "icmlgym/CogGoNoGo-v0"


@pytest.fixture
def tmp_root(tmp_path, monkeypatch):
    """Point ``tempfile.gettempdir()`` (where SB3 puts its log folders) at an empty folder."""
    root = tmp_path / "tmp"
    root.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(root))
    return root


def _sb3_dirs(root) -> list[str]:
    return sorted(p.name for p in root.iterdir() if p.name.startswith("SB3-"))


def _spec(env: gym.Env) -> AgentSpec:
    return AgentSpec(env_id=COG, observation_space=env.observation_space, action_space=env.action_space)


def _weights(model) -> list[torch.Tensor]:
    return [p.detach().clone() for p in model.policy.parameters()]


def test_plain_learn_litters_so_the_check_below_means_something(tmp_root):
    from stable_baselines3 import PPO

    env = gym.make(COG)
    PPO("MlpPolicy", env, n_steps=16, batch_size=16, n_epochs=1, seed=0, verbose=0, device="cpu").learn(16)
    assert len(_sb3_dirs(tmp_root)) == 1


def test_sb3_ppo_trains_the_same_weights_and_leaves_no_directory(tmp_root):
    from stable_baselines3 import PPO

    env = gym.make(COG)
    agent = PPOAgent()
    agent.reset(0, _spec(env))
    agent.train(env, budget=64)
    assert _sb3_dirs(tmp_root) == []

    # The same model trained with SB3's own logger (which litters; the fixture's folder takes it).
    ref = PPO("MlpPolicy", gym.make(COG), n_steps=64, batch_size=64, seed=0, verbose=0, device="cpu")
    ref.learn(total_timesteps=64)
    mine, theirs = _weights(agent.model), _weights(ref)
    assert len(mine) == len(theirs) > 0
    assert all(torch.equal(a, b) for a, b in zip(mine, theirs))


def test_craft_ppo_leaves_no_directory(tmp_root):
    from icmlgym.baselines.craft import PPOMotorAgent

    env = gym.make("icmlgym/Craft-v0", task="make_wood_pickaxe/hard", max_steps=40)
    agent = PPOMotorAgent(n_steps=16, batch_size=16)
    agent.reset(0, AgentSpec(env_id="icmlgym/Craft-v0", observation_space=env.observation_space,
                             action_space=env.action_space))
    agent.train(env.unwrapped, budget=32)
    assert agent.model.num_timesteps == 32
    assert _sb3_dirs(tmp_root) == []


def test_learn_quietly_rejects_a_non_positive_budget():
    with pytest.raises(ValueError, match="total_timesteps must be > 0"):
        learn_quietly(object(), 0)
