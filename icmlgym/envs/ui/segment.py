"""A one-shot screenshot-to-layout predictor: the single-pass baseline's "model".

:func:`predict_layout` segments a screenshot into the layout language in one pass, with no
rendering and no feedback: connected regions that differ from their container's colour
become child blocks (recursively), runs of small glyph marks become text blocks (the word
of VOCAB with as many letters as marks), and children are laid out as rows or columns with
the gap and padding read off the first two of them. Children that share their container's
colour (an invisible row, a text's box) cannot be seen, so the draft is close but not
exact: what iterative refinement then fixes.
"""

from __future__ import annotations

import numpy as np
from scipy import ndimage

from icmlgym.envs.ui.layout import DARK_TEXT, LIGHT_TEXT, VOCAB, Block

GLYPH_MAX_H = 8


def _word(n_marks: int) -> str:
    counts = [len(w.replace(" ", "")) for w in VOCAB]
    return VOCAB[int(np.argmin([abs(c - n_marks) for c in counts]))]


def _glyph_runs(rects: list[tuple[int, int, int, int]]) -> list[tuple[int, int, int, int, int]]:
    """Merge glyph marks on one line (gap <= 8 px) into runs (x, y, w, h, marks)."""
    runs: list[list[int]] = []
    for x, y, w, h in sorted(rects, key=lambda r: (r[1], r[0])):
        if runs and abs(runs[-1][1] - y) <= 1 and x - (runs[-1][0] + runs[-1][2]) <= 8:
            r = runs[-1]
            r[2] = x + w - r[0]
            r[4] += 1
        else:
            runs.append([x, y, w, h, 1])
    return [tuple(r) for r in runs]  # type: ignore[misc]


def _bands(items: list[tuple[int, int, int, int]]) -> list[list[int]]:
    """Group item indices into horizontal bands (items whose vertical extents overlap)."""
    order = sorted(range(len(items)), key=lambda i: items[i][1])
    bands: list[list[int]] = []
    bottom = -1
    for i in order:
        x, y, w, h = items[i]
        if bands and y < bottom:
            bands[-1].append(i)
            bottom = max(bottom, y + h)
        else:
            bands.append([i])
            bottom = y + h
    return [sorted(b, key=lambda i: items[i][0]) for b in bands]


def _arrange(parent: Block, px: int, py: int, items: list[tuple[tuple[int, int, int, int], Block]]) -> None:
    """Put ``items`` (box, block) into ``parent`` (at px, py) as flex children."""
    if not items:
        return
    boxes = [b for b, _ in items]
    bands = _bands(boxes)
    if len(bands) == 1:
        parent.direction = "row"
        seq = [items[i] for i in bands[0]]
    else:
        parent.direction = "column"
        seq = []
        for band in bands:
            if len(band) == 1:
                seq.append(items[band[0]])
            else:
                x0 = min(boxes[i][0] for i in band)
                y0 = min(boxes[i][1] for i in band)
                x1 = max(boxes[i][0] + boxes[i][2] for i in band)
                y1 = max(boxes[i][1] + boxes[i][3] for i in band)
                row = Block("row", x1 - x0, y1 - y0, parent.colour, direction="row")
                _arrange(row, x0, y0, [items[i] for i in band])
                row.padding = 0
                seq.append(((x0, y0, x1 - x0, y1 - y0), row))
    (fx, fy, fw, fh), _ = seq[0]
    parent.padding = max(0, min(fx - px, fy - py))
    if len(seq) > 1:
        (sx, sy, _, _), _ = seq[1]
        parent.gap = max(0, (sx - fx - fw) if parent.direction == "row" else (sy - fy - fh))
    parent.children = [b for _, b in seq]


def _fill(parent: Block, img: np.ndarray, x0: int, y0: int, x1: int, y1: int, depth: int) -> None:
    region = img[y0:y1, x0:x1]
    bg = np.array(parent.colour, dtype=img.dtype)
    mask = np.any(region != bg, axis=-1)
    if not mask.any():
        return
    lab, _ = ndimage.label(mask)
    glyphs: list[tuple[int, int, int, int]] = []
    items: list[tuple[tuple[int, int, int, int], Block]] = []
    for sl in ndimage.find_objects(lab):
        if sl is None:
            continue
        bx, by = sl[1].start + x0, sl[0].start + y0
        bw, bh = sl[1].stop - sl[1].start, sl[0].stop - sl[0].start
        colour = tuple(int(c) for c in img[by, bx])
        if bh <= GLYPH_MAX_H and colour in (DARK_TEXT, LIGHT_TEXT):
            glyphs.append((bx, by, bw, bh))
            continue
        child = Block("card", bw, bh, colour)
        _fill(child, img, bx, by, bx + bw, by + bh, depth + 1)
        has_text = any(c.type == "text" for c in child.children)
        if not child.children:
            child.type = "image"
        elif has_text and bh <= 16 and len(child.children) == 1:
            child.type, child.text, child.children = "button", child.children[0].text, []
        elif depth == 0 and by - y0 <= 8 and bw >= 0.8 * (x1 - x0) and bh <= 40:
            child.type = "header"
        elif depth <= 1 and bh >= 0.6 * (y1 - y0) and bw <= 0.4 * (x1 - x0):
            child.type = "sidebar"
        elif depth <= 1 and bh >= 0.6 * (y1 - y0):
            child.type = "main"
        items.append(((bx, by, bw, bh), child))
    for gx, gy, gw, gh, marks in _glyph_runs(glyphs):
        text = Block("text", gw + 2, 12, parent.colour, text=_word(marks))
        items.append(((gx, gy - 3, gw + 2, 12), text))
    _arrange(parent, x0, y0, items)


def predict_layout(image: np.ndarray) -> Block:
    """A page in the layout language predicted from a screenshot in one pass (see the module docstring)."""
    img = np.asarray(image, dtype=np.uint8)
    if img.ndim != 3 or img.shape[2] != 3:
        raise ValueError(f"expected an (H, W, 3) screenshot, got shape {img.shape}")
    h, w = img.shape[:2]
    root = Block("page", w, h, tuple(int(c) for c in img[0, 0]))
    _fill(root, img, 0, 0, w, h, 0)
    return root
