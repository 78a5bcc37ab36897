"""SkillNeologism-v0's gradient oracle against a plain torch loop, and the cost of an episode per agent.

Measures, with one torch thread, median over repeats:
- oracle: one env step that asks for the gradient of the new rows (``gradient=1``: fresh
  evaluation batch + fresh training batch, forward and backward, numpy out) and one that also
  asks for the weights (``gradient=2``), against a plain torch loop doing the same useful work on
  the same model (an ``nn.Parameter`` holding the new rows spliced into the embedding output, one
  forward + backward on the same batch, one forward on the evaluation batch), so the
  difference is the oracle's overhead (validation, prompt building, functional call, copies);
- an episode at the smoke tier for each agent through ``icmlgym.run`` (wall seconds).

Run: python benchmarks/skills_oracle.py [--repeats 20] [--episodes]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

import numpy as np
import torch
import torch.nn.functional as F

import icmlgym
from icmlgym.envs.skills.model import masked_ce

ENV = "icmlgym/SkillNeologism-v0"
AGENTS = ("skills-neologism", "skills-no-token", "skills-nearest-token", "skills-in-context", "skills-prefix", "skills-lora", "skills-full-ft")


def _action(env, gradient: int) -> dict:
    sp = env.action_space
    return {"embeddings": np.full(sp["embeddings"].shape, 0.01, np.float32), "prefix": np.zeros(sp["prefix"].shape, np.float32),
            "weights": np.zeros(sp["weights"].shape, np.float32), "demos": 0, "gradient": gradient}


def oracle(repeats: int) -> dict:
    env = icmlgym.make(ENV, **{**icmlgym.card(ENV).tiers["smoke"].env_kwargs, "n_steps": 10**6}).unwrapped
    env.reset(seed=0)
    out = {}
    for g in (1, 2):
        a = _action(env, g)
        env.step(a)
        ts = []
        for _ in range(repeats):
            t = time.perf_counter()
            env.step(a)
            ts.append(time.perf_counter() - t)
        out[f"env_step_gradient{g}_ms"] = 1000 * statistics.median(ts)
    # the plain loop: same model, same batch sizes, rows as a Parameter
    gpt = env.model.gpt
    train = env._new_prompts(env.batch_size, 0)
    evalb = env._new_prompts(env.eval_size, 0)
    rows = torch.nn.Parameter(torch.full((env.n_new, env.model.d), 0.01))
    vocab = env.model.vocab_size

    def forward(p):
        tok = p.tokens
        x = F.embedding(tok.clamp(max=vocab - 1), gpt.wte.weight)
        x = torch.where((tok >= vocab).unsqueeze(-1), rows[(tok - vocab).clamp(min=0)], x)
        x = x + gpt.wpe.weight[: tok.shape[1]]
        for i, b in enumerate(gpt.blocks):
            x = b(x, i, None, 0)
        return gpt.head(gpt.ln_f(x))

    for weights in (False, True):
        for p in gpt.parameters():
            p.requires_grad_(weights)
        ts = []
        for _ in range(repeats + 1):
            t = time.perf_counter()
            with torch.no_grad():
                forward(evalb)
            rows.grad = None
            masked_ce(forward(train), train).backward()
            _ = rows.grad.numpy().copy()
            ts.append(time.perf_counter() - t)
        out[f"plain_loop_gradient{2 if weights else 1}_ms"] = 1000 * statistics.median(ts[1:])
    for p in gpt.parameters():
        p.requires_grad_(False)
    for g in (1, 2):
        out[f"overhead_gradient{g}"] = out[f"env_step_gradient{g}_ms"] / out[f"plain_loop_gradient{g}_ms"]
    return out


def episodes() -> dict:
    out = {}
    for agent in AGENTS:
        t = time.perf_counter()
        (rec,) = icmlgym.run(ENV, agent, seeds=[0])
        out[agent] = {"seconds": round(time.perf_counter() - t, 2), "new_skill_accuracy": rec.metric("new_skill_accuracy")[0]}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--episodes", action="store_true")
    args = ap.parse_args()
    torch.set_num_threads(1)
    res = {"load_average": os.getloadavg()[0], "oracle": oracle(args.repeats)}
    if args.episodes:
        res["episodes"] = episodes()
    res["load_average_after"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
