"""The target/draft model pair both reasoning envs decode with, and the problems they are asked.

By default the pair is the zoo's overthinking reasoner and its draft
(:mod:`icmlgym.zoo.overthink`, fine-tuned from ``reasoner`` / ``reasoner-draft``; smoke
weights ship with the package, so nothing trains at run time). Problems come from the
generated reasoning corpus (:mod:`icmlgym.corpora.reasoning`), drawn per episode from a
split (``test`` for evaluation; ``train`` and ``val`` for the traces agents learn from).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from icmlgym.corpora.reasoning import DOMAINS, LEVELS, SPLITS, CharTokenizer, Problem, generate


@dataclass
class ModelPair:
    """A target and a draft sharing a tokenizer, with what the envs need to know about them."""

    target: Any
    draft: Any
    tokenizer: Any
    name: str
    key: str  # identifies the weights (part of trace cache keys)

    @property
    def draft_cost(self) -> float:
        """The draft's cost per pass relative to the target's: the ratio of parameter counts."""
        count = lambda m: sum(p.numel() for p in m.parameters())  # noqa: E731
        return count(self.draft) / count(self.target)


DRAFTS: tuple[str, ...] = ("base", "sapo")
# SAPO's RL budget on the pair the envs use: "smoke" is the shipped member (150 steps of 16 lines);
# "standard" is the member's standard budget (600 steps of 32 lines, 6000 prefixes) on the same
# smoke-size pair, "standard-half" its steps at the smoke batch (half its samples); both are
# trained and cached on first use
SAPO_BUDGETS: dict[str, dict[str, Any] | None] = {
    "smoke": None,
    "standard": {"steps": 600, "batch_size": 32, "n_prefixes": 6000},
    "standard-half": {"steps": 600, "batch_size": 16, "n_prefixes": 6000},
}


def zoo_pair(size: str = "smoke", overthink: float = 0.5, device: str = "cpu", draft: str = "base",
             sapo_budget: str = "smoke") -> ModelPair:
    """The zoo's overthinking reasoner and draft (``overthink`` other than the shipped 0.5 trains new entries).

    ``draft="sapo"``: the draft after SAPO's policy-gradient alignment to its target (:mod:`icmlgym.zoo.sapo`),
    with the RL budget ``sapo_budget`` (:data:`SAPO_BUDGETS`).
    """
    from icmlgym.zoo import overthink as _members  # noqa: F401  (registers the members)
    from icmlgym.zoo.registry import load

    if not 0.0 <= overthink <= 1.0:
        raise ValueError(f"overthink is a probability in [0, 1], got {overthink}")
    if draft not in DRAFTS:
        raise ValueError(f"draft must be one of {DRAFTS}, got {draft!r}")
    if sapo_budget not in SAPO_BUDGETS:
        raise ValueError(f"sapo_budget must be one of {tuple(SAPO_BUDGETS)}, got {sapo_budget!r}")
    if draft == "sapo" and overthink != 0.5:
        raise ValueError("the SAPO draft is built on the overthink = 0.5 pair only")
    over = None if overthink == 0.5 else {"overthink": float(overthink)}
    t = load("reasoner-overthink", size, overrides=over, device=device)
    if draft == "sapo":
        from icmlgym.zoo import sapo as _sapo  # noqa: F401  (registers the member)

        d = load("reasoner-overthink-draft-sapo", size, overrides=SAPO_BUDGETS[sapo_budget], device=device)
    else:
        d = load("reasoner-overthink-draft", size, overrides=over, device=device)
    tok = t.tokenizer
    if tok.name != tok_of(d).name:  # pragma: no cover - both members share the corpus tokenizer
        raise ValueError(f"target and draft tokenizers differ: {tok.name!r} vs {d.tokenizer.name!r}")
    return ModelPair(t.model, d.model, tok, f"zoo:reasoner-overthink-{size}", f"{t.card['key']}+{d.card['key']}")


def tok_of(zm: Any) -> Any:
    """A zoo model's tokenizer (members built on the corpus carry the character tokenizer)."""
    try:
        return zm.tokenizer
    except AttributeError:
        return CharTokenizer()


def validate_problems(split: str, domains: Sequence[str], levels: Sequence[int]) -> None:
    """Raise ValueError naming the bad argument (before any model loads)."""
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    bad = [d for d in domains if d not in DOMAINS]
    if bad or not domains:
        raise ValueError(f"domains must be a non-empty subset of {DOMAINS}, got {list(domains)!r}")
    bad_l = [lv for lv in levels if lv not in LEVELS]
    if bad_l or not levels:
        raise ValueError(f"levels must be a non-empty subset of {LEVELS}, got {list(levels)!r}")


def draw_problem(rng: np.random.Generator, split: str, domains: Sequence[str], levels: Sequence[int]) -> Problem:
    """One problem of the split, drawn with the episode's generator."""
    return generate(1, int(rng.integers(2**31 - 1)), split, tuple(domains), tuple(levels))[0]


def line_tokens(tok: CharTokenizer) -> dict[str, Any]:
    """Token ids the envs look for: newline, end of text, the answer prefix ``A:``."""
    return {"newline": tok.stoi["\n"], "eos": tok.eos_id, "answer": tok.encode("A:")}


__all__ = ["DRAFTS", "SAPO_BUDGETS", "ModelPair", "tok_of", "draw_problem", "line_tokens", "validate_problems", "zoo_pair"]
