"""A small decoder-only transformer (nanoGPT-style), dense or mixture-of-experts, with a KV cache.

What the neural families need from it, and where it is:

- every layer's hidden states: ``forward(..., hidden=True)`` returns them (the
  embedding output, then each block's output: ``n_layer + 1`` tensors);
- a KV cache: ``forward(idx, cache=cache)`` appends to a :class:`KVCache`, so
  decoding one token costs one position, and speculative decoding can verify k
  draft tokens in one pass and :meth:`KVCache.truncate` the rejected ones;
- sampling with temperature: :meth:`GPT.generate`;
- mixture-of-experts blocks (``n_expert > 0``): top-k routing over ``n_expert``
  MLP experts per layer, the router's logits and choices of the last pass in
  ``model.last_routing`` (for quantisation studies), experts addressable as
  ``block.mlp.experts[i]``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from typing import Any

import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass(frozen=True)
class GPTConfig:
    """Shapes of a :class:`GPT` (``n_expert = 0``: dense MLPs)."""

    vocab_size: int
    block_size: int = 128
    n_layer: int = 2
    n_head: int = 4
    n_embd: int = 64
    mlp_ratio: int = 4
    n_expert: int = 0
    top_k: int = 2
    dropout: float = 0.0

    def __post_init__(self) -> None:
        if self.n_embd % self.n_head:
            raise ValueError(f"n_embd ({self.n_embd}) must be a multiple of n_head ({self.n_head})")
        if self.n_expert and not 1 <= self.top_k <= self.n_expert:
            raise ValueError(f"top_k must be in 1..n_expert ({self.n_expert}), got {self.top_k}")
        if min(self.vocab_size, self.block_size, self.n_layer, self.n_head, self.n_embd) < 1:
            raise ValueError(f"every size must be >= 1: {self}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class KVCache:
    """Keys and values of every layer for the positions processed so far."""

    def __init__(self, n_layer: int) -> None:
        self.k: list[torch.Tensor | None] = [None] * n_layer
        self.v: list[torch.Tensor | None] = [None] * n_layer

    @property
    def length(self) -> int:
        return 0 if self.k[0] is None else int(self.k[0].shape[2])

    def append(self, layer: int, k: torch.Tensor, v: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        if self.k[layer] is not None:
            k = torch.cat([self.k[layer], k], dim=2)
            v = torch.cat([self.v[layer], v], dim=2)
        self.k[layer], self.v[layer] = k, v
        return k, v

    def truncate(self, length: int) -> None:
        """Keep the first ``length`` positions (drop rejected speculative tokens)."""
        if length < 0 or length > self.length:
            raise ValueError(f"cannot truncate a cache of {self.length} positions to {length}")
        for i in range(len(self.k)):
            if self.k[i] is not None:
                self.k[i] = self.k[i][:, :, :length]
                self.v[i] = self.v[i][:, :, :length]

    def clone(self) -> "KVCache":
        c = KVCache(len(self.k))
        c.k, c.v = list(self.k), list(self.v)
        return c


class CausalSelfAttention(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.n_head = cfg.n_head
        self.qkv = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.proj = nn.Linear(cfg.n_embd, cfg.n_embd)

    def forward(self, x: torch.Tensor, layer: int, cache: KVCache | None, past: int = 0) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.n_head, c // self.n_head).transpose(1, 2) for z in (q, k, v))
        if cache is not None:
            k, v = cache.append(layer, k, v)
        if past == 0:
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        else:  # queries at positions past..past+t-1 see keys 0..their own position
            total = past + t
            mask = torch.ones(t, total, dtype=torch.bool, device=x.device).tril(diagonal=past)
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.proj(y.transpose(1, 2).contiguous().view(b, t, c))


class MLP(nn.Module):
    def __init__(self, n_embd: int, ratio: int) -> None:
        super().__init__()
        self.fc = nn.Linear(n_embd, ratio * n_embd)
        self.out = nn.Linear(ratio * n_embd, n_embd)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.out(F.gelu(self.fc(x)))


class MoE(nn.Module):
    """Top-k routed experts: each token goes to its k highest-scoring experts, mixed by softmax gates."""

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.top_k = cfg.top_k
        self.router = nn.Linear(cfg.n_embd, cfg.n_expert, bias=False)
        self.experts = nn.ModuleList(MLP(cfg.n_embd, cfg.mlp_ratio) for _ in range(cfg.n_expert))
        self.last_logits: torch.Tensor | None = None
        self.last_choice: torch.Tensor | None = None
        self.aux_loss = torch.zeros(())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        flat = x.reshape(-1, c)
        logits = self.router(flat)
        gates, choice = logits.topk(self.top_k, dim=-1)
        gates = gates.softmax(dim=-1)
        self.last_logits, self.last_choice = logits.detach(), choice.detach()
        out = torch.zeros_like(flat)
        for e, expert in enumerate(self.experts):
            rows, slot = (choice == e).nonzero(as_tuple=True)
            if rows.numel():
                out.index_add_(0, rows, expert(flat[rows]) * gates[rows, slot].unsqueeze(1))
        # load-balancing loss (Switch Transformer): fraction routed x mean router probability
        probs = logits.softmax(dim=-1)
        frac = F.one_hot(choice[:, 0], len(self.experts)).float().mean(0)
        self.aux_loss = len(self.experts) * (frac * probs.mean(0)).sum()
        return out.view(b, t, c)


class Block(nn.Module):
    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.ln1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln2 = nn.LayerNorm(cfg.n_embd)
        self.mlp: nn.Module = MoE(cfg) if cfg.n_expert else MLP(cfg.n_embd, cfg.mlp_ratio)

    def forward(self, x: torch.Tensor, layer: int, cache: KVCache | None, past: int = 0) -> torch.Tensor:
        x = x + self.attn(self.ln1(x), layer, cache, past)
        return x + self.mlp(self.ln2(x))


class GPT(nn.Module):
    """A decoder-only transformer over token ids (learned positions, tied embeddings, pre-LayerNorm).

    ``forward(idx)`` returns logits ``(batch, time, vocab)``; with ``hidden=True`` also the
    list of hidden states (embedding output and each block's output); with ``cache`` the
    positions continue from the cache's length.
    """

    def __init__(self, cfg: GPTConfig) -> None:
        super().__init__()
        self.config = cfg
        self.wte = nn.Embedding(cfg.vocab_size, cfg.n_embd)
        self.wpe = nn.Embedding(cfg.block_size, cfg.n_embd)
        self.blocks = nn.ModuleList(Block(cfg) for _ in range(cfg.n_layer))
        self.ln_f = nn.LayerNorm(cfg.n_embd)
        self.head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.head.weight = self.wte.weight
        self.apply(self._init)
        for name, p in self.named_parameters():
            if name.endswith(("proj.weight", "out.weight")):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init(m: nn.Module) -> None:
        if isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0.0, 0.02)
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Embedding):
            nn.init.normal_(m.weight, 0.0, 0.02)

    def forward(self, idx: torch.Tensor, cache: KVCache | None = None, hidden: bool = False):
        b, t = idx.shape
        start = cache.length if cache is not None else 0
        if start + t > self.config.block_size:
            raise ValueError(f"sequence of {start + t} tokens exceeds the block size {self.config.block_size}")
        pos = torch.arange(start, start + t, device=idx.device)
        x = self.wte(idx) + self.wpe(pos)
        states = [x] if hidden else None
        for i, block in enumerate(self.blocks):
            x = block(x, i, cache, start)
            if hidden:
                states.append(x)
        logits = self.head(self.ln_f(x))
        return (logits, states) if hidden else logits

    def aux_loss(self) -> torch.Tensor:
        """The MoE load-balancing loss of the last pass (0 for a dense model)."""
        losses = [blk.mlp.aux_loss for blk in self.blocks if isinstance(blk.mlp, MoE)]
        return torch.stack(losses).mean() if losses else torch.zeros(())

    @property
    def last_routing(self) -> list[tuple[torch.Tensor, torch.Tensor]]:
        """Per MoE layer, (router logits, top-k expert choice) of the last pass's tokens."""
        return [(blk.mlp.last_logits, blk.mlp.last_choice) for blk in self.blocks if isinstance(blk.mlp, MoE)]

    def new_cache(self) -> KVCache:
        return KVCache(self.config.n_layer)

    @torch.no_grad()
    def generate(
        self,
        prompt: list[int] | torch.Tensor,
        max_new_tokens: int,
        temperature: float = 0.0,
        stop: int | None = None,
        generator: torch.Generator | None = None,
    ) -> list[int]:
        """Continue ``prompt`` (one sequence) with the KV cache; greedy at ``temperature`` 0.

        Stops after ``stop`` (included) or ``max_new_tokens`` or at the block size.
        """
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        ids = torch.as_tensor(prompt, dtype=torch.long, device=self.wte.weight.device).view(1, -1)
        cache = self.new_cache()
        logits = self(ids, cache=cache)[:, -1]
        out: list[int] = []
        for _ in range(max_new_tokens):
            if temperature == 0:
                nxt = int(logits.argmax(-1))
            else:
                probs = torch.softmax(logits / temperature, dim=-1)
                nxt = int(torch.multinomial(probs, 1, generator=generator))
            out.append(nxt)
            if (stop is not None and nxt == stop) or cache.length >= self.config.block_size:
                break
            logits = self(torch.tensor([[nxt]], device=ids.device), cache=cache)[:, -1]
        return out

    def num_params(self) -> int:
        # the tied head shares the embedding's weight: count it once
        return sum(p.numel() for p in self.parameters())


__all__ = ["GPT", "GPTConfig", "KVCache", "MoE"]
