"""Batched seeds (``batch_seeds=True``): one record per seed, equal to the single runs' records."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.agents.vector import vector_class
from icmlgym.baselines.generic import RandomAgent, UCB1Agent
from icmlgym.runner.batched import BatchTask, group_tasks
from icmlgym.runner.api import make_tasks

BANDIT_AGENTS = ("random", "ucb1", "epsilon-greedy", "bandit-thompson")
SEEDS = [0, 1, 2, 7, 11, 123456]


def comparable(record) -> dict:
    """A record without what differs between any two executions (ids, timestamps, wall times)."""
    d = record.to_dict()
    for k in ("run_id", "timestamp", "wall_time"):
        d.pop(k)
    for e in d["episodes"]:
        e.pop("wall_time")
    return d


@pytest.mark.parametrize("agent", BANDIT_AGENTS)
@pytest.mark.parametrize(
    "env_kwargs",
    [
        {"horizon": 300},
        # two arms with the same mean: UCB1 and epsilon-greedy break ties with their generators
        {"horizon": 200, "means": [0.5, 0.5, 0.2]},
    ],
)
def test_batched_records_equal_single_runs(agent: str, env_kwargs: dict, monkeypatch) -> None:
    from icmlgym.runner import batched as batched_module

    single = icmlgym.run("icmlgym/Bandit-v0", agent, seeds=SEEDS, env_kwargs=env_kwargs, episodes=2)

    def no_fallback(task):
        raise AssertionError(f"the batch fell back to a single run: {task}")

    monkeypatch.setattr(batched_module, "execute", no_fallback)  # the records below must come from the vector path
    batched = icmlgym.run("icmlgym/Bandit-v0", agent, seeds=SEEDS, env_kwargs=env_kwargs, episodes=2, batch_seeds=True)
    assert [r.seed for r in batched] == [r.seed for r in single]
    assert all(r.status == "ok" for r in batched), [r.error for r in batched]
    for s, b in zip(single, batched):
        assert comparable(b) == comparable(s)
    # the seeds really differ from one another (a batch that repeated one seed would not)
    assert len({r.episodes[0].metrics["pseudo_regret"] for r in batched}) > 1


def test_long_batched_episode_sums_regret_as_the_single_env(monkeypatch) -> None:
    # the vector env sums the pulled arms' gaps at the end (row after row), the single env step by step
    from icmlgym.runner import batched as batched_module

    tasks = make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=SEEDS[:3], env_kwargs={"horizon": 8000, "n_arms": 37})
    single = [batched_module.execute(t) for t in tasks]
    monkeypatch.setattr(batched_module, "execute", lambda task: pytest.fail(f"fell back to a single run: {task}"))
    assert [comparable(r) for r in batched_module.execute_batch(tasks)] == [comparable(r) for r in single]


def test_thompson_with_small_priors_batched_equals_single_runs(monkeypatch) -> None:
    # priors below 1 take the boosted Gamma path (G(s + 1) * U**(1/s)) until the arms are pulled
    from icmlgym.runner import batched as batched_module

    tasks = make_tasks("icmlgym/Bandit-v0", "bandit-thompson", seeds=SEEDS[:4], env_kwargs={"horizon": 150},
                       agent_kwargs={"alpha": 0.3, "beta": 0.7}, episodes=2)
    single = [batched_module.execute(t) for t in tasks]
    monkeypatch.setattr(batched_module, "execute", lambda task: pytest.fail(f"fell back to a single run: {task}"))
    records = batched_module.execute_batch(tasks)
    assert all(r.status == "ok" for r in single + records), [r.error for r in single + records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]


def test_batched_on_the_process_executor_equals_single_runs() -> None:
    single = icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=4, env_kwargs={"horizon": 200})
    batched = icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=4, env_kwargs={"horizon": 200}, executor="process", workers=1, batch_seeds=True)
    assert [comparable(r) for r in batched] == [comparable(r) for r in single]


def test_agents_without_a_twin_run_singly_with_the_same_records() -> None:
    # an agent given as a class (not a name) is never grouped: the ordinary runs
    a = icmlgym.run("icmlgym/Bandit-v0", UCB1Agent, seeds=2, env_kwargs={"horizon": 50}, batch_seeds=True)
    b = icmlgym.run("icmlgym/Bandit-v0", UCB1Agent, seeds=2, env_kwargs={"horizon": 50})
    assert [comparable(r) for r in a] == [comparable(r) for r in b]


def test_a_subclass_does_not_inherit_its_parents_twin() -> None:
    class Mine(RandomAgent):
        name = "mine"

    assert vector_class(RandomAgent) is not None
    assert vector_class(Mine) is None


def test_grouping_keeps_entries_apart() -> None:
    tasks = make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=3) + make_tasks("icmlgym/Bandit-v0", "random", seeds=2)
    tasks += make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=[9], env_kwargs={"horizon": 10})
    groups = group_tasks(tasks)
    assert [type(g).__name__ for g in groups] == ["BatchTask", "BatchTask", "RunTask"]
    assert groups[0].seeds == [0, 1, 2] and groups[1].seeds == [0, 1]


def test_batch_seeds_refuses_ray() -> None:
    with pytest.raises(ValueError, match="not on ray"):
        icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=2, executor="ray", batch_seeds=True)


def test_vector_env_rejects_bad_actions() -> None:
    from icmlgym.envs.bandit.vector import BernoulliBanditVectorEnv

    env = BernoulliBanditVectorEnv(num_envs=3, horizon=5)
    env.reset(seed=[1, 2, 3])
    with pytest.raises(ValueError, match="action space"):
        env.step([0, 1, 10])
    with pytest.raises(ValueError, match="action space"):
        env.step([0, 1])
    for bad in (np.array([0, -1, 2]), np.array([0, 1, -3], dtype=np.int32), np.array([0.0, 1.0, 2.0])):  # negatives, floats
        with pytest.raises(ValueError, match="action space"):
            env.step(bad)
    env.step(np.array([0, 1, 9], dtype=np.int32))  # other integer dtypes are accepted
    assert isinstance(BatchTask(make_tasks("icmlgym/Bandit-v0", "ucb1", seeds=2)).env_id, str)


VS_FTRL_AGENTS = ("games-exp3", "games-hedge", "ucb1", "epsilon-greedy", "random")


@pytest.mark.parametrize("agent", VS_FTRL_AGENTS)
@pytest.mark.parametrize(
    "env_kwargs",
    [
        {"horizon": 120},
        # three players, uniform opponents, Euclidean FTRL with a decaying step: every branch of the opponents
        {"horizon": 80, "n_players": 3, "n_actions": 4, "opponent_init": "uniform",
         "opponent_regularizer": "euclidean", "opponent_schedule": "sqrt"},
    ],
)
def test_vs_ftrl_batched_records_equal_single_runs(agent: str, env_kwargs: dict, monkeypatch) -> None:
    pytest.importorskip("networkx", reason="RepeatedGameVsFTRL-v0 needs the [games] extra: pip install 'icmlgym[games]'")
    from icmlgym.runner import batched

    tasks = make_tasks("icmlgym/RepeatedGameVsFTRL-v0", agent, seeds=SEEDS[:4], env_kwargs=env_kwargs, episodes=2)
    single = [batched.execute(t) for t in tasks]

    def no_fallback(task):
        raise AssertionError(f"the batch fell back to a single run: {task}")

    monkeypatch.setattr(batched, "execute", no_fallback)  # the records below must come from the vector path
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in records), [r.error for r in records]
    for s, b in zip(single, records):
        assert comparable(b) == comparable(s)
    assert len({r.episodes[0].metrics["learner_regret"] for r in records}) > 1


def test_episode_seeds_equal_episode_seed_seed_by_seed() -> None:
    from icmlgym.runner.rollout import episode_seed, episode_seeds

    seeds = [0, 1, 2, 2**31 - 1, 2**32 - 1, 2**32, 2**40 + 5, -1, -(2**40)] + np.random.default_rng(0).integers(0, 2**62, size=500).tolist()
    for episode in (-1, 0, 1, 4, 2**32 - 1, 2**32):  # the last: episode + 1 takes two words (seed by seed)
        for stream in ("env", "agent", "train"):
            assert episode_seeds(seeds, episode, stream) == [episode_seed(s, episode, stream) for s in seeds]
    assert episode_seeds([], 0, "env") == []


def test_the_main_job_batches_seeds_by_default(tmp_path, monkeypatch) -> None:
    """`icmlgym benchmark` plays each entry's seeds in one vector env unless told not to: the same records."""
    from typer.testing import CliRunner

    from icmlgym.cli import app
    from icmlgym.leaderboard.store import Store
    from icmlgym.runner import executors

    batches = []
    real = executors.execute_batch
    monkeypatch.setattr(executors, "execute_batch", lambda b: batches.append(len(b.tasks)) or real(b))
    stores = {}
    for flags in ([], ["--no-batch-seeds"]):
        path = tmp_path / f"lb{len(stores)}.db"
        r = CliRunner().invoke(app, ["benchmark", "--suite", "bandit", "--seeds", "2", "--executor", "inprocess",
                                     "--store", str(path), *flags])
        assert r.exit_code == 0, r.output
        stores[tuple(flags)] = {rec.run_key: comparable(rec) for rec in Store(path).iter_records()}
    assert batches and set(batches) == {2}  # the default run batched every entry's two seeds, the other none
    default, single = stores[()], stores[("--no-batch-seeds",)]
    assert len(default) == 8 and default.keys() == single.keys()
    for key in default:
        a, b = dict(default[key]), dict(single[key])
        for d in (a, b):
            d.pop("cost", None), d.pop("hardware", None)  # the batch's measured wall and CPU are divided among its seeds
        assert a == b
