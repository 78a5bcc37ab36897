"""Where a split's inversion error should jump: the R_c^2 criterion and the predictors it is tested against.

Every predictor names a candidate split point among blocks ``1..L-1`` (block 0 has no
previous block to jump from): the R_c^2 criterion (:func:`gpz_block`), and the nulls of the
finding "the error jump follows the R_c^2 drop, not the dimension" (docs/split.md):

- dimension: the block(s) whose output dimension falls most from the previous block's. With
  constant width every hidden block has the same dimension, so the only fall is into the
  logits; if no block's dimension falls, every candidate ties (a uniformly chosen block);
- total variance: the block whose total variance changes most from the previous block's
  (absolute change of its logarithm), the "global variance" the paper says R_c^2 replaces.

A predictor's *hit* on one classifier is the probability that it names the block of the
largest error rise (:func:`error_jump_block`): 1 or 0, or ``1 / k`` when it names ``k`` tied
blocks (one drawn uniformly among them).
"""

from __future__ import annotations

import numpy as np

PREDICTORS: tuple[str, ...] = ("rc2", "dimension", "variance")
_DIM, _TOTAL, _RATIO = 0, 3, 4  # columns of the observation's ``blocks`` table (model.COLUMNS)


def gpz_block(ratios: np.ndarray, include_input: bool = False) -> int:
    """The R_c^2 criterion: the 0-based block after the largest drop of R_c^2 / total variance.

    ``ratios`` has one entry for the input and one per block (the ``rc2_ratio`` column).
    By default the drops compared are those between consecutive blocks (candidate split
    points): the drop into block ``b >= 1`` is ``ratios[b] - ratios[b + 1]``. With
    ``include_input`` the drop from the raw input into block 0 competes too.
    """
    r = np.asarray(ratios, dtype=np.float64)
    if r.ndim != 1 or len(r) < 3:
        raise ValueError(f"ratios must hold the input's and at least two blocks' ratios, got shape {r.shape}")
    if include_input:
        return int(np.argmax(r[:-1] - r[1:]))
    blocks = r[1:]
    return int(np.argmax(blocks[:-1] - blocks[1:])) + 1


def error_jump_block(errors: np.ndarray) -> int:
    """The block ``b >= 1`` whose reconstruction error rises most over block ``b - 1``'s (``errors``: one per block)."""
    e = np.asarray(errors, dtype=np.float64)
    if e.ndim != 1 or len(e) < 2 or not np.all(np.isfinite(e)):
        raise ValueError(f"errors must hold a finite error for each of at least two blocks, got {e.tolist()}")
    return int(np.argmax(np.diff(e))) + 1


def predicted_blocks(table: np.ndarray) -> dict[str, list[int]]:
    """Each predictor's block(s) from the per-block table (row 0 the input, row ``b + 1`` block ``b``)."""
    t = np.asarray(table, dtype=np.float64)
    if t.ndim != 2 or t.shape[0] < 3 or t.shape[1] <= _RATIO:
        raise ValueError(f"table must have the input's row and at least two blocks' rows of the env's columns, got shape {t.shape}")
    blocks = t[1:]
    fall = blocks[:-1, _DIM] - blocks[1:, _DIM]  # fall of dimension into block b (b = 1..L-1)
    change = np.abs(np.diff(np.log(np.maximum(blocks[:, _TOTAL], 1e-300))))
    return {
        "rc2": [gpz_block(t[:, _RATIO])],
        "dimension": [int(b) + 1 for b in np.flatnonzero(fall == fall.max())],
        "variance": [int(np.argmax(change)) + 1],
    }


def jump_hits(errors: np.ndarray, table: np.ndarray) -> dict[str, float]:
    """The block of the largest error rise and each predictor's hit on it (env metrics ``jump_*``).

    ``jump_at_chance`` is the hit of a block drawn uniformly among the candidates, ``1 / (L - 1)``.
    """
    if len(errors) != len(table) - 1:
        raise ValueError(f"errors has {len(errors)} entries, the table {len(table) - 1} blocks")
    jump = error_jump_block(errors)
    pred = predicted_blocks(table)
    out = {"jump_block": float(jump), "jump_at_chance": 1.0 / (len(errors) - 1)}
    for name in PREDICTORS:
        out[f"jump_at_{name}"] = float(jump in pred[name]) / len(pred[name])
    return out


__all__ = ["PREDICTORS", "error_jump_block", "gpz_block", "jump_hits", "predicted_blocks"]
