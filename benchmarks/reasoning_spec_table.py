"""SpeculativeReasoning-v0's smoke table: every verifier, token-level speculative decoding, the sequential and FPSR cost models.

Each row is ``icmlgym.run("icmlgym/SpeculativeReasoning-v0", AGENT, seeds=S, tier="smoke",
env_kwargs=KW)`` (seeds 0..S-1, the tier's episodes; every row sees the same problems). The three
cost models see the same trajectories (same seeds, same samples): only the modelled latency, the
score and the measured wall time differ between them.

Run: python benchmarks/reasoning_spec_table.py [--seeds 3 --episodes 4]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch

import icmlgym

AGENTS = ("tbvm", "specreason", "token-speculative", "always-accept", "always-reject", "random")
MODELS = {"sequential": {}, "FPSR": {"parallel": True}, "FPSR-no-early-stop": {"parallel": True, "early_stop": False}}
COLUMNS = ("score", "accuracy", "reference_accuracy", "acceptance_rate", "token_acceptance_rate", "target_tokens_saved",
           "modelled_latency", "reference_latency", "modelled_speedup", "wall_speedup")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--episodes", type=int, default=4)
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated cost models")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print(f"load average {os.getloadavg()[0]:.1f}; seeds 0-{args.seeds - 1} x {args.episodes} episodes")
    print("| agent | cost model | " + " | ".join(COLUMNS) + " |")
    print("|---|---|" + "---|" * len(COLUMNS))
    for model in args.models.split(","):
        for agent in AGENTS:
            recs = icmlgym.run("icmlgym/SpeculativeReasoning-v0", agent, seeds=args.seeds, tier="smoke",
                               episodes=args.episodes, env_kwargs=MODELS[model])
            bad = [r.error for r in recs if r.status != "ok"]
            if bad:
                raise SystemExit(f"{agent} {model}: {bad[0]}")
            vals = [float(np.mean([v for r in recs for v in r.metric(k)])) for k in COLUMNS]
            print(f"| `{agent}` | {model} | " + " | ".join(f"{v:.3f}" for v in vals) + " |", flush=True)


if __name__ == "__main__":
    main()
