"""The split findings on both data types, with the ratios the paper states (docs/split.md's table).

    python benchmarks/split_findings.py [--units 10] [--data digits signals products:cnn]

Runs the declared comparisons of icmlgym/findings/split.py (digits) and the same arms on the
1-D signals (or any ``DATA[:ARCH]``, e.g. ``products:cnn``: the product images through the
constant-width CNN), prints the findings table and, per data type, the ratio of mean reconstruction
errors (R_c^2 split / shallow split; logits / last hidden block). Then the confounding check:
per classifier, the attacker's error at every block (no noise), the block where the error rises most
over the previous block, and how often each predictor names it: the R_c^2 criterion, the dimension
(the block where the output dimension falls most: the logits, since all hidden blocks have the same
width), the total variance (largest change), and a uniformly drawn block (chance).
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import torch

CNN_WIDTH = 8  # channels of the constant-width CNN (the tiers' width=64 is the MLP's)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=10)
    ap.add_argument("--data", nargs="+", default=["digits", "signals"])
    ap.add_argument("--attackers", nargs="+", default=["inverse-net"], help="attackers of the per-block error table")
    ap.add_argument("--no-findings", action="store_true", help="only the per-block error table")
    args = ap.parse_args()
    torch.set_num_threads(1)
    from icmlgym.findings import evaluate
    from icmlgym.findings.split import DIGITS_FINDINGS, _arms
    from icmlgym.findings.table import markdown

    pairs = {"split-rc2-beats-shallow": ("rc2", "shallow"), "split-logits-beat-features": ("logits", "features"),
             "split-shallow-noise-costs-accuracy": ("noise", None)}
    fs = []
    for spec in [] if args.no_findings else args.data:
        data, arch = _spec(spec)
        arms = _arms(data, **({"arch": arch, "width": CNN_WIDTH} if arch != "mlp" else {}))
        for f in DIGITS_FINDINGS:
            t, c = pairs[f.id]
            fs.append(dataclasses.replace(f, id=f"{f.id}-{spec}", treatment=arms[t], control=arms[c] if c else f.control))
    results = evaluate(fs, units=list(range(args.units))) if fs else []
    if results:
        print(markdown(results))
    for r in results:
        if r.finding.measure.describe() == "recon_error":
            print(f"{r.finding.id}: ratio of means {np.nanmean(r.treatment) / np.nanmean(r.control):.2f}x "
                  f"(per-unit ratios {np.nanmin(r.treatment / r.control):.2f}-{np.nanmax(r.treatment / r.control):.2f})")

    for spec in args.data:
        for attacker in args.attackers:
            jumps(spec, args.units, attacker)


def _spec(spec: str) -> tuple[str, str]:
    data, _, arch = spec.partition(":")
    return data, arch or "mlp"


def jumps(spec: str, units: int, attacker: str = "inverse-net") -> None:
    """Per classifier: the error at every block (no noise), the block of the largest error rise, and how
    each predictor of :mod:`icmlgym.envs.split.criteria` hits it (the declared jump findings' statistic)."""
    import icmlgym
    from icmlgym.envs.split.criteria import PREDICTORS, jump_hits

    hits: dict[str, list[float]] = {}
    rows, where = [], []
    for u in range(units):
        data, arch = _spec(spec)
        width = {"width": CNN_WIDTH} if arch != "mlp" else {}
        env = icmlgym.make("icmlgym/SplitInference-v0", data=data, arch=arch, model_seed=u, attacker=attacker, **width).unwrapped
        env.reset(seed=0)
        err = np.array([env._result(b, 0).normalised_error for b in range(env.n_blocks)])
        h = jump_hits(err, env.model.table)
        for k, v in h.items():
            hits.setdefault(k, []).append(v)
        rows.append(err)
        where.append(int(h["jump_block"]))
    mean = np.mean(rows, 0)
    rates = ", ".join(f"{p} {np.sum(hits[f'jump_at_{p}']):.3g}/{units}" for p in (*PREDICTORS, "chance"))
    print(f"{spec} ({attacker}): mean error per block {np.round(mean, 3).tolist()}; block of the largest error rise per "
          f"classifier {where}; hits on it: {rates}")


if __name__ == "__main__":
    main()
