"""The store: round trips, idempotence, concurrent writers, a killed writer, refusing foreign or
corrupt files, schema migration, export / import with provenance."""

from __future__ import annotations

import hashlib
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from icmlgym.leaderboard import Leaderboard, StoreError, default_store_url, schema

from .conftest import BANDIT, make_record, write_v1_store

REPO = Path(__file__).resolve().parents[2]


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _python(script: str, *args: str) -> subprocess.Popen:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(script), *args], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_round_trip_of_real_and_constructed_records(store_path, real_records):
    made = [make_record("a", s, [1.0 + s, 2.0], env_kwargs={"horizon": 100}) for s in range(3)]
    made.append(make_record("a", 9, [], status="failed"))
    with Leaderboard(store_path) as board:
        assert board.add(real_records + made) == len(real_records) + len(made)
        back = {r.run_id: r.to_dict() for r in board.records()}
    for r in real_records + made:
        assert back[r.run_id] == r.to_dict()


def test_add_is_idempotent_and_accepts_dicts(store_path):
    recs = [make_record("a", s, [1.0]) for s in range(4)]
    with Leaderboard(store_path) as board:
        assert len(board) == 0 and bool(board)  # an empty board is still a board
        assert board.add(recs[0]) == 1
        assert board.add(recs[0].to_dict()) == 0  # same run_id: nothing added
        assert board.add(r.to_dict() for r in recs) == 3
        assert board.add(recs + recs) == 0
        assert len(board) == 4
        assert len(board.episodes()) == 4


def test_bad_records_are_refused_with_a_clear_error(store_path):
    with Leaderboard(store_path) as board:
        with pytest.raises(TypeError, match="RunRecord"):
            board.add(42)
        with pytest.raises(ValueError, match="record 0 is not a valid run record"):
            board.add({"env_id": BANDIT, "nonsense": 1})
        with pytest.raises(ValueError, match="status must be one of"):
            board.add({**make_record("a", 0, [1.0]).to_dict(), "status": "great"})
        twice = make_record("a", 0, [1.0, 2.0])
        twice.episodes[1].episode = 0
        with pytest.raises(ValueError, match="repeats episode numbers"):
            board.add([make_record("a", 1, [1.0]), twice])
        with pytest.raises(TypeError, match="unknown filter"):
            board.runs(colour="red")
        assert len(board) == 0


def test_runs_and_episodes_frames_and_filters(store_path):
    recs = [make_record("a", s, [1.0, 3.0]) for s in range(2)] + [make_record("b", 0, [5.0], tier="standard"), make_record("b", 1, [], status="timeout")]
    with Leaderboard(store_path) as board:
        board.add(recs)
        runs = board.runs()
        assert set(runs["agent_name"]) == {"a", "b"} and len(runs) == 4
        assert runs.loc[0, "env_kwargs"] == {} and isinstance(runs.loc[0, "hardware"], dict)
        assert len(board.runs(agent="a")) == 2
        assert len(board.runs(tier="standard")) == 1
        assert len(board.runs(status=["failed", "timeout"])) == 1
        assert len(board.runs(env="Bandit-v0")) == 4  # short ids resolve through the catalog
        eps = board.episodes(agent="a")
        assert list(eps["pseudo_regret"]) == [1.0, 3.0, 1.0, 3.0]
        assert list(eps["cost.env_steps"]) == [1000.0] * 4
        assert board.run_keys() == {r.run_key for r in recs if r.status == "ok"}
        assert board.run_keys(status=None) == {r.run_key for r in recs}


def test_default_store_location(tmp_path, monkeypatch):
    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path / "home"))
    assert default_store_url() == f"sqlite:///{tmp_path / 'home' / 'leaderboard.db'}"
    monkeypatch.delenv("ICMLGYM_HOME")
    monkeypatch.chdir(tmp_path)
    with Leaderboard() as board:
        assert board.url.endswith("icmlgym-results/leaderboard.db")
    assert (tmp_path / "icmlgym-results" / "leaderboard.db").is_file()


def test_any_sqlalchemy_url_works(tmp_path):
    with Leaderboard(f"sqlite:///{tmp_path / 'u.db'}") as board:
        board.add(make_record("a", 0, [1.0]))
    with Leaderboard("sqlite://") as mem:  # in memory
        mem.add(make_record("a", 0, [1.0]))
        assert len(mem) == 1
    with pytest.raises(ValueError, match="directory"):
        Leaderboard(tmp_path)


def test_wal_mode_and_schema_version(store_path):
    Leaderboard(store_path).close()
    con = sqlite3.connect(store_path)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    meta = dict(con.execute("SELECT key, value FROM icmlgym_meta").fetchall())
    con.close()
    assert meta["app"] == "icmlgym-leaderboard" and int(meta["schema_version"]) == schema.SCHEMA_VERSION


WRITER = """
import sys, uuid
sys.path.insert(0, {tests!r})
from conftest import make_record
from icmlgym.leaderboard import Leaderboard
path, wid, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
board = Leaderboard(path)
for i in range(0, n, 5):
    board.add([make_record(f"w{{wid}}", s, [float(s), 1.0], run_id=f"w{{wid}}-{{s}}") for s in range(i, min(n, i + 5))])
board.close()
"""


def test_concurrent_writer_processes_lose_nothing(store_path):
    """Four processes add 40 runs each (5 per transaction) to one SQLite store at the same time."""
    procs = [_python(WRITER.format(tests=str(Path(__file__).parent)), str(store_path), str(w), "40") for w in range(4)]
    for p in procs:
        out, err = p.communicate(timeout=240)
        assert p.returncode == 0, err
    with Leaderboard(store_path) as board:
        runs = board.runs()
        assert len(runs) == 160
        assert set(runs["run_id"]) == {f"w{w}-{s}" for w in range(4) for s in range(40)}
        assert len(board.episodes()) == 320


KILLED = """
import sys, uuid
sys.path.insert(0, {tests!r})
from conftest import make_record
from icmlgym.leaderboard import Leaderboard
board = Leaderboard(sys.argv[1])
for i in range(100000):
    board.add([make_record("k", s, [float(s)] * 40) for s in range(20)])
    if i == 0:
        print("committed", flush=True)
"""


def test_a_writer_killed_mid_write_leaves_the_store_readable(store_path):
    """A process adding batches of 20 runs (40 episodes each) in a loop is killed with SIGKILL;
    the store opens (integrity check passes) and holds only whole batches, every run complete."""
    p = _python(KILLED.format(tests=str(Path(__file__).parent)), str(store_path))
    assert p.stdout.readline().strip() == "committed", p.stderr.read()
    time.sleep(1.0)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    with Leaderboard(store_path) as board:
        runs = board.runs()
        assert len(runs) >= 20 and len(runs) % 20 == 0
        eps = board.episodes()
        per_run = eps.groupby("run_id").size()
        assert (per_run.reindex(runs["run_id"]).to_numpy() == 40).all()
        assert (runs["n_episodes"] == 40).all()
        board.add(make_record("after", 0, [1.0]))  # still writable
        assert len(board.runs(agent="after")) == 1


def test_a_file_that_is_not_sqlite_is_refused_untouched(tmp_path):
    p = tmp_path / "notes.db"
    p.write_text("my thesis, chapter 3\n" * 100)
    before = _sha(p)
    with pytest.raises(StoreError, match="not an SQLite database"):
        Leaderboard(p)
    assert _sha(p) == before


def test_a_foreign_sqlite_database_is_refused_untouched(tmp_path):
    p = tmp_path / "app.db"
    con = sqlite3.connect(p)
    con.execute("CREATE TABLE users (id INTEGER PRIMARY KEY, name TEXT)")
    con.execute("INSERT INTO users VALUES (1, 'ada')")
    con.commit()
    con.close()
    before = _sha(p)
    with pytest.raises(StoreError, match="not an icmlgym leaderboard store.*users"):
        Leaderboard(p)
    assert _sha(p) == before
    assert not Path(str(p) + "-wal").exists()


def test_a_corrupt_store_is_refused_untouched(store_path):
    with Leaderboard(store_path) as board:
        board.add([make_record("a", s, [float(s)] * 50) for s in range(40)])
    data = bytearray(store_path.read_bytes())
    assert len(data) > 8 * 4096
    data[3 * 4096 : 6 * 4096] = os.urandom(3 * 4096)  # garbage over three pages, header intact
    store_path.write_bytes(bytes(data))
    before = _sha(store_path)
    with pytest.raises(StoreError, match="corrupt"):
        Leaderboard(store_path)
    assert _sha(store_path) == before


def test_a_truncated_store_is_refused(store_path):
    with Leaderboard(store_path) as board:
        board.add([make_record("a", s, [float(s)] * 50) for s in range(40)])
    data = store_path.read_bytes()
    store_path.write_bytes(data[: len(data) // 2])
    with pytest.raises(StoreError, match="corrupt"):
        Leaderboard(store_path)


def test_a_newer_schema_is_refused(store_path):
    Leaderboard(store_path).close()
    con = sqlite3.connect(store_path)
    con.execute("UPDATE icmlgym_meta SET value = '99' WHERE key = 'schema_version'")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="schema version 99, newer"):
        Leaderboard(store_path)


def test_migration_from_schema_version_1(store_path):
    """A store written with the version-1 layout opens, is upgraded in place (1 -> 2 -> 3), and keeps its runs."""
    rec = make_record("old", 0, [2.0, 4.0])
    write_v1_store(f"sqlite:///{store_path}", rec)
    with Leaderboard(store_path) as board:
        assert board.schema_version == schema.SCHEMA_VERSION
        assert board.records()[0].to_dict() == rec.to_dict()
        assert board.runs().loc[0, "source"] == ""
        assert board.runs().loc[0, "device_type"] == "cpu"  # filled from the record's device on migration
        assert len(board.runs(device="cpu")) == 1 and len(board.runs(device="cuda")) == 0
        assert board.table(env=BANDIT).loc[0, "mean"] == pytest.approx(3.0)
        board.add(make_record("new", 0, [1.0]))
    con = sqlite3.connect(store_path)
    assert "migrated_from_1" in dict(con.execute("SELECT key, value FROM icmlgym_meta").fetchall())
    con.close()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_export_import_merges_two_stores_with_provenance(tmp_path, suffix, real_records):
    team_a = [make_record("a", s, [float(s), 2.5]) for s in range(3)] + [make_record("a", 3, [], status="failed")] + real_records[:3]
    team_b = [make_record("b", s, [1.5]) for s in range(3)]
    with Leaderboard(tmp_path / "a.db") as a, Leaderboard(tmp_path / "b.db") as b:
        a.add(team_a)
        b.add(team_b)
        out = tmp_path / f"a{suffix}"
        assert a.export(out) == len(team_a)
        assert b.import_(out) == len(team_a)
        assert b.import_(out) == 0  # merging twice adds nothing
        assert len(b) == len(team_a) + len(team_b)
        merged = {r.run_id: r.to_dict() for r in b.records()}
        for r in team_a:
            assert merged[r.run_id] == r.to_dict()
        src = b.runs().set_index("run_id")["source"]
        assert all(src[r.run_id] == f"store:{a.store_id} ({a.url})" for r in team_a)
        assert all(src[r.run_id] == "" for r in team_b)
        # exporting the merged store keeps team A's origin
        again = tmp_path / f"b{suffix}"
        b.export(again)
        frame = pd.read_csv(again) if suffix == ".csv" else pd.read_parquet(again)
        origins = dict(zip(frame["run_id"], frame["source"]))
        assert origins[team_a[0].run_id] == f"store:{a.store_id} ({a.url})"
        assert origins[team_b[0].run_id] == f"store:{b.store_id} ({b.url})"


def test_import_from_another_store_and_bad_files(tmp_path):
    with Leaderboard(tmp_path / "a.db") as a:
        a.add([make_record("a", s, [1.0]) for s in range(2)])
    with Leaderboard(tmp_path / "b.db") as b:
        assert b.import_(tmp_path / "a.db") == 2
        bad = tmp_path / "bad.csv"
        bad.write_text("x,y\n1,2\n")
        with pytest.raises(ValueError, match="not an icmlgym export"):
            b.import_(bad)
        with pytest.raises(ValueError, match=r"\.csv or \.parquet"):
            b.export(tmp_path / "out.xlsx")
        with pytest.raises(FileNotFoundError):
            b.import_(tmp_path / "missing.csv")
        assert len(b) == 2


def test_threads_sharing_one_leaderboard(store_path):
    """A Ray or thread-pool driver may call board.add from several threads."""
    import threading

    board = Leaderboard(store_path)
    errors: list[BaseException] = []

    def write(i: int) -> None:
        try:
            for k in range(10):
                board.add(make_record(f"t{i}", k, [1.0]))
        except BaseException as err:  # noqa: BLE001 - reported below
            errors.append(err)

    threads = [threading.Thread(target=write, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == [] and len(board) == 40
    board.close()
