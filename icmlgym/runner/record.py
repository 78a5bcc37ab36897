"""Run records: what one (env, agent, seed, tier) run produced, as the leaderboard stores it."""

from __future__ import annotations

import json
import uuid
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from icmlgym.catalog import canonical_json, short_hash

STATUSES = ("ok", "failed", "timeout")
RECORD_VERSION = 1


@dataclass
class EpisodeRecord:
    """One evaluation episode: its return, length, the env's metrics and cost counters."""

    episode: int
    ret: float
    length: int
    metrics: dict[str, float] = field(default_factory=dict)
    cost: dict[str, float] = field(default_factory=dict)
    wall_time: float = 0.0


@dataclass
class RunRecord:
    """Everything about one run (see DESIGN.md, "A run record")."""

    env_id: str
    agent_name: str
    seed: int
    tier: str
    env_kwargs: dict[str, Any] = field(default_factory=dict)
    env_spec: dict[str, Any] = field(default_factory=dict)
    agent_entry_point: str = ""
    agent_source_hash: str = ""
    # hash of the agent's source plus the icmlgym modules the agent and the env import (icmlgym.codehash)
    code_hash: str = ""
    # hash of the env's module and the icmlgym modules it imports
    env_source_hash: str = ""
    agent_kwargs: dict[str, Any] = field(default_factory=dict)
    status: str = "ok"
    error: str = ""
    episodes: list[EpisodeRecord] = field(default_factory=list)
    cost: dict[str, float] = field(default_factory=dict)
    wall_time: float = 0.0
    train_wall_time: float = 0.0
    hardware: dict[str, Any] = field(default_factory=dict)
    device: dict[str, Any] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    git_commit: str = ""
    timestamp: str = field(default_factory=lambda: datetime.now(timezone.utc).isoformat(timespec="seconds"))
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    suite: str = ""
    attempts: int = 1
    record_version: int = RECORD_VERSION
    # isolated runs: {"sandbox": "bwrap" | "none", "seeds": "hidden" | "public", ...}; {} for a local run
    isolation: dict[str, Any] = field(default_factory=dict)
    log: str = ""  # the agent's stdout/stderr of an isolated run, capped (see icmlgym.runner.sandbox)

    def __post_init__(self) -> None:
        if self.status not in STATUSES:
            raise ValueError(f"status must be one of {STATUSES}, got {self.status!r}")
        self.episodes = [e if isinstance(e, EpisodeRecord) else EpisodeRecord(**e) for e in self.episodes]

    @property
    def env_spec_hash(self) -> str:
        return short_hash(self.env_spec)

    @property
    def run_key(self) -> str:
        """Identifies the work (not the attempt): entry (agent name and kwargs), env, env kwargs, tier,
        seed and code. The same key means the same run, so a resumed sweep skips it and the store
        keeps one current run per key. Records from before ``code_hash`` key on the agent's source."""
        code = self.code_hash or self.agent_source_hash
        device = str((self.device or {}).get("requested", "cpu") or "cpu")
        hidden = (self.isolation or {}).get("seeds") == "hidden"
        return run_key(self.env_id, self.env_kwargs, self.tier, self.agent_name, code, self.seed, self.agent_kwargs, device, hidden)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["env_spec_hash"] = self.env_spec_hash
        d["run_key"] = self.run_key
        return json.loads(canonical_json(d))

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "RunRecord":
        d = {k: v for k, v in d.items() if k not in ("env_spec_hash", "run_key")}
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:
            raise ValueError(f"unknown run record fields: {sorted(unknown)}")
        return cls(**d)

    def metric(self, name: str) -> list[float]:
        """The named metric of every episode (``return`` and ``length`` always exist)."""
        out = []
        for e in self.episodes:
            if name == "return":
                out.append(e.ret)
            elif name == "length":
                out.append(float(e.length))
            elif name in e.metrics:
                out.append(float(e.metrics[name]))
            else:
                raise KeyError(f"episode {e.episode} of run {self.run_id} has no metric {name!r}; has {sorted(e.metrics)}")
        return out


def run_key(env_id: str, env_kwargs: dict, tier: str, agent_name: str, code: str, seed: int, agent_kwargs: dict | None = None,
            device: str = "cpu", hidden: bool = False) -> str:
    """The run key of (entry, env, kwargs, tier, seed, code); ``code`` is a record's ``code_hash``.
    A device other than the CPU (``cuda``, ``auto``) is part of the entry's configuration too, and a
    run on the board's hidden instances (a submission) is other work than the public seed's."""
    parts: list = [env_id, env_kwargs, tier, agent_name, code, int(seed), agent_kwargs or {}]
    if device not in ("", "cpu"):
        parts.append(device)
    if hidden:
        parts.append("hidden-seeds")
    return short_hash(parts, n=20)
