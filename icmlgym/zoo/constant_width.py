"""Constant-width block classifiers (MLP and CNN) on digits, 1-D signals or generated product images.

The member ``constant-width`` is what split inference cuts when it needs a data type or an
architecture the zoo's first members do not cover (``digits-mlp`` stays the MLP on digits
and signals). Every hidden block sends a representation of the same size:

- ``arch="mlp"``: flatten, then ``depth`` blocks of ``Linear(width) + ReLU`` (``width`` values);
- ``arch="cnn"``: ``depth`` blocks of a 3x3 (2-D) or kernel-3 (1-D) convolution to ``width``
  channels, stride 1, zero padding, ReLU: no pooling, so every block's output has
  ``width x H x W`` values (``width x length`` for signals) and the receptive field grows
  with depth while the dimension does not.

The last block is the classifier (flatten, ``Linear(classes)``). Data (``data``): ``digits``
(:func:`icmlgym.corpora.vision.digits`), ``signals`` (:func:`icmlgym.corpora.vision.signals`)
or ``products`` (:func:`icmlgym.corpora.product_images.product_images` with the configuration's
``products`` arguments: 48 classes of 16x16 RGB by default, 20 images per class in train, 10 in
val and test). Importing this module registers the member (the split family imports it).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.zoo.registry import Member, ZooError, get, register

PRODUCTS: dict[str, Any] = {"n_objects": 4, "n_colours": 4, "n_materials": 3, "size": 16, "seed": 0,
                            "per_class": {"train": 20, "val": 10, "test": 10}}
DATA: tuple[str, ...] = ("digits", "signals", "products")


def dataset(data: str, split: str, products: dict[str, Any] | None = None):
    """The split of ``data`` (an :class:`icmlgym.corpora.vision.Dataset`)."""
    from icmlgym.corpora import vision

    if data == "digits":
        return vision.digits(split)
    if data == "signals":
        return vision.signals(split)
    if data == "products":
        from icmlgym.corpora.product_images import product_images

        p = {**PRODUCTS, **(products or {})}
        per = p["per_class"][split] if isinstance(p["per_class"], dict) else int(p["per_class"])
        return product_images(split, n_objects=p["n_objects"], n_colours=p["n_colours"], n_materials=p["n_materials"],
                              per_class=per, size=p["size"], seed=p["seed"])
    raise ValueError(f"data must be one of {DATA}, got {data!r}")


def constant_width_cnn(in_shape: tuple[int, ...], classes: int, width: int = 8, depth: int = 4):
    """``depth`` stride-1 convolutions of ``width`` channels (2-D for ``(C, H, W)``, 1-D for ``(C, L)``), then a linear classifier."""
    from torch import nn

    from icmlgym.zoo.vision import BlockNet

    if len(in_shape) not in (2, 3):
        raise ValueError(f"in_shape must be (channels, length) or (channels, height, width), got {in_shape}")
    conv = nn.Conv2d if len(in_shape) == 3 else nn.Conv1d
    blocks: list[nn.Module] = []
    prev = int(in_shape[0])
    for _ in range(int(depth)):
        blocks.append(nn.Sequential(conv(prev, int(width), 3, padding=1), nn.ReLU()))
        prev = int(width)
    n_out = int(width) * int(np.prod(in_shape[1:])) if depth > 0 else int(np.prod(in_shape))
    blocks.append(nn.Sequential(nn.Flatten(), nn.Linear(n_out, int(classes))))
    return BlockNet(blocks)


def _make(cfg: dict[str, Any]):
    from icmlgym.zoo import vision

    if cfg["arch"] == "mlp":
        return vision.mlp(tuple(cfg["in_shape"]), cfg["classes"], cfg["width"], cfg["depth"])
    if cfg["arch"] == "cnn":
        return constant_width_cnn(tuple(cfg["in_shape"]), cfg["classes"], cfg["width"], cfg["depth"])
    raise ValueError(f"arch must be 'mlp' or 'cnn', got {cfg['arch']!r}")


def _train(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    from icmlgym.nn.train import Budget, train_loop

    d = dataset(cfg["data"], "train", cfg.get("products"))
    x, y = torch.as_tensor(d.x), torch.as_tensor(d.y)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), cfg["lr"])

    def loss_fn(m, batch):
        bx, by = batch
        return F.cross_entropy(m(bx), by), len(by), 0

    def batches(step):
        idx = torch.randint(0, len(y), (cfg["batch_size"],), generator=gen)
        return x[idx], y[idx]

    res = train_loop(model, batches, loss_fn, opt, Budget(cfg["steps"]), meter=meter)
    return {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4), "train_examples": len(y)}


def _evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    import torch

    d = dataset(cfg["data"], "test", cfg.get("products"))
    with torch.no_grad():
        pred = model(torch.as_tensor(d.x)).argmax(-1).numpy()
    return {"accuracy": round(float((pred == d.y).mean()), 4)}


IN_SHAPES: dict[str, list[int]] = {"digits": [1, 8, 8], "signals": [1, 40], "products": [3, 16, 16]}
CLASSES: dict[str, int] = {"digits": 10, "signals": 10, "products": 48}

MEMBER = Member(
    name="constant-width", kind="image-classifier",
    description="constant-width block classifier (MLP or stride-1 CNN) on digits, signals or product images",
    data="icmlgym.corpora: digits, signals or product_images (train split); accuracy on the test split",
    configs={"smoke": {"data": "products", "arch": "cnn", "in_shape": IN_SHAPES["products"], "classes": 48, "width": 8, "depth": 4,
                       "steps": 600, "batch_size": 64, "lr": 2e-3, "products": PRODUCTS},
             "standard": {"data": "products", "arch": "cnn", "in_shape": IN_SHAPES["products"], "classes": 48, "width": 16, "depth": 6,
                          "steps": 3000, "batch_size": 64, "lr": 1e-3, "products": PRODUCTS}},
    make=_make, train=_train, evaluate=_evaluate,
    code=("icmlgym.zoo.constant_width", "icmlgym.zoo.vision", "icmlgym.corpora.vision", "icmlgym.corpora.product_images",
          "icmlgym.nn.train"),
)


def ensure_registered() -> Member:
    """Register ``constant-width`` once per process (idempotent) and return it."""
    try:
        return get(MEMBER.name)
    except ZooError:
        return register(MEMBER)


ensure_registered()

__all__ = ["CLASSES", "DATA", "IN_SHAPES", "MEMBER", "PRODUCTS", "constant_width_cnn", "dataset", "ensure_registered"]
