"""Isolated runs of several seeds in one vector env (``run --isolate --batch-seeds``): one sandbox, one
round trip per step for every seed, and each seed's record equal to its single isolated run's."""

from __future__ import annotations

from icmlgym.runner.batched import BatchTask, execute_batch, group_tasks
from icmlgym.runner.loop import RunTask, execute
from icmlgym.runner.sandbox import SandboxOptions
from icmlgym.runner.submission import identify
from tests.security.conftest import ADVERSARIES, BANDIT, SECRET, SHORT, side_by_side

SEEDS = (0, 1, 2)


def tasks(agent: str, seeds: tuple[int, ...] = SEEDS, **options) -> list[RunTask]:
    spec = f"{ADVERSARIES}:{agent}" if agent[:1].isupper() else agent
    opts = SandboxOptions(**{"mode": "auto", "call_timeout": 30.0, "load_timeout": 30.0, **options})
    iso = identify(spec, None, opts)
    return [RunTask(BANDIT, spec, s, "smoke", dict(SHORT), {}, 2, isolation=iso) for s in seeds]


def same_runs(batched, single) -> None:
    assert [r.seed for r in batched] == [r.seed for r in single]
    for b, s in zip(batched, single):
        assert b.status == s.status == "ok", (b.error, s.error)
        assert [e.metrics for e in b.episodes] == [e.metrics for e in s.episodes]
        assert [(e.ret, e.length, e.cost) for e in b.episodes] == [(e.ret, e.length, e.cost) for e in s.episodes]
        for field in ("agent_name", "agent_entry_point", "agent_source_hash", "code_hash", "env_source_hash", "env_spec", "run_key"):
            assert getattr(b, field) == getattr(s, field), field


def test_seeds_of_an_isolated_entry_share_one_sandbox_and_one_round_trip_per_step():
    group = tasks("ucb1")
    (batch,) = group_tasks(group)
    assert isinstance(batch, BatchTask) and batch.seeds == list(SEEDS)
    batched, *single = side_by_side(lambda: execute_batch(batch), *[lambda t=t: execute(t) for t in group])
    same_runs(batched, single)
    steps = sum(e.length for e in batched[0].episodes)
    assert all(r.isolation["batched"] == len(SEEDS) for r in batched)
    # one frame out per step for all seeds (plus hello, the resets' first act and close); singly, one per step per seed
    assert batched[0].isolation["frames"] <= steps + 4
    assert sum(r.isolation["frames"] for r in single) >= len(SEEDS) * steps


def test_hidden_instances_differ_per_seed_so_such_a_batch_runs_singly():
    group = tasks("ucb1", (0, 1), hidden_seeds=SECRET)
    batched, *single = side_by_side(lambda: execute_batch(group), *[lambda t=t: execute(t) for t in group])
    assert all("batched" not in r.isolation and r.isolation["seeds"] == "hidden" for r in batched)
    same_runs(batched, single)


def test_an_agent_without_a_vector_twin_runs_singly_and_a_failing_twin_fails_every_seed():
    records, failing = side_by_side(lambda: execute_batch(tasks("Impersonator", (0, 1))),  # a RandomAgent subclass: no twin of its own
                                    lambda: execute_batch(tasks("FailingTwin")))
    assert all(r.status == "ok" and "batched" not in r.isolation for r in records)
    assert len(failing) == len(SEEDS) and all(r.isolation["batched"] == len(SEEDS) for r in failing)
    assert all(r.status == "failed" and r.error.startswith("the agent raised: RuntimeError: the vector twin failed") for r in failing)
    assert all(r.episodes == [] for r in failing)
