"""Craft episode tables for tests, played by the runner (one rollout, the runner's seeding)."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

import icmlgym
from icmlgym.envs.craft.metrics import from_records

ID = "icmlgym/Craft-v0"


def episode_table(agent: str, tasks: Sequence[str], seeds: Sequence[int], **env_kwargs: Any) -> pd.DataFrame:
    """One episode per (task, seed) through ``icmlgym.run`` in process: the table of :mod:`icmlgym.envs.craft.metrics`."""
    records = [
        rec
        for task in tasks
        for rec in icmlgym.run(ID, agent, seeds=list(seeds), env_kwargs={"task": task, **env_kwargs}, episodes=1, executor="inprocess")
    ]
    return from_records(records)
