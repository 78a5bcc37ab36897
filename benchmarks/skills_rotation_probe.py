"""Why SkillNeologism-v1's model does not run rotation chains: what it computes for two permutations.

Loads the shipped ``skill-chain-lm`` and, for every task with both map slots empty and the
permutation slots ``(p1, p2)`` (each ``NOP`` or one of the library's permutations: 25 tasks),
decodes the answer greedily on fresh strings and reports exact match against the true
composition and, for the tasks with two permutations, how often the decoded answer equals each
candidate function instead: ``p1`` alone, ``p2`` alone, the identity, the composition in the
other order, or none of them; plus per-position accuracy. The same for two maps (``shift`` pairs),
whose chains the model does run, as a contrast.

Run: python benchmarks/skills_rotation_probe.py [--n 256]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np
import torch

from icmlgym.corpora import skill_chains as sc
from icmlgym.corpora.skills import apply


def greedy(model, tokens: np.ndarray) -> np.ndarray:
    """The answer the model decodes greedily after each prompt (``tokens`` up to ``SEP``)."""
    t = torch.from_numpy(tokens)
    with torch.no_grad():
        for _ in range(sc.LENGTH):
            t = torch.cat([t, model(t)[:, -1].argmax(-1, keepdim=True)], dim=1)
    return t[:, sc.PROMPT_LEN:].numpy()


def probe(model, task: sc.Task, first: str | None, second: str | None, rng: np.random.Generator, n: int) -> dict:
    b = sc.batch(rng, [task] * n)
    x = b.tokens[:, 1 + sc.N_SLOTS : 1 + sc.N_SLOTS + sc.LENGTH]
    y = b.tokens[:, sc.PROMPT_LEN:]
    pred = greedy(model, b.tokens[:, : sc.PROMPT_LEN])
    out = {"exact": round(float((pred == y).all(1).mean()), 3), "per_position": [round(float(v), 3) for v in (pred == y).mean(0)]}
    if first is not None and second is not None:
        cands = {"first alone": apply(first, x), "second alone": apply(second, x), "identity": x,
                 "other order": apply(first, apply(second, x))}
        matches = {k: (pred == v).all(1) for k, v in cands.items()}
        out["decoded equals"] = {k: round(float(v.mean()), 3) for k, v in matches.items()}
        out["decoded equals"]["none of these"] = round(float((~np.any([(pred == y).all(1)] + list(matches.values()), axis=0)).mean()), 3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=256)
    args = ap.parse_args()
    torch.set_num_threads(1)
    from icmlgym import zoo

    model = zoo.load("skill-chain-lm", "smoke", build=False).model.eval()
    rng = np.random.default_rng(0)
    res: dict = {"perm": {}, "map": {}}
    for p1 in (None,) + sc.PERMS:
        for p2 in (None,) + sc.PERMS:
            res["perm"][f"{p1 or 'NOP'} {p2 or 'NOP'}"] = probe(model, (None, None, p1, p2), p1, p2, rng, args.n)
    for m1 in sc.MAPS:
        for m2 in sc.MAPS:
            res["map"][f"{m1} {m2}"] = probe(model, (m1, m2, None, None), m1, m2, rng, args.n)
    res["load_average"] = os.getloadavg()[0]
    print(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
