"""LanguageToVisualKD-v0: every agent's test, worst-group and average-group accuracy over seeds.

Run: ``python benchmarks/vision_kd.py [--env icmlgym/LanguageToVisualKD-v1] [--seeds 10] [--tier smoke] [--agents ...] [--findings-data]``

``--findings-data``: the 48-class data set the LaViD findings use (the smoke tier's is 16 classes).

All runs in process through ``icmlgym.run`` (seeds 0..N-1: the data set and the student's
initialisation). Prints the mean over seeds with a 95% bootstrap interval of ``test_accuracy``,
and the means of ``worst_group_accuracy`` and ``average_group_accuracy``, and CPU seconds per run.
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np

import icmlgym

AGENTS = ("lavid", "lavid-ls", "kd-ce-only", "kd-label-smoothing", "kd-shuffled-signatures", "kd-oracle-signatures", "kd-visual",
          "kd-dkd", "kd-mlkd", "random")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--tier", default="smoke")
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--env", default="icmlgym/LanguageToVisualKD-v0", help="v1 adds the vision-language teacher (agent kd-makd)")
    ap.add_argument("--findings-data", action="store_true", help="the findings' 48-class data set (icmlgym.findings.vision.LAVID_DATA)")
    args = ap.parse_args()
    env_kwargs = {}
    if args.findings_data:
        from icmlgym.findings.vision import LAVID_DATA

        env_kwargs = dict(LAVID_DATA)
    rng = np.random.default_rng(0)
    print(f"{args.env}, tier {args.tier}, seeds 0-{args.seeds - 1}, env kwargs {env_kwargs}; load average {os.getloadavg()[0]:.1f}")
    print("| agent | test_accuracy [95% CI] | worst_group_accuracy | average_group_accuracy | CPU s/run |")
    print("|---|---|---|---|---|")
    for agent in args.agents.split(","):
        t0 = time.process_time()
        recs = icmlgym.run(args.env, agent, seeds=list(range(args.seeds)), tier=args.tier, env_kwargs=env_kwargs)
        cpu = (time.process_time() - t0) / len(recs)
        bad = [r.error for r in recs if r.status != "ok"]
        if bad:
            raise SystemExit(bad[0])
        acc = np.array([r.metric("test_accuracy")[0] for r in recs])
        worst = np.mean([r.metric("worst_group_accuracy")[0] for r in recs])
        avg = np.mean([r.metric("average_group_accuracy")[0] for r in recs])
        means = rng.choice(acc, (10_000, len(acc))).mean(1)
        lo, hi = np.percentile(means, [2.5, 97.5])
        print(f"| `{agent}` | {acc.mean():.3f} [{lo:.3f}, {hi:.3f}] | {worst:.3f} | {avg:.3f} | {cpu:.1f} |", flush=True)


if __name__ == "__main__":
    main()
