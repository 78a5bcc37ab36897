"""A generated corpus of step-by-step reasoning with verifiable answers, and its character tokenizer.

Every problem is a question, a chain of steps and a final answer, written as text::

    Q:17+5-8=?
    S:17+5=22
    S:22-8=14
    A:14

Domains (each with difficulty levels 1..5; the level is the number of reasoning steps,
or for ``strings`` the word length minus one):

- ``arithmetic``: a chain of additions and subtractions on numbers below 100.
- ``lists``: the sum or the maximum of a list of digits, folded one element per step.
- ``strings``: reverse a word, one letter per step.
- ``code``: straight-line assignments to variables (``x=3;y=x+4;z=y-2;z?``), one step per line.

``overthink`` adds redundant check steps (``C:`` lines that recompute a step already
done) after the answer is determined, with that probability per problem (1 to 3 checks),
so that early exit has something real to cut.

The split is fixed by the question text (a hash): a question is in ``train``, ``val``
or ``test`` whatever the seed or the order of generation, so a held-out question never
appears in training data.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Iterable, Sequence

import numpy as np

DOMAINS: tuple[str, ...] = ("arithmetic", "lists", "strings", "code")
LEVELS: tuple[int, ...] = (1, 2, 3, 4, 5)
SPLITS: tuple[str, ...] = ("train", "val", "test")

PAD, BOS, EOS = 0, 1, 2
_CHARS = "0123456789abcdefghijklmnopqrstuvwxyzACQS+-*=?:;,()[] \n"


class CharTokenizer:
    """The corpus's character tokenizer: three special ids (pad, bos, eos) then one id per character.

    Every zoo language model trained on the generated corpora shares it (a target and its
    draft must agree on the tokenizer).
    """

    name = "icmlgym-chars-v1"

    def __init__(self, chars: str = _CHARS) -> None:
        self.chars = chars
        self.itos = ["<pad>", "<bos>", "<eos>"] + list(chars)
        self.stoi = {c: i + 3 for i, c in enumerate(chars)}
        self.pad_id, self.bos_id, self.eos_id = PAD, BOS, EOS

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str, bos: bool = False, eos: bool = False) -> list[int]:
        try:
            ids = [self.stoi[c] for c in text]
        except KeyError as err:
            raise ValueError(f"character {err.args[0]!r} is not in the tokenizer's alphabet {self.chars!r}") from None
        return ([BOS] if bos else []) + ids + ([EOS] if eos else [])

    def decode(self, ids: Iterable[int]) -> str:
        return "".join(self.itos[i] for i in ids if i > EOS)

    def config(self) -> dict:
        return {"name": self.name, "chars": self.chars}


@dataclass(frozen=True)
class Problem:
    """One reasoning problem: question, steps (``S:`` lines), redundant checks (``C:`` lines), answer."""

    domain: str
    level: int
    question: str
    steps: tuple[str, ...]
    answer: str
    checks: tuple[str, ...] = field(default=())

    @property
    def prompt(self) -> str:
        """What a model is given: the question line (generation continues with the steps)."""
        return f"Q:{self.question}\n"

    @property
    def reasoning(self) -> str:
        return "".join(f"S:{s}\n" for s in self.steps) + "".join(f"C:{c}\n" for c in self.checks)

    @property
    def text(self) -> str:
        """The full training text."""
        return f"{self.prompt}{self.reasoning}A:{self.answer}\n"

    @property
    def split(self) -> str:
        return split_of(self.question)


def split_of(question: str) -> str:
    """The fixed split of a question: 80% train, 10% val, 10% test by a hash of its text."""
    h = int(hashlib.sha256(question.encode()).hexdigest()[:8], 16) % 10
    return "train" if h < 8 else ("val" if h == 8 else "test")


def extract_answer(text: str) -> str | None:
    """The answer of a generated continuation: what follows the first ``A:`` up to the line end."""
    i = text.find("A:")
    if i < 0:
        return None
    return text[i + 2 :].split("\n", 1)[0]


def _arithmetic(rng: np.random.Generator, level: int) -> Problem:
    value = int(rng.integers(0, 50))
    question, steps = str(value), []
    for _ in range(level):
        if value >= 10 and rng.random() < 0.5:
            b = int(rng.integers(1, min(value, 20) + 1))
            new, op = value - b, "-"
        else:
            b = int(rng.integers(1, 20))
            if value + b >= 100:
                b = int(rng.integers(1, 100 - value)) if value < 99 else 0
            new, op = value + b, "+"
        steps.append(f"{value}{op}{b}={new}")
        question += f"{op}{b}"
        value = new
    return Problem("arithmetic", level, question + "=?", tuple(steps), str(value))


def _lists(rng: np.random.Generator, level: int) -> Problem:
    xs = [int(x) for x in rng.integers(0, 10, size=level + 1)]
    op = "sum" if rng.random() < 0.5 else "max"
    acc, steps = xs[0], []
    for x in xs[1:]:
        new = acc + x if op == "sum" else max(acc, x)
        steps.append(f"{acc}+{x}={new}" if op == "sum" else f"max({acc},{x})={new}")
        acc = new
    return Problem("lists", level, f"{op}[{','.join(map(str, xs))}]=?", tuple(steps), str(acc))


def _strings(rng: np.random.Generator, level: int) -> Problem:
    letters = "abcdefghijklmnopqrstuvwxyz"
    word = "".join(letters[int(i)] for i in rng.integers(0, 26, size=level + 1))
    steps = [word[::-1][: k + 1] for k in range(len(word))]
    return Problem("strings", level, f"rev({word})=?", tuple(steps), word[::-1])


def _code(rng: np.random.Generator, level: int) -> Problem:
    names = list("xyzuvw")
    first = int(rng.integers(0, 20))
    env = {names[0]: first}
    lines, steps = [f"{names[0]}={first}"], [f"{names[0]}={first}"]
    for k in range(1, level + 1):
        src = names[int(rng.integers(0, k))]
        b = int(rng.integers(1, 10))
        if env[src] >= b and rng.random() < 0.5:
            env[names[k]], op = env[src] - b, "-"
        else:
            env[names[k]], op = env[src] + b, "+"
        lines.append(f"{names[k]}={src}{op}{b}")
        steps.append(f"{names[k]}={env[names[k]]}")
    last = names[level]
    return Problem("code", level, ";".join(lines) + f";{last}?", tuple(steps), str(env[last]))


_MAKERS = {"arithmetic": _arithmetic, "lists": _lists, "strings": _strings, "code": _code}


def make_problem(rng: np.random.Generator, domain: str, level: int, overthink: float = 0.0) -> Problem:
    """One problem of ``domain`` at ``level``; with probability ``overthink``, 1-3 redundant checks."""
    if domain not in _MAKERS:
        raise ValueError(f"unknown reasoning domain {domain!r}; domains: {DOMAINS}")
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    p = _MAKERS[domain](rng, level)
    if overthink > 0 and rng.random() < overthink:
        n = int(rng.integers(1, 4))
        checks = tuple(p.steps[int(i)] for i in rng.integers(0, len(p.steps), size=n))
        p = Problem(p.domain, p.level, p.question, p.steps, p.answer, checks)
    return p


def generate(
    n: int,
    seed: int = 0,
    split: str | None = "train",
    domains: Sequence[str] = DOMAINS,
    levels: Sequence[int] = (1, 2, 3),
    overthink: float = 0.0,
    max_tries: int = 50,
) -> list[Problem]:
    """``n`` problems of the given split (None: any split), domains and levels (drawn uniformly).

    Raises:
        ValueError: an unknown domain, level or split, or ``n`` < 0.
    """
    if split is not None and split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS} or None, got {split!r}")
    if n < 0:
        raise ValueError(f"n must be >= 0, got {n}")
    for d in domains:
        if d not in _MAKERS:
            raise ValueError(f"unknown reasoning domain {d!r}; domains: {DOMAINS}")
    for lv in levels:
        if lv not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {lv!r}")
    if not 0 <= overthink <= 1:
        raise ValueError(f"overthink is a probability, got {overthink}")
    rng = np.random.default_rng(seed)
    out: list[Problem] = []
    while len(out) < n:
        d = domains[int(rng.integers(len(domains)))]
        lv = levels[int(rng.integers(len(levels)))]
        for _ in range(max_tries):
            p = make_problem(rng, d, lv, overthink)
            if split is None or p.split == split:
                out.append(p)
                break
    return out


def card() -> dict:
    """The corpus card: what it is, its domains, levels, splits and format."""
    return {
        "name": "reasoning",
        "kind": "generated",
        "domains": list(DOMAINS),
        "levels": list(LEVELS),
        "splits": "80/10/10 train/val/test by a hash of the question text",
        "format": "Q:<question>\\n, S:<step>\\n per step, C:<check>\\n per redundant check, A:<answer>\\n",
        "tokenizer": CharTokenizer().config(),
        "license": "generated by icmlgym (no external data)",
    }


__all__ = [
    "BOS", "DOMAINS", "EOS", "LEVELS", "PAD", "SPLITS", "CharTokenizer", "Problem", "card", "extract_answer",
    "generate", "make_problem", "split_of",
]
