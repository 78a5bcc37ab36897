"""The docstring corpus split for layer-wise OOD detection, and its per-layer hidden states.

In-domain text is the docstrings of some standard-library topics, out-of-domain text those
of others (near-OOD: the same register, API documentation, on another topic). Each
document's split comes from a hash of its text (the corpus's own hash, read as a digit
0-9): in-domain 0-6 train, 7 val, 8-9 test; out-of-domain 0-2 val, 3-9 test. OOD text is
never in the train split (one-class training). The states are the shipped sentence
encoder's mean-pooled hidden states (embedding output and its 6 layers), cached per text
by :class:`icmlgym.corpora.embeddings.SentenceEncoder` in its own cache namespace, and
memoised per process. Texts are encoded one at a time: in a padded batch a text's states
depend (in the last bits) on its batch-mates, and the recorded rollout hashes them.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np

IN_TOPICS: tuple[str, ...] = ("network", "files", "concurrency", "data")
OUT_TOPICS: tuple[str, ...] = ("language", "text", "numbers", "time")


def digit_of(text: str) -> int:
    """A text's fixed digit 0-9 (from its hash): what assigns it to a split."""
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16) % 10


def split_of(digit: int, ood: bool) -> str:
    """The split ("train", "val" or "test") of a text with this digit, in- or out-of-domain."""
    if ood:
        return "val" if digit < 3 else "test"
    return "train" if digit < 7 else ("val" if digit == 7 else "test")


def _stdlib_file(name: str) -> str | None:
    """The source file of a standard-library module, found without importing it (None if not found).

    ``os.path`` and other names that are not files of their own give their parent's file."""
    from importlib.machinery import PathFinder

    parts = name.split(".")
    spec = PathFinder.find_spec(parts[0])
    for part in parts[1:]:
        if spec is None or not spec.submodule_search_locations:
            break
        spec = PathFinder.find_spec(part, list(spec.submodule_search_locations))
    return spec.origin if spec is not None and spec.has_location else None


def docstrings_key(topics: tuple[str, ...]) -> str:
    """The cache key of the topics' docstring corpus: everything the texts depend on.

    The interpreter (its version and build, which fix the C modules' docstrings, and its
    prefix), the bytes of each topic module's source file, and the code that reads them
    (the closure of :mod:`icmlgym.corpora.text` and of :mod:`icmlgym`, imported with it):
    a change to any of these is a new key, never a stale corpus.
    """
    import sys

    from icmlgym.cache import content_key, file_hash
    from icmlgym.codehash import hash_files, module_closure
    from icmlgym.corpora.text import STDLIB_TOPICS

    sources = []
    for topic in topics:
        for module in STDLIB_TOPICS.get(topic, ()):
            path = _stdlib_file(module)
            sources.append([module, path, file_hash(path) if path else None])
    code = hash_files(module_closure(["icmlgym", "icmlgym.corpora", "icmlgym.corpora.text"]))
    return content_key("stdlib-docstrings", 1, list(topics), sys.version, sys.prefix, sources, code)


def _read_docstrings(topics: tuple[str, ...]) -> dict[str, str]:
    """Text -> topic of the topics' docstrings, read in a fresh interpreter, cached by :func:`docstrings_key`.

    A module's docstrings depend on what the process imported before (libraries patch the
    standard library: importing torch replaces a function of :mod:`inspect`), so the corpus is
    read where nothing else is imported: the same texts in a test run, a check and a benchmark.
    Starting that interpreter costs about half a CPU-second, once per run (a run is a process of
    its own), so the texts are kept in the cache namespace ``insides-docstrings``.
    """
    from icmlgym.cache import Cache

    cache = Cache("insides-docstrings")
    key = docstrings_key(tuple(topics))
    cached = cache.read_json(key)
    if isinstance(cached, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in cached.items()):
        return cached
    with cache.lock(key):
        cached = cache.read_json(key)
        if isinstance(cached, dict):
            return cached
        texts = _read_docstrings_fresh(tuple(topics))
        cache.write_json(key, texts)
    return texts


def _read_docstrings_fresh(topics: tuple[str, ...]) -> dict[str, str]:
    """Text -> topic of the topics' docstrings, read in a fresh interpreter (see :func:`_read_docstrings`)."""
    import json
    import os
    import subprocess
    import sys

    code = ("import json, sys; from icmlgym.corpora.text import docstrings; "
            "print(json.dumps({d.text: d.topic for d in docstrings(sys.argv[1:])}))")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    out = subprocess.run([sys.executable, "-c", code, *topics], capture_output=True, text=True, env=env, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"reading the docstring corpus failed: {out.stderr.strip().splitlines()[-1:]}")
    return json.loads(out.stdout)


@functools.lru_cache(maxsize=8)
def corpus_texts(in_topics: tuple[str, ...], out_topics: tuple[str, ...]) -> dict[str, list[str]]:
    """Per split, the texts in the order of :func:`corpus_states`' rows."""
    out: dict[str, list[str]] = {"train": [], "val": [], "test": []}
    for text, doc_topic in sorted_texts(tuple(in_topics), tuple(out_topics)):
        out[split_of(digit_of(text), doc_topic in out_topics)].append(text)
    return out


@functools.lru_cache(maxsize=8)
def sorted_texts(in_topics: tuple[str, ...], out_topics: tuple[str, ...]) -> list[tuple[str, str]]:
    """(text, topic) of every distinct docstring of these topics, in a fixed order."""
    return sorted(_read_docstrings(tuple(in_topics) + tuple(out_topics)).items())  # distinct texts, fixed order


def corpus_states_key(texts: list[str], max_length: int) -> str:
    """The cache key of the whole corpus's states: what every text's own entry is keyed by, for all texts in order.

    :class:`~icmlgym.corpora.embeddings.SentenceEncoder` keys each text's states by the model, the
    mode and ``max_length``; a run reads the whole corpus's 867 entries (0.14 CPU-s), so the stacked
    array is kept too, under a key made of the same parts and every text in order.
    """
    from icmlgym.cache import content_key
    from icmlgym.corpora.embeddings import MODEL_ID

    digest = hashlib.sha256()
    for text in texts:
        digest.update(text.encode() + b"\0")
    return content_key("corpus-states", 1, MODEL_ID, "layers", int(max_length), len(texts), digest.hexdigest())


@functools.lru_cache(maxsize=8)
def corpus_states(in_topics: tuple[str, ...], out_topics: tuple[str, ...]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per split: hidden states ``(n, 7, 384)``, OOD flags ``(n,)`` and in-domain topic ids ``(n,)`` (-1 for OOD).

    Raises:
        ValueError: overlapping or unknown topics (the corpus names them).
    """
    if not in_topics or not out_topics or set(in_topics) & set(out_topics):
        raise ValueError(f"in_topics and out_topics must be non-empty and disjoint, got {in_topics} and {out_topics}")
    from icmlgym.corpora.embeddings import SentenceEncoder

    texts = sorted_texts(tuple(in_topics), tuple(out_topics))
    from icmlgym.cache import Cache

    import torch

    cache = Cache("insides-states")
    encoder = SentenceEncoder(batch_size=1, cache=cache)
    key = corpus_states_key([t for t, _ in texts], encoder.max_length)
    stored = cache.read_arrays(key)
    states = stored.get("states") if stored is not None else None
    if states is None or states.shape != (len(texts), encoder.n_layers + 1, encoder.dim) or states.dtype != np.float32:
        threads = torch.get_num_threads()
        torch.set_num_threads(1)  # one thread, one text at a time: the same bits on every run (the rollout hashes them)
        try:
            states = encoder.encode([t for t, _ in texts], layers=True)
        finally:
            torch.set_num_threads(threads)
        cache.write_arrays(key, {"states": states})
    out: dict[str, tuple[list, list, list]] = {s: ([], [], []) for s in ("train", "val", "test")}
    for (text, doc_topic), st in zip(texts, states):
        ood = doc_topic in out_topics
        xs, ys, ts = out[split_of(digit_of(text), ood)]
        xs.append(st)
        ys.append(int(ood))
        ts.append(-1 if ood else in_topics.index(doc_topic))
    return {s: (np.asarray(x, np.float32).reshape(-1, *states.shape[1:]), np.asarray(y, np.int64), np.asarray(t, np.int64))
            for s, (x, y, t) in out.items()}


__all__ = ["IN_TOPICS", "OUT_TOPICS", "corpus_states", "corpus_texts"]
