"""Every SkillNeologism agent over seeds at a tier: the mean of each metric (the tables of docs/skills.md).

Run: python benchmarks/skills_table.py [--env icmlgym/SkillNeologism-v1] [--seeds 10] [--tier smoke] [--agents a,b]
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

import icmlgym

ENV = "icmlgym/SkillNeologism-v0"
AGENTS = ("skills-neologism", "skills-no-token", "skills-nearest-token", "skills-in-context", "skills-prefix", "skills-lora", "skills-full-ft", "random")
METRICS = ("new_skill_accuracy", "new_skill_likelihood", "forgetting", "composition_accuracy", "pair_accuracy", "context_tokens_per_prompt")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--tier", default="smoke")
    ap.add_argument("--env", default=ENV)
    ap.add_argument("--agents", default=",".join(AGENTS))
    args = ap.parse_args()
    out = {"env": args.env, "load_average": os.getloadavg()[0]}
    for agent in args.agents.split(","):
        recs = icmlgym.run(args.env, agent, seeds=list(range(args.seeds)), tier=args.tier)
        bad = [r.error for r in recs if r.status != "ok"]
        if bad:
            raise SystemExit(f"{agent}: {bad[0]}")
        out[agent] = {m: round(float(np.mean([r.metric(m)[0] for r in recs])), 4) for m in METRICS}
        out[agent]["backward_passes"] = float(np.mean([r.cost.get("backward_passes", 0) for r in recs]))
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
