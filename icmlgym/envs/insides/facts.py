"""A generated fact base, a small transformer that learns it, and its sampled answers (HallucinationLabeling-v0's data).

The fact base: ``n_entities`` fictional countries (names built from syllables) x six relations
(capital, flag colour, national animal, sport, instrument, dish), each relation's value drawn
from eight real English words. Every fact is asked with three question templates and answered
with three answer templates (paraphrases), so the training text is ``facts x 3 x 3`` word
sequences ``<bos> question <sep> answer <eos>``.

The model is the zoo's decoder-only transformer (:class:`icmlgym.zoo.transformer.GPT`)
over word tokens, trained with :func:`icmlgym.nn.train.train_loop` on the answer tokens,
one thread, from a fixed seed (bit-identical on every CPU run), and cached in the shared
cache's ``insides-facts`` namespace keyed by the configuration and this module's source.

A *prompt* is one (fact, question template). Only prompts the model answers right when
decoding greedily are kept ("the knowledge is present" by construction); each is then
answered ``n_responses`` times at ``temperature`` (seeded). A response is *genuine* when it
is exactly one of the three answer templates filled with the prompt's entity and true value,
else *hallucinated* (a wrong value, a wrong entity, or a malformed answer). The temperature
sets the hallucination rate (measured in ``tests/insides/test_facts.py``).
"""

from __future__ import annotations

import hashlib
import inspect
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

RELATIONS: dict[str, tuple[str, ...]] = {
    "capital": ("Paris", "Lima", "Oslo", "Cairo", "Tokyo", "Quito", "Dakar", "Hanoi"),
    "flag colour": ("red", "blue", "green", "yellow", "purple", "orange", "black", "white"),
    "national animal": ("lion", "eagle", "wolf", "bear", "tiger", "horse", "owl", "fox"),
    "national sport": ("football", "tennis", "rugby", "cricket", "hockey", "chess", "golf", "boxing"),
    "national instrument": ("violin", "drum", "flute", "harp", "guitar", "piano", "trumpet", "cello"),
    "national dish": ("rice", "bread", "cheese", "fish", "beans", "soup", "noodles", "dumplings"),
}
QUESTIONS: tuple[str, ...] = ("what is the {r} of {e} ?", "which {r} does {e} have ?", "tell me the {r} of {e} .")
ANSWERS: tuple[str, ...] = ("the {r} of {e} is {v} .", "{v} is the {r} of {e} .", "it is {v} .")
_SYLLABLES = ("ka", "lo", "mi", "ra", "ve", "to", "sun", "dor", "bel", "zan", "ri", "qua", "nes", "mo", "til", "gar")
PAD, BOS, SEP, EOS = 0, 1, 2, 3


def entity_names(n: int, seed: int) -> list[str]:
    """``n`` distinct capitalised pseudo-names of 2-3 syllables (seeded)."""
    rng = np.random.default_rng(seed)
    names: list[str] = []
    while len(names) < n:
        name = "".join(rng.choice(_SYLLABLES, int(rng.integers(2, 4)))).capitalize()
        if name not in names:
            names.append(name)
    return names


@dataclass(frozen=True)
class FactBase:
    """Entities x relations -> values, with the word vocabulary of every question and answer."""

    entities: tuple[str, ...]
    values: dict[tuple[str, str], str]

    @classmethod
    def generate(cls, n_entities: int, seed: int) -> "FactBase":
        if n_entities < 2:
            raise ValueError(f"n_entities must be >= 2, got {n_entities}")
        rng = np.random.default_rng(seed + 1)
        ents = tuple(entity_names(n_entities, seed))
        return cls(ents, {(e, r): str(rng.choice(vals)) for e in ents for r, vals in RELATIONS.items()})

    @property
    def vocab(self) -> list[str]:
        words = {w for t in QUESTIONS + ANSWERS for w in t.split() if "{" not in w}
        words |= {w for r in RELATIONS for w in r.split()} | set(self.entities)
        words |= {v for vals in RELATIONS.values() for v in vals}
        return ["<pad>", "<bos>", "<sep>", "<eos>"] + sorted(words)

    def question(self, e: str, r: str, q: int) -> str:
        return QUESTIONS[q].format(r=r, e=e)

    def answer(self, e: str, r: str, a: int, v: str | None = None) -> str:
        return ANSWERS[a].format(r=r, e=e, v=self.values[(e, r)] if v is None else v)

    def genuine_answers(self, e: str, r: str) -> set[str]:
        return {self.answer(e, r, a) for a in range(len(ANSWERS))}


class WordTokenizer:
    """Whitespace word tokens over a fixed vocabulary, with pad/bos/sep/eos ids 0-3."""

    def __init__(self, vocab: list[str]) -> None:
        self.itos = list(vocab)
        self.stoi = {w: i for i, w in enumerate(self.itos)}

    @property
    def vocab_size(self) -> int:
        return len(self.itos)

    def encode(self, text: str) -> list[int]:
        try:
            return [self.stoi[w] for w in text.split()]
        except KeyError as err:
            raise ValueError(f"word {err.args[0]!r} is not in the fact base's vocabulary") from None

    def decode(self, ids) -> str:
        return " ".join(self.itos[int(i)] for i in ids if int(i) > EOS)


DEFAULT_MODEL: dict[str, Any] = {"n_entities": 48, "fact_seed": 0, "n_layer": 2, "n_head": 4, "n_embd": 64,
                                 "steps": 1200, "batch_size": 64, "lr": 3e-3, "seed": 0}
BLOCK = 32


def _code_hash() -> str:
    """A hash of this module's source and of the transformer and training loop it uses."""
    import icmlgym.nn.train
    import icmlgym.zoo.transformer

    mods = (inspect.getmodule(_code_hash), icmlgym.zoo.transformer, icmlgym.nn.train)
    return hashlib.sha256("\0".join(inspect.getsource(m) for m in mods).encode()).hexdigest()[:16]


def _sequences(fb: FactBase, tok: WordTokenizer) -> tuple[Any, Any]:
    """Token rows ``<bos> q <sep> a <eos>`` (padded to BLOCK + 1) and the mask of answer targets."""
    import torch

    rows, masks = [], []
    for (e, r) in sorted(fb.values):
        for q in range(len(QUESTIONS)):
            for a in range(len(ANSWERS)):
                qi, ai = tok.encode(fb.question(e, r, q)), tok.encode(fb.answer(e, r, a))
                ids = [BOS, *qi, SEP, *ai, EOS]
                mask = [0] * (len(qi) + 2) + [1] * (len(ai) + 1)  # targets from the first answer token on
                rows.append(ids + [PAD] * (BLOCK + 1 - len(ids)))
                masks.append(mask[1:] + [0] * (BLOCK + 1 - len(ids)))
    return torch.tensor(rows), torch.tensor(masks, dtype=torch.bool)


@dataclass
class FactModel:
    """The trained transformer with its fact base and tokenizer; ``card`` holds training facts and quality."""

    model: Any
    facts: FactBase
    tok: WordTokenizer
    card: dict[str, Any]


def _train(cfg: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
    import torch
    import torch.nn.functional as F

    from icmlgym.nn.counters import CostMeter
    from icmlgym.nn.train import Budget, train_loop

    fb = FactBase.generate(cfg["n_entities"], cfg["fact_seed"])
    tok = WordTokenizer(fb.vocab)
    torch.manual_seed(cfg["seed"])
    model = _build(cfg, tok)
    data, mask = _sequences(fb, tok)
    gen = torch.Generator().manual_seed(cfg["seed"])
    opt = torch.optim.AdamW(model.parameters(), cfg["lr"], weight_decay=0.01)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg["lr"], total_steps=cfg["steps"], pct_start=0.1)

    def batch(step: int):
        idx = torch.randint(0, len(data), (cfg["batch_size"],), generator=gen)
        return data[idx], mask[idx]

    def loss_fn(m, b):
        x, msk = b
        logits = m(x[:, :-1])
        y = x[:, 1:].masked_fill(~msk[:, :BLOCK], -100)
        return F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=-100), len(x), int(msk.sum())

    res = train_loop(model, batch, loss_fn, opt, Budget(cfg["steps"]), meter=CostMeter(), scheduler=sched)
    model.eval()
    return model, {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4), "seconds": round(res.seconds, 2)}


WEIGHTS = Path(__file__).with_name("weights")


def model_key(cfg: dict[str, Any]) -> str:
    """The cache key of a configuration: its settings and this module's source (an edit retrains)."""
    from icmlgym.cache import content_key

    return content_key("fact-model", cfg, _code_hash())


def _build(cfg: dict[str, Any], tok: WordTokenizer):
    from icmlgym.zoo.transformer import GPT, GPTConfig

    return GPT(GPTConfig(vocab_size=tok.vocab_size, block_size=BLOCK, n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"]))


def load_model(**overrides: Any) -> FactModel:
    """The fact transformer for a configuration (:data:`DEFAULT_MODEL` plus overrides).

    The default configuration's weights ship with the package (``weights/fact-model.pt``, used
    only while their recorded key equals :func:`model_key`); any other is trained once (about
    a minute of one core) and cached in the shared cache's ``insides-facts`` namespace.
    """
    import io

    import torch

    from icmlgym.cache import Cache
    from icmlgym.nn.runtime import fixed_threads

    unknown = set(overrides) - set(DEFAULT_MODEL)
    if unknown:
        raise ValueError(f"unknown fact-model settings {sorted(unknown)}; settings: {sorted(DEFAULT_MODEL)}")
    cfg = {**DEFAULT_MODEL, **overrides}
    fb = FactBase.generate(cfg["n_entities"], cfg["fact_seed"])
    tok = WordTokenizer(fb.vocab)
    key = model_key(cfg)
    shipped = WEIGHTS / "fact-model.json"
    if shipped.is_file() and json.loads(shipped.read_text()).get("key") == key:
        raw, card = (WEIGHTS / "fact-model.pt").read_bytes(), json.loads(shipped.read_text())
    else:
        cache = Cache("insides-facts")
        with cache.lock(key):
            raw, card = cache.read_bytes(key, ".pt"), cache.read_json(key)
            if raw is None or card is None:
                with fixed_threads(1):
                    model, card = _train(cfg)
                buf = io.BytesIO()
                torch.save(model.state_dict(), buf)
                raw, card = buf.getvalue(), {**card, "key": key, "config": cfg}
                cache.write_bytes(key, raw, ".pt")
                cache.write_json(key, card)
    model = _build(cfg, tok)
    model.load_state_dict(torch.load(io.BytesIO(raw), weights_only=True))
    model.eval()
    return FactModel(model, fb, tok, dict(card))


def ship_weights() -> Path:
    """Write the default configuration's weights and card into ``weights/`` (run after editing this module)."""
    import io

    import torch

    WEIGHTS.mkdir(exist_ok=True)
    fm = load_model()
    buf = io.BytesIO()
    torch.save(fm.model.state_dict(), buf)
    (WEIGHTS / "fact-model.pt").write_bytes(buf.getvalue())
    (WEIGHTS / "fact-model.json").write_text(json.dumps(fm.card, indent=1, sort_keys=True) + "\n")
    return WEIGHTS / "fact-model.pt"


__all__ = ["ANSWERS", "BLOCK", "DEFAULT_MODEL", "QUESTIONS", "RELATIONS", "FactBase", "FactModel", "WordTokenizer",
           "entity_names", "load_model", "model_key", "ship_weights"]
