"""Sampled responses with hidden genuine / hallucinated labels and their embeddings (HallucinationLabeling-v0's pool).

Two sources:

- the embedded default, :func:`fact_pool`: the fact transformer (:mod:`icmlgym.envs.insides.facts`)
  answers ``pool_prompts`` prompts it knows (greedy answer right), ``n_responses`` times each at
  ``temperature``; a response is hallucinated when it is not one of the genuine answer sentences;
- :func:`load_jsonl`: a user's local SOCRATES-style JSON-lines file, one response per line
  (``prompt``, ``response``, ``label``).

Responses are embedded by the shipped sentence encoder (``embedding="sentence"``: all-MiniLM-L6-v2,
normalised mean pooling, cached per text, one text at a time on one thread so that the bits do
not depend on batch-mates) or, for the fact model, by its own states (``embedding="model"``:
the last layer's states over the answer tokens, mean-pooled). A pool is a :class:`Pool`: arrays
``(prompts, responses, dim)`` and ``(prompts, responses)``; the default pool is cached whole.
"""

from __future__ import annotations

import functools
import hashlib
import inspect
import json
import math
import os
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from icmlgym.envs.insides.facts import BOS, EOS, SEP, FactModel, load_model

EMBEDDINGS = ("sentence", "model")


@dataclass(frozen=True)
class Pool:
    """Prompts x responses: embeddings ``(P, M, d)``, labels ``(P, M)`` (1 = hallucinated), texts."""

    embeddings: np.ndarray
    labels: np.ndarray
    prompts: tuple[str, ...]
    texts: tuple[tuple[str, ...], ...]

    def __post_init__(self) -> None:
        p, m = self.labels.shape
        if self.embeddings.shape[:2] != (p, m) or len(self.prompts) != p or len(self.texts) != p:
            raise ValueError(f"inconsistent pool: embeddings {self.embeddings.shape}, labels {self.labels.shape}, {len(self.prompts)} prompts")

    @property
    def hallucination_rate(self) -> float:
        return float(self.labels.mean())


# ----------------------------------------------------------------------------- the fact model's answers


def sample_answers(fm: FactModel, prompts: list[tuple[str, str, int]], n: int, temperature: float, seed: int) -> list[list[str]]:
    """``n`` answers per (entity, relation, question template), greedy at ``temperature`` 0; seeded, one thread.

    Prompts of equal token length are decoded together (``n`` rows each), in a fixed order.
    """
    import torch

    from icmlgym.envs.insides.facts import BLOCK
    from icmlgym.nn.runtime import fixed_threads

    if temperature < 0 or not math.isfinite(temperature):
        raise ValueError(f"temperature must be a finite number >= 0, got {temperature}")
    if n < 1:
        raise ValueError(f"n must be >= 1, got {n}")
    qs = [[BOS, *fm.tok.encode(fm.facts.question(e, r, q)), SEP] for e, r, q in prompts]
    groups: dict[int, list[int]] = {}
    for i, q in enumerate(qs):
        groups.setdefault(len(q), []).append(i)
    gen = torch.Generator().manual_seed(int(seed))
    out: list[list[str]] = [[] for _ in prompts]
    with fixed_threads(1), torch.no_grad():
        for width in sorted(groups):
            idx = groups[width]
            x = torch.tensor([qs[i] for i in idx for _ in range(n)])
            done = torch.zeros(len(x), dtype=torch.bool)
            while x.shape[1] < BLOCK and not bool(done.all()):
                logits = fm.model(x)[:, -1].double()
                if temperature == 0:
                    nxt = logits.argmax(-1)
                else:
                    nxt = torch.multinomial(torch.softmax(logits / temperature, -1), 1, generator=gen)[:, 0]
                nxt = torch.where(done, torch.full_like(nxt, EOS), nxt)
                done |= nxt == EOS
                x = torch.cat([x, nxt[:, None]], 1)
            for j, i in enumerate(idx):
                out[i] = [fm.tok.decode(row[width:].tolist()) for row in x[j * n : (j + 1) * n]]
    return out


@functools.lru_cache(maxsize=4)
def known_prompts() -> tuple[tuple[str, str, int], ...]:
    """Every (entity, relation, question template) the default fact model answers right greedily, in a fixed order."""
    fm = load_model()
    prompts = [(e, r, q) for (e, r) in sorted(fm.facts.values) for q in range(3)]
    greedy = sample_answers(fm, prompts, 1, 0.0, 0)
    return tuple(p for p, (a,) in zip(prompts, greedy) if a in fm.facts.genuine_answers(p[0], p[1]))


def _model_states(fm: FactModel, prompt: tuple[str, str, int], answers: list[str]) -> np.ndarray:
    """The fact model's last-layer states over each answer's tokens (given its question), mean-pooled."""
    import torch

    from icmlgym.nn.runtime import fixed_threads

    q = [BOS, *fm.tok.encode(fm.facts.question(*prompt)), SEP]
    out = []
    with fixed_threads(1), torch.no_grad():
        for a in answers:
            ids = q + fm.tok.encode(a)
            _, states = fm.model(torch.tensor([ids]), hidden=True)
            out.append(states[-1][0, len(q):].mean(0).double().numpy())
    return np.asarray(out, np.float32)


def encode_sentences(texts: list[str]) -> np.ndarray:
    """Sentence embeddings ``(n, 384)`` of the shipped encoder, one text at a time on one thread, cached per text."""
    from icmlgym.cache import Cache
    from icmlgym.corpora.embeddings import SentenceEncoder
    from icmlgym.nn.runtime import fixed_threads

    with fixed_threads(1):
        return SentenceEncoder(batch_size=1, cache=Cache("insides-responses")).encode(texts)


def _source_hash() -> str:
    from icmlgym.envs.insides import facts

    return hashlib.sha256((inspect.getsource(facts) + inspect.getsource(inspect.getmodule(_source_hash))).encode()).hexdigest()[:16]


@functools.lru_cache(maxsize=8)
def fact_pool(pool_prompts: int = 96, n_responses: int = 8, temperature: float = 1.3, embedding: str = "sentence", pool_seed: int = 0) -> Pool:
    """The default pool: ``pool_prompts`` known prompts (drawn with ``pool_seed``) x ``n_responses`` sampled answers.

    Cached whole in the shared cache's ``insides-responses`` namespace (a warm call is one file read).

    Raises:
        ValueError: an unknown embedding, a temperature < 0, or more prompts than the model knows.
    """
    from icmlgym.cache import Cache, content_key

    if embedding not in EMBEDDINGS:
        raise ValueError(f"embedding must be one of {EMBEDDINGS}, got {embedding!r}")
    if n_responses < 2:
        raise ValueError(f"n_responses must be >= 2 (responses to one prompt are compared), got {n_responses}")
    cache = Cache("insides-responses")
    key = content_key("fact-pool", pool_prompts, n_responses, float(temperature), embedding, pool_seed, _source_hash())
    hit = cache.read_arrays(key)
    if hit is not None:
        meta = json.loads(str(hit["meta"]))
        return Pool(hit["embeddings"], hit["labels"], tuple(meta["prompts"]), tuple(tuple(t) for t in meta["texts"]))
    fm = load_model()
    known = known_prompts()
    if not 1 <= pool_prompts <= len(known):
        raise ValueError(f"pool_prompts must be in 1..{len(known)} (the prompts the fact model answers right greedily), got {pool_prompts}")
    rng = np.random.default_rng(pool_seed)
    chosen = [known[i] for i in sorted(rng.choice(len(known), pool_prompts, replace=False))]
    answers = sample_answers(fm, chosen, n_responses, temperature, pool_seed)
    labels = np.array([[a not in fm.facts.genuine_answers(e, r) for a in row] for (e, r, _), row in zip(chosen, answers)], np.int64)
    if embedding == "sentence":
        flat = [a for row in answers for a in row]
        emb = encode_sentences(flat).reshape(pool_prompts, n_responses, -1)
    else:
        emb = np.stack([_model_states(fm, p, row) for p, row in zip(chosen, answers)])
    prompts = tuple(fm.facts.question(*p) for p in chosen)
    pool = Pool(emb.astype(np.float32), labels, prompts, tuple(tuple(r) for r in answers))
    cache.write_arrays(key, {"embeddings": pool.embeddings, "labels": pool.labels,
                             "meta": np.array(json.dumps({"prompts": pool.prompts, "texts": pool.texts}))})
    return pool


# ----------------------------------------------------------------------------- a user's SOCRATES-style file

_LABELS = {"1": 1, "0": 0, "true": 1, "false": 0, "hallucinated": 1, "hallucination": 1, "genuine": 0, "correct": 0, "faithful": 0}


class JSONLError(ValueError):
    """A malformed line of a responses file (the message names file:line and what is wrong)."""


def _parse_line(path: Path, no: int, line: str) -> tuple[str, str, int]:
    where = f"{path}:{no}"
    try:
        row = json.loads(line)
    except json.JSONDecodeError as err:
        raise JSONLError(f"{where}: not valid JSON ({err.msg} at column {err.colno})") from None
    if not isinstance(row, dict):
        raise JSONLError(f"{where}: expected a JSON object with prompt, response and label, got {type(row).__name__}")
    missing = [k for k in ("prompt", "response", "label") if k not in row]
    if missing:
        raise JSONLError(f"{where}: missing field(s) {missing}")
    if not isinstance(row["prompt"], str) or not isinstance(row["response"], str) or not row["response"].strip():
        raise JSONLError(f"{where}: prompt and response must be strings (response non-empty)")
    label = _LABELS.get(str(row["label"]).strip().lower()) if not isinstance(row["label"], float) else None
    if label is None:
        raise JSONLError(f"{where}: label {row['label']!r} is not one of 0/1, true/false, genuine/hallucinated")
    return row["prompt"], row["response"], label


def load_jsonl(path: str | os.PathLike, n_responses: int, strict: bool = False, embed: Any = None) -> Pool:
    """A pool from a SOCRATES-style JSON-lines file: one ``{"prompt", "response", "label"}`` object per line.

    Prompts with at least ``n_responses`` responses keep their first ``n_responses`` (in file
    order); the others are dropped with a warning. ``label``: 1/0, true/false, or
    "hallucinated"/"genuine". Blank lines are ignored.

    Args:
        strict: refuse the file at its first malformed line (``JSONLError``); otherwise skip
            each malformed line with a warning naming file:line.
        embed: ``texts -> (n, d)`` embeddings (default: the shipped sentence encoder).

    Raises:
        FileNotFoundError: no such file.
        JSONLError: a malformed line in strict mode, or no prompt with enough responses.
    """
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no responses file at {path}")
    if n_responses < 2:
        raise ValueError(f"n_responses must be >= 2, got {n_responses}")
    groups: dict[str, list[tuple[str, int]]] = {}
    skipped = 0
    with path.open(encoding="utf-8") as fh:
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            try:
                prompt, response, label = _parse_line(path, no, line)
            except JSONLError as err:
                if strict:
                    raise
                warnings.warn(f"skipped {err}", stacklevel=2)
                skipped += 1
                continue
            groups.setdefault(prompt, []).append((response, label))
    short = [p for p, rs in groups.items() if len(rs) < n_responses]
    if short:
        warnings.warn(f"{path}: dropped {len(short)} prompt(s) with fewer than {n_responses} responses", stacklevel=2)
    kept = [p for p in groups if len(groups[p]) >= n_responses]
    if not kept:
        raise JSONLError(f"{path}: no prompt has {n_responses} valid responses ({len(groups)} prompts, {skipped} malformed lines skipped)")
    texts = tuple(tuple(r for r, _ in groups[p][:n_responses]) for p in kept)
    labels = np.array([[lab for _, lab in groups[p][:n_responses]] for p in kept], np.int64)
    flat = [t for row in texts for t in row]
    emb = np.asarray((embed or encode_sentences)(flat), np.float32).reshape(len(kept), n_responses, -1)
    return Pool(emb, labels, tuple(kept), texts)


__all__ = ["EMBEDDINGS", "JSONLError", "Pool", "encode_sentences", "fact_pool", "known_prompts", "load_jsonl", "sample_answers"]
