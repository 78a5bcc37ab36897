"""A Design2Code-style visual score of a candidate page against the target, plus SSIM.

Design2Code (Si et al., 2024) matches the blocks of the reference and the candidate
and scores block match, text, position, colour and CLIP similarity. Here:

- elements are matched one to one by the Hungarian algorithm on
  ``1 - (0.5 IoU + 0.25 same type + 0.25 colour similarity)``, keeping pairs that overlap;
- ``block`` = area of matched elements (both sides) / area of all elements;
- ``text`` = difflib ratio of each target text with its match's text, averaged over the
  target's texts (unmatched: 0);
- ``position`` = ``1 - max(|dx|, |dy|)`` of matched centres (normalised by the page size) and
  ``colour`` = ``1 - RGB distance / (255 sqrt 3)`` of matched background colours, each averaged
  over the target's elements (unmatched: 0). Design2Code averages these over matched pairs
  only, which gives an empty page full marks; it also uses CIEDE2000 where RGB keeps it exact;
- ``ssim`` = SSIM of the grey screenshots (7x7 uniform window) in place of CLIP
  (no pretrained image model installs offline).

``score`` is the mean of the five parts, in [0, 1]; 1 means the same page.
"""

from __future__ import annotations

from difflib import SequenceMatcher

import numpy as np
from scipy.ndimage import uniform_filter
from scipy.optimize import linear_sum_assignment

from icmlgym.envs.ui.render import Element, Render

PARTS: tuple[str, ...] = ("block", "text", "position", "colour", "ssim")
SSIM_WINDOW = 7


def _arrays(elements: list[Element]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    boxes = np.array([e.box for e in elements], dtype=np.float64).reshape(-1, 4)
    cols = np.array([e.colour if e.colour is not None else (-1000, -1000, -1000) for e in elements], dtype=np.float64).reshape(-1, 3)
    has = np.array([e.colour is not None for e in elements], dtype=bool)
    return boxes, cols, has


def _iou(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    ax0, ay0, ax1, ay1 = a[:, 0:1], a[:, 1:2], a[:, 0:1] + a[:, 2:3], a[:, 1:2] + a[:, 3:4]
    bx0, by0, bx1, by1 = b[:, 0], b[:, 1], b[:, 0] + b[:, 2], b[:, 1] + b[:, 3]
    iw = np.clip(np.minimum(ax1, bx1) - np.maximum(ax0, bx0), 0, None)
    ih = np.clip(np.minimum(ay1, by1) - np.maximum(ay0, by0), 0, None)
    inter = iw * ih
    union = (a[:, 2:3] * a[:, 3:4]) + (b[:, 2] * b[:, 3]) - inter
    return np.where(union > 0, inter / np.maximum(union, 1e-9), 0.0)


_GREY = np.array([0.299, 0.587, 0.114], dtype=np.float32)
_C1, _C2 = (0.01 * 255) ** 2, (0.03 * 255) ** 2


def _grey_stats(image: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x = image.astype(np.float32) @ _GREY
    mx = uniform_filter(x, SSIM_WINDOW)
    return x, mx, uniform_filter(x * x, SSIM_WINDOW) - mx * mx


def ssim(a: np.ndarray, b: np.ndarray, _a_stats: tuple | None = None) -> float:
    """Mean SSIM of two (H, W, 3) uint8 images in grey (Wang et al. 2004; a 7x7 uniform
    window, as scikit-image's default)."""
    if a.shape != b.shape:
        raise ValueError(f"SSIM needs images of the same shape, got {a.shape} and {b.shape}")
    x, mx, sxx = _a_stats if _a_stats is not None else _grey_stats(a)
    y, my, syy = _grey_stats(b)
    sxy = uniform_filter(x * y, SSIM_WINDOW) - mx * my
    s = ((2 * mx * my + _C1) * (2 * sxy + _C2)) / ((mx * mx + my * my + _C1) * (sxx + syy + _C2))
    return float(s.mean())


def score_parts(target: Render, candidate: Render) -> dict[str, float]:
    """The five parts and their mean (key ``score``) of ``candidate`` against ``target``."""
    h, w = target.image.shape[:2]
    te, ce = target.elements, candidate.elements
    parts = {k: 0.0 for k in PARTS}
    if te and ce:
        tb, tc, th = _arrays(te)
        cb, cc, ch = _arrays(ce)
        iou = _iou(tb, cb)
        same = np.array([[a.type == b.type for b in ce] for a in te], dtype=np.float64)
        dist = np.linalg.norm(tc[:, None, :] - cc[None, :, :], axis=-1)
        both = th[:, None] & ch[None, :]
        csim = np.where(both, 1.0 - np.clip(dist / (255 * np.sqrt(3)), 0, 1), (~th[:, None] & ~ch[None, :]).astype(float))
        rows, cols = linear_sum_assignment(1.0 - (0.5 * iou + 0.25 * same + 0.25 * csim))
        keep = iou[rows, cols] > 0
        rows, cols = rows[keep], cols[keep]
        t_area, c_area = tb[:, 2] * tb[:, 3], cb[:, 2] * cb[:, 3]
        total = t_area.sum() + c_area.sum()
        parts["block"] = float((t_area[rows].sum() + c_area[cols].sum()) / total) if total > 0 else 0.0
        # text, position and colour average over the target's elements (an unmatched one counts 0),
        # so a page that leaves blocks out cannot score full marks on the matched few
        n_text = sum(1 for e in te if e.text)
        texts = [SequenceMatcher(None, te[i].text, ce[j].text).ratio() for i, j in zip(rows, cols) if te[i].text]
        parts["text"] = float(sum(texts) / n_text) if n_text else float(not any(e.text for e in ce))
        if len(rows):
            tcx, tcy = tb[rows, 0] + tb[rows, 2] / 2, tb[rows, 1] + tb[rows, 3] / 2
            ccx, ccy = cb[cols, 0] + cb[cols, 2] / 2, cb[cols, 1] + cb[cols, 3] / 2
            near = 1.0 - np.maximum(np.abs(tcx - ccx) / w, np.abs(tcy - ccy) / h).clip(0, 1)
            parts["position"] = float(near.sum() / len(te))
            parts["colour"] = float(csim[rows, cols].sum() / len(te))
    stats = getattr(target, "_ssim_stats", None)
    if stats is None:  # the target is scored against many candidates: filter it once
        stats = _grey_stats(target.image)
        object.__setattr__(target, "_ssim_stats", stats)
    parts["ssim"] = max(0.0, ssim(target.image, candidate.image, stats))
    parts["score"] = float(np.mean([parts[k] for k in PARTS]))
    return parts
