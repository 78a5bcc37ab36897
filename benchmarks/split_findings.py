"""The split findings on both data types, with the ratios the paper states (docs/split.md's table).

    python benchmarks/split_findings.py [--units 10] [--data digits signals]

Runs the declared comparisons of icmlgym/findings/split.py (digits) and the same arms on the
1-D signals, prints the findings table and, per data type, the ratio of mean reconstruction
errors (R_c^2 split / shallow split; logits / last hidden block) and the mean split depth.
"""

from __future__ import annotations

import argparse
import dataclasses

import numpy as np
import torch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--units", type=int, default=10)
    ap.add_argument("--data", nargs="+", default=["digits", "signals"])
    args = ap.parse_args()
    torch.set_num_threads(1)
    from icmlgym.findings import evaluate
    from icmlgym.findings.split import FINDINGS, _arms
    from icmlgym.findings.table import markdown

    pairs = {"split-rc2-beats-shallow": ("rc2", "shallow"), "split-logits-beat-features": ("logits", "features"),
             "split-shallow-noise-costs-accuracy": ("noise", None)}
    fs = []
    for data in args.data:
        arms = _arms(data)
        for f in FINDINGS:
            t, c = pairs[f.id]
            fs.append(dataclasses.replace(f, id=f"{f.id}-{data}", treatment=arms[t], control=arms[c] if c else f.control))
    results = evaluate(fs, units=list(range(args.units)))
    print(markdown(results))
    for r in results:
        if r.finding.measure.describe() == "recon_error":
            print(f"{r.finding.id}: ratio of means {np.nanmean(r.treatment) / np.nanmean(r.control):.2f}x "
                  f"(per-unit ratios {np.nanmin(r.treatment / r.control):.2f}-{np.nanmax(r.treatment / r.control):.2f})")


if __name__ == "__main__":
    main()
