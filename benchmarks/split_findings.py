"""The split findings on both data types, with the ratios the paper states (docs/split.md's table).

    python benchmarks/split_findings.py [--units 10] [--data digits signals products:cnn]

Runs the declared comparisons of icmlgym/findings/split.py (digits) and the same arms on the
1-D signals (or any ``DATA[:ARCH]``, e.g. ``products:cnn``: the product images through the
constant-width CNN), prints the findings table and, per data type, the ratio of mean reconstruction
errors (R_c^2 split / shallow split; logits / last hidden block). Then the confounding check:
per classifier, the attacker's error at every block (no noise) and whether the largest rise of
error between consecutive blocks falls where R_c^2 / total variance drops most (all hidden blocks
have the same width, so the dimension cannot explain a jump between them).
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
    import icmlgym
    from icmlgym.envs.split.split_env import gpz_block

    agree, rows = 0, []
    for u in range(units):
        data, arch = _spec(spec)
        width = {"width": CNN_WIDTH} if arch != "mlp" else {}
        env = icmlgym.make("icmlgym/SplitInference-v0", data=data, arch=arch, model_seed=u, attacker=attacker, **width).unwrapped
        obs, _ = env.reset(seed=0)
        err = np.array([env._result(b, 0).normalised_error for b in range(env.n_blocks)])
        jump = int(np.argmax(np.diff(err))) + 1  # the block whose error rises most over the previous block's
        drop = gpz_block(obs["blocks"][:, 4])
        agree += jump == drop
        rows.append(err)
    mean = np.mean(rows, 0)
    print(f"{spec} ({attacker}): mean error per block {np.round(mean, 3).tolist()}; largest error rise at the R_c^2 block in {agree}/{units} classifiers")


if __name__ == "__main__":
    main()
