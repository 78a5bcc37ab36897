"""Zoo members that overthink: the reasoner and its draft fine-tuned on problems with redundant checks.

The substrate's ``reasoner`` and ``reasoner-draft`` were trained without check steps, so
they stop as soon as the answer is determined and early exit has nothing to cut. These
members start from them (their smoke weights) and fine-tune on the same corpus with
``overthink`` set: with that probability per problem, 1-3 redundant ``C:`` lines (each
recomputing a step already done) come between the last step and the answer. A model
sampled at temperature 1 then writes checks at about the trained rate, so the rate is
controlled by the configuration (``overrides={"overthink": 0.3}`` builds another entry).

Members: ``reasoner-overthink`` (target) and ``reasoner-overthink-draft`` (draft); both
keep the corpus's character tokenizer, so they form a speculative-decoding pair.
Quality: answer accuracy per level (greedy) and the measured overthinking rate (share of
sampled generations at temperature 1 with at least one check line).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.zoo.registry import Member, get, register

_CODE = ("icmlgym.zoo.overthink", "icmlgym.zoo.transformer", "icmlgym.zoo.builtin", "icmlgym.corpora.reasoning", "icmlgym.nn.train")
_DOMAINS = ["arithmetic", "lists", "strings", "code"]


def _tokenizer(cfg: dict[str, Any] | None = None):
    from icmlgym.corpora.reasoning import CharTokenizer

    return CharTokenizer()


def _make(cfg: dict[str, Any]):
    base = get(cfg["base"])
    return base.make(base.config(cfg["base_size"]))


def _finetune(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import torch

    from icmlgym.corpora.reasoning import generate
    from icmlgym.nn.train import Budget, train_loop
    from icmlgym.zoo.builtin import encode_problems, lm_loss
    from icmlgym.zoo.registry import load

    base = load(cfg["base"], cfg["base_size"])
    model.load_state_dict(base.model.state_dict())
    problems = generate(cfg["n_train"], seed + 1, "train", cfg["domains"], cfg["levels"], cfg["overthink"])
    data = encode_problems(problems, model.config.block_size)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), cfg["lr"], weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg["lr"], total_steps=cfg["steps"], pct_start=0.1)
    res = train_loop(
        model, lambda step: data[torch.randint(0, len(data), (cfg["batch_size"],), generator=gen)], lm_loss, opt,
        Budget(cfg["steps"]), meter=meter, scheduler=sched,
    )
    return {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4), "train_problems": len(data),
            "base": f"{cfg['base']}-{cfg['base_size']} ({base.source})"}


def overthinking_rate(model, problems, temperature: float = 1.0, seed: int = 0, max_new_tokens: int = 60) -> float:
    """Share of problems whose sampled continuation writes at least one ``C:`` check line."""
    import torch

    tok = _tokenizer()
    gen = torch.Generator().manual_seed(seed)
    hits = 0
    for p in problems:
        ids = tok.encode(p.prompt, bos=True)
        room = model.config.block_size - len(ids)
        text = tok.decode(model.generate(ids, min(max_new_tokens, room), temperature, stop=tok.eos_id, generator=gen))
        hits += "C:" in text.split("A:", 1)[0]
    return hits / len(problems)


def _evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    from icmlgym.corpora.reasoning import generate
    from icmlgym.zoo.builtin import solve_rate
    from icmlgym.zoo.lm import ZooLM

    lm = ZooLM(model, _tokenizer(), "eval")
    out: dict[str, float] = {}
    for lv in cfg["levels"]:
        problems = generate(cfg["n_eval"], 10_000 + lv, "test", cfg["domains"], (lv,))
        out[f"accuracy_level{lv}"] = round(solve_rate(lm, problems), 4)
    out["accuracy"] = round(float(np.mean([out[f"accuracy_level{lv}"] for lv in cfg["levels"]])), 4)
    out["overthinking_rate"] = round(overthinking_rate(model, generate(cfg["n_eval"], 20_000, "test", cfg["domains"], cfg["levels"])), 4)
    return out


_DATA = "generated reasoning corpus with redundant checks (icmlgym.corpora.reasoning, overthink), train split; quality on its test split"


def _configs(base: str) -> dict[str, dict[str, Any]]:
    return {
        "smoke": {"base": base, "base_size": "smoke", "overthink": 0.5, "domains": _DOMAINS, "levels": [1, 2],
                  "n_train": 10000, "steps": 500, "batch_size": 32, "lr": 1e-3, "n_eval": 100},
        "standard": {"base": base, "base_size": "standard", "overthink": 0.5, "domains": _DOMAINS, "levels": [1, 2, 3],
                     "n_train": 30000, "steps": 1500, "batch_size": 64, "lr": 1e-3, "n_eval": 100},
    }


MEMBERS = (
    Member(
        name="reasoner-overthink", kind="language-model",
        description="the reasoner fine-tuned to write redundant check steps after the answer is determined (early exit's target)",
        data=_DATA, configs=_configs("reasoner"), make=_make, train=_finetune, evaluate=_evaluate, code=_CODE,
        quality="accuracy_level1", depends=("reasoner",), extras={"tokenizer": _tokenizer},
    ),
    Member(
        name="reasoner-overthink-draft", kind="language-model",
        description="the draft fine-tuned on the same overthinking data (early exit's and speculative reasoning's draft)",
        data=_DATA, configs=_configs("reasoner-draft"), make=_make, train=_finetune, evaluate=_evaluate, code=_CODE,
        quality="accuracy_level1", depends=("reasoner-draft",), extras={"tokenizer": _tokenizer},
    ),
)


def ensure_registered() -> None:
    """Register this module's members once (importing it registers them; this is idempotent)."""
    from icmlgym.zoo.registry import ZooError

    for m in MEMBERS:
        try:
            get(m.name)
        except ZooError:
            register(m)


ensure_registered()

__all__ = ["MEMBERS", "ensure_registered", "overthinking_rate"]
