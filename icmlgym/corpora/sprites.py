"""A sprite world with visual contexts: unlabelled video for latent action models (Olaf-World's setting).

One controllable sprite moves on a ``GRID x GRID`` board (cells of ``CELL`` pixels, frames of
``SIZE x SIZE`` RGB, uint8) under five actions (:data:`ACTIONS`: stay, up, down, left, right;
a move into the border leaves the sprite in place). A *context* fixes everything else that
a video model sees and that is not the action:

- the background texture (horizontal or vertical stripes, a checkerboard, blobs) and its colours,
- the sprite's skin (colour and shape: square, plus, ring) and its scale (2, 3 or 4 pixels),
- a distractor square that moves by itself, with a direction distribution that depends on the
  context (each context prefers one direction): its motion is correlated with the context. It is
  drawn in a low-contrast colour (the background's mean, 30% of the way to a bright colour) while
  the sprite is bright: contrast, not colour, tells them apart in a context never seen.

Contexts ``0 .. N_TRAIN - 1`` are the training contexts (the env serves unlabelled clips from
them; the zoo's self-supervised encoder trains on their frames); ``N_TRAIN .. N_CONTEXTS - 1``
are never seen in training (evaluation and demonstration contexts). Every context is a fixed
function of its id. Rendering is vectorised over a batch of states
(:func:`render`); :func:`render_loop` is the plain per-frame numpy renderer the benchmark
compares against (``benchmarks/vision_sprites.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import numpy as np

GRID = 9
CELL = 4
SIZE = GRID * CELL  # 36 pixels: the smallest image stable-baselines3's CnnPolicy accepts
ACTIONS: tuple[str, ...] = ("stay", "up", "down", "left", "right")
MOVES = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.int64)  # (row, col) per action
N_TRAIN = 6
N_CONTEXTS = 12
TRAIN_CONTEXTS: tuple[int, ...] = tuple(range(N_TRAIN))
UNSEEN_CONTEXTS: tuple[int, ...] = tuple(range(N_TRAIN, N_CONTEXTS))
TEXTURES: tuple[str, ...] = ("stripes-h", "stripes-v", "checker", "blobs")
SHAPES: tuple[str, ...] = ("square", "plus", "ring")
DISTRACTOR_SIZE = 3
PREFERRED_P = 0.6  # probability of a context's preferred distractor direction


@dataclass(frozen=True)
class Context:
    """One visual context: background, sprite skin and scale, distractor colour and motion."""

    id: int
    texture: str
    shape: str
    scale: int
    background: np.ndarray  # (SIZE, SIZE, 3) uint8
    sprite_colour: np.ndarray  # (3,) uint8
    sprite_offsets: np.ndarray  # (m, 2) pixel offsets of the sprite's pixels from its top-left corner
    distractor_colour: np.ndarray  # (3,) uint8
    distractor_probs: np.ndarray  # (5,) probabilities of the distractor's move per step (ACTIONS order)


def check_context(cid: object, allowed: tuple[int, ...] = tuple(range(N_CONTEXTS)), what: str = "context") -> int:
    """``cid`` as an int, or a ValueError naming the known contexts."""
    if isinstance(cid, bool) or not isinstance(cid, (int, np.integer)) or int(cid) not in allowed:
        raise ValueError(f"unknown {what} {cid!r}: contexts are integers in {list(allowed)} "
                         f"(0..{N_TRAIN - 1} are training contexts, {N_TRAIN}..{N_CONTEXTS - 1} unseen ones)")
    return int(cid)


def _shape_offsets(shape: str, scale: int) -> np.ndarray:
    mask = np.ones((scale, scale), dtype=bool)
    if scale >= 3 and shape == "plus":
        mask[0, 0] = mask[0, -1] = mask[-1, 0] = mask[-1, -1] = False
    elif scale >= 3 and shape == "ring":
        mask[1:-1, 1:-1] = False
    return np.argwhere(mask).astype(np.int64)


def _bright(rng: np.random.Generator) -> np.ndarray:
    c = rng.uniform(0.55, 1.0, 3)
    c[rng.integers(3)] = rng.uniform(0.9, 1.0)
    return (255 * c).astype(np.uint8)


def _dim(background: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """A low-contrast colour: the background's mean moved a quarter of the way to a bright colour."""
    mean = background.reshape(-1, 3).mean(0)
    return np.clip(mean + 0.3 * (_bright(rng) - mean), 0, 255).astype(np.uint8)


def _background(texture: str, rng: np.random.Generator) -> np.ndarray:
    a = rng.uniform(0.0, 0.35, 3)
    b = rng.uniform(0.1, 0.45, 3)
    yy, xx = np.mgrid[0:SIZE, 0:SIZE]
    period = int(rng.integers(3, 7))
    if texture == "stripes-h":
        t = (yy // period) % 2
    elif texture == "stripes-v":
        t = (xx // period) % 2
    elif texture == "checker":
        t = ((yy // period) + (xx // period)) % 2
    else:  # blobs: a few soft discs
        t = np.zeros((SIZE, SIZE))
        for _ in range(5):
            cy, cx, r = rng.uniform(0, SIZE), rng.uniform(0, SIZE), rng.uniform(4, 9)
            t = np.maximum(t, np.clip(1.5 - np.hypot(yy - cy, xx - cx) / r, 0, 1))
    img = a[None, None, :] * (1 - t[..., None]) + b[None, None, :] * t[..., None]
    return (255 * img).astype(np.uint8)


@lru_cache(maxsize=None)
def context(cid: int) -> Context:
    """The context with id ``cid`` (a fixed function of the id)."""
    cid = check_context(cid)
    rng = np.random.default_rng(7919 * cid + 104729)
    texture = TEXTURES[cid % len(TEXTURES)]
    scale = (2, 3, 4)[cid % 3]
    shape = SHAPES[int(rng.integers(len(SHAPES)))] if scale >= 3 else "square"
    bg = _background(texture, rng)
    probs = np.full(5, (1 - PREFERRED_P) / 4)
    probs[1 + (cid * 3 + cid // 4) % 4] = PREFERRED_P
    return Context(
        id=cid, texture=texture, shape=shape, scale=scale, background=bg,
        sprite_colour=_bright(rng), sprite_offsets=_shape_offsets(shape, scale),
        distractor_colour=_dim(bg, rng), distractor_probs=probs,
    )


def _top_left(pos: np.ndarray, size: int) -> np.ndarray:
    return pos * CELL + (CELL - size) // 2


_DISTRACTOR_OFFSETS = _shape_offsets("square", DISTRACTOR_SIZE)


def render(ctx: Context, agent: np.ndarray, distractor: np.ndarray) -> np.ndarray:
    """Frames ``(N, SIZE, SIZE, 3)`` uint8 for ``N`` states: sprite cells ``agent`` and distractor cells ``distractor``, ``(N, 2)`` (row, col)."""
    agent = np.asarray(agent, dtype=np.int64).reshape(-1, 2)
    distractor = np.asarray(distractor, dtype=np.int64).reshape(-1, 2)
    n = len(agent)
    frames = np.broadcast_to(ctx.background, (n, SIZE, SIZE, 3)).copy()
    idx = np.arange(n)[:, None]
    for pos, size, offsets, colour in ((distractor, DISTRACTOR_SIZE, _DISTRACTOR_OFFSETS, ctx.distractor_colour),
                                       (agent, ctx.scale, ctx.sprite_offsets, ctx.sprite_colour)):
        tl = _top_left(pos, size)  # (n, 2)
        frames[idx, tl[:, :1] + offsets[None, :, 0], tl[:, 1:] + offsets[None, :, 1]] = colour
    return frames


def render_loop(ctx: Context, agent: np.ndarray, distractor: np.ndarray) -> np.ndarray:
    """The same frames as :func:`render`, drawn one frame at a time with plain numpy slicing (the benchmark's baseline)."""
    agent = np.asarray(agent, dtype=np.int64).reshape(-1, 2)
    distractor = np.asarray(distractor, dtype=np.int64).reshape(-1, 2)
    out = np.empty((len(agent), SIZE, SIZE, 3), dtype=np.uint8)
    smask = np.zeros((ctx.scale, ctx.scale), dtype=bool)
    smask[ctx.sprite_offsets[:, 0], ctx.sprite_offsets[:, 1]] = True
    for i in range(len(agent)):
        frame = ctx.background.copy()
        r, c = _top_left(distractor[i], DISTRACTOR_SIZE)
        frame[r:r + DISTRACTOR_SIZE, c:c + DISTRACTOR_SIZE] = ctx.distractor_colour
        r, c = _top_left(agent[i], ctx.scale)
        frame[r:r + ctx.scale, c:c + ctx.scale][smask] = ctx.sprite_colour
        out[i] = frame
    return out


def step_agent(agent: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """The sprite's next cells: a move into the border keeps it in place."""
    return np.clip(np.asarray(agent) + MOVES[np.asarray(actions)], 0, GRID - 1)


def step_distractor(ctx: Context, distractor: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """The distractor's next cells: a move drawn from the context's distribution, wrapping around the board."""
    d = np.asarray(distractor).reshape(-1, 2)
    moves = rng.choice(5, size=len(d), p=ctx.distractor_probs)
    return (d + MOVES[moves]) % GRID


def random_states(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` uniformly random (sprite, distractor) cell pairs."""
    return rng.integers(0, GRID, (n, 2)), rng.integers(0, GRID, (n, 2))


def clips(contexts: tuple[int, ...] | list[int], n_clips: int, length: int, rng: np.random.Generator
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Clips under a uniformly random policy: frames ``(n, length, SIZE, SIZE, 3)``, actions ``(n, length - 1)``, context ids ``(n,)``.

    Each clip's context is drawn uniformly from ``contexts``; its start state is uniform.
    """
    if int(length) < 2:
        raise ValueError(f"a clip has at least 2 frames, got length={length}")
    ctx_ids = np.asarray([check_context(c) for c in contexts], dtype=np.int64)
    which = ctx_ids[rng.integers(0, len(ctx_ids), int(n_clips))]
    actions = rng.integers(0, 5, (int(n_clips), int(length) - 1))
    frames = np.empty((int(n_clips), int(length), SIZE, SIZE, 3), dtype=np.uint8)
    agent, distractor = random_states(int(n_clips), rng)
    for c in np.unique(which):
        ctx = context(int(c))
        sel = np.flatnonzero(which == c)
        a, d = agent[sel], distractor[sel]
        for t in range(int(length)):
            frames[sel, t] = render(ctx, a, d)
            if t < length - 1:
                a = step_agent(a, actions[sel, t])
                d = step_distractor(ctx, d, rng)
    return frames, actions, which


def transitions(cid: int, n: int, rng: np.random.Generator, visible: bool = True
                ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``n`` labelled transitions in context ``cid``: ``(before, after, action)``.

    Actions are balanced (each of the five ``n // 5`` or ``n // 5 + 1`` times, shuffled). With
    ``visible`` a move's start cell is drawn so that the move is not into the border, so every
    label has its effect on the frame.
    """
    ctx = context(cid)
    n = int(n)
    actions = rng.permutation(np.arange(n) % 5)
    agent, distractor = random_states(n, rng)
    if visible:
        for k in range(1, 5):  # redraw the blocked coordinate inside the board
            sel = actions == k
            axis = 0 if k in (1, 2) else 1
            lo, hi = (1, GRID) if k in (1, 3) else (0, GRID - 1)
            agent[sel, axis] = rng.integers(lo, hi, int(sel.sum()))
    before = render(ctx, agent, distractor)
    after = render(ctx, step_agent(agent, actions), step_distractor(ctx, distractor, rng))
    return before, after, actions.astype(np.int64)


__all__ = [
    "ACTIONS", "CELL", "GRID", "MOVES", "N_CONTEXTS", "N_TRAIN", "SIZE", "TRAIN_CONTEXTS", "UNSEEN_CONTEXTS",
    "Context", "check_context", "clips", "context", "random_states", "render", "render_loop", "step_agent",
    "step_distractor", "transitions",
]
