"""Integrity beyond SQLite's: content hashes, a damaged WAL, read-only opening, spilling finished runs."""

from __future__ import annotations

import shutil
import sqlite3

import pytest
from typer.testing import CliRunner

from icmlgym.leaderboard import Leaderboard, StoreError
from icmlgym.leaderboard.spill import SpillingWriter
from icmlgym.runner.loop import RunTask, execute
from tests.security.conftest import BANDIT


def runs(n: int, agent: str = "ucb1"):
    return [execute(RunTask(BANDIT, agent, s, "smoke", {"horizon": 100}, episodes=1)) for s in range(n)]


def leaderboard(*args: str):
    from icmlgym.cli import app

    return CliRunner().invoke(app, ["leaderboard", *args], catch_exceptions=False)


def test_a_flipped_bit_is_reported_as_damaged_and_never_scored(tmp_path):
    store = tmp_path / "lb.db"
    with Leaderboard(store) as b:
        b.add(runs(3))
        before = b.table(env=BANDIT, level="task").iloc[0]
    con = sqlite3.connect(store)
    rid, value = con.execute("SELECT run_id, value FROM icmlgym_episode_values WHERE name = 'pseudo_regret' ORDER BY run_id LIMIT 1").fetchone()
    import struct

    bits = struct.unpack("<q", struct.pack("<d", value))[0] ^ (1 << 40)  # one bit of the mantissa
    con.execute("UPDATE icmlgym_episode_values SET value = ? WHERE run_id = ? AND name = 'pseudo_regret'", (struct.unpack("<d", struct.pack("<q", bits))[0], rid))
    con.commit()
    con.close()
    with Leaderboard(store, read_only=True) as b:
        assert list(b.damaged()) == [rid]
        scored = b.run_scores(env=BANDIT).set_index("run_id")
        assert scored.loc[rid, "status"] == "damaged" and scored["score"].notna().sum() == 2
        after = b.table(env=BANDIT, level="task").iloc[0]
        assert after["seeds"] != before["seeds"] or after["mean"] != before["mean"]
    r = leaderboard("--store", str(store), "--env", BANDIT)
    assert r.exit_code == 0 and "1 stored run(s) no longer match their content hash" in r.output


def test_read_commands_never_create_adopt_or_migrate(tmp_path):
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    for path in (tmp_path / "missing.db", empty):
        with pytest.raises(StoreError, match="a read command never creates or adopts"):
            Leaderboard(path, read_only=True)
        r = leaderboard("--store", str(path))
        assert r.exit_code == 2
    assert not (tmp_path / "missing.db").exists() and empty.stat().st_size == 0
    foreign = tmp_path / "foreign.db"
    sqlite3.connect(foreign).execute("CREATE TABLE t (x)").connection.close()
    with pytest.raises(StoreError, match="not an icmlgym leaderboard"):
        Leaderboard(foreign, read_only=True)


def test_a_damaged_wal_is_reported_and_never_checkpointed(tmp_path):
    store = tmp_path / "lb.db"
    with Leaderboard(store) as b:
        b.add(runs(1))
    # a second writer commits 20 runs into the WAL and dies before any checkpoint
    keep = tmp_path / "kept"
    keep.mkdir()
    b = Leaderboard(store)
    b._store.engine.dispose()
    con = sqlite3.connect(store)
    con.execute("PRAGMA wal_autocheckpoint = 0")
    con.close()
    b = Leaderboard(store)
    with b._store.engine.connect() as c:
        c.exec_driver_sql("PRAGMA wal_autocheckpoint = 0")
    for rec in runs(20, "random"):
        b.add(rec)
    for f in ("lb.db", "lb.db-wal", "lb.db-shm"):
        shutil.copy(tmp_path / f, keep / f)  # the files as a crash would leave them
    b._store.engine.dispose()
    store, wal = keep / "lb.db", keep / "lb.db-wal"
    data = bytearray(wal.read_bytes())
    assert len(data) > 32 + 3 * (4096 + 24)
    data[32 + 2 * (4096 + 24) + 24 + 100] ^= 0x01  # one bit in the third frame
    wal.write_bytes(bytes(data))
    damaged = bytes(data)
    for opener in (lambda: Leaderboard(store, read_only=True), lambda: Leaderboard(store)):
        with pytest.raises(StoreError, match="damaged write-ahead log"):
            opener()
    r = leaderboard("--store", str(store))
    assert r.exit_code == 2 and "damaged write-ahead log" in r.output
    assert wal.read_bytes() == damaged  # never checkpointed, never truncated


def test_finished_runs_spill_when_the_store_cannot_be_written_and_merge_back(tmp_path):
    store = tmp_path / "lb.db"
    board = Leaderboard(store)
    messages = []
    writer = SpillingWriter(board, retries=2, backoff=0.01, warn=messages.append)
    recs = runs(3)
    writer(recs[0])
    lock = sqlite3.connect(store, timeout=0)
    lock.execute("BEGIN IMMEDIATE")  # another process holds the write lock for longer than we wait
    board._store.engine.dispose()
    import icmlgym.leaderboard.store as st

    old = st.BUSY_TIMEOUT_S
    st.BUSY_TIMEOUT_S = 0.2
    try:
        board.close()
        board = Leaderboard(store)
        writer.board = board
        writer(recs[1])
        writer(recs[2])
    finally:
        st.BUSY_TIMEOUT_S = old
        lock.rollback()
        lock.close()
    assert writer.spilled == 2 and writer.path == tmp_path / "lb.db.spill.jsonl"
    assert len(messages) == 1 and "leaderboard --merge" in messages[0]
    assert len(board) == 1
    board.close()
    for _ in range(2):  # merging twice adds nothing the second time
        r = leaderboard("--store", str(store), "--merge", str(writer.path))
        assert r.exit_code == 0
    with Leaderboard(store, read_only=True) as b:
        assert sorted(b.runs()["run_id"]) == sorted(r.run_id for r in recs) and b.damaged() == {}


def test_credentials_never_reach_records_labels_or_exports(tmp_path, monkeypatch):
    from icmlgym.envs.arena.choosers import make_chooser
    from tests.security.conftest import local

    monkeypatch.setenv("SERVICE_TOKEN", "tok-environment-999")
    rec = local("SecretReader", agent_kwargs={"api_key": "sk-kwarg-123456"})
    assert rec.status == "failed" and rec.agent_kwargs == {"api_key": "<redacted>"}
    assert "sk-kwarg-123456" not in rec.error and "tok-environment-999" not in rec.error
    with Leaderboard(tmp_path / "lb.db") as b:
        b.add(rec)
        out = tmp_path / "runs.csv"
        b.export(out)
        text = out.read_text() + b.table(env=BANDIT, level="task").to_csv()
    assert "sk-kwarg-123456" not in text and "tok-environment-999" not in text and "<redacted>" in text
    with pytest.raises(ValueError, match="evaluator's environment only"):
        make_chooser({"type": "http", "endpoint": "http://127.0.0.1:9", "api_key": "sk-in-kwargs"})


def test_hidden_and_public_seed_runs_are_never_one_entry(tmp_path):
    from tests.security.conftest import SECRET, isolated, local

    with Leaderboard(tmp_path / "lb.db") as b:
        b.add(local("ucb1"))
        b.add(isolated("ucb1", hidden_seeds=SECRET, seed=0))
        b.add(isolated("ucb1", mode="none", seed=1))
        entries = set(b.table(env=BANDIT, level="task")["entry"])
        assert entries == {"ucb1 [public seeds]", "ucb1 [hidden seeds]", "ucb1 [sandbox: none] [public seeds]"}
        assert set(b.table(env=BANDIT, level="task", seeds="hidden")["entry"]) == {"ucb1"}
    r = leaderboard("--store", str(tmp_path / "lb.db"), "--env", BANDIT, "--submissions", "--level", "task")
    assert r.exit_code == 0 and "public seeds" not in r.output
