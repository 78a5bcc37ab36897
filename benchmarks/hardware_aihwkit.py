"""CIMRobustTraining-v0 with aihwkit (extra [cim]): aihwkit-style hardware-aware training as a baseline,
and DWP's drift claims on aihwkit's PCM model.

    python benchmarks/hardware_aihwkit.py [--seeds 10]

Training runs ``model_seed`` 0..seeds-1 (the findings' units) at the smoke tier (digits, 80 steps), through
``icmlgym.run``. Arms: ``cim-standard``, ``cim-noise-k`` and ``dwp`` on the env's default
(multiplicative mismatch at 50%, K = 4), and aihwkit-style hardware-aware training =
``cim-noise-1`` on ``train_noise_type="aihwkit", train_noise=0.1`` (one draw of aihwkit's
ADD_NORMAL weight modifier, std 0.1 x max|W|, per step; every sample weight 1). Each arm is
deployed on our drift model; ``dwp`` and ``cim-standard`` also on aihwkit's
(``backend="aihwkit"``). Prints each arm's means and the paired effects (95% bootstrap
interval, one-sided p) that docs/hardware.md quotes.
"""

from __future__ import annotations

import argparse
import os

import numpy as np

ID = "icmlgym/CIMRobustTraining-v0"
METRICS = ("acc_mismatch_70", "acc_additive_10", "acc_drift_1year", "drift_range", "robust_accuracy")


def arm(agent: str, seeds: int, **env_kwargs) -> dict[str, np.ndarray]:
    import icmlgym

    # model_seed = the unit, as in the family's findings (icmlgym/findings/hardware.py)
    recs = [r for s in range(seeds) for r in icmlgym.run(ID, agent, seeds=[s], env_kwargs={"data": "digits", "model_seed": s, **env_kwargs})]
    bad = [r.error for r in recs if r.status != "ok"]
    if bad:
        raise RuntimeError(bad[0])
    return {m: np.array([r.episodes[0].metrics[m] for r in recs]) for m in METRICS}


def main() -> None:
    import torch

    from icmlgym.findings.stats import paired_effect

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seeds", type=int, default=10)
    a = ap.parse_args()
    torch.set_num_threads(1)
    print(f"load average {os.getloadavg()[0]:.1f}; model seeds 0-{a.seeds - 1}")
    arms = {
        "cim-standard": arm("cim-standard", a.seeds),
        "cim-noise-k": arm("cim-noise-k", a.seeds),
        "dwp": arm("dwp", a.seeds),
        "aihwkit HWA": arm("cim-noise-1", a.seeds, train_noise_type="aihwkit", train_noise=0.1),
        "cim-standard, aihwkit drift": arm("cim-standard", a.seeds, backend="aihwkit"),
        "dwp, aihwkit drift": arm("dwp", a.seeds, backend="aihwkit"),
    }
    print("| arm | " + " | ".join(METRICS) + " |")
    print("|---" * (len(METRICS) + 1) + "|")
    for name, v in arms.items():
        print(f"| {name} | " + " | ".join(f"{v[m].mean():.4f}" for m in METRICS) + " |")
    print("\n| comparison | metric | effect [95% CI] | p |")
    print("|---|---|---|---|")
    pairs = [("aihwkit HWA", "cim-standard"), ("dwp", "aihwkit HWA"), ("cim-noise-k", "aihwkit HWA"),
             ("dwp, aihwkit drift", "cim-standard, aihwkit drift")]
    for t, c in pairs:
        for m in METRICS:
            direction = "less" if m == "drift_range" else "greater"
            e = paired_effect(arms[t][m] - arms[c][m], direction)
            print(f"| {t} vs {c} | {m} | {e.mean:+.4f} [{e.low:+.4f}, {e.high:+.4f}] | {e.p_value:.3f} |")


if __name__ == "__main__":
    main()
