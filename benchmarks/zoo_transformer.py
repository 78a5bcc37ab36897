"""The zoo transformer against a plain torch.nn implementation of the same shapes.

Measures, with one torch thread, median over repeats:
- forward tokens per second (inference, no grad) of icmlgym.zoo.transformer.GPT and of a
  plain model built from torch.nn.MultiheadAttention / LayerNorm / Linear with identical sizes;
- training-step tokens per second (forward, backward, AdamW step) of both;
- greedy decoding tokens per second of GPT.generate (KV cache) against recomputing the
  whole prefix every token (no cache).

Run: python benchmarks/zoo_transformer.py [--layers 2 --width 64 --batch 32 --seq 64 --repeats 5]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from icmlgym.zoo.transformer import GPT, GPTConfig


class PlainBlock(nn.Module):
    def __init__(self, d: int, heads: int) -> None:
        super().__init__()
        self.ln1, self.ln2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.attn = nn.MultiheadAttention(d, heads, batch_first=True)
        self.fc, self.out = nn.Linear(d, 4 * d), nn.Linear(4 * d, d)

    def forward(self, x, mask):
        h = self.ln1(x)
        x = x + self.attn(h, h, h, attn_mask=mask, need_weights=False)[0]
        return x + self.out(F.gelu(self.fc(self.ln2(x))))


class PlainGPT(nn.Module):
    """The same shapes as GPT, written with stock torch.nn modules."""

    def __init__(self, vocab: int, block: int, layers: int, heads: int, d: int) -> None:
        super().__init__()
        self.wte, self.wpe = nn.Embedding(vocab, d), nn.Embedding(block, d)
        self.blocks = nn.ModuleList(PlainBlock(d, heads) for _ in range(layers))
        self.ln_f = nn.LayerNorm(d)
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.wte.weight

    def forward(self, idx):
        t = idx.shape[1]
        mask = torch.ones(t, t, dtype=torch.bool).triu(1)  # True = masked
        x = self.wte(idx) + self.wpe(torch.arange(t))
        for b in self.blocks:
            x = b(x, mask)
        return self.head(self.ln_f(x))


def timed(fn, repeats: int) -> float:
    fn()  # warm-up
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--width", type=int, default=64)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seq", type=int, default=64)
    ap.add_argument("--vocab", type=int, default=57)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--decode", type=int, default=48, help="tokens generated in the decoding comparison")
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(0)
    ours = GPT(GPTConfig(args.vocab, args.seq, args.layers, args.heads, args.width))
    plain = PlainGPT(args.vocab, args.seq, args.layers, args.heads, args.width)
    assert sum(p.numel() for p in ours.parameters()) == sum(p.numel() for p in plain.parameters())
    x = torch.randint(0, args.vocab, (args.batch, args.seq))
    tokens = args.batch * args.seq
    out = {"params": sum(p.numel() for p in ours.parameters()), "batch": args.batch, "seq": args.seq, "threads": 1,
           "load_average": os.getloadavg()[0]}
    for name, model in (("icmlgym", ours), ("plain", plain)):
        model.eval()
        with torch.no_grad():
            out[f"{name}_forward_tok_s"] = tokens / timed(lambda: model(x), args.repeats)
        model.train()
        opt = torch.optim.AdamW(model.parameters(), 1e-3)

        def step():
            opt.zero_grad()
            logits = model(x[:, :-1])
            F.cross_entropy(logits.reshape(-1, args.vocab), x[:, 1:].reshape(-1)).backward()
            opt.step()

        out[f"{name}_train_tok_s"] = args.batch * (args.seq - 1) / timed(step, args.repeats)
    ours.eval()
    prompt = [1] + [5] * 8

    def no_cache():
        ids = torch.tensor([prompt])
        with torch.no_grad():
            for _ in range(args.decode):
                nxt = ours(ids)[:, -1].argmax(-1, keepdim=True)
                ids = torch.cat([ids, nxt], 1)

    out["decode_kv_cache_tok_s"] = args.decode / timed(lambda: ours.generate(prompt, args.decode), args.repeats)
    out["decode_no_cache_tok_s"] = args.decode / timed(no_cache, args.repeats)
    out["load_average_after"] = os.getloadavg()[0]
    print(json.dumps({k: (round(v, 1) if isinstance(v, float) else v) for k, v in out.items()}, indent=1))


if __name__ == "__main__":
    main()
