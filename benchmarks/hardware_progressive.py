"""GEMQ's progressive refinement group by group against its one-shot allocation (MoEQuantAlloc-v0).

    python benchmarks/hardware_progressive.py [--bits 2.5] [--seeds 10] [--rounds 1]

Per data seed (the unit of the family's findings: calibration and held-out draw on the shipped
MoE), the smoke-tier env runs GEMQ twice: ``mode="full"`` (one global allocation, then router
fine-tuning) and ``mode="group"`` (one layer's experts per step, each step re-estimated on the
model the earlier groups left and re-solved over the experts not yet set; router fine-tuning
after each group), with and without router fine-tuning. Prints the held-out losses and the paired
effect (group minus one-shot; 95% bootstrap interval, one-sided p that the group mode is lower).
A measurement of quality, not of speed: docs/hardware.md has the table.
"""

from __future__ import annotations

import argparse
import os

import numpy as np


def heldout_loss(mode: str, router_ft: bool, bits: float, seeds: int, rounds: int) -> np.ndarray:
    import icmlgym
    from icmlgym.agents.hardware import GEMQAgent

    env = icmlgym.make("icmlgym/MoEQuantAlloc-v0", avg_bits=bits, mode=mode, rounds=rounds).unwrapped
    agent = GEMQAgent(router_ft=router_ft)
    out = []
    for s in range(seeds):
        obs, info = env.reset(seed=s)
        term = False
        while not term:
            obs, _, term, _, info = env.step(agent.act(obs, info))
        out.append(info["metrics"]["heldout_loss"])
    return np.array(out)


def main() -> None:
    import torch

    from icmlgym.findings.stats import paired_effect

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bits", type=float, default=2.5)
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=1, help="passes over the groups in the group mode")
    a = ap.parse_args()
    torch.set_num_threads(1)
    print(f"load average {os.getloadavg()[0]:.1f}; {a.bits} average bits; data seeds 0-{a.seeds - 1}")
    print("| router FT | one-shot (mean) | group by group (mean) | group - one-shot [95% CI] | p | units lower |")
    print("|---|---|---|---|---|---|")
    for ft in (True, False):
        full = heldout_loss("full", ft, a.bits, a.seeds, 1)
        group = heldout_loss("group", ft, a.bits, a.seeds, a.rounds)
        d = group - full
        e = paired_effect(d, "less")
        print(f"| {'yes' if ft else 'no'} | {full.mean():.4f} | {group.mean():.4f} | {e.mean:+.5f} [{e.low:+.5f}, {e.high:+.5f}] "
              f"| {e.p_value:.2f} | {int((d < 0).sum())}/{len(d)} (equal: {int((d == 0).sum())}) |")


if __name__ == "__main__":
    main()
