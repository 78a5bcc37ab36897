"""What a renderer returns, and the fast exact renderer of the layout language.

A :class:`Render` is a screenshot plus the page's elements as the DOM reports them
(box, background colour, text, type), which is what the Design2Code-style score in
:mod:`icmlgym.envs.ui.score` reads. :func:`fast_render` computes both directly from
the layout (numpy, about a millisecond): boxes and colours are exact (they match
Chromium's, see ``tests/ui/test_chromium.py``); text is drawn as greeked bars in the
text colour where the browser draws glyphs.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from icmlgym.envs.ui.layout import TEXT_TYPES, Block, layout, text_colour

GLYPH_W, GLYPH_PITCH, GLYPH_TOP, GLYPH_BOTTOM = 4, 6, 3, 10


@dataclass(frozen=True)
class Element:
    """One rendered element: type (``data-type`` or tag name), box (x, y, w, h), background
    RGB (None when transparent), and its own text."""

    type: str
    box: tuple[float, float, float, float]
    colour: tuple[int, int, int] | None
    text: str


@dataclass
class Render:
    """A rendered page: ``image`` (H, W, 3) uint8 and its ``elements`` in document order.
    ``blocked`` lists the requests the browser refused (always empty for the fast renderer);
    ``warnings`` says what was neutralised (scripts, external URLs)."""

    image: np.ndarray
    elements: list[Element]
    blocked: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()


def fast_render(root: Block) -> Render:
    """Render a page with numpy: each block filled in pre-order inside its ancestors' clip,
    text as greeked bars (one bar per character) in the text colour."""
    h, w = root.h, root.w
    img = np.full((h, w, 3), 255, dtype=np.uint8)
    elements: list[Element] = []
    for b in layout(root):
        x0, y0, x1, y1 = b.clip
        x1, y1 = min(x1, w), min(y1, h)
        if x1 > x0 and y1 > y0:
            img[y0:y1, x0:x1] = b.colour
            if b.type in TEXT_TYPES and b.text:
                ty0, ty1 = max(y0, b.y + GLYPH_TOP), min(y1, b.y + GLYPH_BOTTOM)
                if ty1 > ty0:
                    fg = text_colour(b.colour)
                    for k, ch in enumerate(b.text):
                        if ch == " ":
                            continue
                        gx0 = max(x0, b.x + k * GLYPH_PITCH)
                        gx1 = min(x1, b.x + k * GLYPH_PITCH + GLYPH_W)
                        if gx1 > gx0:
                            img[ty0:ty1, gx0:gx1] = fg
        elements.append(Element(b.type, (float(b.x), float(b.y), float(b.w), float(b.h)), b.colour, b.text))
    return Render(img, elements)


def text_mask(render: Render, shape: tuple[int, int] | None = None) -> np.ndarray:
    """Boolean (H, W) mask of the boxes of elements that carry text (where glyphs differ between renderers)."""
    h, w = shape if shape is not None else render.image.shape[:2]
    mask = np.zeros((h, w), dtype=bool)
    for e in render.elements:
        if e.text:
            x, y, bw, bh = (int(round(v)) for v in e.box)
            mask[max(0, y):max(0, min(h, y + bh)), max(0, x):max(0, min(w, x + bw))] = True
    return mask
