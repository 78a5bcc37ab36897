"""The store's SQL schema (SQLAlchemy Core), its version and its migrations.

Text columns are unbounded (``Text``) so that PostgreSQL, which enforces
``VARCHAR`` lengths, accepts what SQLite would. Tables carry an ``icmlgym_`` prefix so that a shared PostgreSQL database can
hold them beside other applications' tables. ``icmlgym_meta`` holds
``app = icmlgym-leaderboard`` and ``schema_version``; opening an older store
applies the migrations in :data:`MIGRATIONS` in order, inside one
transaction; opening a newer one is refused.

Version history:
    1: runs, episodes, per-episode metric and cost values.
    2: runs gain ``source`` (where a record came from: a merged store's id or
       an imported file) and ``added_at`` (when this store received it).
    3: runs gain ``device_type`` / ``device_name`` (the device the agent used,
       for filtering and grouping GPU and CPU runs; filled from the record's
       ``device`` on migration). New stores cluster the episode tables on
       their keys (SQLite ``WITHOUT ROWID``); migrated ones keep their layout,
       which reads the same, only slower.
    4: one current run per run key: ``run_key`` becomes unique, and runs gain
       ``code_hash`` (the agent's source plus the icmlgym modules the agent and
       the env import, which the key now covers) and ``env_source_hash``. The
       migration keeps one run per key (the newest successful one, else the
       newest) and deletes the rest: they were repeated samples of the same
       seed, which the tables counted as independent; how many it removed is
       kept in ``icmlgym_meta`` (``deduplicated_on_migration_to_4``).
    5: runs gain ``isolation`` (JSON: sandbox kind, hidden or public evaluation
       seeds, the sandbox's measurements), ``sandbox`` and ``seeds`` (the same two
       facts as columns, for filtering; empty for a local run), ``log`` (the
       agent's capped stdout/stderr of an isolated run) and ``content_hash`` (a
       hash of the whole record and its episodes, checked on read; filled for
       existing runs on migration). The meta table gains ``seed_secret``, the
       board's secret for hidden evaluation seeds (never exported).
"""

from __future__ import annotations


import sqlalchemy as sa

APP = "icmlgym-leaderboard"
SCHEMA_VERSION = 5

metadata = sa.MetaData()

meta = sa.Table(
    "icmlgym_meta",
    metadata,
    sa.Column("key", sa.String(64), primary_key=True),
    sa.Column("value", sa.Text, nullable=False),
)

runs = sa.Table(
    "icmlgym_runs",
    metadata,
    sa.Column("run_id", sa.Text, primary_key=True),
    sa.Column("run_key", sa.Text, nullable=False, index=True, unique=True),  # one current run per key
    sa.Column("env_id", sa.Text, nullable=False, index=True),
    sa.Column("env_version", sa.Integer, nullable=True),
    sa.Column("task", sa.Text, nullable=False),
    sa.Column("env_kwargs", sa.Text, nullable=False),
    sa.Column("env_spec", sa.Text, nullable=False),
    sa.Column("env_spec_hash", sa.Text, nullable=False),
    sa.Column("agent_name", sa.Text, nullable=False, index=True),
    sa.Column("agent_entry_point", sa.Text, nullable=False),
    sa.Column("agent_source_hash", sa.Text, nullable=False),
    sa.Column("agent_kwargs", sa.Text, nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("tier", sa.Text, nullable=False),
    sa.Column("suite", sa.Text, nullable=False),
    sa.Column("status", sa.String(16), nullable=False),
    sa.Column("error", sa.Text, nullable=False),
    sa.Column("n_episodes", sa.Integer, nullable=False),
    sa.Column("wall_time", sa.Float(53), nullable=False),
    sa.Column("train_wall_time", sa.Float(53), nullable=False),
    sa.Column("cost", sa.Text, nullable=False),  # as the run reported it; scoring re-sums episodes
    sa.Column("hardware", sa.Text, nullable=False),
    sa.Column("device", sa.Text, nullable=False),
    sa.Column("versions", sa.Text, nullable=False),
    sa.Column("git_commit", sa.Text, nullable=False),
    sa.Column("timestamp", sa.Text, nullable=False),
    sa.Column("attempts", sa.Integer, nullable=False),
    sa.Column("record_version", sa.Integer, nullable=False),
    # the card's primary metric and direction when the run was stored, for envs
    # that are not in this installation's catalog (records merged from elsewhere)
    sa.Column("primary_metric", sa.Text, nullable=False),
    sa.Column("direction", sa.Text, nullable=False),
    sa.Column("source", sa.Text, nullable=False, server_default=""),
    sa.Column("added_at", sa.Text, nullable=False, server_default=""),
    sa.Column("device_type", sa.Text, nullable=False, server_default=""),
    sa.Column("device_name", sa.Text, nullable=False, server_default=""),
    sa.Column("code_hash", sa.Text, nullable=False, server_default=""),
    sa.Column("env_source_hash", sa.Text, nullable=False, server_default=""),
    sa.Column("isolation", sa.Text, nullable=False, server_default="{}"),
    sa.Column("sandbox", sa.Text, nullable=False, server_default=""),
    sa.Column("seeds", sa.Text, nullable=False, server_default=""),
    sa.Column("log", sa.Text, nullable=False, server_default=""),
    sa.Column("content_hash", sa.Text, nullable=False, server_default=""),
)

episodes = sa.Table(
    "icmlgym_episodes",
    metadata,
    sa.Column("run_id", sa.Text, sa.ForeignKey("icmlgym_runs.run_id", ondelete="CASCADE"), primary_key=True),
    sa.Column("episode", sa.Integer, primary_key=True),
    sa.Column("ret", sa.Float(53), nullable=True),
    sa.Column("length", sa.BigInteger, nullable=False),
    sa.Column("wall_time", sa.Float(53), nullable=False),
    sqlite_with_rowid=False,  # clustered on the key: a run's episodes are read in one range scan
)

# one row per (episode, metric or cost counter): long form, so that scoring can
# aggregate one metric in SQL without parsing every episode. The key is ordered
# (run, kind, name, episode) so that "metric m of these runs" is one range per run.
episode_values = sa.Table(
    "icmlgym_episode_values",
    metadata,
    sa.Column("run_id", sa.Text, sa.ForeignKey("icmlgym_runs.run_id", ondelete="CASCADE"), primary_key=True),
    sa.Column("kind", sa.String(8), primary_key=True),  # "metric" or "cost"
    sa.Column("name", sa.Text, primary_key=True),
    sa.Column("episode", sa.Integer, primary_key=True),
    sa.Column("value", sa.Float(53), nullable=True),
    sqlite_with_rowid=False,
)

TABLES = (meta.name, runs.name, episodes.name, episode_values.name)


# columns of the runs table added after version 1
LATER_COLUMNS = ("source", "added_at", "device_type", "device_name", "code_hash", "env_source_hash",
                 "isolation", "sandbox", "seeds", "log", "content_hash")


def v1_metadata() -> sa.MetaData:
    """The version-1 layout (used by the migration test to build an old store)."""
    md = sa.MetaData()
    for table in (meta, runs, episodes, episode_values):
        cols = [c._copy() for c in table.columns if not (table is runs and c.name in LATER_COLUMNS)]
        for c in cols:
            if table is runs and c.name == "run_key":
                c.unique = False  # before version 4 a key could repeat
        sa.Table(table.name, md, *cols, **table.dialect_kwargs)
    return md
