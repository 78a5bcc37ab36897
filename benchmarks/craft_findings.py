"""Craft family: the DeepHA comparison (mixed levels vs single-level agents) over more seeds.

    python benchmarks/craft_findings.py [--seeds 0,1,2,3,4,5] [--max-steps 300]

Plays craft-hierarchical, craft-skill-only, craft-motor-scripted and craft-oracle on the
craft-smoke tasks and the held-out smoke split and prints success (overall, single- vs
multi-step), steps to success, the level usage and Crafter's geometric-mean score.
"""

from __future__ import annotations

import argparse

import pandas as pd

import icmlgym
from icmlgym.envs.craft import metrics as M
from icmlgym.envs.craft.tasks import heldout_smoke_tasks, smoke_tasks

AGENTS = ["craft-hierarchical", "craft-skill-only", "craft-motor-scripted", "craft-oracle"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--seeds", default="0,1,2,3,4,5")
    p.add_argument("--max-steps", type=int, default=300)
    p.add_argument("--csv", default="", help="write the episode table here")
    args = p.parse_args()
    seeds = [int(s) for s in args.seeds.split(",")]
    smoke = [t.name for t in smoke_tasks()]
    held = [t.name for t in heldout_smoke_tasks()]
    # every episode through the runner (its rollout and seeding), in process
    records = [
        rec
        for a in AGENTS
        for task in smoke + held
        for rec in icmlgym.run("icmlgym/Craft-v0", a, seeds=seeds, env_kwargs={"task": task, "max_steps": args.max_steps},
                               episodes=1, executor="inprocess")
    ]
    df = M.from_records(records)
    if args.csv:
        df.to_csv(args.csv, index=False)
    pd.set_option("display.width", 200)
    for name, part in (("craft-smoke", df[df.task.isin(smoke)]), ("held-out", df[df.task.isin(held)])):
        print(f"== {name}: {part.task.nunique()} tasks x {len(seeds)} seeds")
        table = pd.DataFrame({"success": part.groupby("agent")["success"].mean(),
                              "crafter_score": M.suite_scores(part),
                              "steps_to_success": M.steps_to_success(part)})
        table = table.join(M.multi_step_split(part))
        print(table.round(3).to_string())
    print("== seen vs held-out")
    print(M.seen_heldout_gap(df).round(3).to_string())
    print("== level usage")
    print(M.level_usage(df).round(3).to_string())
    print("== success by category")
    print(M.success_by_category(df).round(3).to_string())


if __name__ == "__main__":
    main()
