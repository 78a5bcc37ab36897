"""Smoke-tier normalisation references of the cognitive family (random = 0, reference = 1).

Prints, per env, the mean primary metric over seeds 0, 1, 2 of ``random`` and of the
card's reference agent at the smoke tier, and the wall time of each set of runs.

    python benchmarks/cognitive_refs.py
"""

from __future__ import annotations

import time

import numpy as np

import icmlgym
from icmlgym.catalog import cards


def main() -> None:
    try:
        import torch

        torch.set_num_threads(1)
    except ImportError:
        pass
    for c in cards():
        if c.family != "cognitive":
            continue
        row = [c.id]
        for agent in ("random", c.reference_agent):
            t0 = time.perf_counter()
            recs = icmlgym.run(c.id, agent, seeds=[0, 1, 2], tier="smoke")
            bad = [r.error for r in recs if r.status != "ok"]
            if bad:
                raise RuntimeError(bad[0])
            score = float(np.mean([r.metric(c.primary_metric)[0] for r in recs]))
            row.append(f"{agent}={score:.4f} ({time.perf_counter() - t0:.1f} s)")
        print("  ".join(row), flush=True)


if __name__ == "__main__":
    main()
