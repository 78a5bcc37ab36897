"""What every vector env checks: its ``num_envs``, its sub-envs' seeds (as Gymnasium's vector envs read
``reset(seed=...)``) and a step's ``Discrete`` actions."""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def checked_num_envs(num_envs: int) -> int:
    """``num_envs`` as an int, refused below 1 (every vector env's first check)."""
    if int(num_envs) < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    return int(num_envs)


_MAXIMUM = np.maximum.reduce


def discrete_actions(actions: Any, shape: tuple[int, ...], n: int) -> np.ndarray | None:
    """``actions`` as an integer array of ``shape`` with every entry in ``[0, n)``, or None where they are not.

    int64 arrays (what the agents return) cost one reduce: viewed as unsigned, a negative entry is huge."""
    a = actions if type(actions) is np.ndarray else np.asarray(actions)
    if a.shape != shape:
        return None
    if a.size == 0:
        return a if a.dtype.kind in "iu" else None
    if a.dtype == np.int64:
        return a if _MAXIMUM(a.view(np.uint64), axis=None) < n else None
    if a.dtype.kind in "iu" and int(a.min()) >= 0 and int(a.max()) < n:
        return a
    return None


def sub_env_seeds(seed: int | Sequence[int] | None, num_envs: int) -> list[int | None]:
    """One seed per sub-env: None for all, ``seed + i`` for one int (Gymnasium's rule), or the list as given
    (its length must be ``num_envs``)."""
    if seed is None:
        return [None] * num_envs
    if isinstance(seed, (int, np.integer)):
        return [int(seed) + i for i in range(num_envs)]
    seeds = list(seed)
    if len(seeds) != num_envs:
        raise ValueError(f"reset got {len(seeds)} seeds for {num_envs} envs")
    return seeds
