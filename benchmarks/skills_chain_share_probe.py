"""A chain-library model that runs both kinds of chain, and zero-shot composition of two neologisms on it.

``skill-chain-lm`` (SkillNeologism-v1's model) runs the shift chains but no permutation pair
(``benchmarks/skills_rotation_probe.py``), while the same architecture trained on the permutation
slots alone composes every permutation pair (``benchmarks/skills_perm_library_probe.py``). This
probe pre-trains the same GPT (3 layers, 4 heads, 64 wide; AdamW, one-cycle lr peak 3e-3, batch 64,
one thread) on the full chain library with an empty-slot probability ``--p-empty`` (the shipped
model used 0.35), a share ``--perm-share`` of each batch drawn from the permutation slots alone
(maps empty, each permutation slot empty with probability 0.1, as in
``benchmarks/skills_perm_library_probe.py``), from scratch or (``--init shipped``) continuing from
the shipped ``skill-chain-lm`` weights at peak lr ``--lr``, optionally after ``--perm-first`` steps
on the permutation slots alone (a curriculum: its own one-cycle schedule, peak 3e-3); prints the zoo's quality measures every ``--every`` steps, then puts the
model in SkillNeologism-v1 in place of ``skill-chain-lm`` (in this process only) and runs the
reference neologism agent with both new skills (``shift4``, ``rot3``) on seeds 0-2 for
``--env-steps`` oracle steps: new-skill accuracy and the zero-shot pair (both new tokens in one
prompt) against either token alone. A probe (one pre-training seed), not a model the envs ship.

Run: python benchmarks/skills_chain_share_probe.py [--steps 8000] [--p-empty 0.2] [--env-steps 200]
     python benchmarks/skills_chain_share_probe.py --init shipped --steps 4000 --p-empty 0.35 --perm-share 0.5 --lr 1e-3 --every 1000
     python benchmarks/skills_chain_share_probe.py --perm-first 3000 --steps 5000 --p-empty 0.35 --perm-share 0.5 --every 1000
"""

from __future__ import annotations

import argparse
import json
import os
import time

import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from skills_perm_library_probe import tasks as perm_only, train_step  # noqa: E402

from icmlgym.corpora import skill_chains as sc  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=8000)
    ap.add_argument("--p-empty", type=float, default=0.2)
    ap.add_argument("--every", type=int, default=2000)
    ap.add_argument("--env-steps", type=int, default=200)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--perm-share", type=float, default=0.0)
    ap.add_argument("--init", choices=("fresh", "shipped"), default="fresh")
    ap.add_argument("--lr", type=float, default=3e-3)
    ap.add_argument("--perm-first", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    torch.manual_seed(args.seed)
    import icmlgym
    from icmlgym.envs.skills import neologism_chain
    from icmlgym.envs.skills.model import FrozenSkillModel
    from icmlgym.zoo.skill_chains import CONFIGS, evaluate
    from icmlgym.zoo.transformer import GPT, GPTConfig

    cfg = dict(CONFIGS["smoke"])
    if args.init == "shipped":
        from icmlgym import zoo

        model = zoo.load("skill-chain-lm", "smoke", build=False).model.train()
        for p in model.parameters():
            p.requires_grad_(True)
    else:
        model = GPT(GPTConfig(vocab_size=sc.VOCAB_SIZE, block_size=cfg["block_size"], n_layer=cfg["n_layer"], n_head=cfg["n_head"], n_embd=cfg["n_embd"]))
    opt = torch.optim.AdamW(model.parameters(), args.lr, weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, args.lr, total_steps=args.steps, pct_start=0.1)
    n_perm = int(round(args.perm_share * cfg["batch_size"]))

    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    print(json.dumps({"load_average": os.getloadavg()[0], "steps": args.steps, "p_empty": args.p_empty, "perm_share": args.perm_share,
                      "init": args.init, "lr": args.lr, "perm_first": args.perm_first}), flush=True)
    if args.perm_first:
        opt1 = torch.optim.AdamW(model.parameters(), 3e-3, weight_decay=0.01, betas=(0.9, 0.98))
        sched1 = torch.optim.lr_scheduler.OneCycleLR(opt1, 3e-3, total_steps=args.perm_first, pct_start=0.1)
        for step in range(1, args.perm_first + 1):
            loss = train_step(model, opt1, sched1, rng, perm_only(rng, cfg["batch_size"], 0.1))
        model.eval()
        print(json.dumps({"phase": "permutations first", "step": args.perm_first, "seconds": round(time.perf_counter() - t0, 1),
                          "loss": round(loss, 4), **evaluate(model, cfg)}), flush=True)
        model.train()
    for step in range(1, args.steps + 1):
        mixed = sc.sample_tasks(rng, cfg["batch_size"] - n_perm, p_empty=args.p_empty) + perm_only(rng, n_perm, 0.1)
        loss = train_step(model, opt, sched, rng, mixed)
        if step % args.every == 0 or step == args.steps:
            model.eval()
            q = evaluate(model, cfg)
            model.train()
            print(json.dumps({"step": step, "seconds": round(time.perf_counter() - t0, 1), "loss": round(loss, 4), **q}), flush=True)
    model.eval()
    neologism_chain._MODELS[("smoke", 0)] = FrozenSkillModel(model)  # SkillNeologism-v1 now loads this model (this process only)
    keys = ("new_skill_accuracy", "composition_accuracy", "pair_accuracy", "pair_accuracy_map_only", "pair_accuracy_perm_only", "pair_gain", "forgetting")
    for skills in (["shift4"], ["rot3"], ["shift4", "rot3"]):
        recs = icmlgym.run("icmlgym/SkillNeologism-v1", "skills-neologism", seeds=[0, 1, 2], tier="smoke",
                           env_kwargs={"new_skills": skills, "n_steps": args.env_steps})
        out = {k: [round(r.metric(k)[0], 3) for r in recs] for k in keys if k in recs[0].episodes[0].metrics}
        print(json.dumps({"new_skills": skills, "env_steps": args.env_steps, **out}), flush=True)
    print(json.dumps({"seconds": round(time.perf_counter() - t0, 1), "load_average_after": os.getloadavg()[0]}), flush=True)


if __name__ == "__main__":
    main()
