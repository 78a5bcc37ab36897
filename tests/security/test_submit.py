"""Attacks through ``icmlgym submit``: the store's other entries stay byte-identical, nothing the
agent prints reaches the command's output, and the submitting process never imports the agent."""

from __future__ import annotations

import shutil
import sqlite3
import time

import pytest
from typer.testing import CliRunner

from icmlgym import catalog
from icmlgym.leaderboard import Leaderboard
from icmlgym.runner.loop import RunTask, execute
from tests.security.conftest import ADVERSARIES, BANDIT

SUITE = "security-test"


@pytest.fixture(autouse=True)
def one_env_suite(monkeypatch):
    monkeypatch.setitem(catalog._SUITES, SUITE, [(BANDIT, {"horizon": 300})])


def submit(*args: str):
    from icmlgym.cli import app

    return CliRunner().invoke(app, ["submit", *args, "--suite", SUITE, "--seeds", "1", "--workers", "1"], catch_exceptions=False)


def dump(path, exclude_agent: str) -> list:
    """Every stored row of the runs not by ``exclude_agent``, as SQLite returns them (bytes for bytes)."""
    con = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        ids = [r[0] for r in con.execute("SELECT run_id FROM icmlgym_runs WHERE agent_name != ? ORDER BY run_id", (exclude_agent,))]
        marks = ",".join("?" * len(ids))
        out = []
        for table in ("icmlgym_runs", "icmlgym_episodes", "icmlgym_episode_values"):
            out += con.execute(f"SELECT * FROM {table} WHERE run_id IN ({marks}) ORDER BY 1, 2", ids).fetchall()
        return out
    finally:
        con.close()


@pytest.fixture
def store_with_entries(tmp_path):
    store = tmp_path / "leaderboard.db"
    with Leaderboard(store) as b:
        for seed in (0, 1):
            b.add(execute(RunTask(BANDIT, "ucb1", seed, "smoke", {"horizon": 300}, episodes=1)))
    return store


def test_an_agent_next_to_the_store_cannot_write_it(store_with_entries, tmp_path):
    agent = tmp_path / "opener.py"  # in the store's own folder: the sandbox masks the store there
    shutil.copy(ADVERSARIES, agent)
    before = dump(store_with_entries, "opener:StoreOpener")
    r = submit(f"{agent}:StoreOpener", "--store", str(store_with_entries))
    assert r.exit_code == 0, r.output
    assert dump(store_with_entries, "opener:StoreOpener") == before
    with Leaderboard(store_with_entries) as b:
        rec = b.records(agent="opener:StoreOpener")[0]
        assert len(b) == 3 and b.damaged() == {}
    assert "written: []" in rec.log
    assert str(store_with_entries) not in rec.log  # the store's path never showed up


def test_impersonation_and_output_flooding_through_submit(store_with_entries, tmp_path):
    before = dump(store_with_entries, "adversaries:Printer")
    r = submit(f"{ADVERSARIES}:Impersonator", "--name", "bandit-thompson", "--store", str(store_with_entries))
    assert r.exit_code == 2 and "reserved" in r.output
    r = submit(f"{ADVERSARIES}:Printer", "--store", str(store_with_entries), "--format", "csv")
    assert r.exit_code == 0
    assert len(r.output) < 20_000 and "xxxxxxxxxx" not in r.output
    assert dump(store_with_entries, "adversaries:Printer") == before
    with Leaderboard(store_with_entries) as b:
        runs = b.runs(agent="adversaries:Printer")
        assert list(runs["status"]) == ["ok"] and runs["log"].str.len().max() < 70_000
        assert set(b.runs()["agent_name"]) == {"ucb1", "adversaries:Printer"}


def test_an_import_time_sleep_is_a_timeout_not_a_hang(tmp_path):
    agent = tmp_path / "sleepy.py"
    agent.write_text("import time\ntime.sleep(3600)\nfrom icmlgym.baselines.generic import RandomAgent\nclass Sleepy(RandomAgent):\n    pass\n")
    t0 = time.monotonic()
    r = submit(str(agent), "--timeout", "5", "--store", str(tmp_path / "s.db"))
    assert time.monotonic() - t0 < 40
    assert r.exit_code == 1
    with Leaderboard(tmp_path / "s.db") as b:
        runs = b.runs()
        assert list(runs["agent_name"]) == ["sleepy"] and runs["status"].iloc[0] in ("timeout", "failed")


def test_run_isolate_scores_as_a_local_run(tmp_path):
    from icmlgym.cli import app

    stores = {}
    for flag in ([], ["--isolate"]):
        store = tmp_path / f"lb{len(flag)}.db"
        args = ["run", BANDIT, "--agent", "ucb1", "--seeds", "2", "-e", "horizon=300", "--executor", "inprocess", "--store", str(store), *flag]
        r = CliRunner().invoke(app, args, catch_exceptions=False)
        assert r.exit_code == 0, r.output
        with Leaderboard(store, read_only=True) as b:
            stores[bool(flag)] = b.episodes().sort_values(["seed", "episode"])
            if flag:
                assert set(b.runs()["seeds"]) == {"public"} and set(b.runs()["sandbox"]) <= {"bwrap", "none"}
    cols = ["seed", "episode", "return", "length", "pseudo_regret", "cumulative_reward"]
    assert stores[True][cols].to_numpy().tolist() == stores[False][cols].to_numpy().tolist()
