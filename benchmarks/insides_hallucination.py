"""Every HallucinationLabeling-v0 agent on the same seeds at the smoke tier: F1, accuracy, AUROC (docs/insides.md).

    python benchmarks/insides_hallucination.py --seeds 10                      # sentence embeddings (the default)
    python benchmarks/insides_hallucination.py --seeds 10 --embedding model    # the fact model's own states (hidden-state probes)
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import icmlgym

AGENTS = ["aporia-lp", "hal-self-consistency", "hal-semantic-entropy", "hal-logreg", "hal-knn", "hal-uncertainty", "random"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--embedding", default="sentence", choices=("sentence", "model"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| agent | F1 (mean over seeds) | range over seeds | accuracy | AUROC | annotations | seconds per run |")
    print("|---|---|---|---|---|---|---|")
    for agent in args.agents.split(","):
        t0 = time.perf_counter()
        recs = icmlgym.run("icmlgym/HallucinationLabeling-v0", agent, seeds=args.seeds, env_kwargs={"embedding": args.embedding})
        dt = (time.perf_counter() - t0) / args.seeds
        bad = [r.error for r in recs if r.status != "ok"]
        if bad:
            raise SystemExit(f"{agent}: {bad[0]}")
        per = {k: np.array([np.mean(r.metric(k)) for r in recs]) for k in ("f1", "accuracy", "auroc", "annotations")}
        f = per["f1"]
        print(f"| `{agent}` | {f.mean():.3f} | {f.min():.3f}-{f.max():.3f} | {per['accuracy'].mean():.3f} | {per['auroc'].mean():.3f} "
              f"| {per['annotations'].mean():.0f} | {dt:.2f} |", flush=True)


if __name__ == "__main__":
    main()
