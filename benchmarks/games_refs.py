"""Measure the smoke-tier score references of the games family (random baseline and reference agent).

Run: ``/work/venv/bin/python benchmarks/games_refs.py [--seeds 0 1 2]``

For every games env: the mean of the primary metric over the given seeds (smoke tier,
the card's episode count) for ``random`` and for the card's reference agent, printed as
the ``score_refs={"smoke": (random, reference)}`` entry of the card, plus every other
agent on the card for comparison.
"""

from __future__ import annotations

import argparse

import numpy as np

import icmlgym
from icmlgym.catalog import cards


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    args = ap.parse_args()
    icmlgym.envs.register_all()
    for c in cards():
        if c.family != "games":
            continue
        means = {}
        for agent in c.agents:
            recs = icmlgym.run(c.id, agent, seeds=args.seeds, tier="smoke")
            bad = [r.error for r in recs if r.status != "ok"]
            if bad:
                raise RuntimeError(f"{c.id} {agent}: {bad[0]}")
            means[agent] = float(np.mean([np.mean(r.metric(c.primary_metric)) for r in recs]))
        print(f"{c.id} ({c.primary_metric}, {c.direction}):")
        for a, v in means.items():
            print(f"  {a:28s} {v:.4f}")
        print(f'  score_refs={{"smoke": ({means["random"]:.4f}, {means[c.reference_agent]:.4f})}}')


if __name__ == "__main__":
    main()
