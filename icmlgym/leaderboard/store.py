"""The leaderboard's SQL store: opening (with checks), transactional writes, reads as DataFrames.

Any SQLAlchemy URL works (``sqlite:///path.db``, ``postgresql+psycopg://...``);
a plain path means an SQLite file. SQLite stores run in WAL mode with a busy
timeout, and every write is one ``BEGIN IMMEDIATE`` transaction, so several
processes can write at once and a process killed mid-write leaves the last
committed state behind. A file that is not a leaderboard is refused with a
clear error and never written to.
"""

from __future__ import annotations

import json
import os
import secrets
import socket
import sqlite3
from urllib.parse import quote
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator, Mapping

import pandas as pd
import sqlalchemy as sa
from sqlalchemy import event
from sqlalchemy.engine import make_url

from icmlgym.catalog import UnknownEnvError, canonical_json, card, suite, task_label
from icmlgym.leaderboard import schema as S
from icmlgym.leaderboard.integrity import content_hash, damaged_runs, records_from_rows, wal_damage
from icmlgym.leaderboard.migrations import MIGRATIONS
from icmlgym.runner.record import EpisodeRecord, RunRecord

SQLITE_MAGIC = b"SQLite format 3\x00"
BUSY_TIMEOUT_S = 120
JSON_FIELDS = ("env_kwargs", "env_spec", "agent_kwargs", "cost", "hardware", "device", "versions", "isolation")
FILTERS = ("env", "agent", "tier", "status", "suite", "task", "run_id", "source", "device", "sandbox", "seeds")


@dataclass
class PutResult:
    """What :meth:`Store.put` did with a batch of records."""

    added: int = 0  # new run keys
    replaced: int = 0  # reruns that replaced the stored run of their key
    skipped: int = 0  # reruns dropped because their key was stored (on_conflict="skip")
    unchanged: int = 0  # the very same runs (same run id), already stored

    def __iadd__(self, other: "PutResult") -> "PutResult":
        self.added += other.added
        self.replaced += other.replaced
        self.skipped += other.skipped
        self.unchanged += other.unchanged
        return self

    def describe(self) -> str:
        """``"3 new, 2 replaced"``: the non-zero counts in words."""
        parts = [f"{self.added} new"]
        if self.replaced:
            parts.append(f"{self.replaced} replacing the stored run of their key")
        if self.skipped:
            parts.append(f"{self.skipped} skipped (key already stored)")
        if self.unchanged:
            parts.append(f"{self.unchanged} already stored")
        return ", ".join(parts)


class StoreError(RuntimeError):
    """A store that cannot be used: not a leaderboard, corrupt, too new, or unreachable."""


def default_store_url() -> str:
    """``$ICMLGYM_HOME/leaderboard.db`` if ICMLGYM_HOME is set, else ``./icmlgym-results/leaderboard.db``.

    The folder is created if missing."""
    home = os.environ.get("ICMLGYM_HOME")
    folder = Path(home) if home else Path.cwd() / "icmlgym-results"
    folder.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{(folder / 'leaderboard.db').resolve()}"


def resolve_url(store: str | os.PathLike | None) -> str:
    """An SQLAlchemy URL for a URL, a file path, or None (the default store)."""
    if store is None:
        return default_store_url()
    text = os.fspath(store)
    if not text:
        raise ValueError("store must be a SQLAlchemy URL or a file path, got an empty string")
    if "://" in text:
        try:
            make_url(text)
        except sa.exc.ArgumentError as err:
            raise ValueError(f"store {text!r} is not a valid SQLAlchemy URL: {err}") from None
        return text
    path = Path(text).expanduser().resolve()
    if path.is_dir():
        raise ValueError(f"store {text!r} is a directory; give a file such as {path / 'leaderboard.db'}")
    path.parent.mkdir(parents=True, exist_ok=True)
    return f"sqlite:///{path}"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _env_version(env_id: str) -> int | None:
    tail = env_id.rsplit("-v", 1)
    return int(tail[1]) if len(tail) == 2 and tail[1].isdigit() else None


def _primary(env_id: str) -> tuple[str, str]:
    try:
        c = card(env_id)
    except UnknownEnvError:
        return "", ""
    return c.primary_metric, c.direction


def as_records(records: Any) -> list[RunRecord]:
    """A RunRecord, a dict from ``RunRecord.to_dict()``, or an iterable of them, as a list of RunRecords."""
    if isinstance(records, (RunRecord, Mapping)):
        records = [records]
    elif isinstance(records, (str, bytes)) or not isinstance(records, Iterable):
        raise TypeError(f"records must be a RunRecord, a dict from RunRecord.to_dict(), or an iterable of them; got {type(records).__name__}")
    out = []
    for i, r in enumerate(records):
        if isinstance(r, RunRecord):
            out.append(r)
        elif isinstance(r, Mapping):
            try:
                out.append(RunRecord.from_dict(dict(r)))
            except (TypeError, ValueError) as err:
                raise ValueError(f"record {i} is not a valid run record: {err}") from None
        else:
            raise TypeError(f"record {i} is a {type(r).__name__}, not a RunRecord or a dict")
    return out


def _rows(rec: RunRecord, source: str, added_at: str) -> tuple[dict, list[dict], list[dict]]:
    numbers = [e.episode for e in rec.episodes]
    if len(set(numbers)) != len(numbers):
        raise ValueError(f"run {rec.run_id} ({rec.env_id}, {rec.agent_name}, seed {rec.seed}) repeats episode numbers {sorted(numbers)}")
    pm, direction = _primary(rec.env_id)
    run = {
        "run_id": rec.run_id,
        "run_key": rec.run_key,
        "env_id": rec.env_id,
        "env_version": _env_version(rec.env_id),
        "task": task_label(rec.env_id, rec.env_kwargs),
        "env_spec_hash": rec.env_spec_hash,
        "agent_name": rec.agent_name,
        "agent_entry_point": rec.agent_entry_point,
        "agent_source_hash": rec.agent_source_hash,
        "seed": int(rec.seed),
        "tier": rec.tier,
        "suite": rec.suite,
        "status": rec.status,
        "error": rec.error,
        "n_episodes": len(rec.episodes),
        "wall_time": float(rec.wall_time),
        "train_wall_time": float(rec.train_wall_time),
        "git_commit": rec.git_commit,
        "timestamp": rec.timestamp,
        "attempts": int(rec.attempts),
        "record_version": int(rec.record_version),
        "primary_metric": pm,
        "direction": direction,
        "source": source,
        "added_at": added_at,
        "device_type": str((rec.device or {}).get("type", "")),
        "device_name": str((rec.device or {}).get("name", "")),
        "code_hash": rec.code_hash,
        "env_source_hash": rec.env_source_hash,
        "sandbox": str((rec.isolation or {}).get("sandbox", "")),
        "seeds": str((rec.isolation or {}).get("seeds", "")),
        "log": rec.log,
        "content_hash": content_hash(rec),
    }
    for f in JSON_FIELDS:
        run[f] = canonical_json(getattr(rec, f))
    eps, vals = [], []
    for e in rec.episodes:
        eps.append({"run_id": rec.run_id, "episode": int(e.episode), "ret": float(e.ret), "length": int(e.length), "wall_time": float(e.wall_time)})
        for kind, values in (("metric", e.metrics), ("cost", e.cost)):
            for name, v in values.items():
                vals.append({"run_id": rec.run_id, "episode": int(e.episode), "kind": kind, "name": str(name), "value": float(v)})
    return run, eps, vals


class Store:
    """A connection to one leaderboard store (see the module docstring)."""

    def __init__(self, store: str | os.PathLike | None = None, check: bool = True, read_only: bool = False) -> None:
        self.read_only = read_only
        self.url = resolve_url(store)
        u = make_url(self.url)
        self.display_url = u.render_as_string(hide_password=True)
        self.is_sqlite = u.get_backend_name() == "sqlite"
        self.path: Path | None = None
        if self.is_sqlite and u.database not in (None, "", ":memory:"):
            self.path = Path(u.database)
            self._check_sqlite_file(self.path)
            if read_only and (not self.path.exists() or self.path.stat().st_size == 0):
                what = "is empty" if self.path.exists() else "does not exist"
                raise StoreError(f"no leaderboard store at {self.path}: the file {what}; a read command never creates or adopts a store")
            damage = wal_damage(self.path)
            if damage:
                raise StoreError(
                    f"{self.display_url} has a damaged write-ahead log: {damage}. The store was left untouched "
                    "(nothing was checkpointed, so nothing more is lost): copy it with its -wal and -shm files "
                    "aside, then restore from a backup or an export."
                )
        kwargs: dict[str, Any] = {"future": True}
        if self.is_sqlite:
            kwargs["connect_args"] = {"timeout": BUSY_TIMEOUT_S}
            if self.path is None:
                kwargs["poolclass"] = sa.pool.StaticPool  # one shared in-memory database
            elif read_only:  # SQLite's read-only mode: no schema write, no checkpoint, ever
                ro = f"file:{quote(str(self.path))}?mode=ro"
                kwargs["creator"] = lambda: sqlite3.connect(ro, uri=True, timeout=BUSY_TIMEOUT_S, check_same_thread=False)
        else:
            kwargs["pool_pre_ping"] = True
        try:
            self.engine = sa.create_engine(self.url, **kwargs)
        except (sa.exc.ArgumentError, sa.exc.NoSuchModuleError, ImportError) as err:
            raise StoreError(f"cannot open store {self.display_url}: {err}") from None
        if self.is_sqlite:
            self._sqlite_events()
        elif read_only:
            @event.listens_for(self.engine, "connect")
            def _read_only(dbapi_conn, _record) -> None:  # noqa: ANN001
                cur = dbapi_conn.cursor()
                cur.execute("SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY")
                cur.close()
        try:
            self._initialise(check)
        except sa.exc.OperationalError as err:
            self.engine.dispose()
            raise StoreError(f"cannot open store {self.display_url}: {err.orig}") from None
        except sa.exc.DatabaseError as err:
            self.engine.dispose()
            raise StoreError(
                f"{self.display_url} is corrupt or not a leaderboard store ({err.orig}); "
                "it was left untouched. Restore it from a backup or an export, or choose another store."
            ) from None

    # -- opening -------------------------------------------------------------------------------

    @staticmethod
    def _check_sqlite_file(path: Path) -> None:
        if not path.exists() or path.stat().st_size == 0:
            return
        with open(path, "rb") as fh:
            head = fh.read(len(SQLITE_MAGIC))
        if head != SQLITE_MAGIC:
            raise StoreError(
                f"{path} is not a leaderboard store: it is not an SQLite database (it starts with {head[:8]!r}). "
                "It was left untouched; choose another --store path."
            )

    def _sqlite_events(self) -> None:
        @event.listens_for(self.engine, "connect")
        def _connect(dbapi_conn, _record) -> None:  # noqa: ANN001
            # autocommit at the driver level; transactions are begun explicitly below
            dbapi_conn.isolation_level = None
            cur = dbapi_conn.cursor()
            cur.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_S * 1000}")
            cur.execute("PRAGMA foreign_keys = ON")
            if self.path is not None:
                # WAL itself is switched on in _initialise, once the file is known to be ours
                cur.execute("PRAGMA synchronous = NORMAL")
            cur.close()

        @event.listens_for(self.engine, "begin")
        def _begin(conn) -> None:  # noqa: ANN001
            # writers take the write lock at BEGIN, so two writers never deadlock on upgrade
            write = conn.get_execution_options().get("icmlgym_write", False)
            conn.exec_driver_sql("BEGIN IMMEDIATE" if write else "BEGIN")

    def _write(self):
        """A connection whose transaction is a write transaction (``BEGIN IMMEDIATE`` on SQLite)."""
        return self.engine.connect().execution_options(icmlgym_write=True)

    def _state(self, conn: sa.Connection) -> tuple[str, int | None, list[str]]:
        names = sa.inspect(conn).get_table_names()
        if S.meta.name not in names:
            return "", None, names
        rows = dict(conn.execute(sa.select(S.meta.c.key, S.meta.c.value)).all())
        version = rows.get("schema_version")
        return rows.get("app", ""), int(version) if version and version.isdigit() else None, names

    def _initialise(self, check: bool) -> None:
        with self.engine.connect() as conn:
            if check and self.path is not None:
                result = [r[0] for r in conn.exec_driver_sql("PRAGMA quick_check").all()]
                if result != ["ok"]:
                    raise StoreError(
                        f"{self.display_url} is corrupt (SQLite integrity check: {'; '.join(result[:3])}); "
                        "it was left untouched. Restore it from a backup or an export."
                    )
            app, version, names = self._state(conn)
            conn.rollback()
        if app == S.APP and version == S.SCHEMA_VERSION:
            self._load_meta()
            return
        if self.read_only:
            if app != S.APP or version is None:
                raise StoreError(f"{self.display_url} is not an icmlgym leaderboard store; it was left untouched")
            raise StoreError(
                f"{self.display_url} has leaderboard schema version {version}, not {S.SCHEMA_VERSION}; a read command "
                "never migrates a store: open it once with a writing command (run, submit, or leaderboard --merge)"
            )
        with self._write() as conn, conn.begin():
            if conn.dialect.name == "postgresql":
                # serialise concurrent first opens (CREATE TABLE is not idempotent under a race)
                conn.execute(sa.text("SELECT pg_advisory_xact_lock(727001)"))
            app, version, names = self._state(conn)  # again, under the write lock
            ours = [n for n in names if n in S.TABLES]
            if not names or (not ours and not self.is_sqlite):
                S.metadata.create_all(conn)
                conn.execute(
                    S.meta.insert(),
                    [
                        {"key": "app", "value": S.APP},
                        {"key": "schema_version", "value": str(S.SCHEMA_VERSION)},
                        {"key": "created_at", "value": _now()},
                        {"key": "store_id", "value": uuid.uuid4().hex},
                        {"key": "created_on", "value": socket.gethostname()},
                        {"key": "seed_secret", "value": secrets.token_hex(32)},
                    ],
                )
            elif app != S.APP or version is None:
                what = f"tables {sorted(names)[:8]}" if not ours else f"icmlgym tables without a valid {S.meta.name} row"
                raise StoreError(
                    f"{self.display_url} is not an icmlgym leaderboard store (it holds {what}); "
                    "it was left untouched. Choose another --store."
                )
            elif version > S.SCHEMA_VERSION:
                raise StoreError(
                    f"{self.display_url} has leaderboard schema version {version}, newer than this icmlgym "
                    f"understands ({S.SCHEMA_VERSION}); upgrade icmlgym to read it. It was left untouched."
                )
            elif version < S.SCHEMA_VERSION:
                for v in range(version, S.SCHEMA_VERSION):
                    if v not in MIGRATIONS:
                        raise StoreError(f"no migration from leaderboard schema version {v}; cannot open {self.display_url}")
                    MIGRATIONS[v](conn)
                conn.execute(S.meta.update().where(S.meta.c.key == "schema_version").values(value=str(S.SCHEMA_VERSION)))
                conn.execute(S.meta.delete().where(S.meta.c.key == f"migrated_from_{version}"))
                conn.execute(S.meta.insert().values(key=f"migrated_from_{version}", value=_now()))
        self._load_meta()

    def _load_meta(self) -> None:
        if self.path is not None and not self.read_only:
            # persistent in the file: readers and writers no longer block each other
            raw = self.engine.raw_connection()
            try:
                cur = raw.cursor()
                if cur.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    cur.execute("PRAGMA journal_mode = WAL")
                cur.close()
            finally:
                raw.close()
        with self.engine.connect() as conn:
            self.meta = dict(conn.execute(sa.select(S.meta.c.key, S.meta.c.value)).all())

    @property
    def store_id(self) -> str:
        return self.meta.get("store_id", "")

    @property
    def schema_version(self) -> int:
        return int(self.meta["schema_version"])

    def seed_secret(self) -> bytes:
        """The board's secret for hidden evaluation seeds (created with the store; never exported or sent)."""
        value = self.meta.get("seed_secret")
        if not value:  # a store made before the secret existed: create it now, once
            with self._write() as conn, conn.begin():
                row = conn.execute(sa.select(S.meta.c.value).where(S.meta.c.key == "seed_secret")).scalar()
                if row is None:
                    row = secrets.token_hex(32)
                    conn.execute(S.meta.insert().values(key="seed_secret", value=row))
            self.meta["seed_secret"] = value = row
        return bytes.fromhex(value)

    def damaged(self, **filters: Any) -> dict[str, str]:
        """``{run_id: reason}`` for the selected runs whose values no longer match their content hash."""
        ids = list(self.runs_frame(columns=["run_id"], parse_json=False, **filters)["run_id"])
        if not ids:
            return {}
        with self.engine.connect() as conn:
            return damaged_runs(conn, ids)

    # -- writing -------------------------------------------------------------------------------

    def add(self, records: Any, source: str | list[str] = "", on_conflict: str = "replace") -> int:
        """Store records; returns the number of runs stored (added or replacing). See :meth:`put`."""
        result = self.put(records, source, on_conflict)
        return result.added + result.replaced

    def put(self, records: Any, source: str | list[str] = "", on_conflict: str = "replace") -> "PutResult":
        """Store records in one transaction, keeping one current run per run key.

        A record whose ``run_id`` is already stored is the same run: nothing happens. A record whose
        run key is stored under another run id is a rerun of that work: ``on_conflict="replace"``
        deletes the stored run (episodes included) and stores the new one; ``"skip"`` keeps the
        stored one. Within a batch the last record of a key wins. ``source`` says where the records
        came from (one string, or one per record). Concurrent writers of the same keys end with one
        run per key (the store's unique index on ``run_key`` decides the race)."""
        if on_conflict not in ("replace", "skip"):
            raise ValueError(f"on_conflict must be 'replace' or 'skip', got {on_conflict!r}")
        recs = as_records(records)
        if not recs:
            return PutResult()
        if isinstance(source, str):
            source = [source] * len(recs)
        elif len(source) != len(recs):
            raise ValueError(f"got {len(source)} sources for {len(recs)} records")
        by_key: dict[str, tuple[RunRecord, str]] = {}
        for r, s in zip(recs, source):
            by_key[r.run_key] = (r, s)  # a batch may repeat a key; the last one wins
        added_at = _now()
        attempts = 0
        while True:
            attempts += 1
            try:
                with self._write() as conn, conn.begin():
                    result = PutResult()
                    stored = self._stored_keys(conn, list(by_key))  # key -> stored run id
                    same = self._existing(conn, [r.run_id for r, _ in by_key.values()])
                    replace_ids: list[str] = []
                    run_rows, ep_rows, val_rows = [], [], []
                    for key, (r, src) in by_key.items():
                        old = stored.get(key)
                        if old == r.run_id or r.run_id in same:
                            result.unchanged += 1
                            continue
                        if old is not None:
                            if on_conflict == "skip":
                                result.skipped += 1
                                continue
                            replace_ids.append(old)
                            result.replaced += 1
                        else:
                            result.added += 1
                        a, b, c = _rows(r, src, added_at)
                        run_rows.append(a)
                        ep_rows += b
                        val_rows += c
                    if replace_ids:
                        self._delete_ids(conn, replace_ids)
                    if run_rows:
                        conn.execute(S.runs.insert(), run_rows)
                    if ep_rows:
                        conn.execute(S.episodes.insert(), ep_rows)
                    if val_rows:
                        conn.execute(S.episode_values.insert(), val_rows)
                return result
            except sa.exc.IntegrityError:
                # another writer stored one of these keys between our check and insert
                # (possible on PostgreSQL); the transaction rolled back, so try again
                if attempts >= 5:
                    raise
            except sa.exc.OperationalError as err:
                raise StoreError(f"could not write to {self.display_url}: {err.orig}") from None

    @staticmethod
    def _stored_keys(conn: sa.Connection, keys: list[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for i in range(0, len(keys), 500):
            chunk = keys[i : i + 500]
            found.update(conn.execute(sa.select(S.runs.c.run_key, S.runs.c.run_id).where(S.runs.c.run_key.in_(chunk))).all())
        return found

    @staticmethod
    def _delete_ids(conn: sa.Connection, run_ids: list[str]) -> None:
        # episodes first: not every backend enforces ON DELETE CASCADE on every connection
        for i in range(0, len(run_ids), 500):
            chunk = run_ids[i : i + 500]
            for table in (S.episode_values, S.episodes, S.runs):
                conn.execute(table.delete().where(table.c.run_id.in_(chunk)))

    def delete(self, **filters: Any) -> int:
        """Delete the runs matching ``filters`` (as for :meth:`where`; at least one must be given),
        episodes included, in one transaction. Returns the number of runs deleted."""
        if not any(v is not None for v in filters.values()):
            raise ValueError("delete needs at least one filter (env, agent, tier, status, suite, task, run_id, ...)")
        with self._write() as conn, conn.begin():
            ids = list(conn.execute(sa.select(S.runs.c.run_id).where(*self.where(**filters))).scalars())
            if ids:
                self._delete_ids(conn, ids)
        return len(ids)

    @staticmethod
    def _existing(conn: sa.Connection, run_ids: list[str]) -> set[str]:
        found: set[str] = set()
        for i in range(0, len(run_ids), 500):
            chunk = run_ids[i : i + 500]
            found.update(conn.execute(sa.select(S.runs.c.run_id).where(S.runs.c.run_id.in_(chunk))).scalars())
        return found

    # -- reading -------------------------------------------------------------------------------

    def where(self, **filters: Any) -> list[sa.ColumnElement[bool]]:
        """SQL conditions on the runs table for the filters env, agent, tier, status, suite, task, run_id, source, device."""
        unknown = set(filters) - set(FILTERS)
        if unknown:
            raise TypeError(f"unknown filter(s) {sorted(unknown)}; filters are {list(FILTERS)}")
        conds: list[sa.ColumnElement[bool]] = []
        for key, value in filters.items():
            if value is None:
                continue
            values = [value] if isinstance(value, (str, int)) else list(value)
            if key == "env":
                ids = []
                for v in values:
                    try:
                        ids.append(card(v).id)
                    except UnknownEnvError:
                        ids.append(v)  # a record merged from an installation with more families
                conds.append(S.runs.c.env_id.in_(ids))
            elif key == "device":  # a device type ("cpu", "cuda") or name ("NVIDIA H100 80GB HBM3")
                conds.append(sa.or_(S.runs.c.device_type.in_(values), S.runs.c.device_name.in_(values)))
            elif key == "agent":
                conds.append(S.runs.c.agent_name.in_(values))
            elif key == "suite":
                labels: list[str] = []
                names: list[str] = []
                for v in values:
                    if isinstance(v, str):
                        try:
                            labels += [task_label(e, k) for e, k in suite(v)]
                        except KeyError:
                            names.append(v)  # not in this catalog: the suite the runs were submitted under
                    else:
                        e, k = v
                        labels.append(task_label(card(e).id, k))
                parts = []
                if labels:
                    parts.append(S.runs.c.task.in_(labels))
                if names:
                    parts.append(S.runs.c.suite.in_(names))
                conds.append(sa.or_(*parts))
            else:
                conds.append(getattr(S.runs.c, key).in_(values))
        return conds

    def runs_frame(self, columns: Iterable[str] | None = None, parse_json: bool = True, **filters: Any) -> pd.DataFrame:
        cols = [getattr(S.runs.c, c) for c in columns] if columns else list(S.runs.c)
        q = sa.select(*cols).where(*self.where(**filters)).order_by(S.runs.c.env_id, S.runs.c.task, S.runs.c.agent_name, S.runs.c.seed, S.runs.c.run_id)
        with self.engine.connect() as conn:
            rows = conn.execute(q).all()
        df = pd.DataFrame(rows, columns=[c.name for c in cols])
        if parse_json:
            for f in JSON_FIELDS:
                if f in df.columns:
                    df[f] = [json.loads(v) for v in df[f]]
        return df

    def run_ids_subquery(self, **filters: Any):
        return sa.select(S.runs.c.run_id).where(*self.where(**filters))

    def episodes_frame(self, **filters: Any) -> pd.DataFrame:
        """One row per episode with run fields, ``return``, ``length``, metrics, and ``cost.<name>`` columns."""
        sub = self.run_ids_subquery(**filters)
        r, e, v = S.runs.c, S.episodes.c, S.episode_values.c
        q = (
            sa.select(e.run_id, r.env_id, r.task, r.tier, r.agent_name, r.agent_source_hash, r.seed, r.status, e.episode, e.ret, e.length, e.wall_time)
            .join_from(S.episodes, S.runs, e.run_id == r.run_id)
            .where(e.run_id.in_(sub))
            .order_by(r.env_id, r.task, r.agent_name, r.seed, e.run_id, e.episode)
        )
        qv = sa.select(v.run_id, v.episode, v.kind, v.name, v.value).where(v.run_id.in_(sub))
        with self.engine.connect() as conn:
            base = pd.DataFrame(conn.execute(q).all(), columns=["run_id", "env_id", "task", "tier", "agent_name", "agent_source_hash", "seed", "status", "episode", "return", "length", "wall_time"])
            vals = pd.DataFrame(conn.execute(qv).all(), columns=["run_id", "episode", "kind", "name", "value"])
        if not vals.empty:
            vals["column"] = vals["name"].where(vals["kind"] == "metric", "cost." + vals["name"])
            wide = vals.pivot_table(index=["run_id", "episode"], columns="column", values="value", aggfunc="first", dropna=False)
            wide.columns.name = None
            metric_cols = sorted(c for c in wide.columns if not c.startswith("cost."))
            cost_cols = sorted(c for c in wide.columns if c.startswith("cost."))
            # a metric named like a base column ("return", "length", ...) keeps a metric. prefix
            wide = wide[metric_cols + cost_cols].rename(columns={c: f"metric.{c}" for c in metric_cols if c in base.columns})
            base = base.merge(wide.reset_index(), on=["run_id", "episode"], how="left")
        return base

    def run_metric(self, metric: str, env_ids: list[str], **filters: Any) -> pd.DataFrame:
        """Per run: the mean of ``metric`` over its episodes and the episode count (computed in SQL)."""
        sub = sa.select(S.runs.c.run_id).where(*self.where(**filters), S.runs.c.env_id.in_(env_ids))
        if metric in ("return", "length"):
            col = S.episodes.c.ret if metric == "return" else S.episodes.c.length
            q = sa.select(S.episodes.c.run_id, sa.func.avg(col), sa.func.count(col)).where(S.episodes.c.run_id.in_(sub)).group_by(S.episodes.c.run_id)
        else:
            v = S.episode_values.c
            q = (
                sa.select(v.run_id, sa.func.avg(v.value), sa.func.count(v.value))
                .where(v.kind == "metric", v.name == metric, v.run_id.in_(sub))
                .group_by(v.run_id)
            )
        with self.engine.connect() as conn:
            return pd.DataFrame(conn.execute(q).all(), columns=["run_id", "score", "n_scored"])

    def run_costs(self, **filters: Any) -> pd.DataFrame:
        """Per run: every cost counter summed over its episodes (computed in SQL), wide."""
        v = S.episode_values.c
        q = (
            sa.select(v.run_id, v.name, sa.func.sum(v.value))
            .where(v.kind == "cost", v.run_id.in_(self.run_ids_subquery(**filters)))
            .group_by(v.run_id, v.name)
        )
        with self.engine.connect() as conn:
            long = pd.DataFrame(conn.execute(q).all(), columns=["run_id", "name", "value"])
        if long.empty:
            return pd.DataFrame({"run_id": pd.Series(dtype=object)})
        wide = long.pivot(index="run_id", columns="name", values="value")
        wide.columns = [f"cost.{c}" for c in wide.columns]
        return wide.reset_index()

    def iter_records(self, batch: int = 500, **filters: Any) -> Iterator[RunRecord]:
        """The stored runs as RunRecords (episodes included), in batches of ``batch`` runs."""
        ids = list(self.runs_frame(columns=["run_id"], parse_json=False, **filters)["run_id"])
        for i in range(0, len(ids), batch):
            chunk = ids[i : i + batch]
            with self.engine.connect() as conn:
                rows = {r["run_id"]: r for r in conn.execute(sa.select(S.runs).where(S.runs.c.run_id.in_(chunk))).mappings()}
                recs = [rec for rec, _ in records_from_rows(conn, [rows[r] for r in chunk if r in rows])]
            yield from recs

    def sources(self, run_ids: list[str]) -> dict[str, str]:
        out: dict[str, str] = {}
        with self.engine.connect() as conn:
            for i in range(0, len(run_ids), 500):
                out.update(conn.execute(sa.select(S.runs.c.run_id, S.runs.c.source).where(S.runs.c.run_id.in_(run_ids[i : i + 500]))).all())
        return out

    def close(self) -> None:
        self.engine.dispose()
