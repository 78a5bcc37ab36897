"""Retrain a shipped skills zoo member in full from its recorded seed and check it bit for bit.

The tests check a bounded piece (the weights after the first ``CHECK_STEPS`` steps equal a
digest recorded from a full run); this script is the full check: it retrains the member from the
card's seed with the card's thread count (under a fresh ``ICMLGYM_HOME`` so no cache entry is
touched), compares every tensor with the shipped weights and the re-measured quality with the
card's, and prints the digest of the weights after the first ``CHECK_STEPS`` steps of that run
(the value the bounded test asserts).

Run: ICMLGYM_HOME=$(mktemp -d) python benchmarks/skills_retrain.py skill-lm [skill-chain-lm]
(skill-lm: 6,000 steps, skill-chain-lm: 8,000; each ~10-30 minutes of one core, by load).
"""

from __future__ import annotations

import argparse
import json
import os
import time

import torch

import icmlgym.nn.train as nt
from icmlgym import zoo
from icmlgym.zoo.skill_chains import CHECK_STEPS, weights_digest


def retrain(name: str) -> dict:
    """Full retraining of ``name`` (smoke) against its shipped weights."""
    seen: dict[str, str] = {}
    plain = nt.train_loop

    def recording(model, batches, loss_fn, optimizer, budget, meter=None, grad_clip=1.0, scheduler=None, on_step=None):
        def hook(step: int, loss: float) -> None:
            if step == CHECK_STEPS:
                seen["digest"] = weights_digest(model)
            if on_step is not None:
                on_step(step, loss)

        return plain(model, batches, loss_fn, optimizer, budget, meter=meter, grad_clip=grad_clip, scheduler=scheduler, on_step=hook)

    shipped = zoo.load(name, "smoke", build=False)
    torch.set_num_threads(int(shipped.card["torch_threads"]))
    nt.train_loop = recording  # the members import train_loop when they train
    t0 = time.perf_counter()
    try:
        fresh = zoo.load(name, "smoke", force=True)
    finally:
        nt.train_loop = plain
    pairs = zip(shipped.model.state_dict().items(), fresh.model.state_dict().items())
    return {
        "member": name,
        "bit_identical": all(ka == kb and torch.equal(a, b) for (ka, a), (kb, b) in pairs),
        "quality_equal": fresh.card["quality"] == shipped.card["quality"],
        f"digest_after_{CHECK_STEPS}_steps": seen.get("digest"),
        "seconds": round(time.perf_counter() - t0, 1),
        "load_average": round(os.getloadavg()[0], 1),
    }


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("members", nargs="+")
    for name in ap.parse_args().members:
        print(json.dumps(retrain(name)), flush=True)


if __name__ == "__main__":
    main()
