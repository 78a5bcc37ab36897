"""Batched seeds whose episodes end at different steps (a vector env with ``ragged_ends = True``)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import icmlgym
from icmlgym.catalog import TaskCard, Tier
from icmlgym.runner import batched
from icmlgym.runner.api import make_tasks
from tests.core.test_batched import comparable

SEEDS = [0, 1, 2, 7, 11, 123456]
RAGGED = TaskCard(
    id="icmlgym/RaggedWalkTest-v0", family="test", paper="-", primary_metric="total",
    entry_point="tests.core.ragged_env:RaggedWalkEnv", vector_entry_point="tests.core.ragged_env:RaggedWalkVectorEnv",
    tiers={t: Tier(episodes=2) for t in ("smoke", "standard", "full")}, baselines=("random",),
)
LOCKSTEP = dataclasses.replace(RAGGED, id="icmlgym/LockstepWalkTest-v0", vector_entry_point="tests.core.ragged_env:LockstepWalkVectorEnv")


@pytest.fixture
def cards():
    for c in (RAGGED, LOCKSTEP):
        icmlgym.register(c)
    yield
    for c in (RAGGED, LOCKSTEP):
        icmlgym.unregister(c.id)


def no_fallback(monkeypatch) -> None:
    monkeypatch.setattr(batched, "execute", lambda task: pytest.fail(f"the batch fell back to a single run: {task}"))


@pytest.mark.parametrize("agent", ["random", "ucb1", "epsilon-greedy"])
@pytest.mark.parametrize("target", [6.0, 3.0])
def test_ragged_batch_records_equal_single_runs(cards, agent: str, target: float, monkeypatch) -> None:
    tasks = make_tasks(RAGGED.id, agent, seeds=SEEDS, env_kwargs={"target": target}, episodes=2)
    single = [batched.execute(t) for t in tasks]
    no_fallback(monkeypatch)
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in single + records), [r.error for r in single + records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]
    # the seeds really end apart (for random, some by the target, terminated, and some by their limit, truncated)
    assert len({e.length for r in records for e in r.episodes}) > 1
    if agent == "random" and target == 6.0:
        assert {e.metrics["hit"] for r in records for e in r.episodes} == {0.0, 1.0}
    assert all(e.cost["env_steps"] == e.length == e.metrics["length"] for r in records for e in r.episodes)


def test_ragged_batch_cut_by_max_steps_equals_single_runs(cards, monkeypatch) -> None:
    # max_steps 9: seeds whose episode ended before keep their metrics; the cut ones have none, as singly
    tasks = make_tasks(RAGGED.id, "random", seeds=SEEDS, env_kwargs={"target": 20.0}, episodes=2)
    cut = dataclasses.replace(RAGGED, tiers={**RAGGED.tiers, "smoke": Tier(episodes=2, max_steps=9)})
    icmlgym.unregister(RAGGED.id)
    icmlgym.register(cut)
    tasks = [dataclasses.replace(t, card=cut) for t in tasks]
    single = [batched.execute(t) for t in tasks]
    no_fallback(monkeypatch)
    records = batched.execute_batch(tasks)
    assert [comparable(r) for r in records] == [comparable(r) for r in single]
    eps = [e for r in records for e in r.episodes]
    assert any(e.length == 9 and not e.metrics for e in eps) and any(e.length < 9 and e.metrics for e in eps)


def test_a_vector_env_without_ragged_ends_still_raises_and_falls_back(cards) -> None:
    from icmlgym.agents.protocol import AgentSpec
    from icmlgym.baselines.vector import VectorRandomAgent
    from tests.core.ragged_env import LockstepWalkVectorEnv

    venv = LockstepWalkVectorEnv(num_envs=len(SEEDS))
    spec = AgentSpec(LOCKSTEP.id, venv.single_observation_space, venv.single_action_space, LOCKSTEP)
    with pytest.raises(RuntimeError, match="different steps"):
        batched._batched_episode(venv, VectorRandomAgent(), SEEDS, spec, 0, None)
    tasks = make_tasks(LOCKSTEP.id, "random", seeds=SEEDS, episodes=2)
    assert [comparable(r) for r in batched.execute_batch(tasks)] == [comparable(r) for r in map(batched.execute, tasks)]


def test_ragged_batch_on_the_process_executor_equals_single_runs(cards) -> None:
    single = icmlgym.run(RAGGED.id, "ucb1", seeds=SEEDS[:4], episodes=2)
    records = icmlgym.run(RAGGED.id, "ucb1", seeds=SEEDS[:4], episodes=2, executor="process", workers=1, batch_seeds=True)
    assert all(r.status == "ok" for r in records), [r.error for r in records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]


def test_ragged_batch_isolated_equals_single_isolated_runs(cards) -> None:
    from icmlgym.runner.loop import execute
    from icmlgym.runner.sandbox import SandboxOptions
    from icmlgym.runner.submission import identify

    iso = identify("random", None, SandboxOptions(mode="auto", call_timeout=30.0, load_timeout=30.0))
    tasks = [dataclasses.replace(t, isolation=iso) for t in make_tasks(RAGGED.id, "random", seeds=SEEDS[:4], episodes=2)]
    records = batched.execute_batch(tasks)
    single = [execute(t) for t in tasks]
    assert all(r.isolation.get("batched") == 4 for r in records), [r.error for r in records]
    for b, s in zip(records, single):
        assert b.status == s.status == "ok", (b.error, s.error)
        assert [(e.ret, e.length, e.metrics, e.cost) for e in b.episodes] == [(e.ret, e.length, e.metrics, e.cost) for e in s.episodes]
    assert len({e.length for r in records for e in r.episodes}) > 2
