"""The frozen skill model as a function of what an agent may submit.

:class:`FrozenSkillModel` wraps the zoo's pre-trained ``skill-lm`` and evaluates prompts with

- new-token rows: input embeddings for token ids ``>= VOCAB_SIZE`` (the neologisms);
- soft prefixes: one vector per new skill added to the ``BOS`` position's input of every prompt
  that involves that skill (prefix tuning with the neologism's parameter count);
- a weight delta: added to the frozen weights (LoRA and fine-tuning), flat in the order of
  :attr:`FrozenSkillModel.layout`.

Scores are computed under teacher forcing: a prompt is an exact match when every answer token
is the argmax given the true prefix, which is the same event as greedy decoding producing the
answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.func import functional_call

from icmlgym.corpora import skills as sk


class _EmbedForward(nn.Module):
    """The GPT from input embeddings on: positions, blocks, final norm, tied head."""

    def __init__(self, gpt: nn.Module) -> None:
        super().__init__()
        self.gpt = gpt

    def forward(self, embeds: torch.Tensor) -> torch.Tensor:
        g = self.gpt
        x = embeds + g.wpe.weight[: embeds.shape[1]]
        for i, block in enumerate(g.blocks):
            x = block(x, i, None, 0)
        return g.head(g.ln_f(x))


@dataclass(frozen=True)
class Prompts:
    """A batch of prompts: ids ``(n, T)`` (new tokens as ``VOCAB_SIZE + i``), the answer mask, and
    per row which new skills it involves (``(n, n_new)`` of 0/1, for the prefixes)."""

    tokens: torch.Tensor
    mask: torch.Tensor
    involves: torch.Tensor


class FrozenSkillModel:
    """The pre-trained skill model, frozen; every forward pass is a pure function of the submission."""

    def __init__(self, gpt: nn.Module) -> None:
        self.gpt = gpt.eval()
        for p in self.gpt.parameters():
            p.requires_grad_(False)
        self.net = _EmbedForward(self.gpt)
        self.params = {f"gpt.{k}": v.detach() for k, v in self.gpt.named_parameters()}
        self.layout: list[tuple[str, tuple[int, ...], int]] = []
        offset = 0
        for k, v in self.gpt.named_parameters():
            self.layout.append((k, tuple(v.shape), offset))
            offset += v.numel()
        self.n_params = offset
        # the frozen weights as one flat vector in layout order: a weight delta is one addition
        self.flat = torch.cat([v.detach().reshape(-1) for v in self.gpt.parameters()])
        self.d = int(self.gpt.config.n_embd)
        self.vocab_size = int(self.gpt.config.vocab_size)

    def weights(self, delta: torch.Tensor | None) -> dict[str, torch.Tensor]:
        if delta is None:
            return self.params
        full = self.flat + delta  # elementwise, so each weight is the same float as a per-tensor sum
        return {f"gpt.{k}": full[o : o + int(np.prod(s))].view(s) for k, s, o in self.layout}

    def logits(self, p: Prompts, rows: torch.Tensor, prefix: torch.Tensor | None, delta: torch.Tensor | None) -> torch.Tensor:
        w = self.weights(delta)
        tok = p.tokens
        new = tok >= self.vocab_size
        x = F.embedding(tok.clamp(max=self.vocab_size - 1), w["gpt.wte.weight"])
        if bool(new.any()):
            x = torch.where(new.unsqueeze(-1), rows[(tok - self.vocab_size).clamp(min=0)], x)
        if prefix is not None:
            add = p.involves @ prefix  # (n, d): the sum of the prefixes of the skills in the prompt
            x = torch.cat([x[:, :1] + add.unsqueeze(1), x[:, 1:]], dim=1)
        if delta is None:  # the module's own (frozen) weights: no need to swap them in
            return self.net(x)
        return functional_call(self.net, w, (x,))

    def scores(self, p: Prompts, rows, prefix, delta) -> dict[str, np.ndarray]:
        """Per prompt: exact match, mean answer-token log-likelihood."""
        with torch.no_grad():
            logits = self.logits(p, rows, prefix, delta)
        return _scores(logits, p)

    def loss(self, p: Prompts, rows, prefix, delta) -> torch.Tensor:
        logits = self.logits(p, rows, prefix, delta)
        return masked_ce(logits, p)


def masked_ce(logits: torch.Tensor, p: Prompts) -> torch.Tensor:
    """Mean cross-entropy of the answer tokens (new-token ids, never targets, are clamped before the lookup)."""
    tgt = p.tokens[:, 1:].clamp(max=logits.shape[-1] - 1).reshape(-1)
    lp = F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), tgt, reduction="none")
    m = p.mask[:, 1:].reshape(-1)
    return (lp * m).sum() / m.sum()


def _scores(logits: torch.Tensor, p: Prompts) -> dict[str, np.ndarray]:
    tgt = p.tokens[:, 1:].clamp(max=logits.shape[-1] - 1)  # new-token ids are never targets (masked)
    m = p.mask[:, 1:]
    logp = torch.log_softmax(logits[:, :-1], dim=-1).gather(-1, tgt.unsqueeze(-1)).squeeze(-1)
    ok = (logits[:, :-1].argmax(-1) == tgt) | (m == 0)
    return {
        "exact": ok.all(dim=1).float().numpy(),
        "loglik": ((logp * m).sum(1) / m.sum(1)).numpy(),
    }


def build_prompts(
    rng: np.random.Generator,
    slots: list[tuple[int, int, tuple[str | None, str | None], tuple[int, ...]]],
    n: int,
    demos: int,
    n_new: int,
) -> Prompts:
    """``n`` prompts per slot filling.

    ``slots``: ``(map slot token, perm slot token, (map skill, perm skill) computed, new skills involved)``.
    With ``demos > 0`` each prompt is preceded by that many demonstrations of its own task
    (in the pre-training's in-context format, after the slots)."""
    toks, masks, inv = [], [], []
    for a, b, (m, p), involved in slots:
        x = sk.strings(rng, n)
        y = sk.target(m, p, x)
        head = [np.full((n, 1), sk.BOS), np.full((n, 1), a), np.full((n, 1), b)]
        mask_head = [np.zeros((n, 3), np.float32)]
        for _ in range(demos):
            dx = sk.strings(rng, n)
            head += [dx, np.full((n, 1), sk.SEP), sk.target(m, p, dx), np.full((n, 1), sk.DELIM)]
            mask_head.append(np.zeros((n, sk.DEMO_LEN), np.float32))
        body = [x, np.full((n, 1), sk.SEP), y]
        toks.append(np.concatenate(head + body, axis=1))
        masks.append(np.concatenate(mask_head + [np.zeros((n, sk.LENGTH + 1), np.float32), np.ones((n, sk.LENGTH), np.float32)], axis=1))
        row = np.zeros((n, n_new), np.float32)
        row[:, list(involved)] = 1.0
        inv.append(row)
    return Prompts(
        torch.from_numpy(np.concatenate(toks).astype(np.int64)),
        torch.from_numpy(np.concatenate(masks)),
        torch.from_numpy(np.concatenate(inv)),
    )


def to_tensor(a: Any) -> torch.Tensor:
    return torch.from_numpy(np.ascontiguousarray(a, dtype=np.float32))


__all__ = ["FrozenSkillModel", "Prompts", "build_prompts", "masked_ce", "to_tensor"]
