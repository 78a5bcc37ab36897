"""The Golden Partition Zone paper's method on SplitInference-v0: the R_c^2 criterion (no attacks)."""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import BaseAgent
from icmlgym.envs.split.split_env import COMMIT, gpz_block

RATIO_COLUMN = 4  # R_c^2 / total variance in the observation's ``blocks`` table


class Rc2Agent(BaseAgent):
    """Commit, without probing and without noise, to the block after the largest drop of R_c^2 / total variance.

    The ratio column of the observation has one row for the input and one per block; the
    drops compared are those between consecutive blocks, the candidate split points
    (:func:`icmlgym.envs.split.split_env.gpz_block`); ``include_input=True`` lets the drop from
    the raw input into the first block compete too (agent ``split-rc2-input``).
    """

    def __init__(self, include_input: bool = False) -> None:
        self.include_input = bool(include_input)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        block = gpz_block(np.asarray(obs["blocks"])[:, RATIO_COLUMN], self.include_input)
        return np.array([COMMIT, block, 0], dtype=np.int64)


__all__ = ["Rc2Agent"]
