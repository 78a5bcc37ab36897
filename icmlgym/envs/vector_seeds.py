"""Seeds of a vector env's sub-envs, as Gymnasium's vector envs read ``reset(seed=...)``."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def checked_num_envs(num_envs: int) -> int:
    """``num_envs`` as an int, refused below 1 (every vector env's first check)."""
    if int(num_envs) < 1:
        raise ValueError(f"num_envs must be at least 1, got {num_envs}")
    return int(num_envs)


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
