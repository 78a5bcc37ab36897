"""The zoo's chain-library skill model: pre-trained where new skills are chains of library skills.

Member ``skill-chain-lm`` (:mod:`icmlgym.corpora.skill_chains`): the zoo's
:class:`~icmlgym.zoo.transformer.GPT` trained on prompts with two map slots and two permutation
slots, so that the held-out skills (``shift4``, ``shift6``, ``rot3``, ``rot4``) have no token but
their procedures run in pre-training as two-token chains. ``icmlgym/SkillNeologism-v1`` freezes
it and asks one new token to name such a procedure.

Registered on import of this module (listed in :data:`icmlgym.zoo.registry.MEMBER_MODULES`; no
other member's code changes). Its smoke weights ship as package data (``python
scripts/zoo_weights.py skill-chain-lm``, one torch thread); the card records a digest of the
weights after the first :data:`CHECK_STEPS` steps, which ``tests/skills/test_zoo_skill_chains.py``
reproduces (a bounded retraining check; the full run takes ~10-15 minutes of one loaded core).
"""

from __future__ import annotations

import hashlib
from typing import Any

import numpy as np

from icmlgym.zoo import registry

NAME = "skill-chain-lm"
CHECK_STEPS = 100


def _make(cfg: dict[str, Any]):
    from icmlgym.corpora.skill_chains import VOCAB_SIZE
    from icmlgym.zoo.transformer import GPT, GPTConfig

    return GPT(GPTConfig(vocab_size=VOCAB_SIZE, block_size=cfg["block_size"], n_layer=cfg["n_layer"],
                         n_head=cfg["n_head"], n_embd=cfg["n_embd"]))


def weights_digest(model) -> str:
    """sha256 of every parameter and buffer's bytes, in state-dict order (16 hex digits)."""
    h = hashlib.sha256()
    for k, v in model.state_dict().items():
        h.update(k.encode())
        h.update(v.detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def _train(model, cfg: dict[str, Any], seed: int, meter, stop_after: int | None = None) -> dict[str, Any]:
    """AdamW with a one-cycle schedule over ``cfg["steps"]`` steps of fresh library prompts.

    ``stop_after``: stop after that many steps (the schedule is still the full run's), for the
    bounded reproduction check."""
    import torch

    from icmlgym.corpora import skill_chains as sc
    from icmlgym.nn.train import Budget, train_loop
    from icmlgym.zoo.skills import masked_lm_loss

    rng = np.random.default_rng(seed)
    opt = torch.optim.AdamW(model.parameters(), cfg["lr"], weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg["lr"], total_steps=cfg["steps"], pct_start=0.1)
    digest: dict[str, str] = {}

    def batch(step: int):
        b = sc.batch(rng, sc.sample_tasks(rng, cfg["batch_size"]))
        return torch.from_numpy(b.tokens), torch.from_numpy(b.mask)

    def loss(m, b):
        tokens, mask = b
        return masked_lm_loss(m(tokens), tokens, mask), len(tokens), int(tokens.numel())

    def on_step(step: int, _loss: float) -> None:
        if step == CHECK_STEPS:  # train_loop reports the number of steps done
            digest["digest"] = weights_digest(model)

    steps = cfg["steps"] if stop_after is None else int(stop_after)
    res = train_loop(model, batch, loss, opt, Budget(steps), meter=meter, scheduler=sched, on_step=on_step)
    return {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4),
            f"digest_after_{CHECK_STEPS}_steps": digest.get("digest")}


def evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    """Exact match on held-out strings: every library task (625), single skills, and each held-out skill's chains."""
    from icmlgym.corpora import skill_chains as sc
    from icmlgym.zoo.skills import exact_match

    rng = np.random.default_rng(10_000)
    tasks = sc.all_tasks()
    singles = [t for t in tasks if sum(s is not None for s in t) == 1]
    n = cfg["n_eval"]

    def score(ts: list) -> float:
        picks = [ts[int(i)] for i in rng.integers(0, len(ts), size=n)]
        b = sc.batch(rng, picks)
        return round(float(exact_match(model, b.tokens, b.mask).mean()), 4)

    out = {"accuracy": score(tasks), "accuracy_single": score(singles)}
    for new, chains in sc.CHAINS.items():
        kind = sc.kind(new)
        out[f"accuracy_chain_{new}"] = score([(a, b, None, None) if kind == "map" else (None, None, a, b) for a, b in chains])
    return out


CONFIGS = {
    "smoke": {"n_layer": 3, "n_head": 4, "n_embd": 64, "block_size": 48, "steps": 8000, "batch_size": 64,
              "lr": 3e-3, "n_eval": 512},
}


def _register() -> None:
    # runs once, on the module's first import (registering a taken name raises)
    registry.register(registry.Member(
        name=NAME,
        kind="language-model",
        description="transformer pre-trained on a chain library (two map and two permutation slots); held-out skills occur only as two-token chains",
        data="generated chain library (icmlgym.corpora.skill_chains), fresh strings per step; held-out strings for quality",
        configs=CONFIGS,
        make=_make, train=_train, evaluate=evaluate,
        code=("icmlgym.zoo.skill_chains", "icmlgym.zoo.skills", "icmlgym.zoo.transformer", "icmlgym.corpora.skill_chains",
              "icmlgym.corpora.skills", "icmlgym.nn.train"),
        quality="accuracy",
    ))


_register()


def load(size: str = "smoke", seed: int = 0, device: str = "cpu", build: bool = True):
    """The pre-trained chain-library model (cache, shipped weights, or trained now): a :class:`~icmlgym.zoo.registry.ZooModel`."""
    from icmlgym import zoo

    return zoo.load(NAME, size, seed=seed, device=device, build=build)


__all__ = ["CHECK_STEPS", "CONFIGS", "NAME", "evaluate", "load", "weights_digest"]
