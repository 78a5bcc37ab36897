import time

import pytest

import icmlgym
from icmlgym.runner import RunRecord, episode_seed, make_tasks, run_tasks


def _metrics(records):
    return [(r.seed, [(e.ret, e.length, e.metrics, e.cost) for e in r.episodes]) for r in sorted(records, key=lambda r: r.seed)]


def test_run_record_contents():
    (rec,) = icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=[7])
    assert rec.status == "ok" and rec.error == ""
    assert rec.env_id == "icmlgym/Bandit-v0" and rec.agent_name == "ucb1" and rec.seed == 7 and rec.tier == "smoke"
    assert rec.env_spec["kwargs"] == {"horizon": 1000}
    assert len(rec.env_spec_hash) == 12 and len(rec.run_key) == 20
    assert len(rec.episodes) == 2
    assert rec.episodes[0].metrics.keys() >= {"pseudo_regret", "cumulative_reward"}
    assert rec.cost == {"env_steps": 2000.0}
    assert rec.wall_time > 0
    assert rec.hardware["cores"] >= 1 and rec.hardware["cpu"]
    assert "gpu" in rec.hardware
    assert rec.versions["gymnasium"] and rec.versions["numpy"] and rec.versions["python"]
    assert rec.timestamp and rec.run_id
    assert rec.agent_source_hash
    again = RunRecord.from_dict(rec.to_dict())
    assert again.to_dict() == rec.to_dict()


def test_same_seed_same_metrics_bit_for_bit_across_executors():
    inproc = icmlgym.run("icmlgym/Bandit-v0", "bandit-thompson", seeds=3)
    again = icmlgym.run("icmlgym/Bandit-v0", "bandit-thompson", seeds=3)
    pool = icmlgym.run("icmlgym/Bandit-v0", "bandit-thompson", seeds=3, executor="process", workers=2, timeout=120)
    assert _metrics(inproc) == _metrics(again) == _metrics(pool)
    assert {r.run_key for r in inproc} == {r.run_key for r in pool}
    other = icmlgym.run("icmlgym/Bandit-v0", "bandit-thompson", seeds=[3])
    assert _metrics(other)[0][1] != _metrics(inproc)[0][1]


def test_episode_seeds_are_distinct_streams():
    seeds = {episode_seed(s, e, k) for s in range(5) for e in range(-1, 5) for k in ("env", "agent", "train")}
    assert len(seeds) == 5 * 6 * 3


def test_env_kwargs_override_tier_and_episodes_override():
    (rec,) = icmlgym.run("icmlgym/Bandit-v0", "random", seeds=1, env_kwargs={"horizon": 50}, episodes=3)
    assert [e.length for e in rec.episodes] == [50, 50, 50]


def test_crashing_agent_is_recorded_and_others_go_on():
    # agent seeds derive from the run seed; CrashOnSeed crashes in the first episode whose agent seed is odd
    from icmlgym.runner.loop import episode_seed as es

    seeds = list(range(6))
    crashing = {s for s in seeds if es(s, 0, "agent") % 2 or es(s, 1, "agent") % 2}
    assert crashing and crashing != set(seeds)
    for executor in ("inprocess", "process"):
        recs = icmlgym.run("icmlgym/Bandit-v0", "tests.core.agents_for_tests:CrashOnSeed", seeds=seeds,
                           executor=executor, timeout=60)
        assert len(recs) == 6
        failed = {r.seed for r in recs if r.status == "failed"}
        assert failed == crashing, executor
        for r in recs:
            if r.status == "failed":
                assert "agent exploded on purpose" in r.error and len(r.episodes) < 2
                assert r.agent_name == "crash-on-odd"
            else:
                assert len(r.episodes) == 2


def test_hanging_agent_times_out_without_losing_other_runs():
    tasks = make_tasks("icmlgym/Bandit-v0", "tests.core.agents_for_tests:HangForever", [0])
    tasks += make_tasks("icmlgym/Bandit-v0", "ucb1", [0, 1, 2])
    seen = []
    t0 = time.monotonic()
    recs = run_tasks(tasks, executor="process", workers=2, timeout=3, on_record=seen.append)
    assert time.monotonic() - t0 < 60
    assert len(recs) == 4 and len(seen) == 4
    hang = [r for r in recs if r.agent_name == "hang"]
    assert len(hang) == 1 and hang[0].status == "timeout" and "timeout of 3 s" in hang[0].error
    assert all(r.status == "ok" for r in recs if r.agent_name == "ucb1")


def test_worker_that_dies_is_recorded_as_failed():
    tasks = make_tasks("icmlgym/Bandit-v0", "tests.core.agents_for_tests:SegfaultAgent", [0])
    tasks += make_tasks("icmlgym/Bandit-v0", "random", [0])
    recs = run_tasks(tasks, executor="process", workers=2, timeout=60)
    bad = [r for r in recs if r.status != "ok"]
    assert len(bad) == 1 and "worker process died (exit code 13)" in bad[0].error
    assert any(r.status == "ok" and r.agent_name == "random" for r in recs)


def test_agent_that_fails_to_import_becomes_failed_records():
    recs = icmlgym.run("icmlgym/Bandit-v0", "no_such_module_qq:Agent", seeds=2)
    assert [r.status for r in recs] == ["failed", "failed"]
    assert "cannot import module" in recs[0].error


def test_memory_limit_in_worker():
    recs = icmlgym.runner.run_tasks(
        make_tasks("icmlgym/Bandit-v0", "ucb1", [0]), executor="process", timeout=60, memory_limit_mb=4096
    )
    assert recs[0].status == "ok"


def test_bad_arguments():
    with pytest.raises(ValueError, match="no tier"):
        icmlgym.run("icmlgym/Bandit-v0", "ucb1", tier="gigantic")
    with pytest.raises(ValueError, match="at least one seed"):
        icmlgym.run("icmlgym/Bandit-v0", "ucb1", seeds=[])
    with pytest.raises(ValueError, match="unknown executor"):
        icmlgym.run("icmlgym/Bandit-v0", "ucb1", executor="threads")


def test_status_validation():
    with pytest.raises(ValueError, match="status"):
        RunRecord(env_id="x", agent_name="a", seed=0, tier="smoke", status="weird")


def test_inprocess_executor_honours_a_timeout():
    """An in-process run past its timeout is interrupted (SIGALRM) and recorded as timeout, and the
    next run of the sweep still runs; a task's own timeout overrides the executor's."""
    from icmlgym.runner import make_tasks, run_tasks

    (hang,) = make_tasks("icmlgym/Bandit-v0", "tests.core.agents_for_tests:HangForever", [0])
    hang.timeout = 1.0
    ok = make_tasks("icmlgym/Bandit-v0", "random", [0])
    recs = run_tasks([hang] + ok, executor="inprocess", timeout=None)
    assert [r.status for r in recs] == ["timeout", "ok"]
    assert "timeout of 1 s" in recs[0].error


def test_protocol_order_reset_train_then_reset_per_episode():
    """The order docs say (icmlgym/agents/protocol.py): reset, train once, then reset before each episode;
    each episode's spec is a frozen copy carrying its index."""
    import dataclasses

    from tests.core.agents_for_tests import RecordsCalls

    RecordsCalls.calls = []
    (rec,) = icmlgym.run("icmlgym/Bandit-v0", RecordsCalls, seeds=[0], episodes=2, executor="inprocess")
    assert rec.status == "ok", rec.error
    budget = icmlgym.card("icmlgym/Bandit-v0").tier("smoke").train_budget
    assert RecordsCalls.calls == [("reset", 0), ("train", budget), ("reset", 0), ("act", 0), ("reset", 1), ("act", 1)]
    spec = icmlgym.AgentSpec("x", None, None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        spec.episode = 3
