"""Upgrades of a stored leaderboard from one schema version to the next.

:data:`MIGRATIONS` maps a version to the function that brings a store from it to the
next one, inside the opening transaction (:class:`icmlgym.leaderboard.store.Store`
runs them in order). The table layout itself lives in :mod:`icmlgym.leaderboard.schema`."""

from __future__ import annotations

import json
import secrets
from typing import Callable

import sqlalchemy as sa

from icmlgym.leaderboard.integrity import fill_content_hashes
from icmlgym.leaderboard.schema import meta

def _v1_to_v2(conn: sa.Connection) -> None:
    conn.execute(sa.text("ALTER TABLE icmlgym_runs ADD COLUMN source TEXT NOT NULL DEFAULT ''"))
    conn.execute(sa.text("ALTER TABLE icmlgym_runs ADD COLUMN added_at TEXT NOT NULL DEFAULT ''"))


def _v2_to_v3(conn: sa.Connection) -> None:
    conn.execute(sa.text("ALTER TABLE icmlgym_runs ADD COLUMN device_type TEXT NOT NULL DEFAULT ''"))
    conn.execute(sa.text("ALTER TABLE icmlgym_runs ADD COLUMN device_name TEXT NOT NULL DEFAULT ''"))
    rows = conn.execute(sa.text("SELECT run_id, device FROM icmlgym_runs")).all()
    updates = []
    for run_id, device in rows:
        d = json.loads(device or "{}")
        updates.append({"rid": run_id, "t": str(d.get("type", "")), "n": str(d.get("name", ""))})
    if updates:
        conn.execute(sa.text("UPDATE icmlgym_runs SET device_type = :t, device_name = :n WHERE run_id = :rid"), updates)


def _v3_to_v4(conn: sa.Connection) -> None:
    conn.execute(sa.text("ALTER TABLE icmlgym_runs ADD COLUMN code_hash TEXT NOT NULL DEFAULT ''"))
    conn.execute(sa.text("ALTER TABLE icmlgym_runs ADD COLUMN env_source_hash TEXT NOT NULL DEFAULT ''"))
    rows = conn.execute(sa.text("SELECT run_key, run_id, status, added_at, timestamp FROM icmlgym_runs")).all()
    keep: dict[str, tuple] = {}
    for key, run_id, status, added_at, ts in rows:
        rank = (status == "ok", added_at or "", ts or "", run_id)
        if key not in keep or rank > keep[key]:
            keep[key] = rank
    kept = {rank[-1] for rank in keep.values()}
    drop = [{"rid": run_id} for _, run_id, *_ in rows if run_id not in kept]
    if drop:
        for table in ("icmlgym_episode_values", "icmlgym_episodes", "icmlgym_runs"):
            conn.execute(sa.text(f"DELETE FROM {table} WHERE run_id = :rid"), drop)
    conn.execute(sa.text("DROP INDEX IF EXISTS ix_icmlgym_runs_run_key"))
    conn.execute(sa.text("CREATE UNIQUE INDEX ix_icmlgym_runs_run_key ON icmlgym_runs (run_key)"))
    conn.execute(sa.text("DELETE FROM icmlgym_meta WHERE key = 'deduplicated_on_migration_to_4'"))
    conn.execute(sa.text("INSERT INTO icmlgym_meta (key, value) VALUES ('deduplicated_on_migration_to_4', :n)"), {"n": str(len(drop))})


def _v4_to_v5(conn: sa.Connection) -> None:
    for col, default in (("isolation", "'{}'"), ("sandbox", "''"), ("seeds", "''"), ("log", "''"), ("content_hash", "''")):
        conn.execute(sa.text(f"ALTER TABLE icmlgym_runs ADD COLUMN {col} TEXT NOT NULL DEFAULT {default}"))
    conn.execute(meta.insert().values(key="seed_secret", value=secrets.token_hex(32)))
    # content hashes of the runs already stored (what they hold now is what later reads check against)
    fill_content_hashes(conn)


# from-version -> function that upgrades a store from that version to the next
MIGRATIONS: dict[int, Callable[[sa.Connection], None]] = {1: _v1_to_v2, 2: _v2_to_v3, 3: _v3_to_v4, 4: _v4_to_v5}
