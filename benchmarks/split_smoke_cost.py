"""What the smoke tier's classifier costs: the constant-width MLP against the small CNN (issue #20's "small CNN").

    python benchmarks/split_smoke_cost.py [--configs digits:mlp digits:cnn products:cnn] [--seeds 0 1 2]

For each ``DATA:ARCH`` (smoke depth 4, 600 classifier steps, 150 attack steps; width 64 for the MLP,
8 channels for the CNN) and classifier seed, in a fresh ``ICMLGYM_HOME`` (nothing cached): the CPU
seconds to train the classifier and build its per-block table, and to run one inverse-network attack
at every block. These are the costs a smoke run pays before the cache is warm (the main job trains
``model_pool = 3`` classifiers and attacks each at several blocks). One torch thread.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--configs", nargs="+", default=["digits:mlp", "digits:cnn", "products:cnn"])
    ap.add_argument("--seeds", nargs="+", type=int, default=[0, 1, 2])
    args = ap.parse_args()
    os.environ["ICMLGYM_HOME"] = tempfile.mkdtemp(prefix="split-smoke-cost-")
    import numpy as np
    import torch

    import icmlgym

    torch.set_num_threads(1)
    print("| data | arch | width | classifier + table (CPU s) | one attack per block (CPU s, blocks 0..4) | test accuracy |")
    print("|---|---|---|---|---|---|")
    for spec in args.configs:
        data, _, arch = spec.partition(":")
        arch = arch or "mlp"
        width = 64 if arch == "mlp" else 8
        train, attacks, accs = [], [], []
        for seed in args.seeds:
            env = icmlgym.make("icmlgym/SplitInference-v0", data=data, arch=arch, depth=4, width=width, classifier_steps=600,
                               attack_steps=150, model_seed=seed).unwrapped
            t = time.process_time()
            env.reset(seed=0)
            train.append(time.process_time() - t)
            accs.append(env.model.accuracy)
            row = []
            for b in range(env.n_blocks):
                t = time.process_time()
                env.run_attack(b, 0.0, seed=1)
                row.append(time.process_time() - t)
            attacks.append(row)
        a = np.mean(attacks, 0)
        print(f"| {data} | {arch} | {width} | {np.mean(train):.1f} | {', '.join(f'{v:.2f}' for v in a)} | {np.mean(accs):.3f} |")


if __name__ == "__main__":
    main()
