import textwrap

import gymnasium as gym
import pytest

import icmlgym
from icmlgym.agents import AgentLoadError, AgentSpec, load_agent
from icmlgym.baselines.generic import EpsilonGreedyAgent, RandomAgent, UCB1Agent


def test_load_by_shipped_name():
    la = load_agent("ucb1")
    assert la.name == "ucb1" and la.entry_point == "icmlgym.baselines.generic:UCB1Agent"
    assert isinstance(la(), UCB1Agent)
    assert len(la.source_hash) == 16


def test_load_by_module_class():
    la = load_agent("tests.core.agents_for_tests:FirstArm")
    assert la.cls.__name__ == "FirstArm"
    assert la.name == "first-arm"


def test_load_by_file_path(tmp_path):
    f = tmp_path / "my_agent.py"
    f.write_text(textwrap.dedent("""
        from icmlgym import BaseAgent

        class Greedy(BaseAgent):
            def act(self, obs, info):
                return 1
    """))
    la = load_agent(str(f))
    assert la.cls.__name__ == "Greedy"
    la2 = load_agent(f"{f}:Greedy")
    assert la2.source_hash == la.source_hash
    f.write_text(f.read_text() + "\n# changed\n")
    assert load_agent(str(f)).source_hash != la.source_hash
    recs = icmlgym.run("icmlgym/Bandit-v0", str(f), seeds=1)
    assert recs[0].status == "ok" and recs[0].agent_source_hash == load_agent(str(f)).source_hash


def test_agent_kwargs_pass_through():
    agent = load_agent("epsilon-greedy", epsilon=0.3)()
    assert isinstance(agent, EpsilonGreedyAgent) and agent.epsilon == 0.3
    with pytest.raises(TypeError):
        load_agent("random", nonsense=1)()


def test_missing_module_is_a_clear_error():
    with pytest.raises(AgentLoadError, match="cannot import module 'no_such_module_xyz'"):
        load_agent("no_such_module_xyz:Agent")


def test_missing_class_is_a_clear_error():
    with pytest.raises(AgentLoadError, match="has no attribute 'Nope'.*FirstArm"):
        load_agent("tests.core.agents_for_tests:Nope")


def test_class_without_protocol_is_refused():
    with pytest.raises(AgentLoadError, match="does not implement the icmlgym Agent protocol: missing reset, update"):
        load_agent("tests.core.agents_for_tests:NotAnAgent")


def test_unknown_name_suggests():
    with pytest.raises(AgentLoadError, match="did you mean ucb1"):
        load_agent("ucb")


def test_file_errors(tmp_path):
    with pytest.raises(AgentLoadError, match="does not exist"):
        load_agent(str(tmp_path / "nope.py"))
    bad = tmp_path / "broken.py"
    bad.write_text("import not_a_real_package_qq\n")
    with pytest.raises(AgentLoadError, match="importing agent file .* failed: ModuleNotFoundError"):
        load_agent(str(bad))
    two = tmp_path / "two.py"
    two.write_text("from icmlgym import BaseAgent\nclass A(BaseAgent):\n  def act(s,o,i): return 0\nclass B(A): pass\n")
    with pytest.raises(AgentLoadError, match="defines 2 agent classes"):
        load_agent(str(two))


def test_class_and_instance_are_accepted():
    assert load_agent(RandomAgent).name == "random"
    inst = EpsilonGreedyAgent(epsilon=0.2)
    la = load_agent(inst)
    a1, a2 = la(), la()
    assert a1 is not a2 and a1.epsilon == 0.2


def _spec(space):
    return AgentSpec("icmlgym/Bandit-v0", gym.spaces.Box(0, 1, (2,)), space)


def test_random_agent_uses_its_own_seed():
    a, b = RandomAgent(), RandomAgent()
    a.reset(5, _spec(gym.spaces.Discrete(100)))
    b.reset(5, _spec(gym.spaces.Discrete(100)))
    assert [a.act(None, {}) for _ in range(20)] == [b.act(None, {}) for _ in range(20)]
    b.reset(6, _spec(gym.spaces.Discrete(100)))
    a.reset(5, _spec(gym.spaces.Discrete(100)))
    assert [a.act(None, {}) for _ in range(20)] != [b.act(None, {}) for _ in range(20)]


def test_ucb1_plays_each_arm_once_then_prefers_the_best():
    agent = UCB1Agent()
    agent.reset(0, _spec(gym.spaces.Discrete(3)))
    first = []
    for _ in range(3):
        a = agent.act(None, {})
        first.append(a)
        agent.update(None, a, [0.0, 0.0, 1.0][a], None, False, False, {})
    assert sorted(first) == [0, 1, 2]
    for _ in range(50):
        a = agent.act(None, {})
        agent.update(None, a, [0.0, 0.0, 1.0][a], None, False, False, {})
    assert agent.counts[2] > agent.counts[0] + agent.counts[1]


def test_discrete_baselines_refuse_other_spaces():
    with pytest.raises(TypeError, match="Discrete"):
        UCB1Agent().reset(0, _spec(gym.spaces.Box(0, 1, (2,))))
    with pytest.raises(ValueError):
        EpsilonGreedyAgent(epsilon=2)


def test_sb3_adapter_trains_then_acts():
    pytest.importorskip("stable_baselines3")
    recs = icmlgym.run("icmlgym/Bandit-v0", "sb3-ppo", seeds=1, env_kwargs={"horizon": 64},
                       agent_kwargs={"algo_kwargs": {"n_steps": 64, "batch_size": 32, "n_epochs": 1}})
    assert recs[0].status == "ok", recs[0].error
    assert recs[0].train_wall_time > 0
    assert len(recs[0].episodes) == 2 and recs[0].episodes[0].length == 64
    assert recs[0].device["type"] == "cpu"
    assert recs[0].versions["torch"]  # a CPU run names torch among its package versions
