"""One current run per run key: reruns replace or are skipped, migration, delete, concurrent writers,
and run keys that follow the code the agent and the env import."""

from __future__ import annotations

import multiprocessing as mp
import shutil
import sqlite3

import pytest

import icmlgym
from icmlgym import codehash
from icmlgym.leaderboard import Leaderboard, schema
from icmlgym.runner.loop import RunTask, execute, task_key

from .conftest import BANDIT, make_record, write_v1_store


def test_a_rerun_replaces_the_stored_run_of_its_key(store_path):
    with Leaderboard(store_path) as board:
        first = [make_record("a", s, [1.0]) for s in range(3)]
        assert board.put(first).added == 3
        again = [make_record("a", s, [2.0]) for s in range(3)]  # same keys, new run ids
        assert {r.run_key for r in again} == {r.run_key for r in first}
        result = board.put(again)
        assert (result.added, result.replaced, result.skipped) == (0, 3, 0)
        assert "3 replacing" in result.describe()
        runs = board.runs()
        assert len(runs) == 3 and set(runs["run_id"]) == {r.run_id for r in again}
        t = board.table(env=BANDIT).set_index("entry")
        assert t.loc["a", "seeds"] == 3 and t.loc["a", "mean"] == pytest.approx(2.0)
        # episodes of the replaced runs are gone too
        assert set(board.episodes()["run_id"]) == {r.run_id for r in again}


def test_skip_keeps_the_stored_run_and_the_same_run_is_unchanged(store_path):
    with Leaderboard(store_path) as board:
        first = [make_record("a", s, [1.0]) for s in range(2)]
        board.add(first)
        result = board.put([make_record("a", s, [5.0]) for s in range(3)], on_conflict="skip")
        assert (result.added, result.replaced, result.skipped) == (1, 0, 2)
        assert board.put(first).unchanged == 2
        assert board.table(env=BANDIT).iloc[0]["mean"] == pytest.approx((1 + 1 + 5) / 3)
        with pytest.raises(ValueError, match="on_conflict"):
            board.put(first, on_conflict="keep-both")


def test_a_batch_repeating_a_key_stores_its_last_record(store_path):
    with Leaderboard(store_path) as board:
        assert board.add([make_record("a", 0, [1.0]), make_record("a", 0, [3.0])]) == 1
        assert board.table(env=BANDIT).iloc[0]["mean"] == pytest.approx(3.0)


def test_the_run_key_covers_entry_env_kwargs_tier_seed_and_code():
    base = make_record("a", 0, [1.0])
    variants = [
        make_record("b", 0, [1.0]),
        make_record("a", 1, [1.0]),
        make_record("a", 0, [1.0], env_kwargs={"horizon": 50}),
        make_record("a", 0, [1.0], tier="standard"),
        make_record("a", 0, [1.0], agent_kwargs={"c": 2}),
        make_record("a", 0, [1.0], source_hash="h1"),
        make_record("a", 0, [1.0], device={"requested": "cuda", "type": "cuda", "name": "H100"}),
    ]
    keys = {base.run_key} | {v.run_key for v in variants}
    assert len(keys) == 1 + len(variants)
    assert make_record("a", 0, [9.0]).run_key == base.run_key  # results are not part of the key
    with_code = make_record("a", 0, [1.0])
    with_code.code_hash = "0123456789abcdef"
    assert with_code.run_key != base.run_key


def test_migration_keeps_one_run_per_key_and_adds_a_unique_index(store_path):
    dupes = [make_record("a", 0, [1.0], status="failed"), make_record("a", 0, [2.0]), make_record("a", 0, [3.0]), make_record("a", 1, [4.0])]
    for i, r in enumerate(dupes):
        r.timestamp = f"2026-01-01T00:00:0{i}+00:00"  # the failed run is not the newest, yet an ok run wins
    dupes[0].timestamp = "2026-01-01T00:00:09+00:00"
    write_v1_store(f"sqlite:///{store_path}", dupes)
    with Leaderboard(store_path) as board:
        assert board.schema_version == schema.SCHEMA_VERSION
        runs = board.runs()
        assert len(runs) == 2 and runs["run_key"].is_unique
        # of the three runs of seed 0, the newest successful one stays
        assert runs.set_index("seed").loc[0, "run_id"] == dupes[2].run_id
        meta = dict(sqlite3.connect(store_path).execute("SELECT key, value FROM icmlgym_meta").fetchall())
        assert meta["deduplicated_on_migration_to_4"] == "2"
    con = sqlite3.connect(store_path)
    assert con.execute("SELECT COUNT(*) FROM icmlgym_episodes").fetchone()[0] == 2
    with pytest.raises(sqlite3.IntegrityError):
        con.execute("INSERT INTO icmlgym_runs SELECT * FROM icmlgym_runs LIMIT 1")
    con.close()


def test_delete_an_entry_or_a_selection(store_path):
    with Leaderboard(store_path) as board:
        board.add([make_record(a, s, [1.0]) for a in ("ucb1", "random") for s in range(3)])
        board.add([make_record("ucb1", s, [1.0], agent_kwargs={"c": 2}) for s in range(2)])
        assert board.delete("ucb1{c:2}", dry_run=True) == 2 and len(board) == 8
        assert board.delete("ucb1{c:2}") == 2
        with pytest.raises(ValueError, match="did you mean ucb1"):
            board.delete("ucb2")
        with pytest.raises(ValueError, match="needs an entry or a filter"):
            board.delete()
        assert board.delete(agent="random", env=BANDIT) == 3
        assert set(board.runs()["agent_name"]) == {"ucb1"} and len(board.episodes()) == 3


def _write_same_keys(path: str, barrier, worker: int) -> None:
    board = Leaderboard(path)
    barrier.wait()
    for s in range(6):  # one transaction per run, as a driver stores them
        board.add(make_record("a", s, [float(worker)]))
    board.close()


def test_four_concurrent_writers_of_the_same_keys_store_one_run_per_key(store_path):
    Leaderboard(store_path).close()
    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(4)
    procs = [ctx.Process(target=_write_same_keys, args=(str(store_path), barrier, w)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    with Leaderboard(store_path) as board:
        runs = board.runs()
        assert len(runs) == 6 and sorted(runs["seed"]) == list(range(6))
        assert board.table(env=BANDIT).iloc[0]["seeds"] == 6


# -- code hashes ------------------------------------------------------------------------------


def _reference_task() -> RunTask:
    c = icmlgym.card(BANDIT)
    return RunTask(c.id, c.reference_agent, 0)


def test_changing_a_module_the_reference_agent_imports_changes_its_key(tmp_path, monkeypatch):
    task = _reference_task()
    before = task_key(task)
    agent_files = icmlgym.load_agent(task.agent).code_files
    assert "icmlgym.agents.protocol" in agent_files  # imported by the agent's module
    real = codehash._module_file

    def patched(target: str, edit: str):
        copy = tmp_path / target.replace(".", "_") / real(target).name
        copy.parent.mkdir(exist_ok=True)
        shutil.copy(real(target), copy)
        copy.write_text(copy.read_text() + edit)
        monkeypatch.setattr(codehash, "_module_file", lambda name: copy if name == target else real(name))

    patched("icmlgym.agents.protocol", "\nCHANGED = True\n")
    changed = task_key(task)
    assert changed != before
    monkeypatch.setattr(codehash, "_module_file", real)
    assert task_key(task) == before
    # a module neither the agent nor the Bandit env imports leaves the key alone
    unrelated = "icmlgym.envs.sketch.sketches"
    assert unrelated not in agent_files and unrelated not in codehash.env_modules(icmlgym.card(BANDIT).entry_point)
    patched(unrelated, "\nCHANGED = True\n")
    assert task_key(task) == before


def test_changing_the_env_source_changes_the_key_and_the_records_env_hash(tmp_path, monkeypatch):
    task = _reference_task()
    rec = execute(RunTask(BANDIT, "random", 0, episodes=1))
    entry = icmlgym.card(BANDIT).entry_point
    assert rec.status == "ok" and rec.env_source_hash == codehash.env_source_hash(entry) != ""
    assert rec.code_hash and rec.run_key == task_key(RunTask(BANDIT, "random", 0, episodes=1))
    before = task_key(task)
    module = entry.partition(":")[0]
    real = codehash._module_file
    copy = tmp_path / real(module).name
    copy.write_text(real(module).read_text() + "\n# behaviour-neutral edit\n")
    monkeypatch.setattr(codehash, "_module_file", lambda name: copy if name == module else real(name))
    assert task_key(task) != before and codehash.env_source_hash(entry) != rec.env_source_hash


def test_a_file_agent_keys_on_its_file_and_what_it_imports(tmp_path):
    f = tmp_path / "my_agent.py"
    f.write_text("from icmlgym.baselines.generic import RandomAgent\n\nclass Mine(RandomAgent):\n    name = 'mine'\n")
    files = icmlgym.load_agent(f"{f}:Mine").code_files
    assert "icmlgym.baselines.generic" in files and any(p == f for p in files.values())
    k1 = task_key(RunTask(BANDIT, f"{f}:Mine", 0))
    f.write_text(f.read_text() + "# edited\n")
    assert task_key(RunTask(BANDIT, f"{f}:Mine", 0)) != k1
