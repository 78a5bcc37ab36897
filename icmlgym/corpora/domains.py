"""Generated data sources at measured distances from a general language (for midtraining schedules).

One shared vocabulary of :data:`VOCAB` tokens (``0`` separates documents, ``1..WORDS`` are words,
the rest are symbols) and four sources, each a seeded generator of fixed-length token windows:

- ``general``: a first-order Markov "language" over the words with a sparse, Zipf-weighted
  transition table (fixed by ``LANGUAGE_SEED``);
- ``near``: the same language with shifted word statistics (its transition rows mixed with a
  second random table): close to ``general``;
- ``code``: code-like lines, ``name = ( name op name ) ;`` and nested brackets, names drawn from
  the words: far from ``general``;
- ``arith``: arithmetic-like lines ``a + b = c ;`` with digits as tokens and true sums: far.

:func:`distance` measures how far a source is from ``general`` (Jensen-Shannon divergence of the
bigram distributions estimated from samples, in bits).
"""

from __future__ import annotations

import numpy as np

WORDS = 24
SEP = 0
OPEN, CLOSE, EQ, SEMI, PLUS, TIMES = WORDS + 1, WORDS + 2, WORDS + 3, WORDS + 4, WORDS + 5, WORDS + 6
DIGIT0 = WORDS + 7  # ten digit tokens
VOCAB = DIGIT0 + 10
LANGUAGE_SEED = 1234
SOURCES: tuple[str, ...] = ("general", "near", "code", "arith")


def _table(rng: np.random.Generator, k: int = 5) -> np.ndarray:
    """A sparse Markov table over the words: each word continues to ``k`` others, Zipf-weighted."""
    t = np.zeros((WORDS + 1, WORDS + 1))
    for w in range(WORDS + 1):
        nxt = rng.choice(np.arange(1, WORDS + 1), size=k, replace=False)
        t[w, nxt] = 1.0 / np.arange(1, k + 1)
    return t / t.sum(1, keepdims=True)


_RNG = np.random.default_rng(LANGUAGE_SEED)
GENERAL_TABLE = _table(_RNG)
NEAR_TABLE = 0.5 * GENERAL_TABLE + 0.5 * _table(_RNG)


def _markov(rng: np.random.Generator, table: np.ndarray, n: int, length: int) -> np.ndarray:
    out = np.empty((n, length), dtype=np.int64)
    cum = np.cumsum(table, axis=1)
    state = np.zeros(n, dtype=np.int64)
    for t in range(length):
        u = rng.random(n)[:, None]
        nxt = (u > cum[state]).sum(1)
        # a sentence ends (SEP) with probability 1/8, then restarts from SEP's row
        end = rng.random(n) < 0.125
        nxt = np.where(end, SEP, np.minimum(nxt, WORDS))
        out[:, t] = nxt
        state = nxt
    return out


def _lines(rng: np.random.Generator, n: int, length: int, line) -> np.ndarray:
    out = np.empty((n, length), dtype=np.int64)
    for i in range(n):
        seq: list[int] = []
        while len(seq) < length:
            seq += line(rng)
        out[i] = seq[:length]
    return out


def _code_line(rng: np.random.Generator) -> list[int]:
    names = list(rng.integers(1, 9, size=3) + 0)  # a few identifiers (word ids 1..8)
    op = PLUS if rng.random() < 0.5 else TIMES
    depth = int(rng.integers(0, 3))
    expr = [names[1], op, names[2]]
    for _ in range(depth):
        expr = [OPEN] + expr + [CLOSE]
    return [names[0], EQ] + expr + [SEMI]


def _arith_line(rng: np.random.Generator) -> list[int]:
    a, b = int(rng.integers(0, 10)), int(rng.integers(0, 10))
    c = a + b
    digits = [DIGIT0 + int(d) for d in str(c)]
    return [DIGIT0 + a, PLUS, DIGIT0 + b, EQ] + digits + [SEMI]


def sample(source: str, rng: np.random.Generator, n: int, length: int) -> np.ndarray:
    """``n`` windows of ``length`` tokens from ``source`` (``ValueError`` naming the sources if unknown)."""
    if source == "general":
        return _markov(rng, GENERAL_TABLE, n, length)
    if source == "near":
        return _markov(rng, NEAR_TABLE, n, length)
    if source == "code":
        return _lines(rng, n, length, _code_line)
    if source == "arith":
        return _lines(rng, n, length, _arith_line)
    raise ValueError(f"unknown source {source!r}; sources: {SOURCES}")


def bigrams(x: np.ndarray) -> np.ndarray:
    counts = np.zeros((VOCAB, VOCAB))
    np.add.at(counts, (x[:, :-1].reshape(-1), x[:, 1:].reshape(-1)), 1.0)
    return counts / counts.sum()


def distance(source: str, n: int = 2000, length: int = 32, seed: int = 0) -> float:
    """Jensen-Shannon divergence (bits) between the bigram distributions of ``source`` and ``general``."""
    rng = np.random.default_rng(seed)
    p = bigrams(sample(source, rng, n, length)).reshape(-1)
    q = bigrams(sample("general", rng, n, length)).reshape(-1)
    m = 0.5 * (p + q)

    def kl(a: np.ndarray) -> float:
        keep = a > 0
        return float((a[keep] * np.log2(a[keep] / m[keep])).sum())

    return 0.5 * kl(p) + 0.5 * kl(q)


__all__ = ["SOURCES", "VOCAB", "bigrams", "distance", "sample"]
