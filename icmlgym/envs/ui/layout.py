"""The layout language: nested blocks that compile to HTML/CSS, and a seeded generator of UIs.

A page is a tree of :class:`Block`s. Every block has a type (``page``, ``header``,
``sidebar``, ``main``, ``row``, ``card``, ``button``, ``text``, ``image``), a fixed
size in CSS pixels, a background colour and, for ``button`` and ``text``, a text.
Containers lay their children out along one axis (``row`` or ``column``) with a
``gap`` and a ``padding``: exactly CSS flexbox with ``flex: none`` children,
``align-items: flex-start`` and ``overflow: hidden``. Because every size is an
integer and nothing flexes, the geometry is exact, so the fast renderer
(:mod:`icmlgym.envs.ui.fast_render`) and Chromium agree pixel for pixel on boxes
and colours. Images are coloured boxes (no files, nothing to fetch).

Blocks are addressed by their index in pre-order (the root is 0); the edits in
:mod:`icmlgym.envs.ui.edits` use that index.
"""

from __future__ import annotations

import html as _html
from dataclasses import dataclass, field
from typing import Iterator

import numpy as np

BLOCK_TYPES: tuple[str, ...] = ("page", "header", "sidebar", "main", "row", "card", "button", "text", "image")
CONTAINERS: frozenset[str] = frozenset({"page", "header", "sidebar", "main", "row", "card"})
TEXT_TYPES: frozenset[str] = frozenset({"button", "text"})
# the types an edit may add as a child (the root "page" is never added)
CHILD_TYPES: tuple[str, ...] = BLOCK_TYPES[1:]

# A fixed palette: generated pages and colour edits use these colours only.
PALETTE: tuple[tuple[int, int, int], ...] = (
    (255, 255, 255),
    (241, 243, 245),
    (222, 226, 230),
    (52, 58, 64),
    (13, 110, 253),
    (102, 16, 242),
    (214, 51, 132),
    (220, 53, 69),
    (253, 126, 20),
    (255, 193, 7),
    (25, 135, 84),
    (32, 201, 151),
)
# Words the generator and the text edits use (a page's texts are drawn from them).
VOCAB: tuple[str, ...] = (
    "Home", "About", "Pricing", "Blog", "Contact", "Login", "Sign up", "Buy", "More", "Docs",
    "Welcome", "Dashboard",
)
DARK_TEXT = (33, 37, 41)
LIGHT_TEXT = (255, 255, 255)
FONT_CSS = "10px/12px sans-serif"


def text_colour(bg: tuple[int, int, int]) -> tuple[int, int, int]:
    """The text colour on a background: dark on light colours, white on dark ones."""
    r, g, b = bg
    return DARK_TEXT if 0.299 * r + 0.587 * g + 0.114 * b > 150 else LIGHT_TEXT


def hex_colour(rgb: tuple[int, int, int]) -> str:
    return "#%02x%02x%02x" % tuple(int(c) for c in rgb)


@dataclass
class Block:
    """One block of a page.

    Attributes:
        type: one of :data:`BLOCK_TYPES`.
        w, h: size in CSS pixels (border box).
        colour: background RGB.
        text: the block's text (``button`` and ``text`` only; "" elsewhere).
        direction: ``"row"`` or ``"column"`` (containers).
        gap, padding: spacing in pixels (containers).
        children: child blocks (containers only).
    """

    type: str
    w: int
    h: int
    colour: tuple[int, int, int]
    text: str = ""
    direction: str = "column"
    gap: int = 0
    padding: int = 0
    children: list["Block"] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.type not in BLOCK_TYPES:
            raise ValueError(f"unknown block type {self.type!r}; types: {list(BLOCK_TYPES)}")
        if self.direction not in ("row", "column"):
            raise ValueError(f"direction must be 'row' or 'column', got {self.direction!r}")
        if self.w < 0 or self.h < 0 or self.gap < 0 or self.padding < 0:
            raise ValueError(f"{self.type} block has a negative size or spacing: w={self.w} h={self.h} gap={self.gap} padding={self.padding}")
        if self.children and self.type not in CONTAINERS:
            raise ValueError(f"a {self.type} block cannot have children (containers: {sorted(CONTAINERS)})")
        self.colour = tuple(int(c) for c in self.colour)  # type: ignore[assignment]

    def copy(self) -> "Block":
        return Block(self.type, self.w, self.h, self.colour, self.text, self.direction, self.gap, self.padding,
                     [c.copy() for c in self.children])

    def walk(self) -> Iterator["Block"]:
        """This block and its descendants in pre-order (the order of block indices)."""
        yield self
        for c in self.children:
            yield from c.walk()

    def __len__(self) -> int:
        return sum(1 for _ in self.walk())


@dataclass(frozen=True)
class Box:
    """A laid-out block: its pre-order index, type, box (x, y, w, h), visible box after
    clipping by its ancestors, colour, text and parent index (-1 for the root)."""

    index: int
    type: str
    x: int
    y: int
    w: int
    h: int
    clip: tuple[int, int, int, int]  # x0, y0, x1, y1 (exclusive), possibly empty
    colour: tuple[int, int, int]
    text: str
    parent: int
    depth: int


def layout(root: Block) -> list[Box]:
    """Every block's box in pre-order, exactly as CSS flexbox places it (see module docstring)."""
    out: list[Box] = []

    def place(b: Block, x: int, y: int, clip: tuple[int, int, int, int], parent: int, depth: int) -> None:
        idx = len(out)
        vis = (max(clip[0], x), max(clip[1], y), min(clip[2], x + b.w), min(clip[3], y + b.h))
        vis = (vis[0], vis[1], max(vis[0], vis[2]), max(vis[1], vis[3]))
        out.append(Box(idx, b.type, x, y, b.w, b.h, vis, b.colour, b.text, parent, depth))
        off = b.padding
        for c in b.children:
            if b.direction == "row":
                place(c, x + off, y + b.padding, vis, idx, depth + 1)
                off += c.w + b.gap
            else:
                place(c, x + b.padding, y + off, vis, idx, depth + 1)
                off += c.h + b.gap

    place(root, 0, 0, (0, 0, root.w, root.h), -1, 0)
    return out


# ----------------------------------------------------------------------------- HTML

STYLE = (
    "html,body{margin:0;padding:0;background:#ffffff}"
    "div{box-sizing:border-box;overflow:hidden;flex:none;display:flex;align-items:flex-start;"
    f"justify-content:flex-start;font:{FONT_CSS};white-space:nowrap}}"
)


def block_style(b: Block) -> str:
    parts = [f"width:{b.w}px", f"height:{b.h}px", f"background-color:{hex_colour(b.colour)}"]
    if b.type in CONTAINERS:
        parts += [f"flex-direction:{b.direction}", f"gap:{b.gap}px", f"padding:{b.padding}px"]
    if b.type in TEXT_TYPES:
        parts.append(f"color:{hex_colour(text_colour(b.colour))}")
    return ";".join(parts)


def to_html(root: Block) -> str:
    """The page as a self-contained HTML document (inline CSS, no scripts, no URLs)."""
    lines: list[str] = []

    def emit(b: Block, idx: int, indent: int) -> int:
        pad = "  " * indent
        attrs = f'data-type="{b.type}" data-id="{idx}" style="{block_style(b)}"'
        if not b.children:
            lines.append(f"{pad}<div {attrs}>{_html.escape(b.text)}</div>")
            return idx + 1
        lines.append(f"{pad}<div {attrs}>")
        nxt = idx + 1
        for c in b.children:
            nxt = emit(c, nxt, indent + 1)
        lines.append(f"{pad}</div>")
        return nxt

    emit(root, 0, 1)
    body = "\n".join(lines)
    return (
        "<!DOCTYPE html>\n<html>\n<head><meta charset=\"utf-8\"><title>ui</title>"
        f"<style>{STYLE}</style></head>\n<body>\n{body}\n</body>\n</html>\n"
    )


# ----------------------------------------------------------------------------- generator


def _colour(rng: np.random.Generator, choices: tuple[int, ...]) -> tuple[int, int, int]:
    return PALETTE[int(rng.choice(choices))]


def empty_page(width: int, height: int) -> Block:
    """The drafting start: a white page with nothing on it."""
    return Block("page", width, height, PALETTE[0], direction="column", gap=4, padding=4)


def generate_page(rng: np.random.Generator, width: int = 256, height: int = 192) -> Block:
    """A random page: a header (title and buttons), then a sidebar beside a main area of card rows.

    Every size fits its container, so nothing is clipped; the same ``rng`` state gives the same page.
    """
    if width < 96 or height < 96:
        raise ValueError(f"pages need width and height >= 96 px, got {width}x{height}")
    light = (0, 1, 2)
    strong = tuple(range(3, len(PALETTE)))
    pad, gap = int(rng.choice([2, 4, 6])), int(rng.choice([2, 4, 6]))
    inner_w, inner_h = width - 2 * pad, height - 2 * pad
    page = Block("page", width, height, _colour(rng, light), direction="column", gap=gap, padding=pad)

    head_h = int(rng.integers(20, 33))
    hp = 3
    header = Block("header", inner_w, head_h, _colour(rng, strong), direction="row", gap=4, padding=hp)
    title_w = int(rng.integers(40, 80))
    header.children.append(Block("text", title_w, head_h - 2 * hp, header.colour, text=str(rng.choice(VOCAB))))
    n_btn = int(rng.integers(1, 4))
    btn_colour = _colour(rng, strong)
    room = (inner_w - 2 * hp - title_w) // n_btn - 4  # each button and its gap fit in the header
    for _ in range(n_btn):
        bw = min(int(rng.integers(24, 40)), room)
        header.children.append(Block("button", bw, head_h - 2 * hp - 4, btn_colour, text=str(rng.choice(VOCAB))))
    page.children.append(header)

    body_h = inner_h - head_h - gap
    body = Block("row", inner_w, body_h, page.colour, direction="row", gap=gap, padding=0)
    side_w = int(rng.integers(36, 64))
    sp = 3
    sidebar = Block("sidebar", side_w, body_h, _colour(rng, light + (3,)), direction="column", gap=3, padding=sp)
    for _ in range(int(rng.integers(2, 5))):
        kind = "button" if rng.random() < 0.4 else "text"
        sidebar.children.append(Block(kind, side_w - 2 * sp, 12, sidebar.colour if kind == "text" else btn_colour, text=str(rng.choice(VOCAB))))
    body.children.append(sidebar)

    main_w = inner_w - side_w - gap
    mp, mg = 3, 4
    main = Block("main", main_w, body_h, _colour(rng, light), direction="column", gap=mg, padding=mp)
    n_rows = int(rng.integers(1, 3))
    row_h = (body_h - 2 * mp - (n_rows - 1) * mg) // n_rows
    card_colour = _colour(rng, (0, 1, 2))
    for _ in range(n_rows):
        n_cards = int(rng.integers(2, 4))
        rg = 4
        row = Block("row", main_w - 2 * mp, row_h, main.colour, direction="row", gap=rg, padding=0)
        card_w = (main_w - 2 * mp - (n_cards - 1) * rg) // n_cards
        for _ in range(n_cards):
            cp = 3
            card = Block("card", card_w, row_h, card_colour, direction="column", gap=3, padding=cp)
            img_h = max(8, (row_h - 2 * cp) // 2)
            card.children.append(Block("image", card_w - 2 * cp, img_h, _colour(rng, strong)))
            card.children.append(Block("text", card_w - 2 * cp, 12, card_colour, text=str(rng.choice(VOCAB))))
            if row_h - 2 * cp - img_h - 12 - 6 >= 12:
                card.children.append(Block("button", min(40, card_w - 2 * cp), 12, btn_colour, text=str(rng.choice(VOCAB))))
            row.children.append(card)
        main.children.append(row)
    body.children.append(main)
    page.children.append(body)
    return page
