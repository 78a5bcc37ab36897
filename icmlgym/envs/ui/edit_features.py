"""What a small edit policy sees: the applicable edits of the current page and a feature vector each.

:func:`candidates` lists, from an observation of ``UIRefine-v0`` alone (target and current
screenshots, the current page's layout table), every edit of :data:`CANDIDATE_OPS` that applies
to an existing block, with features that say how the target screenshot differs from the current
one where the edit acts:

- ``colour_match``: share of the block's own pixels (its box minus its children's) that have the
  new colour in the target, minus the share that have its current colour;
- ``edge_match``: for a size change, how much the strip the edge sweeps agrees with the block's
  colour in the target (growing) or disagrees (shrinking), minus the same in the current render;
- ``delete_match``: share of the block's own pixels that show its parent's colour in the target;
- ``mismatch_<op>``: share of the block's box where the two screenshots differ (one feature per
  op, so that a policy can learn which ops to aim where the page is wrong);
- one bias per op.

Pixel shares come from per-colour integral images, so every rectangle costs O(1).
"""

from __future__ import annotations

import numpy as np

from icmlgym.envs.ui.edits import DELTAS, N_ARGS, OPS
from icmlgym.envs.ui.layout import BLOCK_TYPES, CONTAINERS, PALETTE, TEXT_TYPES

CANDIDATE_OPS: tuple[str, ...] = ("noop", "colour", "width", "height", "text", "gap", "padding", "delete")
FEATURES: tuple[str, ...] = (
    tuple(f"bias_{o}" for o in CANDIDATE_OPS)
    + ("colour_match", "edge_match", "delete_match")
    + tuple(f"mismatch_{o}" for o in CANDIDATE_OPS[1:])
)
_CODES = np.array([r << 16 | g << 8 | b for r, g, b in PALETTE])
_ORDER = np.argsort(_CODES)
_CONTAINER_IDS = np.array([BLOCK_TYPES.index(t) for t in CONTAINERS])
_TEXT_IDS = np.array([BLOCK_TYPES.index(t) for t in TEXT_TYPES])


def palette_index(image: np.ndarray) -> np.ndarray:
    """(H, W) index of each pixel's colour in PALETTE, -1 for any other colour (text glyphs, anti-aliasing)."""
    code = image[..., 0].astype(np.int64) << 16 | image[..., 1].astype(np.int64) << 8 | image[..., 2].astype(np.int64)
    pos = np.searchsorted(_CODES[_ORDER], code).clip(0, len(_CODES) - 1)
    idx = _ORDER[pos]
    return np.where(_CODES[idx] == code, idx, -1)


def integral(index: np.ndarray) -> np.ndarray:
    """(P, H+1, W+1) integral images of the indicator of each palette colour."""
    h, w = index.shape
    out = np.zeros((len(PALETTE), h + 1, w + 1), dtype=np.int32)
    for p in np.unique(index[index >= 0]):  # colours absent from the image stay all-zero
        out[p, 1:, 1:] = np.cumsum(np.cumsum(index == p, axis=0, dtype=np.int32), axis=1, dtype=np.int32)
    return out


def _count(ii: np.ndarray, p: np.ndarray, x0, y0, x1, y1) -> np.ndarray:
    h, w = ii.shape[1] - 1, ii.shape[2] - 1
    x0, x1 = np.clip(x0, 0, w), np.clip(x1, 0, w)
    y0, y1 = np.clip(y0, 0, h), np.clip(y1, 0, h)
    x1, y1 = np.maximum(x0, x1), np.maximum(y0, y1)
    return (ii[p, y1, x1] - ii[p, y0, x1] - ii[p, y1, x0] + ii[p, y0, x0]).astype(np.float64)


def candidates(obs: dict, ops: tuple[str, ...] = CANDIDATE_OPS, cache: dict | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(edits (K, 3) int64, features (K, len(FEATURES)) float64) for the applicable edits of ``ops``.
    ``cache`` (a dict the caller keeps) saves the target's integral images between rounds."""
    L = np.asarray(obs["layout"])
    rows = np.flatnonzero(L[:, 0] > 0)
    n = len(rows)
    target = np.ascontiguousarray(obs["target"])
    key = hash(target.tobytes())
    if cache is not None and cache.get("key") == key:
        t_ii = cache["ii"]
    else:
        t_ii = integral(palette_index(target))
        if cache is not None:
            cache.update(key=key, ii=t_ii)
    c_ii = integral(palette_index(obs["current"]))
    diff = np.any(np.asarray(obs["current"]) != target, axis=-1)
    d_ii = np.zeros((1, diff.shape[0] + 1, diff.shape[1] + 1), dtype=np.int32)
    d_ii[0, 1:, 1:] = np.cumsum(np.cumsum(diff, axis=0, dtype=np.int32), axis=1, dtype=np.int32)
    typ = L[rows, 1].astype(int)
    parent = L[rows, 2].astype(int)
    x, y, w, h = (L[rows, k].astype(np.int64) for k in (4, 5, 6, 7))
    col_idx = np.array([_palette_of(L[r, 8:11]) for r in rows])
    area = (w * h).astype(np.float64)
    pal = np.arange(len(PALETTE))[None, :]
    # own pixels: the box minus the children's boxes, counted per colour on the target
    box_t = _count(t_ii, pal, x[:, None], y[:, None], (x + w)[:, None], (y + h)[:, None])
    own_t, own_area = box_t.copy(), area.copy()
    kids = np.flatnonzero((parent >= 0) & (parent < n))
    np.subtract.at(own_t, parent[kids], box_t[kids])
    np.subtract.at(own_area, parent[kids], area[kids])
    mismatch = _count(d_ii, np.zeros(n, dtype=int), x, y, x + w, y + h) / np.maximum(area, 1.0)
    share = np.where(own_area[:, None] >= 4, own_t / np.maximum(own_area, 1.0)[:, None], 0.0).clip(0.0, 1.0)
    # size changes: the strip each delta sweeps, for every block at once
    d = np.array(DELTAS)[None, :]
    cbp = np.maximum(col_idx, 0)[:, None]
    edge: dict[str, np.ndarray] = {}
    for op in ("width", "height"):
        pos, size = (x, w) if op == "width" else (y, h)
        lo = np.where(d > 0, (pos + size)[:, None], (pos + size)[:, None] + d)
        hi = np.where(d > 0, (pos + size)[:, None] + d, (pos + size)[:, None])
        if op == "width":
            rect = (lo, np.broadcast_to(y[:, None], lo.shape), hi, np.broadcast_to((y + h)[:, None], lo.shape))
            strip = (hi - lo) * h[:, None]
        else:
            rect = (np.broadcast_to(x[:, None], lo.shape), lo, np.broadcast_to((x + w)[:, None], lo.shape), hi)
            strip = (hi - lo) * w[:, None]
        strip = np.maximum(strip, 1).astype(np.float64)
        t_in = _count(t_ii, cbp, *rect) / strip
        c_in = _count(c_ii, cbp, *rect) / strip
        edge[op] = np.where(d > 0, t_in - c_in, c_in - t_in)

    nf = len(FEATURES)
    blocks, args = np.repeat(rows, N_ARGS), np.tile(np.arange(N_ARGS), n)
    kk = np.repeat(np.arange(n), N_ARGS)
    parts_e: list[np.ndarray] = []
    parts_f: list[np.ndarray] = []

    def add(sel: np.ndarray, op: str, feature: str | None = None, values: np.ndarray | None = None) -> None:
        m = int(sel.sum())
        if m == 0:
            return
        e = np.stack([blocks[sel], np.full(m, OPS.index(op)), args[sel]], 1)
        f = np.zeros((m, nf))
        f[:, CANDIDATE_OPS.index(op)] = 1.0
        if feature is not None:
            f[:, FEATURES.index(feature)] = values[sel]  # type: ignore[index]
        f[:, FEATURES.index(f"mismatch_{op}")] = mismatch[kk[sel]]
        parts_e.append(e)
        parts_f.append(f)

    if "noop" in ops:
        parts_e.append(np.array([[0, OPS.index("noop"), 0]]))
        f0 = np.zeros((1, nf))
        f0[0, CANDIDATE_OPS.index("noop")] = 1.0
        parts_f.append(f0)
    cb = col_idx[kk]
    if "colour" in ops:
        base = np.where(cb >= 0, share[kk, np.maximum(cb, 0)], 0.0)
        add(args != cb, "colour", "colour_match", share[kk, args] - base)
    for op in ("width", "height"):
        if op in ops:
            add(cb >= 0, op, "edge_match", edge[op].reshape(-1))
    if "text" in ops:
        add(np.isin(typ[kk], _TEXT_IDS) & (L[blocks, 11].astype(int) != args), "text")
    for op in ("gap", "padding"):
        if op in ops:
            add(np.isin(typ[kk], _CONTAINER_IDS), op)
    if "delete" in ops:
        pcol = np.array([col_idx[p] if 0 <= p < n else -1 for p in parent])
        dm = np.where(pcol >= 0, share[np.arange(n), np.maximum(pcol, 0)], 0.0)[kk]
        add((args == 0) & (blocks != 0), "delete", "delete_match", dm)
    if not parts_e:
        return np.zeros((0, 3), np.int64), np.zeros((0, nf))
    return np.concatenate(parts_e).astype(np.int64), np.concatenate(parts_f)


def _palette_of(rgb: np.ndarray) -> int:
    code = int(rgb[0]) << 16 | int(rgb[1]) << 8 | int(rgb[2])
    hit = np.flatnonzero(_CODES == code)
    return int(hit[0]) if len(hit) else -1
