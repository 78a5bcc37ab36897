"""Structured edits over the layout language (the action space of small learned policies).

An edit is three integers ``(block, op, arg)``: the block's pre-order index, the
operation in :data:`OPS` and its argument (``0 .. N_ARGS - 1``; each op reads it as
stated in :data:`OP_HELP`). :func:`apply_edit` returns the edited copy of a page or
raises :class:`EditError` saying why the edit does not apply (no such block, an op the
block's type does not take, a page that would exceed ``max_blocks``, ...): the env
turns that into a penalty, never an exception, so every sampled action is accepted.
"""

from __future__ import annotations

import numpy as np

from icmlgym.envs.ui.layout import CHILD_TYPES, CONTAINERS, PALETTE, TEXT_TYPES, VOCAB, Block, hex_colour

OPS: tuple[str, ...] = ("noop", "colour", "width", "height", "text", "add", "delete", "move", "direction", "gap", "padding")
N_ARGS = 12
DELTAS: tuple[int, ...] = (-32, -16, -8, -4, -2, -1, 1, 2, 4, 8, 16, 32)
SPACINGS: tuple[int, ...] = (0, 1, 2, 3, 4, 5, 6, 8, 10, 12, 16, 20)
OP_HELP: dict[str, str] = {
    "noop": "keep the page (arg ignored)",
    "colour": "background := PALETTE[arg]",
    "width": "width += DELTAS[arg] (at least 1 px)",
    "height": "height += DELTAS[arg] (at least 1 px)",
    "text": "text := VOCAB[arg] (button and text blocks)",
    "add": "append a child of type CHILD_TYPES[arg % 8] (containers)",
    "delete": "remove the block and its children (not the page)",
    "move": "swap with the previous (even arg) or next (odd arg) sibling",
    "direction": "toggle row/column (containers; arg ignored)",
    "gap": "gap := SPACINGS[arg] (containers)",
    "padding": "padding := SPACINGS[arg] (containers)",
}
assert len(PALETTE) == N_ARGS and len(VOCAB) == N_ARGS and len(DELTAS) == N_ARGS and len(SPACINGS) == N_ARGS

# size and colour of a newly added child, by type
_NEW: dict[str, tuple[int, int, int]] = {
    "header": (64, 24, 4), "sidebar": (40, 48, 2), "main": (64, 48, 1), "row": (64, 24, 1), "card": (32, 32, 0),
    "button": (32, 12, 4), "text": (40, 12, 0), "image": (24, 24, 10),
}


class EditError(ValueError):
    """An edit that does not apply to the page (the message says why)."""


def _find(root: Block, index: int) -> tuple[Block, Block | None, int]:
    """(block, its parent, its position among the parent's children) for a pre-order index."""
    count = 0

    def go(b: Block, parent: Block | None, pos: int):
        nonlocal count
        if count == index:
            return b, parent, pos
        count += 1
        for i, c in enumerate(b.children):
            hit = go(c, b, i)
            if hit is not None:
                return hit
        return None

    hit = go(root, None, 0)
    if hit is None:
        raise EditError(f"no block {index}: the page has {len(root)} blocks (indices 0..{len(root) - 1})")
    return hit


def apply_edit(root: Block, edit: tuple[int, int, int] | np.ndarray, max_blocks: int = 10**9) -> Block:
    """The page after ``edit`` (a new tree; ``root`` is untouched).

    Raises:
        EditError: the edit does not apply; the message names the block, op and reason.
    """
    index, op_id, arg = (int(v) for v in edit)
    if not 0 <= op_id < len(OPS):
        raise EditError(f"op {op_id} is not in 0..{len(OPS) - 1} ({', '.join(OPS)})")
    if not 0 <= arg < N_ARGS:
        raise EditError(f"arg {arg} is not in 0..{N_ARGS - 1}")
    op = OPS[op_id]
    page = root.copy()
    if op == "noop":
        return page
    b, parent, pos = _find(page, index)
    what = f"block {index} ({b.type})"
    if op == "colour":
        b.colour = PALETTE[arg]
    elif op == "width":
        b.w = max(1, b.w + DELTAS[arg])
    elif op == "height":
        b.h = max(1, b.h + DELTAS[arg])
    elif op == "text":
        if b.type not in TEXT_TYPES:
            raise EditError(f"{what} holds no text (only {sorted(TEXT_TYPES)} do)")
        b.text = VOCAB[arg]
    elif op == "add":
        if b.type not in CONTAINERS:
            raise EditError(f"{what} cannot have children (containers: {sorted(CONTAINERS)})")
        if len(page) >= max_blocks:
            raise EditError(f"the page already has {len(page)} blocks, the most this env allows ({max_blocks})")
        kind = CHILD_TYPES[arg % len(CHILD_TYPES)]
        w, h, c = _NEW[kind]
        b.children.append(Block(kind, w, h, PALETTE[c], text="Home" if kind in TEXT_TYPES else ""))
    elif op in ("delete", "move"):
        if parent is None:
            raise EditError(f"the page (block 0) cannot be {'deleted' if op == 'delete' else 'moved'}")
        if op == "delete":
            del parent.children[pos]
        else:
            other = pos - 1 if arg % 2 == 0 else pos + 1
            if not 0 <= other < len(parent.children):
                raise EditError(f"{what} has no {'previous' if arg % 2 == 0 else 'next'} sibling to swap with")
            parent.children[pos], parent.children[other] = parent.children[other], parent.children[pos]
    else:
        if b.type not in CONTAINERS:
            raise EditError(f"{what} is not a container, so it has no {op}")
        if op == "direction":
            b.direction = "row" if b.direction == "column" else "column"
        elif op == "gap":
            b.gap = SPACINGS[arg]
        else:
            b.padding = SPACINGS[arg]
    return page


def describe_edit(root: Block, edit: tuple[int, int, int]) -> str:
    """An English instruction for an edit that applies to ``root`` (the editing task's instruction)."""
    index, op_id, arg = (int(v) for v in edit)
    b, _, _ = _find(root, index)
    what = f"the {b.type} (block {index})"
    op = OPS[op_id]
    if op == "colour":
        return f"set the background of {what} to {hex_colour(PALETTE[arg])}"
    if op in ("width", "height"):
        d = DELTAS[arg]
        word = {"width": ("wider", "narrower"), "height": ("taller", "shorter")}[op][d < 0]
        return f"make {what} {abs(d)} px {word}"
    if op == "text":
        return f"change the text of {what} to '{VOCAB[arg]}'"
    if op == "delete":
        return f"remove {what}"
    if op == "add":
        return f"add a {CHILD_TYPES[arg % len(CHILD_TYPES)]} at the end of {what}"
    if op == "move":
        return f"move {what} {'before its previous' if arg % 2 == 0 else 'after its next'} sibling"
    if op == "direction":
        return f"lay out the children of {what} in a {'row' if b.direction == 'column' else 'column'}"
    return f"set the {op} of {what} to {SPACINGS[arg]} px"


def random_valid_edit(rng: np.random.Generator, root: Block, ops: tuple[str, ...], max_blocks: int = 10**9, tries: int = 200) -> tuple[int, int, int]:
    """A uniformly drawn edit among ``ops`` on a non-root block that applies and changes the page."""
    n = len(root)
    before = repr(root)
    for _ in range(tries):
        e = (int(rng.integers(1, n)), OPS.index(str(rng.choice(ops))), int(rng.integers(N_ARGS)))
        try:
            if repr(apply_edit(root, e, max_blocks)) != before:
                return e
        except EditError:
            continue
    raise RuntimeError(f"no applicable edit among {ops} after {tries} draws")
