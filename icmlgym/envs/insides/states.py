"""The docstring corpus split for layer-wise OOD detection, and its per-layer hidden states.

In-domain text is the docstrings of some standard-library topics, out-of-domain text those
of others (near-OOD: the same register, API documentation, on another topic). Each
document's split comes from a hash of its text (the corpus's own hash, read as a digit
0-9): in-domain 0-6 train, 7 val, 8-9 test; out-of-domain 0-2 val, 3-9 test. OOD text is
never in the train split (one-class training). The states are the shipped sentence
encoder's mean-pooled hidden states (embedding output and its 6 layers), cached per text
by :class:`icmlgym.corpora.embeddings.SentenceEncoder`, and memoised per process.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np

IN_TOPICS: tuple[str, ...] = ("network", "files", "concurrency", "data")
OUT_TOPICS: tuple[str, ...] = ("language", "text", "numbers", "time")


def _digit(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 10


def _split_of(digit: int, ood: bool) -> str:
    if ood:
        return "val" if digit < 3 else "test"
    return "train" if digit < 7 else ("val" if digit == 7 else "test")


@functools.lru_cache(maxsize=8)
def corpus_states(in_topics: tuple[str, ...], out_topics: tuple[str, ...]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per split: hidden states ``(n, 7, 384)``, OOD flags ``(n,)`` and in-domain topic ids ``(n,)`` (-1 for OOD).

    Raises:
        ValueError: overlapping or unknown topics (the corpus names them).
    """
    if not in_topics or not out_topics or set(in_topics) & set(out_topics):
        raise ValueError(f"in_topics and out_topics must be non-empty and disjoint, got {in_topics} and {out_topics}")
    from icmlgym.corpora.embeddings import SentenceEncoder
    from icmlgym.corpora.text import docstrings

    docs = docstrings(list(in_topics) + list(out_topics))
    texts = sorted({d.text: d for d in docs}.items())  # one entry per distinct text, in a fixed order
    states = SentenceEncoder().encode([t for t, _ in texts], layers=True)
    out: dict[str, tuple[list, list, list]] = {s: ([], [], []) for s in ("train", "val", "test")}
    for (text, doc), st in zip(texts, states):
        ood = doc.topic in out_topics
        xs, ys, ts = out[_split_of(_digit(text), ood)]
        xs.append(st)
        ys.append(int(ood))
        ts.append(-1 if ood else in_topics.index(doc.topic))
    return {s: (np.asarray(x, np.float32).reshape(-1, *states.shape[1:]), np.asarray(y, np.int64), np.asarray(t, np.int64))
            for s, (x, y, t) in out.items()}


__all__ = ["IN_TOPICS", "OUT_TOPICS", "corpus_states"]
