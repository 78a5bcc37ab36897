"""Smoke-tier reference scores of the arena envs (the cards' ``score_refs``) and an agent comparison.

Run: ``/work/venv/bin/python benchmarks/arena_refs.py [--seeds 10]``

For ChoiceArena-v0 and ChoiceMarket-v0 at the smoke tier, runs every listed agent over
seeds 0..N-1 (one episode each) and prints the mean and standard error of the primary
metric and of the drift-free gain. ``score_refs["smoke"]`` = (mean of ``random``, mean of
the reference agent ``arena-vpo``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import icmlgym


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    seeds = list(range(args.seeds))
    for env_id, gain_key in (("icmlgym/ChoiceArena-v0", "win_rate_gain"), ("icmlgym/ChoiceMarket-v0", "mean_appeal_gain")):
        card = icmlgym.card(env_id)
        print(f"\n{env_id} (smoke tier, seeds 0-{args.seeds - 1}); primary {card.primary_metric}")
        print(f"| agent | {card.primary_metric} mean ± se | {gain_key} mean | wall s |")
        print("|---|---|---|---|")
        for agent in card.agents:
            t0 = time.perf_counter()
            recs = icmlgym.run(env_id, agent, seeds=seeds, tier="smoke")
            failed = [r.error for r in recs if r.status != "ok"]
            if failed:
                raise RuntimeError(f"{agent} failed: {failed[0]}")
            v = np.array([x for r in recs for x in r.metric(card.primary_metric)])
            g = np.array([x for r in recs for x in r.metric(gain_key)])
            print(f"| {agent} | {v.mean():+.3f} ± {v.std(ddof=1) / np.sqrt(len(v)):.3f} | {g.mean():+.3f} | {time.perf_counter() - t0:.1f} |")


if __name__ == "__main__":
    main()
