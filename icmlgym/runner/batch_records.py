"""The records of one batched episode: one :class:`EpisodeRecord` per seed from the batch's arrays.

Shared by the single-agent loop (:mod:`icmlgym.runner.batched`) and the multi-agent one
(:mod:`icmlgym.runner.batched_multi`).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from icmlgym.runner.record import EpisodeRecord


def episode_records(ep: int, returns: np.ndarray, lengths: Sequence[int], info: dict[str, Any], wall: float,
                    has_metrics: Sequence[bool] | None = None) -> list[EpisodeRecord]:
    """Episode ``ep`` of every seed: its return, length, and its entries of the final vector info's
    ``metrics`` and ``cost`` arrays (shape ``(N,)``; ``env_steps`` defaults to the length). A seed whose
    ``has_metrics`` entry is False gets no metrics (all get them when it is None)."""
    metrics = info.get("metrics", {})
    cost = info.get("cost", {})
    out = []
    for i in range(len(returns)):
        m = {k: float(v[i]) for k, v in metrics.items() if np.ndim(v) == 1} if has_metrics is None or has_metrics[i] else {}
        c = {k: float(v[i]) for k, v in cost.items()}
        c.setdefault("env_steps", float(lengths[i]))
        out.append(EpisodeRecord(ep, float(returns[i]), int(lengths[i]), m, c, wall))
    return out


__all__ = ["episode_records"]
