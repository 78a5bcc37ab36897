"""A generated library of skills invoked by vocabulary tokens (for the skill-neologism family).

A prompt asks a language model to transform a string of ``LENGTH`` symbols (``0..N_SYMBOLS-1``)
with a *map* skill (applied to every symbol: ``shift<k>`` adds ``k`` mod ``N_SYMBOLS``, ``neg``
mirrors the alphabet) and then a *permutation* skill (``reverse``, ``sort``, ``rot<r>`` rotates
left by ``r``, ``swap`` swaps adjacent pairs). Each skill is one vocabulary token; the prompt has
one slot for each kind, filled with the skill's token or ``NOP`` (nothing to do), so a
composition of two skills is something the model sees in pre-training::

    BOS  <map|NOP>  <perm|NOP>  x1 .. x6  SEP  y1 .. y6

In-context prompts give no skill token (both slots ``NOP``) and ``k`` demonstrations of the same
skill before the query, each followed by ``DELIM``::

    BOS NOP NOP  x SEP y DELIM  ...  x SEP y

The held-out skills (:data:`NEW_MAPS`, :data:`NEW_PERMS`) never appear in pre-training: they have
no token and no demonstration. Everything is generated from a numpy generator, no download.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_SYMBOLS = 10
LENGTH = 6
BOS, SEP, DELIM, NOP = N_SYMBOLS, N_SYMBOLS + 1, N_SYMBOLS + 2, N_SYMBOLS + 3

# skills with a vocabulary token (pre-trained), in token order after NOP
OLD_MAPS: tuple[str, ...] = ("shift1", "shift2", "shift3", "shift5", "shift7", "neg")
OLD_PERMS: tuple[str, ...] = ("reverse", "sort", "rot1", "rot2", "rot4", "swap")
# held-out skills: no token, never seen in pre-training
NEW_MAPS: tuple[str, ...] = ("shift4", "shift6")
NEW_PERMS: tuple[str, ...] = ("rot3", "rot5")

FIRST_SKILL = NOP + 1
SKILL_TOKENS: dict[str, int] = {name: FIRST_SKILL + i for i, name in enumerate(OLD_MAPS + OLD_PERMS)}
VOCAB_SIZE = FIRST_SKILL + len(SKILL_TOKENS)  # the pre-trained vocabulary (new tokens are added by the env)
PROMPT_LEN = 3 + LENGTH + 1  # BOS, two slots, the input, SEP
SEQ_LEN = PROMPT_LEN + LENGTH
DEMO_LEN = 2 * LENGTH + 2  # x SEP y DELIM

TOKEN_NAMES: tuple[str, ...] = tuple(str(i) for i in range(N_SYMBOLS)) + ("BOS", "SEP", "DELIM", "NOP") + OLD_MAPS + OLD_PERMS


def kind(skill: str) -> str:
    """``map`` or ``perm`` (``ValueError`` for an unknown skill name)."""
    if skill in OLD_MAPS or skill in NEW_MAPS:
        return "map"
    if skill in OLD_PERMS or skill in NEW_PERMS:
        return "perm"
    raise ValueError(f"unknown skill {skill!r}; maps: {OLD_MAPS + NEW_MAPS}, permutations: {OLD_PERMS + NEW_PERMS}")


def apply(skill: str | None, x: np.ndarray) -> np.ndarray:
    """The skill applied to a batch of strings ``x`` (``(n, LENGTH)`` ints); ``None`` is the identity."""
    if skill is None:
        return x.copy()
    kind(skill)
    if skill == "neg":
        return N_SYMBOLS - 1 - x
    if skill.startswith("shift"):
        return (x + int(skill[5:])) % N_SYMBOLS
    if skill == "reverse":
        return x[:, ::-1].copy()
    if skill == "sort":
        return np.sort(x, axis=1)
    if skill.startswith("rot"):
        return np.roll(x, -int(skill[3:]), axis=1)
    if skill == "swap":
        idx = np.arange(LENGTH).reshape(-1, 2)[:, ::-1].reshape(-1)
        return x[:, idx].copy()
    raise AssertionError(skill)


def target(map_skill: str | None, perm_skill: str | None, x: np.ndarray) -> np.ndarray:
    """The map, then the permutation."""
    return apply(perm_skill, apply(map_skill, x))


def old_combos() -> list[tuple[str | None, str | None]]:
    """Every (map or None, permutation or None) pair of pre-trained skills (including the identity)."""
    return [(m, p) for m in (None,) + OLD_MAPS for p in (None,) + OLD_PERMS]


@dataclass(frozen=True)
class Batch:
    """Token ids ``(n, T)`` and the loss mask ``(n, T)`` (1 where the token at ``t`` is predicted from ``t-1``)."""

    tokens: np.ndarray
    mask: np.ndarray


def strings(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, N_SYMBOLS, size=(n, LENGTH))


def prompts(map_tok: np.ndarray, perm_tok: np.ndarray, x: np.ndarray, y: np.ndarray) -> Batch:
    """Skill prompts: one slot token per row (ids; the env may use ids beyond the vocabulary for new tokens)."""
    n = len(x)
    tokens = np.concatenate(
        [np.full((n, 1), BOS), map_tok.reshape(n, 1), perm_tok.reshape(n, 1), x, np.full((n, 1), SEP), y], axis=1
    ).astype(np.int64)
    mask = np.zeros_like(tokens, dtype=np.float32)
    mask[:, PROMPT_LEN:] = 1.0
    return Batch(tokens, mask)


def in_context(rng: np.random.Generator, combos: list[tuple[str | None, str | None]], k: int, n: int) -> Batch:
    """``n`` in-context prompts with ``k`` demonstrations each (skill drawn per row from ``combos``).

    The loss covers the answers of every demonstration after the first and of the query."""
    rows, masks = [], []
    picks = rng.integers(0, len(combos), size=n)
    for i in range(n):
        m, p = combos[int(picks[i])]
        xs = strings(rng, k + 1)
        ys = target(m, p, xs)
        seq, mk = [BOS, NOP, NOP], [0.0, 0.0, 0.0]
        for j in range(k + 1):
            seq += list(xs[j]) + [SEP] + list(ys[j])
            mk += [0.0] * (LENGTH + 1) + [1.0 if j > 0 else 0.0] * LENGTH
            if j < k:
                seq.append(DELIM)
                mk.append(0.0)
        rows.append(seq)
        masks.append(mk)
    return Batch(np.array(rows, dtype=np.int64), np.array(masks, dtype=np.float32))


def sample_combos(rng: np.random.Generator, n: int, p_empty: float = 0.3) -> list[tuple[str | None, str | None]]:
    """``n`` pre-trained (map, permutation) pairs: each slot empty with probability ``p_empty``, else a
    uniform old skill (so identity, single skills and compositions all occur often)."""
    m_empty = rng.random(n) < p_empty
    p_empty_ = rng.random(n) < p_empty
    mi = rng.integers(0, len(OLD_MAPS), size=n)
    pi = rng.integers(0, len(OLD_PERMS), size=n)
    return [(None if m_empty[i] else OLD_MAPS[mi[i]], None if p_empty_[i] else OLD_PERMS[pi[i]]) for i in range(n)]


def skill_batch(rng: np.random.Generator, combos: list[tuple[str | None, str | None]], n: int | None = None) -> Batch:
    """Skill prompts of pre-trained skills: one per entry of ``combos``, or ``n`` drawn uniformly from it."""
    if n is not None:
        combos = [combos[int(i)] for i in rng.integers(0, len(combos), size=n)]
    n = len(combos)
    x = strings(rng, n)
    y = np.empty_like(x)
    mt = np.empty(n, dtype=np.int64)
    pt = np.empty(n, dtype=np.int64)
    for i, (m, p) in enumerate(combos):
        y[i] = target(m, p, x[i : i + 1])[0]
        mt[i] = NOP if m is None else SKILL_TOKENS[m]
        pt[i] = NOP if p is None else SKILL_TOKENS[p]
    return prompts(mt, pt, x, y)


__all__ = [
    "BOS", "Batch", "DELIM", "DEMO_LEN", "LENGTH", "NEW_MAPS", "NEW_PERMS", "NOP", "N_SYMBOLS", "OLD_MAPS", "OLD_PERMS",
    "PROMPT_LEN", "SEQ_LEN", "SKILL_TOKENS", "TOKEN_NAMES", "VOCAB_SIZE", "apply", "in_context", "kind", "old_combos",
    "prompts", "sample_combos", "skill_batch", "strings", "target",
]
