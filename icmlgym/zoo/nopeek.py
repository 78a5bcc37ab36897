"""NoPeek: a constant-width block classifier trained to decorrelate one block's output from its input.

After Vepakomma et al. (2020), "NoPeek: Information leakage reduction to share activations in
distributed deep learning": the network that sends ``z_b`` (the output of block ``nopeek_block``)
to a server is trained with

    cross_entropy(f(x), y) + nopeek_weight * DCor(x, z_b)

on every minibatch, where ``DCor`` is the sample distance correlation of Szekely, Rizzo and
Bakirov (2007) between the flattened inputs and the flattened representations of the batch
(:func:`distance_correlation`; 0 when independent, 1 when one is a similarity transform of the
other). A lower ``DCor`` makes ``z_b`` harder to invert, at a cost in accuracy that the weight sets.

The member ``nopeek`` is the ``constant-width`` classifier (:mod:`icmlgym.zoo.constant_width`: the
same architectures, data, recipe, initialisation and batches) with that penalty: with
``nopeek_weight = 0`` it trains the same weights as ``constant-width`` (and, on digits and signals
with ``arch="mlp"``, as ``digits-mlp`` with the same overrides). Split inference
(:mod:`icmlgym.envs.split`) loads it for its ``nopeek`` option; the other members' keys are untouched.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.zoo import constant_width
from icmlgym.zoo.registry import Member, members, register


def distance_correlation(x, z):
    """Sample distance correlation between the rows of ``x`` (n, ...) and ``z`` (n, ...), a differentiable torch scalar.

    ``dCor^2 = dCov^2(x, z) / sqrt(dCov^2(x, x) dCov^2(z, z))`` over the double-centred pairwise
    Euclidean distance matrices (Szekely et al. 2007); returns ``dCor`` (0 when either side has
    no spread).
    """
    import torch

    def centred(a: torch.Tensor) -> torch.Tensor:
        a = a.reshape(len(a), -1).to(torch.float64)
        sq = (a * a).sum(1)
        d = (sq[:, None] + sq[None, :] - 2.0 * a @ a.T).clamp_min(0.0)
        d = torch.sqrt(d + 1e-12) * (d > 0)  # exact zeros (the diagonal, repeated rows) stay 0, without a NaN gradient
        return d - d.mean(0, keepdim=True) - d.mean(1, keepdim=True) + d.mean()

    if len(x) != len(z):
        raise ValueError(f"x and z must have the same number of rows, got {len(x)} and {len(z)}")
    a, b = centred(x), centred(z)
    dcov_xz, dcov_xx, dcov_zz = (a * b).mean(), (a * a).mean(), (b * b).mean()
    denom = torch.sqrt(dcov_xx * dcov_zz)
    if float(denom.detach()) <= 0:
        return torch.zeros((), dtype=torch.float64)
    return torch.sqrt((dcov_xz / denom).clamp_min(0.0))


def _train(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    """``constant-width``'s training loop with the distance-correlation penalty at block ``nopeek_block``."""
    import torch
    import torch.nn.functional as F

    from icmlgym.nn.train import Budget, train_loop

    weight, block = float(cfg["nopeek_weight"]), int(cfg["nopeek_block"])
    if not (np.isfinite(weight) and weight >= 0):
        raise ValueError(f"nopeek_weight must be a finite number >= 0, got {cfg['nopeek_weight']!r}")
    if not 0 <= block < len(model.blocks) - 1:
        raise ValueError(f"nopeek_block must be a hidden block in 0..{len(model.blocks) - 2}, got {cfg['nopeek_block']!r}")
    d = constant_width.dataset(cfg["data"], "train", cfg.get("products"))
    x, y = torch.as_tensor(d.x), torch.as_tensor(d.y)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), cfg["lr"])
    dcors: list[float] = []

    def loss_fn(m, batch):
        bx, by = batch
        if weight == 0:
            return F.cross_entropy(m(bx), by), len(by), 0
        z = m(bx, upto=block + 1)
        dc = distance_correlation(bx, z)
        dcors.append(float(dc.detach()))
        return F.cross_entropy(m(z, start=block + 1), by) + weight * dc.to(z.dtype), len(by), 0

    def batches(step):
        idx = torch.randint(0, len(y), (cfg["batch_size"],), generator=gen)
        return x[idx], y[idx]

    res = train_loop(model, batches, loss_fn, opt, Budget(cfg["steps"]), meter=meter)
    facts = {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4), "train_examples": len(y)}
    if dcors:
        facts["final_batch_dcor"] = round(float(np.mean(dcors[-20:])), 4)
    return facts


def _evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    """Test accuracy (as ``constant-width``) and the distance correlation of the protected block on the test split."""
    import torch

    out = constant_width.MEMBER.evaluate(model, cfg)
    d = constant_width.dataset(cfg["data"], "test", cfg.get("products"))
    x = torch.as_tensor(d.x)
    with torch.no_grad():
        out["test_dcor"] = round(float(distance_correlation(x, model(x, upto=int(cfg["nopeek_block"]) + 1))), 4)
    return out


MEMBER = Member(
    name="nopeek", kind="image-classifier",
    description="constant-width block classifier trained with NoPeek's distance-correlation penalty at one block",
    data="as constant-width: digits, signals or product images (train split); accuracy and DCor on the test split",
    configs={size: {**cfg, "nopeek_weight": 1.0, "nopeek_block": 0} for size, cfg in constant_width.MEMBER.configs.items()},
    make=constant_width.MEMBER.make, train=_train, evaluate=_evaluate,
    code=("icmlgym.zoo.nopeek", *constant_width.MEMBER.code),
)


def ensure_registered() -> Member:
    """Register ``nopeek`` once per process (idempotent) and return it."""
    known = {m.name: m for m in members()}
    return known[MEMBER.name] if MEMBER.name in known else register(MEMBER)


ensure_registered()

__all__ = ["MEMBER", "distance_correlation", "ensure_registered"]
