"""The frontier of dp-tree's privacy parameter against break rate and steps to break, per attacker.

SketchAttack-v0 at the findings' budgets (3,000 keys, updates and queries; 3,000 words; error
normalised by max(prefix max F, 500); a break is a prefix-max error above 0.5), one episode per
seed, through the runner (process executor). For each epsilon_dp and attacker: the break rate
over the seeds, the mean steps to break (censored at the episode length when the attack never
breaks) and the mean prefix-max error. Larger epsilon_dp means less tree noise (weaker privacy).

    python benchmarks/sketch_frontier.py [--seeds 10] [--eps 2,8,32,128] [--markdown]
"""

from __future__ import annotations

import argparse

import numpy as np

import icmlgym
from icmlgym.runner import make_tasks, run_tasks

ENV = "icmlgym/SketchAttack-v0"
BASE = {"n_keys": 3000, "update_budget": 3000, "query_budget": 3000, "min_scale": 500, "epsilon": 0.5, "defender": "dp-tree", "space": 3000}
ATTACKERS = ("sketch-probe-reset", "sketch-probe-average", "sketch-probe-refresh")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--eps", default="2,8,32,128")
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    eps = [float(e) for e in args.eps.split(",")]
    tasks = []
    for e in eps:
        for a in ATTACKERS:
            tasks += make_tasks(ENV, a, args.seeds, "smoke", {**BASE, "defender_kwargs": {"epsilon_dp": e}}, episodes=1)
    recs = run_tasks(tasks, executor="process", workers=args.workers)
    print("| epsilon_dp | attacker | break rate | steps to break (mean, censored) | prefix-max error (mean) |")
    print("|---|---|---|---|---|")
    for e in eps:
        for a in ATTACKERS:
            rs = [r for r in recs if r.agent_name == a and r.env_kwargs["defender_kwargs"]["epsilon_dp"] == e]
            bad = [r for r in rs if r.status != "ok"]
            if bad:
                raise SystemExit(f"{len(bad)} runs failed: {bad[0].error}")
            s = np.array([r.metric("success")[0] for r in rs])
            steps = np.array([r.metric("steps_to_failure")[0] for r in rs])
            err = np.array([r.metric("prefix_max_error")[0] for r in rs])
            print(f"| {e:g} | {a.removeprefix('sketch-')} | {s.mean():.2f} ({int(s.sum())}/{len(s)}) | {steps.mean():.0f} | {err.mean():.3f} |")


if __name__ == "__main__":
    icmlgym.register_all() if hasattr(icmlgym, "register_all") else None
    main()
