"""Measure the screening family's smoke-tier references and the figures quoted in docs/screening.md.

    python benchmarks/screening_refs.py            # agent means over seeds 0-9 (score_refs, findings)
    python benchmarks/screening_refs.py --threshold  # the standard tier's top-100 threshold (full tier hit_threshold)

Prints mean top-k recall (and its spread) and mean cost counters per agent and setting.
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import icmlgym

SEEDS = list(range(10))


def summary(env_id: str, agent: str, env_kwargs: dict | None = None, seeds=SEEDS, agent_kwargs=None) -> dict:
    t0 = time.process_time()
    recs = icmlgym.run(env_id, agent, seeds=seeds, env_kwargs=env_kwargs or {}, agent_kwargs=agent_kwargs or {})
    bad = [r.error for r in recs if r.status != "ok"]
    if bad:
        raise RuntimeError(bad[0])
    rec = np.array([r.metric("top_k_recall")[0] for r in recs])
    cost = {k: float(np.mean([r.cost.get(k, 0.0) for r in recs])) for k in ("surrogate_inferences", "evaluations", "enumerations")}
    auc = float(np.mean([r.metric("auc_recall_cost")[0] for r in recs]))
    return {"recall": rec, "mean": float(rec.mean()), "std": float(rec.std()), "auc": auc, "cost": cost, "cpu_s": time.process_time() - t0}


def show(label: str, s: dict) -> None:
    print(
        f"{label:55s} recall {s['mean']:.3f} +- {s['std']:.3f}  auc {s['auc']:.3f}  "
        f"inferences {s['cost']['surrogate_inferences']:.0f}  evals {s['cost']['evaluations']:.0f}  cpu {s['cpu_s']:.1f}s"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threshold", action="store_true", help="print the standard tier's top-100 threshold")
    ap.add_argument("--quick", action="store_true", help="only the score_refs (random and reference)")
    args = ap.parse_args()
    if args.threshold:
        from icmlgym.envs.screening import STANDARD_LIBRARY
        from icmlgym.envs.screening.oracles import make_oracle
        from icmlgym.envs.screening.problem import build_library, ground_truth

        gt = ground_truth(build_library(STANDARD_LIBRARY), make_oracle("similarity"), top_k=100)
        print(f"standard tier top-100 threshold (Tanimoto): {gt.topk_threshold!r}; best {gt.best!r}")
        return
    S = "icmlgym/Screening-v0"
    C = "icmlgym/ScreeningCompounds-v0"
    print(f"seeds {SEEDS[0]}..{SEEDS[-1]}, smoke tier")
    show("random (reagent partition)", summary(S, "random"))
    show("screening-boba (reagent partition)", summary(S, "screening-boba"))
    if args.quick:
        return
    for agent in ("screening-boba-thompson", "screening-boba-ucb1", "screening-round-robin", "screening-epsilon-greedy"):
        show(f"{agent} (reagent partition)", summary(S, agent))
    for part in ("reagent:1", "reagent:acids", "cluster:20", "random"):
        show(f"screening-boba partition={part}", summary(S, "screening-boba", {"partition": part}))
        show(f"screening-round-robin partition={part}", summary(S, "screening-round-robin", {"partition": part}))
    for ib in (4, 12, 40, 120, 400):
        show(f"screening-boba inference_batch={ib}", summary(S, "screening-boba", {"inference_batch": ib}))
    show("ScreeningCompounds screening-random-compounds", summary(C, "screening-random-compounds"))
    show("ScreeningCompounds screening-reagent-thompson", summary(C, "screening-reagent-thompson"))
    show("ScreeningCompounds screening-full-greedy", summary(C, "screening-full-greedy"))


if __name__ == "__main__":
    main()
