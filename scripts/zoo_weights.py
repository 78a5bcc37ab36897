"""Produce the zoo's shipped weights: train (or take from the cache) members at a size and copy
their weights and cards into icmlgym/zoo/weights/ as package data.

Run: python scripts/zoo_weights.py [--size smoke] [--seed 0] reasoner reasoner-draft reasoner-moe

Each card records the cache key (configuration, seed, code hash), the training time and the
held-out quality; icmlgym.zoo.load uses a shipped file only while its key matches the code.
tests/substrate/test_zoo_shipped.py (slow) retrains the draft and checks it equals the shipped
weights bit for bit, and re-measures every shipped member's quality from its weights.
"""

from __future__ import annotations

import argparse
import json
import shutil

import torch

from icmlgym import zoo
from icmlgym.cache import Cache
from icmlgym.zoo.registry import WEIGHTS_DIR, shipped_paths


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("members", nargs="+")
    ap.add_argument("--size", default="smoke")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(1)
    WEIGHTS_DIR.mkdir(exist_ok=True)
    for name in args.members:
        z = zoo.load(name, args.size, seed=args.seed)
        key = z.card["key"]
        meta, weights = shipped_paths(name, args.size)
        card = {k: v for k, v in z.card.items() if k != "_extras"}
        card["shipped_from"] = z.source
        meta.write_text(json.dumps(card, indent=1, sort_keys=True) + "\n")
        src = Cache("zoo").path(key, ".pt")
        if src.is_file():
            shutil.copyfile(src, weights)
        else:  # loaded from shipped weights already: nothing to copy
            assert weights.is_file(), f"{name}: no weights to ship"
        print(f"{name} ({args.size}): {weights.stat().st_size / 1024:.0f} KiB, {card['headline']} = {card['quality'][card['headline']]}")


if __name__ == "__main__":
    main()
