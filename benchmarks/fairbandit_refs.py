"""Smoke-tier score references of FairLinearBandit-v0 (the card's score_refs).

Usage: python benchmarks/fairbandit_refs.py

Mean Nash regret (the primary metric) of the random baseline and of the reference
agent (fairbandit-fairlin-ucb) at the smoke tier over seeds 0, 1, 2 (the seeds
`icmlgym benchmark` runs), plus every other agent for context, with the CPU time
of all smoke runs (budget: about 20 s for all agents x 3 seeds).
"""

from __future__ import annotations

import time

import numpy as np

import icmlgym

ENV_ID = "icmlgym/FairLinearBandit-v0"


def main() -> None:
    card = icmlgym.card(ENV_ID)
    t0 = time.process_time()
    for agent in card.agents:
        recs = icmlgym.run(ENV_ID, agent, seeds=[0, 1, 2], tier="smoke")
        vals = np.array([r.metric(card.primary_metric)[0] for r in recs])
        print(f"{agent:26s} {card.primary_metric} = {vals.mean():.4f} (seeds 0-2: {np.round(vals, 4).tolist()})")
    print(f"CPU time of all smoke runs: {time.process_time() - t0:.1f} s")


if __name__ == "__main__":
    main()
