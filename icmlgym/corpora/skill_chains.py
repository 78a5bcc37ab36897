"""A generated *chain* library of skills (for SkillNeologism-v1): new skills are chains of old ones.

The library of :mod:`icmlgym.corpora.skills` gives each skill its own token and never shows the
held-out skills, so a frozen model has no procedure for them (docs/skills.md). Here the prompt
has two map slots and two permutation slots, applied in order, each holding a skill token or
``NOP``::

    BOS  m1 m2  p1 p2  x1 .. x6  SEP  y1 .. y6

Maps: ``shift1/2/3/5`` (add ``k`` mod ``N_SYMBOLS``); permutations: ``rot1``, ``rot2`` (rotate
left), ``reverse``, ``swap`` (adjacent pairs). The held-out skills have no token but their
procedures occur in pre-training as two-token chains (:data:`CHAINS`): ``shift4`` as ``shift1
shift3`` / ``shift3 shift1`` / ``shift2 shift2``, ``shift6`` as ``shift1 shift5`` / ``shift5
shift1`` / ``shift3 shift3``, ``rot3`` as ``rot1 rot2`` / ``rot2 rot1``, ``rot4`` as ``rot2
rot2``. A neologism for a held-out skill sits in the first slot of its kind with the second
slot empty, so it has to name, in one token, a procedure the model runs for a chain.

Token ids agree with :mod:`icmlgym.corpora.skills` up to ``NOP`` (symbols, ``BOS``, ``SEP``,
``DELIM``, ``NOP``); the skill tokens follow. Everything is generated from a numpy generator.
"""

from __future__ import annotations

import numpy as np

from icmlgym.corpora.skills import (
    BOS,
    DELIM,
    LENGTH,
    N_SYMBOLS,
    NOP,
    SEP,
    Batch,
    apply,
    strings,
)

MAPS: tuple[str, ...] = ("shift1", "shift2", "shift3", "shift5")
PERMS: tuple[str, ...] = ("rot1", "rot2", "reverse", "swap")
NEW_MAPS: tuple[str, ...] = ("shift4", "shift6")
NEW_PERMS: tuple[str, ...] = ("rot3", "rot4")
CHAINS: dict[str, tuple[tuple[str, str], ...]] = {
    "shift4": (("shift1", "shift3"), ("shift3", "shift1"), ("shift2", "shift2")),
    "shift6": (("shift1", "shift5"), ("shift5", "shift1"), ("shift3", "shift3")),
    "rot3": (("rot1", "rot2"), ("rot2", "rot1")),
    "rot4": (("rot2", "rot2"),),
}

FIRST_SKILL = NOP + 1
SKILL_TOKENS: dict[str, int] = {name: FIRST_SKILL + i for i, name in enumerate(MAPS + PERMS)}
VOCAB_SIZE = FIRST_SKILL + len(SKILL_TOKENS)
N_SLOTS = 4
SLOT_KINDS: tuple[str, ...] = ("map", "map", "perm", "perm")
PROMPT_LEN = 1 + N_SLOTS + LENGTH + 1
SEQ_LEN = PROMPT_LEN + LENGTH
DEMO_LEN = 2 * LENGTH + 2
P_EMPTY = 0.35

Task = tuple[str | None, str | None, str | None, str | None]
"""The skills of the four slots (``None``: ``NOP``), applied in order."""


def kind(skill: str) -> str:
    """``map`` or ``perm`` (``ValueError`` for a skill outside the library and its held-out skills)."""
    if skill in MAPS or skill in NEW_MAPS:
        return "map"
    if skill in PERMS or skill in NEW_PERMS:
        return "perm"
    raise ValueError(f"unknown skill {skill!r}; maps: {MAPS + NEW_MAPS}, permutations: {PERMS + NEW_PERMS}")


def target(task: Task, x: np.ndarray) -> np.ndarray:
    """The four slots' skills applied in order to the strings ``x`` (``(n, LENGTH)``)."""
    for s in task:
        if s is not None:
            kind(s)
            x = apply(s, x)
    return x.copy()


def sample_tasks(rng: np.random.Generator, n: int, p_empty: float = P_EMPTY) -> list[Task]:
    """``n`` pre-training tasks: each slot empty with probability ``p_empty``, else a uniform skill of its kind."""
    empty = rng.random((n, N_SLOTS)) < p_empty
    mi = rng.integers(0, len(MAPS), size=(n, 2))
    pi = rng.integers(0, len(PERMS), size=(n, 2))
    return [
        (None if empty[i, 0] else MAPS[mi[i, 0]], None if empty[i, 1] else MAPS[mi[i, 1]],
         None if empty[i, 2] else PERMS[pi[i, 0]], None if empty[i, 3] else PERMS[pi[i, 1]])
        for i in range(n)
    ]


def all_tasks() -> list[Task]:
    """Every task of the library (each slot empty or any skill of its kind): 625."""
    m = (None,) + MAPS
    p = (None,) + PERMS
    return [(a, b, c, d) for a in m for b in m for c in p for d in p]


def slot_tokens(task: Task) -> list[int]:
    return [NOP if s is None else SKILL_TOKENS[s] for s in task]


def batch(rng: np.random.Generator, tasks: list[Task], tokens: np.ndarray | None = None) -> Batch:
    """Prompts for ``tasks`` (fresh strings); ``tokens`` ``(n, N_SLOTS)`` overrides the slot ids
    (an env puts new-token ids there), else the tasks' own tokens."""
    n = len(tasks)
    x = strings(rng, n)
    y = np.empty_like(x)
    for i, t in enumerate(tasks):
        y[i] = target(t, x[i : i + 1])[0]
    slots = np.asarray([slot_tokens(t) for t in tasks] if tokens is None else tokens, dtype=np.int64).reshape(n, N_SLOTS)
    seq = np.concatenate([np.full((n, 1), BOS), slots, x, np.full((n, 1), SEP), y], axis=1).astype(np.int64)
    mask = np.zeros_like(seq, dtype=np.float32)
    mask[:, PROMPT_LEN:] = 1.0
    return Batch(seq, mask)


__all__ = [
    "BOS",
    "CHAINS",
    "DELIM",
    "DEMO_LEN",
    "LENGTH",
    "MAPS",
    "NEW_MAPS",
    "NEW_PERMS",
    "NOP",
    "N_SLOTS",
    "N_SYMBOLS",
    "PERMS",
    "PROMPT_LEN",
    "P_EMPTY",
    "SEP",
    "SEQ_LEN",
    "SKILL_TOKENS",
    "SLOT_KINDS",
    "VOCAB_SIZE",
    "Task",
    "all_tasks",
    "batch",
    "kind",
    "sample_tasks",
    "slot_tokens",
    "target",
]
