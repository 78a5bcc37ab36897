"""FairLinearBandit-v0 batched (``batch_seeds``): the vector env and the agents' twins equal the single runs bit for bit."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import icmlgym
from icmlgym.envs.fairbandit.fair_linear_bandit import FairLinearBanditEnv
from icmlgym.envs.fairbandit.vector import FairLinearBanditVectorEnv
from icmlgym.runner import batched
from icmlgym.runner.api import make_tasks
from icmlgym.runner.loop import execute
from tests.core.test_batched import comparable

ENV = "icmlgym/FairLinearBandit-v0"
AGENTS = (
    "fairbandit-fairlin-ucb",
    "fairbandit-fairlin-pe",
    "fairbandit-linucb",
    "fairbandit-lints",
    "fairbandit-pe",
    "fairbandit-etc",
    "fairbandit-linnash",
    "random",
)
SEEDS = [0, 1, 2, 7, 11, 123456]


def no_fallback(task):
    raise AssertionError(f"the batch fell back to a single run: {task}")


def assert_batched_equals_single(monkeypatch, agent: str, env_kwargs: dict, seeds=SEEDS, episodes: int = 1, **kw) -> list:
    tasks = make_tasks(ENV, agent, seeds=seeds, env_kwargs=env_kwargs, episodes=episodes, **kw)
    single = [execute(t) for t in tasks]
    monkeypatch.setattr(batched, "execute", no_fallback)  # the records below must come from the vector path
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in single + records), [r.error for r in single + records]
    for s, b in zip(single, records):
        assert comparable(b) == comparable(s)
    assert "nash_regret" in records[0].episodes[0].metrics
    assert len({r.episodes[0].ret for r in records}) > 1  # the seeds really differ (noise at least)
    return records


@pytest.mark.parametrize("agent", AGENTS)
@pytest.mark.parametrize(
    "env_kwargs",
    [
        {"horizon": 400, "n_arms": 40, "dim": 5},
        {"horizon": 300, "n_arms": 25, "dim": 4, "noise": "bernoulli", "instance_seed": 3},
    ],
)
def test_batched_records_equal_single_runs(agent: str, env_kwargs: dict, monkeypatch) -> None:
    assert_batched_equals_single(monkeypatch, agent, env_kwargs, episodes=2)


@pytest.mark.parametrize("agent", ["fairbandit-fairlin-ucb", "fairbandit-linucb", "fairbandit-etc"])
def test_batched_past_the_exact_refresh(agent: str, monkeypatch) -> None:
    # 2,000 rounds: RidgeStatistics recomputes V^-1 and the widths exactly (per seed in the twin)
    assert_batched_equals_single(monkeypatch, agent, {"horizon": 2300, "n_arms": 60, "dim": 6, "noise": "clipped"}, seeds=SEEDS[:3])


def test_batched_on_a_data_instance_with_agent_kwargs(monkeypatch) -> None:
    pytest.importorskip("sklearn", reason="data instances need the [fair] extra: pip install 'icmlgym[fair]'")
    assert_batched_equals_single(monkeypatch, "fairbandit-fairlin-ucb", {"horizon": 500, "instance": "diabetes", "dim": 5},
                                 seeds=SEEDS[:4], agent_kwargs={"explore_rounds": 60, "uniform_mix": 0.3})
    assert_batched_equals_single(monkeypatch, "fairbandit-linucb", {"horizon": 300, "instance": "diabetes", "dim": 5},
                                 seeds=SEEDS[:4], agent_kwargs={"alpha": 0.3, "reg": 2.0})


# a long exploration with a small assumed noise: the seeds eliminate different arms, some the same number
SURVIVORS_ENV = {"horizon": 400, "n_arms": 60, "dim": 5}
SURVIVORS_AGENT = {"explore_rounds": 250, "noise_sd": 0.2}


def test_fairlin_ucb_twin_keeps_different_surviving_arms_per_seed(monkeypatch) -> None:
    # the UCB base runs over each seed's surviving arms (seeds with as many share one stacked product)
    from icmlgym.agents.fairbandit_vector import VectorFairLinBanditUCB
    from icmlgym.agents.protocol import AgentSpec

    venv = FairLinearBanditVectorEnv(num_envs=8, **SURVIVORS_ENV)
    agent = VectorFairLinBanditUCB(**SURVIVORS_AGENT)
    agent.reset(list(range(8)), AgentSpec(ENV, venv.single_observation_space, venv.single_action_space, None, {}, "smoke", 0, None, "cpu"))
    obs, info = venv.reset(seed=list(range(100, 108)))
    for _ in range(SURVIVORS_ENV["horizon"]):
        a = agent.act(obs, info)
        nobs, r, term, trunc, info = venv.step(a)
        agent.update(obs, a, r, nobs, term, trunc, info)
        obs = nobs
    shared = [act.shape for _, act, _ in agent.ucb.groups if act is not None and act.shape[0] > 1]
    assert len(agent.ucb.groups) > 2 and shared
    for agent_name in ("fairbandit-fairlin-ucb", "fairbandit-fairlin-pe"):
        assert_batched_equals_single(monkeypatch, agent_name, SURVIVORS_ENV, seeds=list(range(8)), agent_kwargs=SURVIVORS_AGENT)


def test_vector_env_equals_single_envs_step_by_step() -> None:
    kw = {"horizon": 50, "n_arms": 12, "dim": 3, "noise": "clipped"}
    seeds = [3, 4, 5]
    venv = gym.make_vec(ENV, num_envs=3, vectorization_mode="vector_entry_point", **kw)
    envs = [FairLinearBanditEnv(**kw) for _ in seeds]
    obs, info = venv.reset(seed=seeds)
    singles = [e.reset(seed=s) for e, s in zip(envs, seeds)]
    assert info["horizon"].tolist() == [50] * 3
    for i, (o, _) in enumerate(singles):
        assert np.array_equal(obs["arms"][i], o["arms"]) and np.array_equal(obs["last_reward"][i], o["last_reward"])
    rng = np.random.default_rng(0)
    for t in range(50):
        a = rng.integers(0, 12, 3)
        obs, r, term, trunc, info = venv.step(a)
        for i, e in enumerate(envs):
            o, ri, te, tr, inf = e.step(int(a[i]))
            assert r[i] == ri and obs["last_reward"][i, 0] == o["last_reward"][0]
            assert te == term[i] and tr == trunc[i] and inf["cost"]["env_steps"] == info["cost"]["env_steps"][i]
            if tr:
                assert {k: v[i] for k, v in info["metrics"].items()} == inf["metrics"]
                for k, v in inf["regret_curve"].items():
                    assert np.array_equal(info["regret_curve"][i][k], v)
    with pytest.raises(RuntimeError, match="ended"):
        venv.step(np.zeros(3, dtype=np.int64))


def test_vector_env_rejects_bad_actions() -> None:
    env = FairLinearBanditVectorEnv(num_envs=3, horizon=5, n_arms=10, dim=3)
    env.reset(seed=[1, 2, 3])
    for bad in ([0, 1, 10], [0, 1], np.array([0, -1, 2]), np.array([0, 1, -3], dtype=np.int32), np.array([0.0, 1.0, 2.0])):
        with pytest.raises(ValueError, match="action space"):
            env.step(bad)
    env.step(np.array([0, 1, 9], dtype=np.int32))
    assert not env.reset(seed=1)[0]["arms"].flags.writeable


def test_twins_check_arguments_as_the_single_agents() -> None:
    from icmlgym.agents.fairbandit_vector import VectorFairLinBanditUCB
    from icmlgym.baselines.fairbandit_vector import VectorLinTSAgent, VectorLinUCBAgent

    with pytest.raises(ValueError, match="uniform_mix"):
        VectorFairLinBanditUCB(uniform_mix=2.0)
    with pytest.raises(TypeError, match="fixes base"):
        VectorFairLinBanditUCB(base="pe")
    with pytest.raises(ValueError, match="reg > 0"):
        VectorLinUCBAgent(reg=0.0)
    with pytest.raises(ValueError, match="scale"):
        VectorLinTSAgent(scale=-1.0)


def test_cli_batch_seeds_runs_the_vector_path(monkeypatch) -> None:
    monkeypatch.setattr(batched, "execute", no_fallback)
    records = icmlgym.run(ENV, "fairbandit-fairlin-ucb", seeds=3, env_kwargs={"horizon": 200, "n_arms": 20, "dim": 4}, batch_seeds=True)
    assert [r.seed for r in records] == [0, 1, 2] and all(r.status == "ok" for r in records)


def test_batched_on_the_process_executor_equals_single_runs() -> None:
    kw = {"horizon": 200, "n_arms": 20, "dim": 4}
    single = icmlgym.run(ENV, "fairbandit-linucb", seeds=3, env_kwargs=kw)
    records = icmlgym.run(ENV, "fairbandit-linucb", seeds=3, env_kwargs=kw, executor="process", workers=1, batch_seeds=True)
    assert [comparable(r) for r in records] == [comparable(r) for r in single]


@pytest.mark.parametrize("noise", ["gaussian", "bernoulli", "clipped"])
def test_step_block_equals_its_steps(noise: str) -> None:
    kw = {"horizon": 60, "n_arms": 12, "dim": 3, "noise": noise}
    seeds = [3, 4, 5, 6]
    stepped, blocked = FairLinearBanditVectorEnv(num_envs=4, **kw), FairLinearBanditVectorEnv(num_envs=4, **kw)
    stepped.reset(seed=seeds)
    blocked.reset(seed=seeds)
    actions = np.random.default_rng(1).integers(0, 12, (60, 4))
    t = 0
    for size in (1, 7, 20, 32):  # the last block ends the episodes
        assert blocked.steps_left == 60 - t
        obs_b, r_b, term_b, trunc_b, info_b = blocked.step_block(actions[t:t + size])
        assert r_b.shape == (size, 4)
        for s in range(size):
            obs, r, term, trunc, info = stepped.step(actions[t + s])
            assert r.tobytes() == r_b[s].tobytes()
        t += size
        assert obs["last_reward"].tobytes() == obs_b["last_reward"].tobytes()
        assert np.array_equal(term, term_b) and np.array_equal(trunc, trunc_b)
        assert np.array_equal(info["cost"]["env_steps"], info_b["cost"]["env_steps"])
    assert trunc_b.all() and blocked.steps_left == 0
    assert {k: v.tobytes() for k, v in info["metrics"].items()} == {k: v.tobytes() for k, v in info_b["metrics"].items()}
    for k, v in info["regret_curve"][2].items():
        assert np.array_equal(info_b["regret_curve"][2][k], v)


def test_step_block_rejects_bad_blocks() -> None:
    env = FairLinearBanditVectorEnv(num_envs=3, horizon=5, n_arms=10, dim=3)
    assert env.steps_left == 0  # before reset
    env.reset(seed=[1, 2, 3])
    for bad in (np.zeros(3, dtype=np.int64), np.zeros((0, 3), dtype=np.int64), np.zeros((2, 2), dtype=np.int64),
                np.array([[0, 1, 10]]), np.array([[0, -1, 2]]), np.array([[0.0, 1.0, 2.0]])):
        with pytest.raises(ValueError, match="block of actions"):
            env.step_block(bad)
    with pytest.raises(ValueError, match="crosses the horizon: 5 steps are left"):
        env.step_block(np.zeros((6, 3), dtype=np.int64))
    env.step_block(np.array([[0, 1, 9]] * 5, dtype=np.int32))
    with pytest.raises(RuntimeError, match="ended"):
        env.step_block(np.zeros((1, 3), dtype=np.int64))


@pytest.mark.parametrize(("agent", "max_steps"), [("fairbandit-fairlin-pe", None), ("fairbandit-fairlin-pe", 333),
                                                  ("fairbandit-linnash", None), ("fairbandit-pe", 250)])
def test_blocks_of_steps_give_the_records_of_steps(agent: str, max_steps, monkeypatch) -> None:
    # the batched loop steps phase queues a block at a time: the same episodes as stepping them one by one
    from icmlgym.agents.loading import load_agent
    from icmlgym.agents.protocol import AgentSpec
    from icmlgym.agents.vector import vector_class

    kw = {"horizon": 500, "n_arms": 30, "dim": 4}
    seeds = list(range(6))
    calls = []

    def episode(blocks: bool):
        venv = FairLinearBanditVectorEnv(num_envs=len(seeds), **kw)
        if blocks:
            step_block = venv.step_block
            venv.step_block = lambda a: calls.append(len(a)) or step_block(a)
        else:
            venv.step_block = None
        loaded = load_agent(agent)
        twin = vector_class(loaded.cls)(**loaded.kwargs)
        spec = AgentSpec(ENV, venv.single_observation_space, venv.single_action_space, None, kw, "smoke", 0, None, "cpu")
        return batched._batched_episode(venv, twin, seeds, spec, 0, max_steps)

    stepped, blocked = episode(False), episode(True)
    assert len(calls) >= 2 and sum(calls) > 200  # most rounds came in blocks, across phase ends
    for s, b in zip(stepped, blocked):
        s.wall_time = b.wall_time = 0.0
        assert s == b
    assert blocked[0].length == (max_steps or kw["horizon"])
