"""What the NoPeek defence buys and costs: reconstruction error at the protected block against accuracy.

    python benchmarks/split_nopeek.py [--data digits] [--weights 0 0.5 1 2] [--units 10] [--block 0]

For each classifier (``model_seed`` 0..units-1, the smoke tier: MLP 4 x 64, 600 classifier steps,
the inverse-network attacker with 150 steps) and NoPeek weight (0: the plain classifier), an
episode of ``icmlgym/SplitInference-v0`` with ``nopeek=weight, nopeek_block=block`` commits to
``block`` without noise: its ``recon_error`` (the attack the ``split-shallowest`` arm runs, same
seed) and ``accuracy_clean``; the distance correlation between the test inputs and the block's
output; and the R_c^2 criterion's block of the classifier. Paired over classifiers against the
plain one: the mean change with a bootstrap 95% interval (10,000 resamples). One torch thread; the
cache is the usual ``ICMLGYM_HOME`` (classifiers and attacks are cached there).
"""

from __future__ import annotations

import argparse
import os
import time


def _interval(d, rng, n: int = 10_000) -> tuple[float, float]:
    import numpy as np

    means = d[rng.integers(0, len(d), (n, len(d)))].mean(1)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--data", default="digits", choices=["digits", "signals"])
    ap.add_argument("--weights", nargs="+", type=float, default=[0.0, 0.5, 1.0, 2.0])
    ap.add_argument("--units", type=int, default=10)
    ap.add_argument("--block", type=int, default=0)
    args = ap.parse_args()
    import numpy as np
    import torch

    import icmlgym
    from icmlgym.envs.split.criteria import gpz_block
    from icmlgym.zoo.nopeek import distance_correlation

    torch.set_num_threads(1)
    smoke = {**icmlgym.card("icmlgym/SplitInference-v0").tiers["smoke"].env_kwargs, "data": args.data}
    rows: dict[float, dict[str, list[float]]] = {}
    load0, t0 = os.getloadavg()[0], time.process_time()
    for w in args.weights:
        r = rows.setdefault(w, {"error": [], "accuracy": [], "dcor": [], "gpz": []})
        for unit in range(args.units):
            env = icmlgym.make("icmlgym/SplitInference-v0", **smoke, model_seed=unit, nopeek=w, nopeek_block=args.block).unwrapped
            env.reset(seed=0)
            _, _, _, _, info = env.step(np.array([1, args.block, 0]))
            m = env.model
            with torch.no_grad():
                dc = float(distance_correlation(m.x["test"], m.net(m.x["test"], upto=args.block + 1)))
            r["error"].append(info["metrics"]["recon_error"])
            r["accuracy"].append(info["metrics"]["accuracy_clean"])
            r["dcor"].append(dc)
            r["gpz"].append(float(gpz_block(m.table[:, 4])))
    cpu = time.process_time() - t0
    rng = np.random.default_rng(0)
    base = {k: np.array(v) for k, v in rows[args.weights[0]].items()}
    print(f"{args.data}, block {args.block}, classifiers 0-{args.units - 1}; changes paired against weight {args.weights[0]:g}")
    print("| NoPeek weight | DCor(x, z) on the test split | recon error at the block | change [95% CI] | test accuracy | "
          "accuracy lost [95% CI] | R_c^2 criterion's block (per classifier) |")
    print("|---|---|---|---|---|---|---|")
    for w in args.weights:
        r = {k: np.array(v) for k, v in rows[w].items()}
        de, da = r["error"] - base["error"], base["accuracy"] - r["accuracy"]
        ce, ca = _interval(de, rng), _interval(da, rng)
        gpz = " ".join(str(int(g)) for g in r["gpz"])
        print(f"| {w:g} | {r['dcor'].mean():.3f} | {r['error'].mean():.3f} | {de.mean():+.3f} [{ce[0]:+.3f}, {ce[1]:+.3f}] | "
              f"{r['accuracy'].mean():.3f} | {da.mean():+.3f} [{ca[0]:+.3f}, {ca[1]:+.3f}] | {gpz} |")
    print(f"CPU {cpu:.1f} s (this process); load average {load0:.1f} at the start, {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
