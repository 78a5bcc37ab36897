"""The leaderboard on a real PostgreSQL server (started by scripts/postgres.sh): concurrent writers,
the same scores as SQLite from the same records, the schema migration, the CLI, and a Ray sweep
streaming its records into the shared store."""

from __future__ import annotations

import json
import multiprocessing as mp
from pathlib import Path

import pandas as pd
import pytest
import sqlalchemy as sa

from icmlgym.leaderboard import Leaderboard
from icmlgym.leaderboard.store import StoreError
from icmlgym.runner.api import make_tasks
from icmlgym.runner.ray_executor import RayExecutor
from tests.scale.conftest import BANDIT, agent

WRITERS = 8
RUNS_PER_WRITER = 10


def _writer(url: str, index: int, barrier, out_dir: str) -> None:
    """One of the concurrent writers: opens the (fresh) store at the same moment as the others,
    then runs real Bandit runs and adds each record in its own transaction."""
    from icmlgym.leaderboard import Leaderboard
    from icmlgym.runner.api import make_tasks
    from icmlgym.runner.loop import execute

    tasks = make_tasks(BANDIT, "ucb1", seeds=range(index * 100, index * 100 + RUNS_PER_WRITER), env_kwargs={"horizon": 200})
    records = [execute(t) for t in tasks]
    barrier.wait(timeout=120)
    board = Leaderboard(url)  # eight first opens of an empty database race here
    for rec in records:
        board.add(rec)
    board.close()
    Path(out_dir, f"{index}.json").write_text(json.dumps({r.run_id: len(r.episodes) for r in records}))


def _launch_writers(url: str, out_dir: str) -> None:
    """In a fresh process: import once, then fork the writers (no threads exist yet to inherit)."""
    import icmlgym.leaderboard  # noqa: F401 - imported once for all writers
    import icmlgym.runner.loop  # noqa: F401

    ctx = mp.get_context("fork")
    barrier = ctx.Barrier(WRITERS)
    procs = [ctx.Process(target=_writer, args=(url, i, barrier, out_dir)) for i in range(WRITERS)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(timeout=300)
    codes = [p.exitcode for p in procs]
    if codes != [0] * WRITERS:
        raise SystemExit(f"writer exit codes: {codes}")


def test_eight_processes_writing_at_once_lose_no_record(pg_url, tmp_path):
    launcher = mp.get_context("spawn").Process(target=_launch_writers, args=(pg_url, str(tmp_path)))
    launcher.start()
    launcher.join(timeout=400)
    assert launcher.exitcode == 0
    written: dict[str, int] = {}
    for i in range(WRITERS):
        written.update(json.loads((tmp_path / f"{i}.json").read_text()))
    assert len(written) == WRITERS * RUNS_PER_WRITER
    with Leaderboard(pg_url) as board:
        runs = board.runs()
        assert len(runs) == len(written) and set(runs["run_id"]) == set(written)
        eps = board.episodes()
        assert eps.groupby("run_id").size().to_dict() == written
        assert board.schema_version >= 2


@pytest.fixture(scope="module")
def sweep_records(ray_executor):
    """Records of a Ray sweep: 3 agents x 6 seeds of Bandit-v0 and one run that failed."""
    tasks = [t for a in ("random", "ucb1", "bandit-thompson") for t in make_tasks(BANDIT, a, seeds=6)]
    ex = RayExecutor(max_retries=0)
    records = list(ex.imap(tasks + make_tasks(BANDIT, agent("AlwaysKillAgent"), seeds=[0])))
    assert sorted(r.status for r in records).count("ok") == 18
    return records


def _frame(df: pd.DataFrame, key: list[str]) -> pd.DataFrame:
    return df.sort_values(key).reset_index(drop=True)


def test_sqlite_and_postgres_give_the_same_results(sweep_records, pg_url, tmp_path):
    """A Ray sweep streams its records into PostgreSQL as runs finish; the same records in SQLite
    give identical runs, episodes, tables, suite aggregates and comparisons."""
    pg = Leaderboard(pg_url)
    lite = Leaderboard(tmp_path / "lb.db")
    for rec in sweep_records:  # as on_record would, one transaction per run
        pg.add(rec)
    lite.add(sweep_records)

    drop = ["added_at"]  # when each store received the run
    pd.testing.assert_frame_equal(_frame(pg.runs().drop(columns=drop), ["run_id"]), _frame(lite.runs().drop(columns=drop), ["run_id"]))
    pd.testing.assert_frame_equal(_frame(pg.episodes().drop(columns=drop, errors="ignore"), ["run_id", "episode"]),
                                  _frame(lite.episodes().drop(columns=drop, errors="ignore"), ["run_id", "episode"]))
    assert sorted((r.to_dict() for r in pg.records()), key=lambda d: d["run_id"]) == sorted(
        (r.to_dict() for r in lite.records()), key=lambda d: d["run_id"]
    )
    t_pg, t_lite = pg.table(env=BANDIT, seed=0), lite.table(env=BANDIT, seed=0)
    assert len(t_pg) == 4 and (t_pg["failed"].sum() if "failed" in t_pg else 1) >= 1
    pd.testing.assert_frame_equal(t_pg, t_lite)
    pd.testing.assert_frame_equal(pg.table(suite="bandit", tier="smoke", seed=0), lite.table(suite="bandit", tier="smoke", seed=0))
    pd.testing.assert_frame_equal(pg.compare("ucb1", "random", tier="smoke"), lite.compare("ucb1", "random", tier="smoke"))
    assert pg.run_keys() == lite.run_keys() and len(pg.run_keys()) == 18
    pg.close()
    lite.close()


def test_postgres_store_migrates_a_version_1_schema(pg_url):
    from icmlgym.leaderboard import schema
    from tests.leaderboard.conftest import make_record, write_v1_store

    rec = make_record("old", 0, [2.0, 4.0])
    write_v1_store(pg_url, rec)
    with Leaderboard(pg_url) as board:
        assert board.schema_version == schema.SCHEMA_VERSION
        assert board.records()[0].to_dict() == rec.to_dict()
        assert board.runs().loc[0, "device_type"] == "cpu"
        assert board.table(env=BANDIT).loc[0, "mean"] == pytest.approx(3.0)
        board.add(make_record("new", 0, [1.0]))
        assert len(board) == 2
    engine = sa.create_engine(pg_url)
    with engine.connect() as conn:
        meta = dict(conn.execute(sa.text("SELECT key, value FROM icmlgym_meta")).all())
    engine.dispose()
    assert "migrated_from_1" in meta and meta["schema_version"] == str(schema.SCHEMA_VERSION)


def test_cli_leaderboard_reads_the_postgres_store(sweep_records, pg_url):
    from typer.testing import CliRunner

    from icmlgym.cli import app

    with Leaderboard(pg_url) as board:
        board.add(sweep_records)
    result = CliRunner().invoke(app, ["leaderboard", "--store", pg_url, "--env", BANDIT, "--format", "csv"])
    assert result.exit_code == 0, result.output
    for name in ("ucb1", "random", "bandit-thompson"):
        assert name in result.output


def test_unreachable_server_is_a_clear_error():
    with pytest.raises(StoreError, match="cannot open store postgresql"):
        Leaderboard("postgresql+psycopg://icmlgym@127.0.0.1:1/icmlgym")


def test_cli_run_on_ray_stores_into_postgres(ray_executor, pg_url):
    """`icmlgym run ... --executor ray --store postgresql+psycopg://...`: records reach the shared store."""
    from typer.testing import CliRunner

    from icmlgym.cli import app

    result = CliRunner().invoke(app, ["run", BANDIT, "--agent", "ucb1", "--seeds", "4", "--executor", "ray", "--store", pg_url])
    assert result.exit_code == 0, result.output
    with Leaderboard(pg_url) as board:
        runs = board.runs()
        assert sorted(runs["seed"]) == [0, 1, 2, 3] and set(runs["status"]) == {"ok"}
        assert set(runs["agent_name"]) == {"ucb1"}
