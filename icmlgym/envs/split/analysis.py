"""Analyses of the paper's "Neural Vortex": R_c^2 / total variance per block across training, and under skewed labels.

    from icmlgym.envs.split.analysis import rc2_over_training
    curve = rc2_over_training("digits", steps=600, every=100, skew=0.0)
    curve.ratios   # (checkpoints, L + 1): the input, then each block, at each checkpoint

The classifier is the zoo's constant-width block MLP, trained here with the substrate's budgeted
loop (:func:`icmlgym.nn.train.train_loop`) so that the statistics can be read at checkpoints;
the statistics are measured on the (possibly skewed) training split, as the defender would.
``skew`` > 0 keeps class ``c`` of the training split with probability ``exp(-skew * c)``: a
long-tailed label distribution.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from icmlgym.envs.split.model import DATA_TYPES, dataset, rc2_stats


@dataclass
class Rc2Curve:
    """R_c^2 / total variance of the input and each block (columns) at each checkpoint (rows)."""

    steps: list[int]
    ratios: np.ndarray
    accuracy: list[float]
    class_counts: list[int]


def _ratios(net, x: torch.Tensor, y: np.ndarray) -> list[float]:
    with torch.no_grad():
        zs = [x] + net.activations(x)
    out = []
    for z in zs:
        rc2, total = rc2_stats(z.reshape(len(z), -1).numpy(), y)
        out.append(rc2 / max(total, 1e-12))
    return out


def rc2_over_training(data: str = "digits", depth: int = 4, width: int = 64, steps: int = 600, every: int = 100,
                      seed: int = 0, skew: float = 0.0, lr: float = 2e-3, batch_size: int = 64) -> Rc2Curve:
    """Train the split env's classifier from scratch and record each block's R_c^2 ratio every ``every`` steps."""
    from icmlgym.nn.train import Budget, train_loop
    from icmlgym.zoo.vision import mlp

    if data not in DATA_TYPES:
        raise ValueError(f"data must be one of {sorted(DATA_TYPES)}, got {data!r}")
    if steps < 1 or every < 1:
        raise ValueError(f"steps and every must be >= 1, got {steps}, {every}")
    if not (np.isfinite(skew) and skew >= 0):
        raise ValueError(f"skew must be a finite number >= 0, got {skew!r}")
    rng = np.random.default_rng(seed)
    d = dataset(data, "train")
    keep = rng.random(len(d.y)) < np.exp(-float(skew) * d.y)
    x, y = torch.as_tensor(d.x[keep]), np.asarray(d.y[keep])
    test = dataset(data, "test")
    xt, yt = torch.as_tensor(test.x), np.asarray(test.y)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        net = mlp(tuple(DATA_TYPES[data]["in_shape"]), 10, width, depth)
    gen = torch.Generator().manual_seed(seed + 1)
    yt_t = torch.as_tensor(y)
    curve = Rc2Curve([], np.zeros((0, depth + 2)), [], np.bincount(y, minlength=10).tolist())

    def record(step: int) -> None:
        net.eval()
        curve.steps.append(step)
        curve.ratios = np.vstack([curve.ratios, _ratios(net, x, y)])
        with torch.no_grad():
            curve.accuracy.append(float((net(xt).argmax(-1).numpy() == yt).mean()))
        net.train()

    def on_step(step: int, loss: float) -> None:
        if step % every == 0:
            record(step)

    record(0)
    def batch(_: int):
        idx = torch.randint(0, len(y), (batch_size,), generator=gen)
        return x[idx], yt_t[idx]

    def loss_fn(m, b):
        return F.cross_entropy(m(b[0]), b[1]), len(b[1]), 0

    train_loop(net, batch, loss_fn, torch.optim.Adam(net.parameters(), lr), Budget(steps), on_step=on_step)
    return curve


__all__ = ["Rc2Curve", "rc2_over_training"]
