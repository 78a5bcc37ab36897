"""Integrity beyond SQLite's: a content hash per run, checked whenever runs are read.

SQLite's checksums catch a broken page, not a changed value: a flipped bit in a
stored metric reads back as another number. Each run therefore stores
``content_hash``, a SHA-256 over the canonical JSON of its whole record (every
field, every episode's return, length, metrics and cost counters, the log);
:func:`damaged_runs` recomputes it from what the store holds now, and the
leaderboard reports a run whose hash differs as ``damaged`` and never scores it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable, Iterator

import sqlalchemy as sa

from icmlgym.catalog import canonical_json
from icmlgym.leaderboard import schema as S
from icmlgym.runner.record import EpisodeRecord, RunRecord

_JSON = ("env_kwargs", "env_spec", "agent_kwargs", "cost", "hardware", "device", "versions", "isolation")
_NAN = float("nan")


def _no_negative_zero(x: Any) -> Any:
    # SQLite stores -0.0 as 0.0: hash both alike, or a run with a -0.0 return reads back "damaged"
    if isinstance(x, float) and x == 0.0:
        return 0.0
    if isinstance(x, dict):
        return {k: _no_negative_zero(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_no_negative_zero(v) for v in x]
    return x


def content_hash(rec: RunRecord) -> str:
    """The hash a run is stored with (32 hex digits)."""
    return hashlib.sha256(canonical_json(_no_negative_zero(rec.to_dict())).encode()).hexdigest()[:32]


def _run_rows(conn: sa.Connection, run_ids: list[str] | None) -> list[Any]:
    q = sa.select(S.runs)
    if run_ids is not None:
        q = q.where(S.runs.c.run_id.in_(run_ids))
    return list(conn.execute(q.order_by(S.runs.c.run_id)).mappings())


def records_from_rows(conn: sa.Connection, rows: Iterable[Any]) -> Iterator[tuple[RunRecord, str]]:
    """(record, stored content hash) for each runs-table row (a mapping), episodes read from ``conn``."""
    rows = list(rows)
    ids = [r["run_id"] for r in rows]
    e, v = S.episodes.c, S.episode_values.c
    eps: list[Any] = []
    vals: list[Any] = []
    for i in range(0, len(ids), 500):
        chunk = ids[i : i + 500]
        eps += conn.execute(sa.select(e.run_id, e.episode, e.ret, e.length, e.wall_time).where(e.run_id.in_(chunk)).order_by(e.run_id, e.episode)).all()
        vals += conn.execute(sa.select(v.run_id, v.episode, v.kind, v.name, v.value).where(v.run_id.in_(chunk))).all()
    by_ep: dict[tuple[str, int], dict[str, dict[str, float]]] = {}
    for rid, ep, kind, name, value in vals:
        slot = by_ep.setdefault((rid, ep), {"metric": {}, "cost": {}})
        slot[kind][name] = _NAN if value is None else value
    by_run: dict[str, list[EpisodeRecord]] = {}
    for rid, ep, ret, length, wall in eps:
        slot = by_ep.get((rid, ep), {"metric": {}, "cost": {}})
        by_run.setdefault(rid, []).append(EpisodeRecord(ep, _NAN if ret is None else ret, length, slot["metric"], slot["cost"], wall))
    for row in rows:
        parsed = {f: json.loads(row[f]) if isinstance(row.get(f), str) else (row.get(f) or {}) for f in _JSON if f in row}
        rec = RunRecord(
            env_id=row["env_id"], agent_name=row["agent_name"], seed=int(row["seed"]), tier=row["tier"],
            env_kwargs=parsed["env_kwargs"], env_spec=parsed["env_spec"], agent_entry_point=row["agent_entry_point"],
            agent_source_hash=row["agent_source_hash"], code_hash=row.get("code_hash", "") or "",
            env_source_hash=row.get("env_source_hash", "") or "", agent_kwargs=parsed["agent_kwargs"], status=row["status"],
            error=row["error"], episodes=by_run.get(row["run_id"], []), cost=parsed["cost"], wall_time=row["wall_time"],
            train_wall_time=row["train_wall_time"], hardware=parsed["hardware"], device=parsed["device"],
            versions=parsed["versions"], git_commit=row["git_commit"], timestamp=row["timestamp"], run_id=row["run_id"],
            suite=row["suite"], attempts=int(row["attempts"]), record_version=int(row["record_version"]),
            isolation=parsed.get("isolation", {}), log=row.get("log", "") or "",
        )
        yield rec, row.get("content_hash", "") or ""


def fill_content_hashes(conn: sa.Connection) -> int:
    """Store the content hash of every run that has none (used by the schema migration)."""
    rows = [r for r in _run_rows(conn, None) if not r.get("content_hash")]
    updates = [{"rid": rec.run_id, "h": content_hash(rec)} for rec, _ in records_from_rows(conn, rows)]
    if updates:
        conn.execute(sa.text("UPDATE icmlgym_runs SET content_hash = :h WHERE run_id = :rid"), updates)
    return len(updates)


def damaged_runs(conn: sa.Connection, run_ids: list[str] | None = None) -> dict[str, str]:
    """``{run_id: reason}`` for the runs whose stored values no longer match their content hash."""
    out: dict[str, str] = {}
    rows = _run_rows(conn, run_ids) if run_ids is None else [r for i in range(0, len(run_ids), 500) for r in _run_rows(conn, run_ids[i : i + 500])]
    for rec, stored in records_from_rows(conn, rows):
        if not stored:
            out[rec.run_id] = "no content hash stored"
            continue
        actual = content_hash(rec)
        if actual != stored:
            out[rec.run_id] = f"content hash {actual[:12]} differs from the stored {stored[:12]}: a stored value changed"
    return out




# -- SQLite's write-ahead log --------------------------------------------------------------------

_WAL_MAGIC = (0x377F0682, 0x377F0683)  # checksums little- / big-endian


def _wal_checksum(data: bytes, s0: int, s1: int, big: bool) -> tuple[int, int]:
    import numpy as np

    words = np.frombuffer(data, dtype=">u4" if big else "<u4").astype(np.uint64)
    mask = 0xFFFFFFFF
    x = words.tolist()
    for i in range(0, len(x), 2):
        s0 = (s0 + x[i] + s1) & mask
        s1 = (s1 + x[i + 1] + s0) & mask
    return s0, s1


def wal_damage(db_path: str | os.PathLike) -> str:
    """Why the write-ahead log beside ``db_path`` is damaged, or ``""`` when it is sound (or absent).

    SQLite reads a WAL up to its first frame whose checksum fails and ignores the rest, and a
    checkpoint then makes that loss permanent. A frame that carries the log's current salt but a
    wrong checksum, followed by more such frames, is damage (a torn or changed write); frames
    with an older salt are left over from before the last checkpoint and are normal."""
    import struct

    wal = Path(f"{os.fspath(db_path)}-wal")
    try:
        data = wal.read_bytes()
    except OSError:
        return ""
    if len(data) == 0:
        return ""
    if len(data) < 32:
        return f"{wal} is {len(data)} bytes, shorter than a WAL header"
    magic, version, page_size, _ckpt, salt1, salt2, c1, c2 = struct.unpack(">8I", data[:32])
    if magic not in _WAL_MAGIC:
        return f"{wal} does not start with a WAL header"
    big = magic == 0x377F0683
    s0, s1 = _wal_checksum(data[:24], 0, 0, big)
    if (s0, s1) != (c1, c2):
        return f"{wal}: the header's checksum does not match"
    frame = 24 + page_size
    n_frames = (len(data) - 32) // frame
    valid = 0
    for k in range(n_frames):
        off = 32 + k * frame
        head = data[off : off + 24]
        _pgno, _commit, fs1, fs2, fc1, fc2 = struct.unpack(">6I", head)
        if (fs1, fs2) != (salt1, salt2):
            break  # older frames from before the last checkpoint: the log ends here
        t0, t1 = _wal_checksum(head[:8], s0, s1, big)
        t0, t1 = _wal_checksum(data[off + 24 : off + frame], t0, t1, big)
        if (t0, t1) != (fc1, fc2):
            later = sum(1 for j in range(k + 1, n_frames) if struct.unpack(">2I", data[32 + j * frame + 8 : 32 + j * frame + 16]) == (salt1, salt2))
            return (f"{wal}: frame {k + 1} of {n_frames} has the log's salt but a wrong checksum; SQLite would silently "
                    f"drop it and the {later} frame(s) after it (committed runs)")
        s0, s1 = t0, t1
        valid += 1
    return ""


__all__ = ["content_hash", "damaged_runs", "fill_content_hashes", "records_from_rows", "wal_damage"]
