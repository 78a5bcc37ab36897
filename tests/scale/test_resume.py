"""Resuming a sweep by run key: a restarted sweep skips the runs the leaderboard already holds."""

from __future__ import annotations

from icmlgym.leaderboard import Leaderboard
from icmlgym.runner.api import make_tasks, run_tasks, split_done
from icmlgym.runner.loop import task_key
from icmlgym.runner.ray_executor import RayExecutor
from tests.scale.conftest import BANDIT, agent

AGENTS = ("random", "ucb1", "epsilon-greedy", "bandit-thompson")


def test_interrupted_ray_sweep_resumes_without_redoing_finished_runs(ray_executor, tmp_path):
    tasks = [t for a in AGENTS for t in make_tasks(BANDIT, a, seeds=10)]
    board = Leaderboard(tmp_path / "lb.db")
    first = []
    sweep = ray_executor.imap(tasks)
    for rec in sweep:  # stream to the store as runs finish; the driver stops after 15
        board.add(rec)
        first.append(rec)
        if len(first) == 15:
            break
    sweep.close()  # cancels the runs still in flight
    assert len(board) == 15

    second = []
    out = run_tasks(tasks, "ray", skip_keys=board.run_keys(), on_record=lambda r: (second.append(r), board.add(r)))
    assert len(out) == len(second) == 25
    assert {r.run_key for r in second}.isdisjoint({r.run_key for r in first})
    runs = board.runs()
    assert len(runs) == 40 and runs["run_key"].nunique() == 40
    assert set(runs["run_key"]) == {task_key(t) for t in tasks}

    # a third start finds nothing left to do and starts no executor
    assert run_tasks(tasks, "ray", skip_keys=board.run_keys()) == []
    board.close()


def test_failed_runs_are_redone_on_resume_and_finished_ones_are_not(ray_executor, tmp_path):
    ok_tasks = make_tasks(BANDIT, "ucb1", seeds=3)
    bad = make_tasks(BANDIT, agent("AlwaysKillAgent"), seeds=[0])
    board = Leaderboard(tmp_path / "lb.db")
    ex = RayExecutor(max_retries=0)
    for rec in ex.imap(ok_tasks + bad):
        board.add(rec)
    assert sorted(board.runs()["status"]) == ["failed", "ok", "ok", "ok"]
    todo, skipped = split_done(ok_tasks + bad, board.run_keys())
    assert todo == bad and skipped == ok_tasks
    # run_keys(status=None) counts failed runs as done too, for a caller who does not want retries
    todo, _ = split_done(ok_tasks + bad, board.run_keys(status=None))
    assert todo == []
    board.close()


def test_task_key_is_the_key_of_the_record_the_run_produces(ray_executor):
    tasks = make_tasks(BANDIT, "ucb1", seeds=[4], env_kwargs={"horizon": 300}) + make_tasks(
        BANDIT, agent("KillOnceAgent"), seeds=[1], agent_kwargs={"marker": "/nonexistent-dir/never"}
    )
    # the kill-once run here fails to write its marker and is recorded failed; its key still matches
    records = {r.agent_name: r for r in ray_executor.imap(tasks)}
    assert records["ucb1"].run_key == task_key(tasks[0])
    assert records["kill-once"].status == "failed" and "FileNotFoundError" in records["kill-once"].error
    assert records["kill-once"].run_key == task_key(tasks[1])
