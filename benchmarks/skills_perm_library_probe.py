"""Can the chain model's architecture learn to compose permutations when that is all it sees?

Pre-trains a fresh zoo GPT of ``skill-chain-lm``'s shape (3 layers, 4 heads, 64 wide) on the chain
library restricted to its permutation slots (both map slots always ``NOP``; each permutation slot
empty with probability ``--p-empty``), AdamW with a one-cycle learning rate (peak 3e-3), batch 64,
one thread, and reports the greedy exact match of the rotation chains (``rot1 rot2``, ``rot2 rot1``:
``rot3``; ``rot2 rot2``: ``rot4``), of every permutation pair, and of the single permutations, every
``--every`` steps (the learning curve). A probe of the explanation in docs/skills.md, not a model
the envs use.

Run: python benchmarks/skills_perm_library_probe.py [--steps 6000] [--p-empty 0.1] [--every 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skills_rotation_probe import greedy  # noqa: E402

from icmlgym.corpora import skill_chains as sc  # noqa: E402


def tasks(rng: np.random.Generator, n: int, p_empty: float) -> list[sc.Task]:
    """``n`` tasks on the permutation slots alone (maps empty), each slot empty with probability ``p_empty``."""
    empty = rng.random((n, 2)) < p_empty
    pi = rng.integers(0, len(sc.PERMS), size=(n, 2))
    return [(None, None, None if empty[i, 0] else sc.PERMS[pi[i, 0]], None if empty[i, 1] else sc.PERMS[pi[i, 1]]) for i in range(n)]


def train_step(model, opt, sched, rng: np.random.Generator, task_list: list[sc.Task]) -> float:
    """One AdamW step (gradient clipped at 1, then the scheduler) on fresh prompts of ``task_list``; the loss."""
    from icmlgym.zoo.skills import masked_lm_loss

    b = sc.batch(rng, task_list)
    tok, mask = torch.from_numpy(b.tokens), torch.from_numpy(b.mask)
    loss = masked_lm_loss(model(tok), tok, mask)
    opt.zero_grad(set_to_none=True)
    loss.backward()
    torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
    opt.step()
    sched.step()
    return float(loss.detach())


def exact(model, task: sc.Task, rng: np.random.Generator, n: int = 128) -> float:
    b = sc.batch(rng, [task] * n)
    model.eval()
    pred = greedy(model, b.tokens[:, : sc.PROMPT_LEN])
    model.train()
    return round(float((pred == b.tokens[:, sc.PROMPT_LEN:]).all(1).mean()), 3)


def report(model, step: int, t0: float) -> dict:
    rng = np.random.default_rng(99)
    pairs = {f"{a} {b}": exact(model, (None, None, a, b), rng) for a in sc.PERMS for b in sc.PERMS}
    singles = {p: exact(model, (None, None, p, None), rng) for p in sc.PERMS}
    return {"step": step, "seconds": round(time.perf_counter() - t0, 1),
            "rot3 chains": [pairs["rot1 rot2"], pairs["rot2 rot1"]], "rot4 chain": pairs["rot2 rot2"],
            "all 16 pairs (mean)": round(float(np.mean(list(pairs.values()))), 3), "singles": singles, "pairs": pairs}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=6000)
    ap.add_argument("--p-empty", type=float, default=0.1)
    ap.add_argument("--every", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    from icmlgym.zoo.transformer import GPT, GPTConfig

    model = GPT(GPTConfig(vocab_size=sc.VOCAB_SIZE, block_size=48, n_layer=3, n_head=4, n_embd=64))
    opt = torch.optim.AdamW(model.parameters(), 3e-3, weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, 3e-3, total_steps=args.steps, pct_start=0.1)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    print(json.dumps({"load_average": os.getloadavg()[0], "steps": args.steps, "p_empty": args.p_empty}), flush=True)
    for step in range(1, args.steps + 1):
        loss = train_step(model, opt, sched, rng, tasks(rng, 64, args.p_empty))
        if step % args.every == 0 or step == args.steps:
            r = report(model, step, t0)
            r["loss"] = round(loss, 4)
            if step != args.steps:
                r.pop("pairs")
            print(json.dumps(r), flush=True)
    print(json.dumps({"load_average_after": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    main()
