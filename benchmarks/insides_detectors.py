"""Every LayerOOD-v0 detector on the same seeds at the smoke tier: mean AUROC and FPR@95TPR (docs/insides.md).

    python benchmarks/insides_detectors.py --seeds 10
    python benchmarks/insides_detectors.py --seeds 10 --labelled-ood 20 --agents ood-sae-transitions,ood-sae-transitions-random,ood-logreg-last,ood-knn-last
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

import icmlgym

AGENTS = ["ood-sae-transitions", "ood-sae-transitions-random", "ood-mahalanobis-last", "ood-knn-last", "ood-msp", "ood-energy", "random"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--agents", default=",".join(AGENTS))
    ap.add_argument("--labelled-ood", type=int, default=0, help="LayerOOD-v0's n_labelled_ood (0: one-class)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    print("| agent | AUROC (mean over seeds) | range over seeds | FPR@95TPR | seconds per run |")
    print("|---|---|---|---|---|")
    for agent in args.agents.split(","):
        t0 = time.perf_counter()
        recs = icmlgym.run("icmlgym/LayerOOD-v0", agent, seeds=args.seeds, env_kwargs={"n_labelled_ood": args.labelled_ood})
        dt = (time.perf_counter() - t0) / args.seeds
        bad = [r.error for r in recs if r.status != "ok"]
        if bad:
            raise SystemExit(f"{agent}: {bad[0]}")
        au = np.array([np.mean(r.metric("auroc")) for r in recs])
        fpr = np.array([np.mean(r.metric("fpr95")) for r in recs])
        print(f"| `{agent}` | {au.mean():.3f} | {au.min():.3f}-{au.max():.3f} | {fpr.mean():.3f} | {dt:.2f} |", flush=True)


if __name__ == "__main__":
    main()
