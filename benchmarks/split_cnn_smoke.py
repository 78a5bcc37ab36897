"""Could a small constant-width CNN be the smoke tier's classifier? Its cost and whether the R_c^2 criterion degenerates.

    python benchmarks/split_cnn_smoke.py [SPEC ...]      # SPEC = [ARCH:]WIDTHxDEPTHxSTEPS, ARCH cnn (default) or mlp
    python benchmarks/split_cnn_smoke.py mlp:64x4x600 8x4x600 4x6x600 3x6x600 2x6x600 4x8x600 4x6x1500 4x12x600

For each configuration on digits and classifier seeds 0-2, in a fresh ``ICMLGYM_HOME`` (nothing
cached), one torch thread: the test accuracy, the CPU seconds to train the classifier and build
its per-block table (``env.reset``; the first line also pays loading digits), the R_c^2 / total
variance column (input, then each block; the last is the logits) and the R_c^2 criterion's block
(:func:`icmlgym.envs.split.criteria.gpz_block`). ``LOGITS`` marks a classifier on which the
criterion picks the logits block: there the reference agent ``split-rc2`` commits where
``split-deepest`` does, and the smoke env could not tell them apart (docs/split.md).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time


def main() -> None:
    specs = sys.argv[1:] or ["mlp:64x4x600", "8x4x600", "4x6x600"]
    os.environ["ICMLGYM_HOME"] = tempfile.mkdtemp(prefix="split-cnn-smoke-")
    import numpy as np
    import torch

    import icmlgym
    from icmlgym.envs.split.criteria import gpz_block

    torch.set_num_threads(1)
    for spec in specs:
        arch, _, shape = spec.rpartition(":")
        arch = arch or "cnn"
        width, depth, steps = (int(v) for v in shape.split("x"))
        for seed in (0, 1, 2):
            env = icmlgym.make("icmlgym/SplitInference-v0", data="digits", arch=arch, depth=depth, width=width,
                               classifier_steps=steps, attack_steps=150, model_seed=seed).unwrapped
            t = time.process_time()
            env.reset(seed=0)
            cpu = time.process_time() - t
            ratios = env.model.table[:, 4]
            block = gpz_block(ratios)
            print(f"{arch} width {width} depth {depth} steps {steps} seed {seed}: accuracy {env.model.accuracy:.3f}, "
                  f"classifier + table {cpu:.1f} CPU-s, R_c^2 ratio {np.round(ratios, 3).tolist()}, criterion's block {block}"
                  f"{' LOGITS' if block == depth else ''}", flush=True)


if __name__ == "__main__":
    main()
