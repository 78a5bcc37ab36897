"""Craft family: the smoke tier's normalisation references and its CPU cost.

    python benchmarks/craft_refs.py [--seeds 6]

Runs every agent of icmlgym/Craft-v0's card at the smoke tier through ``icmlgym.run``
(seeds 0..n-1), prints the mean of the primary metric (``success``) per agent and the
process CPU time of all agents x 3 seeds (the budget of ``icmlgym benchmark`` is about
20 s per env). The card's ``score_refs["smoke"]`` are (craft-random, craft-hierarchical).
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import icmlgym
from icmlgym.catalog import card


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", type=int, default=6)
    args = p.parse_args()
    c = card("icmlgym/Craft-v0")
    cpu3 = 0.0
    for agent in c.agents:
        t0 = time.process_time()
        w0 = time.perf_counter()
        recs = icmlgym.run(c.id, agent, seeds=args.seeds, tier="smoke")
        cpu = time.process_time() - t0
        cpu3 += cpu * 3 / args.seeds
        bad = [r.error for r in recs if r.status != "ok"]
        if bad:
            raise SystemExit(f"{agent} failed: {bad[0]}")
        succ = [v for r in recs for v in r.metric("success")]
        steps = [e.length for r in recs for e in r.episodes]
        print(f"{agent:22s} success={np.mean(succ):.3f}  mean steps={np.mean(steps):6.1f}  "
              f"cpu={cpu:5.1f}s  wall={time.perf_counter() - w0:5.1f}s  ({args.seeds} seeds)")
    print(f"smoke tier, all agents x 3 seeds: ~{cpu3:.1f} s CPU")


if __name__ == "__main__":
    main()
