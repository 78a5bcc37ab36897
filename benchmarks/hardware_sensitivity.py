"""Per-layer and per-expert quantisation sensitivity of MoEQuantAlloc's two models (v0: reasoner-moe, v1:
reasoner-moe-outlier): how much the held-out loss rises when one layer's (or one expert's) weights go to
b bits, every other expert at full precision.

Run: python benchmarks/hardware_sensitivity.py [--seeds 10] [--n-eval 64]

One torch thread. The unit is a data draw (MoEQuantAlloc's ``data_seed``: its held-out problems, the
same for both models); each figure is the mean over the draws with a 95% t-interval. The spread
columns: the ratio of the most to the least sensitive layer at 2 bits, and the ratio of the most
to the least sensitive expert at 2 bits (among experts whose increase is > 1e-4).
Quantiser: MoEQuantAlloc's default (group-wise RTN, groups of 32 input columns).
"""

from __future__ import annotations

import argparse
import os
import time

import numpy as np
import torch
from scipy import stats

MODELS = ("reasoner-moe", "reasoner-moe-outlier")
LAYER_BITS = (2, 3, 4)
EXPERT_BITS = (2, 3)


def interval(x: np.ndarray) -> tuple[float, float, float]:
    m = float(np.mean(x))
    h = float(stats.t.ppf(0.975, len(x) - 1) * np.std(x, ddof=1) / np.sqrt(len(x))) if len(x) > 1 else float("nan")
    return m, m - h, m + h


def sensitivities(model_name: str, seeds: int, n_eval: int) -> tuple[dict, np.ndarray, np.ndarray]:
    """Per-layer increases ``{(layer, bits): (draws,)}``, per-expert increases ``(draws, E, len(EXPERT_BITS))``
    and each expert's layer."""
    from icmlgym.envs.hardware.moe_env import _data
    from icmlgym.envs.hardware.moe_model import QuantMoE
    from icmlgym.zoo.registry import load

    z = load(model_name, "smoke")
    qm = QuantMoE(z.model, (2, 3, 4, 8))
    E, L = qm.n_experts, int(qm.layer.max()) + 1
    layer = {(li, b): np.zeros(seeds) for li in range(L) for b in LAYER_BITS}
    expert = np.zeros((seeds, E, len(EXPERT_BITS)))
    for s in range(seeds):
        held = _data(f"bench/{model_name}", s, 1, n_eval, z.model.config.block_size)["heldout"]
        qm.apply([-1] * E)
        fp = qm.lm_metrics(held)[0]
        for li in range(L):
            for b in LAYER_BITS:
                qm.apply([b if qm.layer[e] == li else -1 for e in range(E)])
                layer[(li, b)][s] = qm.lm_metrics(held)[0] - fp
        for e in range(E):
            for j, b in enumerate(EXPERT_BITS):
                bits = [-1] * E
                bits[e] = b
                qm.apply(bits)
                expert[s, e, j] = qm.lm_metrics(held)[0] - fp
    return layer, expert, qm.layer


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    ap.add_argument("--n-eval", type=int, default=64)
    args = ap.parse_args()
    torch.set_num_threads(1)
    t0 = time.perf_counter()
    print(f"load average {os.getloadavg()[0]:.1f}; data draws 0-{args.seeds - 1}, {args.n_eval} held-out problems each\n")
    print("| model | layer | +loss at 2 bits | +loss at 3 bits | +loss at 4 bits |")
    print("|---|---|---|---|---|")
    spreads = {}
    for name in MODELS:
        layer, expert, layer_of = sensitivities(name, args.seeds, args.n_eval)
        n_layers = len({li for li, _ in layer})
        for li in range(n_layers):
            cells = ["{:.4f} [{:.4f}, {:.4f}]".format(*interval(layer[(li, b)])) for b in LAYER_BITS]
            print(f"| `{name}` | {li} | " + " | ".join(cells) + " |")
        two = [float(np.mean(layer[(li, 2)])) for li in range(n_layers)]
        per_expert = expert.mean(0)  # (E, bits)
        pos = per_expert[:, 0][per_expert[:, 0] > 1e-4]
        spreads[name] = (max(two) / min(two), float(pos.max() / pos.min()) if len(pos) > 1 else float("nan"), per_expert, layer_of)
    print("\n| model | expert | +loss at 2 bits | +loss at 3 bits |")
    print("|---|---|---|---|")
    for name in MODELS:
        per_expert, layer_of = spreads[name][2:]
        for e, row in enumerate(per_expert):
            print(f"| `{name}` | {e} (layer {int(layer_of[e])}) | {row[0]:.4f} | {row[1]:.4f} |")
    print("\n| model | most / least sensitive layer at 2 bits | most / least sensitive expert at 2 bits |")
    print("|---|---|---|")
    for name in MODELS:
        lay, exp = spreads[name][:2]
        print(f"| `{name}` | {lay:.1f}x | {exp:.1f}x |")
    print(f"\n{time.perf_counter() - t0:.1f} s wall, load average {os.getloadavg()[0]:.1f} at the end")


if __name__ == "__main__":
    main()
