"""Every shipped Craft agent runs through the runner at smoke tier, and the hierarchical agent
really mixes its levels (skill, grounding and motor steps all occur)."""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("crafter", reason="the Craft family needs the [craft] extra (crafter)")

import icmlgym  # noqa: E402
from icmlgym.agents.protocol import AgentSpec  # noqa: E402
from icmlgym.catalog import card, extra_installed  # noqa: E402
from icmlgym.runner import rollout  # noqa: E402

from .episodes import episode_table  # noqa: E402

ID = "icmlgym/Craft-v0"
SCRIPTED = ["craft-hierarchical", "craft-skill-only", "craft-motor-scripted", "craft-oracle", "craft-random"]


def test_card_lists_agents_and_reference():
    c = card(ID)
    assert c.reference_agent == "craft-hierarchical"
    assert set(c.agents) == set(SCRIPTED) | {"craft-ppo"}
    from icmlgym.catalog import agent_kind

    assert agent_kind("craft-hierarchical") == "reference"


@pytest.mark.parametrize("agent", SCRIPTED)
def test_scripted_agents_run_at_smoke_tier(agent):
    (rec,) = icmlgym.run(ID, agent, seeds=[0], tier="smoke")
    assert rec.status == "ok", rec.error
    m = rec.episodes[0].metrics
    assert set(m) >= {"success", "steps", "skill_calls", "grounding_calls", "motor_calls"}
    assert rec.cost["env_steps"] == m["steps"]
    if agent != "craft-random":
        assert m["success"] == 1.0  # three wood within 150 steps: every planner-based agent manages it


@pytest.mark.skipif(not extra_installed("rl"), reason="craft-ppo needs the [rl] extra (stable-baselines3, torch)")
def test_ppo_motor_agent_trains_and_acts():
    (rec,) = icmlgym.run(ID, "craft-ppo", seeds=[0], tier="smoke")
    assert rec.status == "ok", rec.error
    assert rec.train_wall_time > 0
    m = rec.episodes[0].metrics
    assert m["motor_calls"] == m["steps"] and m["skill_calls"] == 0


def test_hierarchical_agent_emits_chains_of_all_levels():
    df = episode_table("craft-hierarchical", ["make_stone_pickaxe/simple", "make_wood_pickaxe/hard"], [0, 1])
    assert df["success"].all()
    assert df["grounding_calls"].sum() > 0 and df["skill_calls"].sum() > 0
    env = gym.make(ID, task="collect_stone/hard")
    from icmlgym.agents.craft import HierarchicalAgent

    levels = set()
    rollout(env, HierarchicalAgent(), seed=0, spec=AgentSpec(ID, env.observation_space, env.action_space), max_steps=300,
            on_step=lambda obs, action, *_: levels.add(tuple(sorted(k for k in action if action[k] is not None))))
    # Chain-of-Action steps: a skill "thought" with a grounding or a motor action under it
    assert ("grounding", "skill") in levels and ("motor", "skill") in levels


def test_agents_are_seeded():
    a = episode_table("craft-motor-scripted", ["collect_stone/hard"], [3])
    b = episode_table("craft-motor-scripted", ["collect_stone/hard"], [3])
    assert a["steps"].tolist() == b["steps"].tolist()
    assert math.isclose(a["success"].iloc[0], b["success"].iloc[0])


def test_custom_task_is_refused_by_planner_agents_with_a_clear_error():
    from icmlgym.envs.craft.tasks import get_task
    from icmlgym.agents.craft import HierarchicalAgent

    spec = get_task("collect_wood/hard").to_dict()
    spec["name"] = "my_task/hard"
    env = gym.make(ID, task=spec)
    obs, info = env.reset(seed=0)
    agent = HierarchicalAgent()
    agent.reset(0, AgentSpec(ID, env.observation_space, env.action_space))
    with pytest.raises(ValueError, match="custom task"):
        agent.act(obs, info)
    assert obs["task"] == env.observation_space["task"].n - 1
    assert np.all(obs["inventory"] >= 0)
