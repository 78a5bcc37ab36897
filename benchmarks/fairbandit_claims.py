"""The numbers behind docs/fairbandit.md and the finding tests: p-means regret of every agent.

Usage: python benchmarks/fairbandit_claims.py [--seeds 5] [--K 100] [--d 10]

Runs every FairLinearBandit-v0 agent on the finding tests' setting (synthetic
instances, seed s plays instance_seed s) at T = 1,000 and T = 10,000, and on the
diabetes instance at T = 10,000, and prints mean and standard deviation over
seeds of the p-means regret for p in {1, 0, -1, -2, -5} and the egalitarian regret.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import icmlgym

AGENTS = [
    "fairbandit-fairlin-pe",
    "fairbandit-fairlin-ucb",
    "fairbandit-linnash",
    "fairbandit-linucb",
    "fairbandit-lints",
    "fairbandit-pe",
    "fairbandit-etc",
    "random",
]
PS = ["1", "0", "-1", "-2", "-5", "-inf"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=5)
    ap.add_argument("--K", type=int, default=100)
    ap.add_argument("--d", type=int, default=10)
    args = ap.parse_args()
    settings = [
        ("synthetic", 1_000, lambda s: {"n_arms": args.K, "dim": args.d, "instance_seed": s}),
        ("synthetic", 10_000, lambda s: {"n_arms": args.K, "dim": args.d, "instance_seed": s}),
        ("diabetes", 10_000, lambda s: {"instance": "diabetes", "dim": 5, "n_arms": None}),
    ]
    for inst, T, kw in settings:
        print(f"\n{inst} T={T} ({args.seeds} seeds; mean ± sd of the per-run p-means regret)")
        print("| agent | " + " | ".join(f"p={p}" for p in PS) + " | s/run |")
        print("|---" * (len(PS) + 2) + "|")
        for agent in AGENTS:
            t0 = time.perf_counter()
            rows = []
            for s in range(args.seeds):
                rec = icmlgym.run("icmlgym/FairLinearBandit-v0", agent, seeds=[s], env_kwargs={"horizon": T, **kw(s)})[0]
                if rec.status != "ok":
                    raise RuntimeError(rec.error)
                rows.append(rec.episodes[0].metrics)
            cells = []
            for p in PS:
                v = np.array([r[f"pmeans_regret[p={p}]" if p != "-inf" else "egalitarian_regret"] for r in rows])
                cells.append(f"{v.mean():.3f} ± {v.std():.3f}")
            print(f"| {agent} | " + " | ".join(cells) + f" | {(time.perf_counter() - t0) / args.seeds:.2f} |")


if __name__ == "__main__":
    main()
