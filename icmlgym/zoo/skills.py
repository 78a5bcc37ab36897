"""The zoo's skill model: a small transformer pre-trained on a library of token-invoked skills.

Member ``skill-lm`` (:mod:`icmlgym.corpora.skills`): the zoo's :class:`~icmlgym.zoo.transformer.GPT`
trained on prompts that invoke a map skill and a permutation skill by their tokens (so single
skills and their compositions), plus a share of in-context prompts (no token, ``k``
demonstrations). The held-out skills have no token and are never seen. The family
``icmlgym.envs.skills`` freezes it and teaches it new skills.

Registered on import of this module (the zoo's built-in list is not edited, so that the shipped
weights of the other members keep their code hash); :func:`load` imports it and calls
:func:`icmlgym.zoo.load`. Its smoke weights ship as package data (``scripts/zoo_weights.py``);
``tests/skills/test_zoo_skills.py`` (slow) retrains them and checks they are equal bit for bit.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.zoo import registry

NAME = "skill-lm"


def _make(cfg: dict[str, Any]):
    from icmlgym.corpora.skills import VOCAB_SIZE
    from icmlgym.zoo.transformer import GPT, GPTConfig

    return GPT(GPTConfig(vocab_size=VOCAB_SIZE, block_size=cfg["block_size"], n_layer=cfg["n_layer"],
                         n_head=cfg["n_head"], n_embd=cfg["n_embd"]))


def masked_lm_loss(logits, tokens, mask):
    """Mean cross-entropy of the masked next tokens (``mask[:, t]``: token ``t`` is a target)."""
    import torch.nn.functional as F

    lp = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tokens[:, 1:].reshape(-1), reduction="none")
    m = mask[:, 1:].reshape(-1)
    return (lp * m).sum() / m.sum()


def _batches(cfg: dict[str, Any], seed: int):
    """Step ``i``'s batch: skill prompts, every ``icl_every``-th step in-context prompts (k = 1..3 in turn)."""
    from icmlgym.corpora import skills as sk

    rng = np.random.default_rng(seed)
    combos = sk.old_combos()
    step = 0
    while True:
        if cfg["icl_every"] and step % cfg["icl_every"] == cfg["icl_every"] - 1:
            k = 1 + (step // cfg["icl_every"]) % cfg["max_demos"]
            yield sk.in_context(rng, combos, k, cfg["batch_size"])
        else:
            yield sk.skill_batch(rng, sk.sample_combos(rng, cfg["batch_size"]))
        step += 1


def _train(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import torch

    from icmlgym.nn.train import Budget, train_loop

    stream = _batches(cfg, seed)
    opt = torch.optim.AdamW(model.parameters(), cfg["lr"], weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg["lr"], total_steps=cfg["steps"], pct_start=0.1)

    def batch(step: int):
        b = next(stream)
        return torch.from_numpy(b.tokens), torch.from_numpy(b.mask)

    def loss(m, b):
        tokens, mask = b
        return masked_lm_loss(m(tokens), tokens, mask), len(tokens), int(tokens.numel())

    res = train_loop(model, batch, loss, opt, Budget(cfg["steps"]), meter=meter, scheduler=sched)
    return {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4)}


def exact_match(model, tokens: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per row: 1 when every masked target is the argmax under teacher forcing (= greedy decoding's answer)."""
    import torch

    with torch.no_grad():
        t = torch.from_numpy(tokens)
        pred = model(t)[:, :-1].argmax(-1)
        ok = (pred == t[:, 1:]) | (torch.from_numpy(mask[:, 1:]) == 0)
    return ok.all(dim=1).float().numpy()


def evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    """Exact match on held-out strings: single skills, compositions, in-context (3 demonstrations)."""
    from icmlgym.corpora import skills as sk

    rng = np.random.default_rng(10_000)
    combos = sk.old_combos()
    singles = [c for c in combos if (c[0] is None) != (c[1] is None)]
    pairs = [c for c in combos if c[0] is not None and c[1] is not None]
    out = {}
    for name, cs in (("single", singles), ("composed", pairs), ("identity", [(None, None)])):
        b = sk.skill_batch(rng, cs, cfg["n_eval"])
        out[f"accuracy_{name}"] = round(float(exact_match(model, b.tokens, b.mask).mean()), 4)
    b = sk.in_context(rng, combos, cfg["max_demos"], cfg["n_eval"])
    out["accuracy_in_context"] = round(float(exact_match(model, b.tokens, b.mask * _last_answer(b.mask)).mean()), 4)
    out["accuracy"] = round((out["accuracy_single"] + out["accuracy_composed"]) / 2, 4)
    return out


def _last_answer(mask: np.ndarray) -> np.ndarray:
    from icmlgym.corpora.skills import LENGTH

    keep = np.zeros_like(mask)
    keep[:, -LENGTH:] = 1.0
    return keep


CONFIGS = {
    "smoke": {"n_layer": 2, "n_head": 4, "n_embd": 64, "block_size": 48, "steps": 6000, "batch_size": 64,
              "lr": 3e-3, "icl_every": 5, "max_demos": 2, "n_eval": 512},
    "standard": {"n_layer": 3, "n_head": 4, "n_embd": 96, "block_size": 48, "steps": 12000, "batch_size": 64,
                 "lr": 2e-3, "icl_every": 5, "max_demos": 2, "n_eval": 1024},
}


def _register() -> None:
    if NAME in registry._MEMBERS:
        return
    registry.register(registry.Member(
        name=NAME,
        kind="language-model",
        description="transformer pre-trained on token-invoked skills (maps x permutations, compositions, in-context); held-out skills unseen",
        data="generated skill library (icmlgym.corpora.skills), fresh strings per step; held-out strings for quality",
        configs=CONFIGS,
        make=_make, train=_train, evaluate=evaluate,
        code=("icmlgym.zoo.skills", "icmlgym.zoo.transformer", "icmlgym.corpora.skills", "icmlgym.nn.train"),
        quality="accuracy",
    ))


_register()


def load(size: str = "smoke", seed: int = 0, device: str = "cpu", build: bool = True):
    """The pre-trained skill model (cache, shipped weights, or trained now): a :class:`~icmlgym.zoo.registry.ZooModel`."""
    from icmlgym import zoo

    return zoo.load(NAME, size, seed=seed, device=device, build=build)


__all__ = ["CONFIGS", "NAME", "evaluate", "exact_match", "load", "masked_lm_loss"]
