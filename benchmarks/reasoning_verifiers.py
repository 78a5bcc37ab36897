"""TBVM against a SpecReason-style score threshold across their thresholds (SpeculativeReasoning-v0).

DREAM-R claims TBVM accepts more draft steps than a score threshold *at the same accuracy*. The
agents' defaults (ratio 2, score 0.7) are fixed from the papers' descriptions; this sweep runs
both verifiers over a grid of thresholds on the same seeds (every setting sees the same
problems) and prints accuracy, paired accuracy gain against the target alone, acceptance rate
and modelled speed-up, so that the two can be read at matched accuracy.

Run: python benchmarks/reasoning_verifiers.py [--seeds 10 --episodes 4]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch

import icmlgym


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--episodes", type=int, default=4)
    args = ap.parse_args()
    torch.set_num_threads(1)
    grid = [("tbvm", {"ratio": r}) for r in (1.0, 1.5, 2.0, 4.0, 8.0)] + [("specreason", {"threshold": t}) for t in (0.5, 0.6, 0.7, 0.8, 0.9)]
    grid += [("always-reject", {}), ("always-accept", {})]
    print(f"load average {os.getloadavg()[0]:.1f}; seeds 0-{args.seeds - 1} x {args.episodes} episodes")
    print("| verifier | setting | accuracy | accuracy - target alone | acceptance | modelled speed-up |")
    print("|---|---|---|---|---|---|")
    for agent, kw in grid:
        recs = icmlgym.run("icmlgym/SpeculativeReasoning-v0", agent, seeds=args.seeds, tier="smoke", episodes=args.episodes, agent_kwargs=kw)
        bad = [r.error for r in recs if r.status != "ok"]
        if bad:
            raise SystemExit(f"{agent} {kw}: {bad[0]}")
        val = lambda k: float(np.mean([v for r in recs for v in r.metric(k)]))  # noqa: E731
        setting = ", ".join(f"{k}={v:g}" for k, v in kw.items()) or "-"
        print(f"| `{agent}` | {setting} | {val('accuracy'):.3f} | {val('accuracy_gain'):+.3f} | {val('acceptance_rate'):.3f} | {val('modelled_speedup'):.2f}x |", flush=True)


if __name__ == "__main__":
    main()
