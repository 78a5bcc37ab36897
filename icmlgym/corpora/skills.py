"""A generated library of skills invoked by vocabulary tokens (for the skill-neologism family).

A prompt asks a language model to transform a string of ``LENGTH`` symbols (``0..N_SYMBOLS-1``)
with a chain of up to two *map* skills (applied to every symbol: ``shift<k>`` adds ``k`` mod
``N_SYMBOLS``, ``neg`` mirrors the alphabet) and then a chain of up to two *permutation* skills
(``reverse``, ``sort``, ``rot<r>`` rotates left by ``r``, ``swap`` swaps adjacent pairs). Each
skill is one vocabulary token; the prompt has two slots for each kind, filled with skill tokens
or ``NOP`` (nothing to do), applied in order, so compositions are in pre-training::

    BOS  <map|NOP> <map|NOP>  <perm|NOP> <perm|NOP>  x1 .. x6  SEP  y1 .. y6

In-context prompts give no skill token (every slot ``NOP``) and ``k`` demonstrations of the same
task before the query, each followed by ``DELIM``::

    BOS NOP NOP NOP NOP  x SEP y DELIM  ...  x SEP y

The held-out skills (:data:`NEW_MAPS`, :data:`NEW_PERMS`) have no token: ``shift4`` and ``shift6``,
``rot3`` and ``rot4``. Their *procedures* are in pre-training only as chains of two tokens
(``shift1 shift3``, ``rot1 rot2``, ...): the model can do them, no single token invokes them
(the setting of skill neologisms: procedural knowledge without a word for it). Everything is
generated from a numpy generator, no download.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

N_SYMBOLS = 10
LENGTH = 6
BOS, SEP, DELIM, NOP = N_SYMBOLS, N_SYMBOLS + 1, N_SYMBOLS + 2, N_SYMBOLS + 3

# skills with a vocabulary token (pre-trained), in token order after NOP
OLD_MAPS: tuple[str, ...] = ("shift1", "shift2", "shift3", "shift5", "neg")
OLD_PERMS: tuple[str, ...] = ("reverse", "sort", "rot1", "rot2", "swap")
# held-out skills: no token; their procedures occur in pre-training only as two-token chains
NEW_MAPS: tuple[str, ...] = ("shift4", "shift6")
NEW_PERMS: tuple[str, ...] = ("rot3", "rot4")
SLOTS = 4  # two map slots, then two permutation slots

FIRST_SKILL = NOP + 1
SKILL_TOKENS: dict[str, int] = {name: FIRST_SKILL + i for i, name in enumerate(OLD_MAPS + OLD_PERMS)}
VOCAB_SIZE = FIRST_SKILL + len(SKILL_TOKENS)  # the pre-trained vocabulary (new tokens are added by the env)
PROMPT_LEN = 1 + SLOTS + LENGTH + 1  # BOS, the slots, the input, SEP
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


Task = tuple  # the skills of the slots in order (None: empty), applied left to right


def target(task: Task, x: np.ndarray) -> np.ndarray:
    """The skills of ``task`` applied in order (maps first, as the slots are laid out)."""
    for skill in task:
        x = apply(skill, x)
    return x


def old_combos() -> list[Task]:
    """Every task with at most one map and one permutation token (first slot of each kind), including the identity."""
    return [(m, None, p, None) for m in (None,) + OLD_MAPS for p in (None,) + OLD_PERMS]


@dataclass(frozen=True)
class Batch:
    """Token ids ``(n, T)`` and the loss mask ``(n, T)`` (1 where the token at ``t`` is predicted from ``t-1``)."""

    tokens: np.ndarray
    mask: np.ndarray


def strings(rng: np.random.Generator, n: int) -> np.ndarray:
    return rng.integers(0, N_SYMBOLS, size=(n, LENGTH))


def prompts(slot_tokens: np.ndarray, x: np.ndarray, y: np.ndarray) -> Batch:
    """Skill prompts from the slot tokens ``(n, SLOTS)`` (ids; the env may use ids beyond the vocabulary for new tokens)."""
    n = len(x)
    tokens = np.concatenate([np.full((n, 1), BOS), slot_tokens.reshape(n, SLOTS), x, np.full((n, 1), SEP), y], axis=1).astype(np.int64)
    mask = np.zeros_like(tokens, dtype=np.float32)
    mask[:, PROMPT_LEN:] = 1.0
    return Batch(tokens, mask)


def in_context(rng: np.random.Generator, combos: list[Task], k: int, n: int) -> Batch:
    """``n`` in-context prompts with ``k`` demonstrations each (task drawn per row from ``combos``).

    The loss covers the answers of every demonstration after the first and of the query."""
    rows, masks = [], []
    picks = rng.integers(0, len(combos), size=n)
    for i in range(n):
        task = combos[int(picks[i])]
        xs = strings(rng, k + 1)
        ys = target(task, xs)
        seq, mk = [BOS] + [NOP] * SLOTS, [0.0] * (1 + SLOTS)
        for j in range(k + 1):
            seq += list(xs[j]) + [SEP] + list(ys[j])
            mk += [0.0] * (LENGTH + 1) + [1.0 if j > 0 else 0.0] * LENGTH
            if j < k:
                seq.append(DELIM)
                mk.append(0.0)
        rows.append(seq)
        masks.append(mk)
    return Batch(np.array(rows, dtype=np.int64), np.array(masks, dtype=np.float32))


def sample_combos(rng: np.random.Generator, n: int, p_empty: float = 0.35) -> list[Task]:
    """``n`` pre-trained tasks: each of the four slots empty with probability ``p_empty``, else a
    uniform old skill of its kind (so identity, single skills, chains and compositions all occur)."""
    empty = rng.random((n, SLOTS)) < p_empty
    mi = rng.integers(0, len(OLD_MAPS), size=(n, 2))
    pi = rng.integers(0, len(OLD_PERMS), size=(n, 2))
    out = []
    for i in range(n):
        maps = [None if empty[i, j] else OLD_MAPS[mi[i, j]] for j in range(2)]
        perms = [None if empty[i, 2 + j] else OLD_PERMS[pi[i, j]] for j in range(2)]
        out.append(tuple(maps + perms))
    return out


def slot_token(skill: str | None) -> int:
    return NOP if skill is None else SKILL_TOKENS[skill]


def skill_batch(rng: np.random.Generator, combos: list[Task], n: int | None = None) -> Batch:
    """Skill prompts of pre-trained tasks: one per entry of ``combos``, or ``n`` drawn uniformly from it."""
    if n is not None:
        combos = [combos[int(i)] for i in rng.integers(0, len(combos), size=n)]
    n = len(combos)
    x = strings(rng, n)
    y = np.empty_like(x)
    toks = np.empty((n, SLOTS), dtype=np.int64)
    for i, task in enumerate(combos):
        y[i] = target(task, x[i : i + 1])[0]
        toks[i] = [slot_token(s) for s in task]
    return prompts(toks, x, y)


__all__ = [
    "BOS", "Batch", "DELIM", "DEMO_LEN", "LENGTH", "NEW_MAPS", "NEW_PERMS", "NOP", "N_SYMBOLS", "OLD_MAPS", "OLD_PERMS",
    "PROMPT_LEN", "SEQ_LEN", "SKILL_TOKENS", "SLOTS", "TOKEN_NAMES", "Task", "VOCAB_SIZE", "apply", "in_context", "kind",
    "old_combos", "prompts", "sample_combos", "skill_batch", "slot_token", "strings", "target",
]
