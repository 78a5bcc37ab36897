"""Fixtures for the leaderboard tests: constructed run records with known scores, and real ones."""

from __future__ import annotations

import uuid
from typing import Sequence

import pytest

import icmlgym
from icmlgym.runner.record import EpisodeRecord, RunRecord

BANDIT = "icmlgym/Bandit-v0"


def make_record(
    agent: str,
    seed: int,
    values: Sequence[float],
    env_id: str = BANDIT,
    env_kwargs: dict | None = None,
    tier: str = "smoke",
    status: str = "ok",
    metric: str = "pseudo_regret",
    cost: float = 1000.0,
    source_hash: str = "h0",
    agent_kwargs: dict | None = None,
    run_id: str | None = None,
    device: dict | None = None,
) -> RunRecord:
    """A run record whose episodes carry ``metric`` = each of ``values`` (none when not ok)."""
    eps = []
    if status == "ok":
        eps = [
            EpisodeRecord(episode=i, ret=-float(v), length=int(cost), metrics={metric: float(v), "best_arm_rate": 0.5}, cost={"env_steps": float(cost)}, wall_time=0.01)
            for i, v in enumerate(values)
        ]
    return RunRecord(
        env_id=env_id,
        agent_name=agent,
        seed=seed,
        tier=tier,
        env_kwargs=dict(env_kwargs or {}),
        env_spec={"id": env_id, "kwargs": dict(env_kwargs or {})},
        agent_entry_point=f"tests:{agent}",
        agent_source_hash=source_hash,
        agent_kwargs=dict(agent_kwargs or {}),
        status=status,
        error="" if status == "ok" else f"RuntimeError: {agent} crashed on seed {seed}",
        episodes=eps,
        cost={"env_steps": float(cost) * len(eps)},
        wall_time=0.1 + seed * 0.01,
        hardware={"cpu": "test", "cores": 2, "gpu": None},
        versions={"icmlgym": "test"},
        device=device or {"requested": "cpu", "type": "cpu", "name": "test-cpu"},
        run_id=run_id or uuid.uuid4().hex,
    )


@pytest.fixture
def store_path(tmp_path):
    return tmp_path / "board.db"


@pytest.fixture(scope="session")
def real_records():
    """Real runs of the Bandit-v0 baselines (3 seeds each, smoke tier)."""
    return (
        icmlgym.run(BANDIT, "ucb1", seeds=3)
        + icmlgym.run(BANDIT, "random", seeds=3)
        + icmlgym.run(BANDIT, "bandit-thompson", seeds=3)
    )


def write_v1_store(url: str, rec) -> None:
    """Write ``rec`` (a record or a list of them) into a fresh store at ``url`` with the version-1
    schema, as an old icmlgym did (which let a run key repeat)."""
    import sqlalchemy as sa

    from icmlgym.leaderboard import schema
    from icmlgym.leaderboard.store import _rows

    engine = sa.create_engine(url)
    md = schema.v1_metadata()
    runs, eps, vals = [], [], []
    for i, r in enumerate(rec if isinstance(rec, list) else [rec]):
        run, e, v = _rows(r, "", f"2026-01-01T00:00:{i:02d}+00:00")
        runs.append({k: x for k, x in run.items() if k not in schema.LATER_COLUMNS})
        eps += e
        vals += v
    with engine.begin() as conn:
        md.create_all(conn)
        conn.execute(md.tables["icmlgym_meta"].insert(), [{"key": "app", "value": "icmlgym-leaderboard"}, {"key": "schema_version", "value": "1"}, {"key": "store_id", "value": "old"}])
        conn.execute(md.tables["icmlgym_runs"].insert(), runs)
        conn.execute(md.tables["icmlgym_episodes"].insert(), eps)
        conn.execute(md.tables["icmlgym_episode_values"].insert(), vals)
    engine.dispose()
