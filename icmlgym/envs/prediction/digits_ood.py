"""DigitsOOD-v0: flag out-of-domain handwritten digits in batches (a prediction task).

Description:
    The smallest real instance of :class:`~icmlgym.envs.prediction.base.PredictionTaskEnv`,
    and the pattern the neural families' detection tasks follow. A deployment was trained on
    the in-domain classes of scikit-learn's bundled 8x8 digits (0-4 by default); inputs arrive
    in batches mixing in-domain digits and out-of-domain ones (5-9) at a set ratio, and the
    agent scores each input's chance of being out of domain. An agent that trains sees only
    the in-domain inputs of the train split (one-class), through ``env.training_data()``.

Action Space:
    ``Box(0, 1, (batch_size,))``: one OOD score per input (higher = more likely OOD).

Observation Space:
    ``Dict(inputs=Box(batch_size, 64), step=Discrete(n_batches))``: flattened pixel
    intensities in [0, 1].

Rewards:
    0 until the last step, then the episode's AUROC (OOD = positive class).

Starting State:
    ``reset(seed)`` draws the episode's ``batch_size x n_batches`` inputs without
    replacement from the test split (seeded).

Episode End:
    After ``n_batches`` steps.

Arguments:
    ``batch_size`` (64), ``n_batches`` (4), ``ood_fraction`` (0.5): the share of OOD inputs
    in the evaluated split, ``in_classes`` ((0, 1, 2, 3, 4)), ``split`` ("test").

Metrics:
    ``auroc``, ``aupr`` (OOD positive), ``fpr95`` (false-positive rate at 95% TPR).

Version History:
    v0: first version.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from icmlgym.envs.prediction.base import PredictionTaskEnv
from icmlgym.envs.prediction.metrics import aupr, auroc, fpr_at_tpr


class DigitsOODEnv(PredictionTaskEnv):
    """Out-of-domain detection on 8x8 digits (see the module docstring)."""

    primary = "auroc"
    input_bounds = (0.0, 1.0)

    def __init__(self, batch_size: int = 64, n_batches: int = 4, ood_fraction: float = 0.5,
                 in_classes: Sequence[int] = (0, 1, 2, 3, 4), split: str = "test") -> None:
        if not 0.0 < ood_fraction < 1.0:
            raise ValueError(f"ood_fraction must be in (0, 1), got {ood_fraction}")
        classes = sorted({int(c) for c in in_classes})
        if not classes or not set(classes) < set(range(10)):
            raise ValueError(f"in_classes must be a non-empty proper subset of 0..9, got {list(in_classes)}")
        self.ood_fraction = float(ood_fraction)
        self.in_classes = tuple(classes)
        super().__init__(batch_size, n_batches, split)

    def pool(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        from icmlgym.corpora.vision import digits

        d = digits(split)
        x = d.x.reshape(len(d.x), -1)
        ood = ~np.isin(d.y, self.in_classes)
        if split == "train":  # one-class training data: in-domain only
            return x[~ood], np.zeros(int((~ood).sum()), dtype=np.int64)
        # subsample so that OOD inputs make up ood_fraction of the split (fixed, not seeded by the episode)
        rng = np.random.default_rng(7)
        ins, outs = np.flatnonzero(~ood), np.flatnonzero(ood)
        n_out = min(len(outs), int(round(len(ins) * self.ood_fraction / (1 - self.ood_fraction))))
        n_in = min(len(ins), int(round(n_out * (1 - self.ood_fraction) / self.ood_fraction)))
        keep = np.sort(np.concatenate([rng.choice(ins, n_in, replace=False), rng.choice(outs, n_out, replace=False)]))
        return x[keep], ood[keep].astype(np.int64)

    def task_metrics(self, labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
        return {"auroc": auroc(labels, predictions), "aupr": aupr(labels, predictions), "fpr95": fpr_at_tpr(labels, predictions)}


__all__ = ["DigitsOODEnv"]
