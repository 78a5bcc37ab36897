"""Control for the RVPO finding: RVPO against absolute-reward training with the noisy and the exact evaluator.

Run: ``python benchmarks/ui_rvpo_control.py [--seeds 10]``

Same smoke tier as the finding (polishing, 8 rounds, G = 4, 240 training renders); the only
change in the control is ``evaluator="exact"``. Prints the per-seed final scores and the paired
effect (bootstrap 95% interval, sign-flip p) for each evaluator, so the part of RVPO's edge that
the evaluator's noise causes can be read off.
"""

from __future__ import annotations

import argparse

import numpy as np

import icmlgym
from icmlgym.findings import paired_effect


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--evaluators", default="exact,noisy")
    args = ap.parse_args()
    seeds = list(range(args.seeds))
    for evaluator in args.evaluators.split(","):
        out = {}
        for agent in ("ui-rvpo", "ui-absolute"):
            recs = icmlgym.run("icmlgym/UIRefine-v0", agent, seeds=seeds, tier="smoke", env_kwargs={"evaluator": evaluator})
            out[agent] = np.array([np.mean(r.metric("score")) for r in recs])
            print(f"{evaluator} {agent}: mean {out[agent].mean():.4f} per seed {np.round(out[agent], 3).tolist()}", flush=True)
        e = paired_effect(out["ui-rvpo"] - out["ui-absolute"], "greater")
        print(f"{evaluator}: RVPO - absolute = {e.mean:+.4f} [{e.low:+.4f}, {e.high:+.4f}], p = {e.p_value:.3f}, n = {e.n}")


if __name__ == "__main__":
    main()
