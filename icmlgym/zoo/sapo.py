"""SAPO (DREAM-R): the overthinking draft fine-tuned by policy gradient to write steps its target accepts, concisely.

The zoo member ``reasoner-overthink-draft-sapo`` starts from ``reasoner-overthink-draft`` and
runs REINFORCE on single reasoning steps: a prefix (a train-split question and 0..n of its gold
steps) is continued by the draft with one sampled line; the reward is 1 when TBVM's rule accepts
the line under the target (``reasoner-overthink``: at every token the target's probability of
the draft's token is at least ``ratio`` times its strongest alternative), minus
``length_cost`` per token (concise), with the batch mean as baseline; a KL penalty
(``beta`` times the sampled tokens' log-ratio to the original draft) keeps it near where it
started. Quality: TBVM's acceptance rate of sampled lines on val prefixes, before and after.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.zoo.overthink import ensure_registered
from icmlgym.zoo.registry import Member, ZooError, get, register

_CODE = ("icmlgym.zoo.sapo", "icmlgym.zoo.overthink", "icmlgym.zoo.transformer", "icmlgym.corpora.reasoning")


def _make(cfg: dict[str, Any]):
    ensure_registered()
    base = get("reasoner-overthink-draft")
    return base.make(base.config(cfg["size"]))


def _prefixes(n: int, seed: int, split: str) -> list[list[int]]:
    from icmlgym.corpora.reasoning import CharTokenizer, generate

    tok = CharTokenizer()
    rng = np.random.default_rng(seed)
    out = []
    for p in generate(n, seed, split, levels=(1, 2)):
        j = int(rng.integers(0, len(p.steps) + 1))
        out.append(tok.encode(p.prompt + "".join(f"S:{s}\n" for s in p.steps[:j]), bos=True))
    return out


def _sample_line(model, prefix: list[int], gen, newline: int, eos: int, max_len: int) -> list[int]:
    import torch

    with torch.no_grad():
        cache = model.new_cache()
        logits = model(torch.tensor([prefix]), cache=cache)[0, -1]
        line: list[int] = []
        while len(line) < max_len and cache.length < model.config.block_size:
            x = int(torch.multinomial(torch.softmax(logits, -1), 1, generator=gen))
            line.append(x)
            if x in (newline, eos):
                break
            logits = model(torch.tensor([[x]]), cache=cache)[0, -1]
    return line


def _line_logprob(model, prefix: list[int], line: list[int]):
    import torch

    ids = torch.tensor([prefix + line])
    logp = torch.log_softmax(model(ids)[0], -1)
    pos = torch.arange(len(prefix) - 1, len(prefix) + len(line) - 1)
    return logp[pos, torch.tensor(line)]


def _accepted(target, prefix: list[int], line: list[int], ratio: float) -> bool:
    import torch

    with torch.no_grad():
        p = torch.softmax(target(torch.tensor([prefix + line]))[0].double(), -1)
    pos = torch.arange(len(prefix) - 1, len(prefix) + len(line) - 1)
    rows = p[pos]
    idx = torch.tensor(line)
    mine = rows[torch.arange(len(line)), idx]
    rows[torch.arange(len(line)), idx] = 0.0
    return bool((mine >= ratio * rows.max(-1).values).all())


def acceptance(draft, target, prefixes: list[list[int]], ratio: float, seed: int) -> float:
    """Share of sampled draft lines (one per prefix) that TBVM's rule accepts under the target."""
    import torch

    from icmlgym.corpora.reasoning import CharTokenizer

    tok = CharTokenizer()
    gen = torch.Generator().manual_seed(seed)
    nl = tok.stoi["\n"]
    hits = [_accepted(target, p, _sample_line(draft, p, gen, nl, tok.eos_id, 16), ratio) for p in prefixes]
    return float(np.mean(hits))


def _train(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import copy

    import torch

    from icmlgym.corpora.reasoning import CharTokenizer
    from icmlgym.zoo.registry import load

    ensure_registered()
    tok = CharTokenizer()
    nl = tok.stoi["\n"]
    base = load("reasoner-overthink-draft", cfg["size"])
    target = load("reasoner-overthink", cfg["size"]).model.eval()
    model.load_state_dict(base.model.state_dict())
    ref = copy.deepcopy(model).eval()
    prefixes = _prefixes(cfg["n_prefixes"], seed + 7, "train")
    rng = np.random.default_rng(seed)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), cfg["lr"])
    rewards, kls = [], []
    for step in range(cfg["steps"]):
        batch = [prefixes[int(i)] for i in rng.integers(0, len(prefixes), cfg["batch_size"])]
        model.eval()
        lines = [_sample_line(model, p, gen, nl, tok.eos_id, 16) for p in batch]
        r = np.array([float(_accepted(target, p, ln, cfg["ratio"])) - cfg["length_cost"] * len(ln) for p, ln in zip(batch, lines)])
        adv = r - r.mean()
        model.train()
        loss = torch.zeros(())
        kl_sum = 0.0
        for p, ln, a in zip(batch, lines, adv):
            lp = _line_logprob(model, p, ln)
            with torch.no_grad():
                lr_ = _line_logprob(ref, p, ln)
            kl = (lp - lr_).sum()
            loss = loss - float(a) * lp.sum() + cfg["beta"] * kl
            kl_sum += float(kl.detach())
        opt.zero_grad()
        (loss / len(batch)).backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        rewards.append(float(r.mean()))
        kls.append(kl_sum / len(batch))
    meter.add("gradient_steps", cfg["steps"])
    model.eval()
    return {"steps": cfg["steps"], "reward_first20": round(float(np.mean(rewards[:20])), 4),
            "reward_last20": round(float(np.mean(rewards[-20:])), 4), "kl_last20": round(float(np.mean(kls[-20:])), 4)}


def _evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    from icmlgym.zoo.registry import load

    ensure_registered()
    target = load("reasoner-overthink", cfg["size"]).model.eval()
    base = load("reasoner-overthink-draft", cfg["size"]).model.eval()
    val = _prefixes(200, 99, "val")
    return {"tbvm_acceptance": round(acceptance(model, target, val, cfg["ratio"], 5), 4),
            "tbvm_acceptance_base": round(acceptance(base, target, val, cfg["ratio"], 5), 4)}


MEMBER = Member(
    name="reasoner-overthink-draft-sapo", kind="language-model",
    description="SAPO: the overthinking draft fine-tuned by policy gradient to write steps TBVM accepts under its target, concisely (KL to the original)",
    data="reasoning corpus train prefixes (question + 0..n gold steps); reward from the target reasoner-overthink",
    configs={"smoke": {"size": "smoke", "steps": 150, "batch_size": 16, "lr": 3e-4, "ratio": 2.0, "length_cost": 0.02,
                       "beta": 0.05, "n_prefixes": 2000},
             "standard": {"size": "standard", "steps": 600, "batch_size": 32, "lr": 3e-4, "ratio": 2.0, "length_cost": 0.02,
                          "beta": 0.05, "n_prefixes": 6000}},
    make=_make, train=_train, evaluate=_evaluate, code=_CODE, quality="tbvm_acceptance",
    depends=("reasoner-overthink-draft", "reasoner-overthink"),
)

try:
    get(MEMBER.name)
except ZooError:
    register(MEMBER)

__all__ = ["MEMBER", "acceptance"]
