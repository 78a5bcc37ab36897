"""SB3Compatible: every space conversion, both directions, and SB3 training through it."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium import spaces

from icmlgym.envs.sb3_compat import BINS, SB3Compatible, sb3_compatible


class _Toy(gym.Env):
    """A one-step env with the given spaces that records the last action it received."""

    def __init__(self, obs_space: spaces.Space, act_space: spaces.Space, obs):
        self.observation_space, self.action_space, self._obs = obs_space, act_space, obs
        self.last = None

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        return self._obs, {}

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"{action!r} not in {self.action_space}")
        self.last = action
        return self._obs, 1.0, True, False, {}


BOX = spaces.Box(0.0, 1.0, (2,), np.float32)
TEXT = spaces.Text(max_length=5, min_length=0, charset="abc")


def test_native_spaces_are_left_alone():
    env = _Toy(BOX, spaces.Discrete(3), np.zeros(2, np.float32))
    assert sb3_compatible(env) is env


def test_text_becomes_character_codes_and_nested_dicts_flatten():
    obs_space = spaces.Dict({"x": BOX, "inner": spaces.Dict({"prompt": TEXT, "n": spaces.Discrete(4)})})
    obs = {"x": np.ones(2, np.float32), "inner": {"prompt": "cab", "n": 2}}
    env = SB3Compatible(_Toy(obs_space, spaces.Discrete(2), obs))
    assert set(env.observation_space.spaces) == {"x", "inner.prompt", "inner.n"}
    assert env.observation_space["inner.prompt"] == spaces.Box(0, 3, (5,), np.int32)
    got, _ = env.reset(seed=0)
    assert got["inner.prompt"].tolist() == [3, 1, 2, 0, 0]
    assert got["inner.n"] == 2 and env.observation_space.contains(got)


def test_dict_actions_become_one_multidiscrete_and_map_back_inside_the_raw_space():
    raw = spaces.Dict({"edit": spaces.Discrete(7, start=1), "magnitude": spaces.Box(-1.0, 1.0, (1,), np.float32),
                       "bits": spaces.MultiBinary(2), "grid": spaces.MultiDiscrete([[2, 3], [4, 5]])})
    env = SB3Compatible(_Toy(BOX, raw, np.zeros(2, np.float32)))
    # parts in the Dict's key order (gymnasium sorts it): bits, edit, grid, magnitude
    assert env.action_space == spaces.MultiDiscrete([2, 2, 7, 2, 3, 4, 5, BINS])
    a = env.action(np.array([1, 0, 0, 1, 2, 3, 4, BINS - 1]))
    assert a["edit"] == 1 and a["magnitude"][0] == pytest.approx(1.0) and a["bits"].tolist() == [1, 0]
    assert a["grid"].tolist() == [[1, 2], [3, 4]] and raw.contains(a)
    env.action_space.seed(0)
    for _ in range(50):
        assert raw.contains(env.action(env.action_space.sample()))


def test_unbounded_box_actions_get_finite_bounds():
    raw = spaces.Dict({"w": spaces.Box(-np.inf, np.inf, (2, 2), np.float32), "b": spaces.Box(-np.inf, np.inf, (2,), np.float32)})
    env = SB3Compatible(_Toy(BOX, raw, np.zeros(2, np.float32)), bound=3.0)
    assert env.action_space == spaces.Box(-3.0, 3.0, (6,), np.float32)
    a = env.action(np.arange(6, dtype=np.float32) / 10)
    assert a["b"].tolist() == pytest.approx([0.0, 0.1]) and a["w"].shape == (2, 2)  # key order: b, w


def test_multidimensional_multidiscrete_flattens():
    raw = spaces.MultiDiscrete([[4, 5], [6, 7]])
    env = SB3Compatible(_Toy(BOX, raw, np.zeros(2, np.float32)))
    assert env.action_space == spaces.MultiDiscrete([4, 5, 6, 7])
    assert env.action(np.array([3, 4, 5, 6])).tolist() == [[3, 4], [5, 6]]


def test_bad_input_is_a_clear_error():
    with pytest.raises(TypeError, match="cannot encode the action space Text"):
        SB3Compatible(_Toy(BOX, TEXT, np.zeros(2, np.float32)))
    with pytest.raises(TypeError, match="cannot encode the observation space Tuple"):
        SB3Compatible(_Toy(spaces.Tuple((BOX,)), spaces.Discrete(2), (np.zeros(2, np.float32),)))
    env = SB3Compatible(_Toy(BOX, spaces.MultiDiscrete([[2, 2]]), np.zeros(2, np.float32)))
    with pytest.raises(ValueError, match=r"action .* is not in the action space MultiDiscrete\(\[2 2\]\)"):
        env.step(np.array([2, 0]))
    with pytest.raises(ValueError, match="bins must be at least 2"):
        SB3Compatible(_Toy(BOX, spaces.MultiDiscrete([[2, 2]]), np.zeros(2, np.float32)), bins=1)


def test_sb3_trains_and_acts_through_it():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env

    from icmlgym.agents.protocol import AgentSpec
    from icmlgym.agents.sb3 import A2CAgent

    obs_space = spaces.Dict({"prompt": TEXT, "x": BOX})
    raw = spaces.Dict({"op": spaces.Discrete(2), "level": spaces.Box(0.0, 1.0, (1,), np.float32)})
    env = _Toy(obs_space, raw, {"prompt": "ab", "x": np.zeros(2, np.float32)})
    check_env(SB3Compatible(env), warn=False, skip_render_check=True)
    agent = A2CAgent(algo_kwargs={"n_steps": 8})
    agent.reset(0, AgentSpec(env_id="toy", observation_space=obs_space, action_space=raw))
    agent.train(env, budget=16)
    obs, info = env.reset(seed=1)
    assert raw.contains(agent.act(obs, info))
