"""Does a neologism name a procedure the model already has? A chain library, pre-trained here.

The shipped skill model never computed its held-out skills, and a new token cannot teach it to
(docs/skills.md). This script tests the paper's premise instead: a library where the held-out
skills' procedures exist in pre-training only as two-token chains. Prompts are
``BOS m1 m2 p1 p2 x1..x6 SEP y1..y6``: up to two map tokens (``shift1/2/3/5``) then up to two
permutation tokens (``rot1``, ``rot2``, ``reverse``, ``swap``), each slot empty (``NOP``) with
probability 0.35. ``shift4`` occurs only as ``shift1 shift3`` / ``shift3 shift1`` / ``shift2
shift2``, ``rot3`` only as ``rot1 rot2`` / ``rot2 rot1``. After pre-training (the zoo's GPT, 2
layers, 64 wide, AdamW with one-cycle), a new token's row is optimised (Adam, the neologism
agent's optimiser) to invoke ``shift4`` from the first map slot and ``rot3`` from the first
permutation slot, and an existing skill under a new token as a control. Exact match on 256
fresh prompts, against the chains and the empty slot.

Run: python benchmarks/skills_chain_probe.py [--steps 6000] [--batch 64] [--threads 1] [--probe-steps 150]
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np
import torch
import torch.nn.functional as F

from icmlgym.zoo.transformer import GPT, GPTConfig

N, L = 10, 6
BOS, SEP, NOP = 10, 11, 12
MAPS = ("shift1", "shift2", "shift3", "shift5")
PERMS = ("rot1", "rot2", "reverse", "swap")
TOK = {s: 13 + i for i, s in enumerate(MAPS + PERMS)}
VOCAB = 13 + len(TOK)
NEW = VOCAB  # the new token's id (input only)
PROMPT = 1 + 4 + L + 1


def apply(s, x):
    if s is None:
        return x
    if s.startswith("shift"):
        return (x + int(s[5:])) % N
    if s.startswith("rot"):
        return np.roll(x, -int(s[3:]), axis=1)
    if s == "reverse":
        return x[:, ::-1]
    if s == "swap":
        return x[:, np.arange(L).reshape(-1, 2)[:, ::-1].reshape(-1)]
    raise ValueError(s)


def batch(rng, tasks, tokens):
    """Prompts for ``tasks`` (4 skills each, applied in order) with slot ids ``tokens``."""
    n = len(tasks)
    x = rng.integers(0, N, size=(n, L))
    y = np.empty_like(x)
    for i, t in enumerate(tasks):
        z = x[i : i + 1]
        for s in t:
            z = apply(s, z)
        y[i] = z[0]
    seq = np.concatenate([np.full((n, 1), BOS), np.asarray(tokens).reshape(n, 4), x, np.full((n, 1), SEP), y], 1)
    return torch.from_numpy(seq.astype(np.int64))


def sample(rng, n):
    e = rng.random((n, 4)) < 0.35
    m = rng.integers(0, len(MAPS), (n, 2))
    p = rng.integers(0, len(PERMS), (n, 2))
    tasks = [tuple([None if e[i, j] else MAPS[m[i, j]] for j in range(2)] + [None if e[i, 2 + j] else PERMS[p[i, j]] for j in range(2)]) for i in range(n)]
    return tasks, [[NOP if s is None else TOK[s] for s in t] for t in tasks]


def forward(model, seq, row=None):
    x = model.wte(seq.clamp(max=VOCAB - 1))
    if row is not None:
        x = torch.where((seq == NEW).unsqueeze(-1), row.expand_as(x), x)
    x = x + model.wpe.weight[: seq.shape[1]]
    for i, b in enumerate(model.blocks):
        x = b(x, i, None, 0)
    return model.head(model.ln_f(x))


def loss_of(logits, seq):
    return F.cross_entropy(logits[:, PROMPT - 1 : -1].reshape(-1, logits.shape[-1]), seq[:, PROMPT:].reshape(-1).clamp(max=VOCAB - 1))


def exact(logits, seq):
    return float((logits[:, PROMPT - 1 : -1].argmax(-1) == seq[:, PROMPT:]).all(1).float().mean())


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--probe-steps", type=int, default=150)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = GPT(GPTConfig(vocab_size=VOCAB, block_size=24, n_layer=2, n_head=4, n_embd=64))
    opt = torch.optim.AdamW(model.parameters(), args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.steps, pct_start=0.1)
    out = {"load_average": os.getloadavg()[0], "args": vars(args)}
    t0 = time.perf_counter()
    for _ in range(args.steps):
        tasks, toks = sample(rng, args.batch)
        seq = batch(rng, tasks, toks)
        loss = loss_of(model(seq), seq)
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
    out["pretrain_seconds"] = round(time.perf_counter() - t0, 1)
    model.eval()
    for p in model.parameters():
        p.requires_grad_(False)
    erng = np.random.default_rng(10_000)

    def score(tasks, toks, row=None, n=256):
        seq = batch(erng, tasks * (n // len(tasks)), toks * (n // len(toks)))
        with torch.no_grad():
            return round(exact(forward(model, seq, row), seq), 3)

    tasks, toks = sample(erng, 512)
    out["pretrained_all_tasks"] = score(tasks, toks, n=len(tasks))
    out["chains"] = {
        "shift4 = shift1 shift3": score([("shift1", "shift3", None, None)], [[TOK["shift1"], TOK["shift3"], NOP, NOP]]),
        "shift4 = shift2 shift2": score([("shift2", "shift2", None, None)], [[TOK["shift2"], TOK["shift2"], NOP, NOP]]),
        "rot3 = rot1 rot2": score([(None, None, "rot1", "rot2")], [[NOP, NOP, TOK["rot1"], TOK["rot2"]]]),
    }
    probes = {
        "shift4": (("shift1", "shift3", None, None), [NEW, NOP, NOP, NOP], MAPS),
        "rot3": ((None, None, "rot1", "rot2"), [NOP, NOP, NEW, NOP], PERMS),
        "shift3 (existing, control)": (("shift3", None, None, None), [NEW, NOP, NOP, NOP], MAPS),
    }
    out["neologism"] = {}
    for name, (task, toks1, kind) in probes.items():
        init = model.wte.weight[[TOK[s] for s in kind]].mean(0).clone()
        out["neologism"][name] = {"empty slot": score([task], [[NOP if t == NEW else t for t in toks1]]), "start": score([task], [toks1], init)}
        row = init.clone().requires_grad_(True)
        o = torch.optim.Adam([row], lr=0.05)
        prng = np.random.default_rng(args.seed + 1)
        for _ in range(args.probe_steps):
            seq = batch(prng, [task] * 32, [toks1] * 32)
            lo = loss_of(forward(model, seq, row), seq)
            o.zero_grad()
            lo.backward()
            o.step()
        out["neologism"][name]["after"] = score([task], [toks1], row.detach())
    out["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
