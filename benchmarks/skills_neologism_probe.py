"""What a single new token can reach in the frozen skill model: Adam on one new embedding row
(the neologism agent's optimiser, outside the env's budget) for each target task, then exact
match on 256 fresh prompts.

Targets: an existing skill under a new token (``shift3``, ``reverse``: the procedure exists and
is tied to a token), the held-out skills (``shift4``, ``rot3``: never computed in pre-training),
and a map + permutation composition packed into one slot (``shift1`` then ``reverse`` in the map
slot). Rows start at the mean of the existing skill rows of the slot's kind.

Run: python benchmarks/skills_neologism_probe.py [--steps 100] [--lr 0.05] [--seed 0]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import torch

from icmlgym.corpora import skills as sk
from icmlgym.envs.skills.model import build_prompts, masked_ce
from icmlgym.envs.skills.neologism import frozen_model

V = sk.VOCAB_SIZE
TASKS = {
    "shift3 (existing map)": (V, sk.NOP, ("shift3", None)),
    "reverse (existing permutation)": (sk.NOP, V, (None, "reverse")),
    "shift4 (held out)": (V, sk.NOP, ("shift4", None)),
    "rot3 (held out)": (sk.NOP, V, (None, "rot3")),
    "shift1 then reverse, in the map slot": (V, sk.NOP, ("shift1", "reverse")),
}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    model = frozen_model()
    emb = model.params["gpt.wte.weight"]
    maps = [sk.SKILL_TOKENS[m] for m in sk.OLD_MAPS]
    perms = [sk.SKILL_TOKENS[p] for p in sk.OLD_PERMS]
    out = {"load_average": os.getloadavg()[0], "steps": args.steps, "lr": args.lr}
    for name, (a, b, task) in TASKS.items():
        rng = np.random.default_rng(args.seed)
        init = emb[maps].mean(0) if a == V else emb[perms].mean(0)
        row = init.clone().view(1, -1).requires_grad_(True)
        opt = torch.optim.Adam([row], lr=args.lr)
        slots = [(a, b, task, (0,))]
        for _ in range(args.steps):
            p = build_prompts(rng, slots, 32, 0, 1)
            loss = masked_ce(model.logits(p, row, None, None), p)
            opt.zero_grad()
            loss.backward()
            opt.step()
        s = model.scores(build_prompts(rng, slots, 256, 0, 1), row.detach(), None, None)
        out[name] = {"exact_match": round(float(s["exact"].mean()), 3), "final_loss": round(float(loss.detach()), 3)}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
