"""Smoke-tier reference scores of UIRefine-v0 (the card's ``score_refs``) and an agent comparison.

Run: ``python benchmarks/ui_refs.py [--seeds 10]``

Runs every agent of the card over seeds 0..N-1 at the smoke tier (one episode each) and prints
the mean and standard error of ``score`` and of ``improvement`` (final minus start score), the
renders spent in the episode, and the wall time. ``score_refs["smoke"]`` = (mean of ``random``,
mean of the reference ``ui-rvpo``).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import icmlgym

ENV = "icmlgym/UIRefine-v0"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    args = ap.parse_args()
    seeds = list(range(args.seeds))
    card = icmlgym.card(ENV)
    print(f"{ENV} (smoke tier, seeds 0-{args.seeds - 1})")
    print("| agent | score mean ± se | improvement mean | renders per episode | wall s |")
    print("|---|---|---|---|---|")
    for agent in card.agents:
        t0 = time.perf_counter()
        recs = icmlgym.run(ENV, agent, seeds=seeds, tier="smoke")
        failed = [r.error for r in recs if r.status != "ok"]
        if failed:
            raise RuntimeError(f"{agent} failed: {failed[0]}")
        v = np.array([x for r in recs for x in r.metric("score")])
        g = np.array([x for r in recs for x in r.metric("improvement")])
        n = np.array([x for r in recs for x in r.metric("renders")])
        print(f"| {agent} | {v.mean():.4f} ± {v.std(ddof=1) / np.sqrt(len(v)):.4f} | {g.mean():+.4f} | {n.mean():.0f} | {time.perf_counter() - t0:.1f} |")


if __name__ == "__main__":
    main()
