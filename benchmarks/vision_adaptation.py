"""The adaptation curve of LatentActionTransfer-v0: every agent at n_labels = 0, 8, 64 over seeds.

Run: ``python benchmarks/vision_adaptation.py [--seeds 10] [--tier smoke] [--agents ...]``

All runs go in process through ``icmlgym.run`` (a LAM's pre-training for one seed is shared by
its three n_labels runs). Prints, per agent and n_labels, the mean over seeds of
``action_accuracy`` (queries in unseen context 6: at n = 0 the cross-context probe, at 8 and 64
the adaptation curve) with a 95% bootstrap interval over seeds, and of ``transfer_accuracy`` /
``transfer_success`` (the demonstration in unseen context 7 followed in context 6), plus the
CPU seconds per run.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import icmlgym

AGENTS = ("seq-delta-repa", "lapo", "lam-no-align", "bc-labels", "random")


def ci(x: np.ndarray, rng: np.random.Generator) -> tuple[float, float]:
    means = rng.choice(x, (10_000, len(x))).mean(1)
    return float(np.percentile(means, 2.5)), float(np.percentile(means, 97.5))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--tier", default="smoke")
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--labels", default="0,8,64")
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"tier {args.tier}, seeds 0-{args.seeds - 1}; load average {os.getloadavg()[0]:.1f}")
    print("| agent | n_labels | action_accuracy [95% CI] | transfer_accuracy | transfer_success | CPU s/run |")
    print("|---|---|---|---|---|---|")
    for agent in args.agents.split(","):
        for n in (int(v) for v in args.labels.split(",")):
            t0 = time.process_time()
            recs = icmlgym.run("icmlgym/LatentActionTransfer-v0", agent, seeds=list(range(args.seeds)), tier=args.tier, env_kwargs={"n_labels": n})
            cpu = (time.process_time() - t0) / len(recs)
            bad = [r.error for r in recs if r.status != "ok"]
            if bad:
                raise SystemExit(bad[0])
            acc = np.array([np.mean(r.metric("action_accuracy")) for r in recs])
            tra = np.mean([np.mean(r.metric("transfer_accuracy")) for r in recs])
            suc = np.mean([np.mean(r.metric("transfer_success")) for r in recs])
            lo, hi = ci(acc, rng)
            print(f"| `{agent}` | {n} | {acc.mean():.3f} [{lo:.3f}, {hi:.3f}] | {tra:.3f} | {suc:.2f} | {cpu:.1f} |", flush=True)


if __name__ == "__main__":
    main()
