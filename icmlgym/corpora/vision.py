"""Image and signal data sets that need no download, each with a fixed split and a card.

- :func:`digits`: scikit-learn's bundled 8x8 handwritten digits (1,797 images; its
  ``load_digits`` reads a file inside the wheel; the ``fetch_*`` sets download and are
  not used). Fixed stratified split 60/20/20 (seeded, independent of the caller's seed).
- :func:`signals`: 1-D signals in the spirit of MNIST-1D (Greydanus 2020): ten template
  shapes, each drawn with random padding, shift, scale, shear, Gaussian and correlated
  noise, written here (the ``mnist1d`` package is not a dependency).
- :func:`spurious_images`: a Waterbirds-like set from the generated product catalogue
  (:mod:`icmlgym.corpora.products`): the label is the product's group (categories
  0-3 vs 4-7), the background is "land" (warm, plain) or "water" (cool, striped), and
  in the training split the background agrees with the label with probability
  ``correlation``; validation and test are balanced over the four (label, background)
  groups, so worst-group accuracy measures reliance on the spurious cue.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

SPLITS = ("train", "val", "test")


@dataclass
class Dataset:
    """Arrays of one split: inputs ``x``, labels ``y``, optional ``groups`` and per-item ``attrs``."""

    name: str
    split: str
    x: np.ndarray
    y: np.ndarray
    groups: np.ndarray | None = None
    attrs: dict[str, np.ndarray] = field(default_factory=dict)
    card: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return int(len(self.y))


def _check_split(split: str) -> None:
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")


def _stratified(y: np.ndarray, seed: int, fractions=(0.6, 0.2, 0.2)) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)
    parts: dict[str, list[int]] = {s: [] for s in SPLITS}
    for c in np.unique(y):
        idx = np.flatnonzero(y == c)
        rng.shuffle(idx)
        a = int(round(fractions[0] * len(idx)))
        b = a + int(round(fractions[1] * len(idx)))
        parts["train"] += idx[:a].tolist()
        parts["val"] += idx[a:b].tolist()
        parts["test"] += idx[b:].tolist()
    return {s: np.sort(np.array(v)) for s, v in parts.items()}


def digits(split: str = "train") -> Dataset:
    """scikit-learn's digits: ``x`` float32 (n, 1, 8, 8) in [0, 1], ``y`` int64 in 0..9."""
    _check_split(split)
    from sklearn.datasets import load_digits

    d = load_digits()
    x = (d.images / 16.0).astype(np.float32)[:, None]
    y = d.target.astype(np.int64)
    idx = _stratified(y, seed=20260)[split]
    card = {"name": "digits", "source": "scikit-learn load_digits (bundled in the wheel)", "n_total": int(len(y)),
            "shape": [1, 8, 8], "classes": 10, "split": "stratified 60/20/20, fixed seed"}
    return Dataset("digits", split, x[idx], y[idx], card=card)


# ----------------------------------------------------------------------------- 1-D signals

def _templates() -> np.ndarray:
    """Ten 12-point template shapes (one per class), fixed."""
    t = np.array([
        [5, 6, 6, 5, 3, 1, 1, 3, 5, 6, 6, 5],
        [1, 1, 2, 6, 6, 6, 6, 6, 6, 2, 1, 1],
        [1, 3, 6, 6, 3, 1, 1, 1, 3, 6, 6, 6],
        [1, 6, 6, 3, 3, 6, 6, 3, 3, 6, 6, 1],
        [6, 6, 1, 1, 6, 6, 6, 6, 1, 1, 1, 1],
        [6, 6, 6, 3, 1, 1, 3, 6, 6, 3, 1, 1],
        [1, 1, 3, 6, 6, 3, 1, 3, 6, 6, 3, 1],
        [6, 6, 6, 6, 5, 4, 3, 2, 1, 1, 1, 1],
        [3, 6, 3, 1, 3, 6, 3, 1, 3, 6, 3, 1],
        [1, 1, 1, 1, 2, 3, 4, 5, 6, 6, 6, 6],
    ], dtype=np.float64)
    return (t - 3.5) / 2.5


def _signal(rng: np.random.Generator, label: int, length: int) -> np.ndarray:
    base = _templates()[label]
    n = int(rng.integers(24, 36))  # the template's stretched length
    xs = np.linspace(0, len(base) - 1, n)
    sig = np.interp(xs, np.arange(len(base)), base) * rng.uniform(0.8, 1.2)
    sig = sig + rng.uniform(-0.4, 0.4) * np.linspace(-1, 1, n)  # shear
    out = np.zeros(length)
    start = int(rng.integers(0, length - n + 1))  # padding and shift
    out[start : start + n] = sig
    out += rng.normal(0, 0.25, length)  # white noise
    corr = np.convolve(rng.normal(0, 0.25, length + 8), np.ones(9) / 3.0, mode="valid")  # correlated noise
    return (out + corr[:length]).astype(np.float32)


def signals(split: str = "train", n: int = 4000, length: int = 40, seed: int = 0) -> Dataset:
    """1-D signals: ``x`` float32 (n_split, 1, length), ``y`` int64 in 0..9; split 60/20/20 by index."""
    _check_split(split)
    if length < 36:
        raise ValueError(f"length must be >= 36 (templates stretch to up to 35 points), got {length}")
    rng = np.random.default_rng([seed, 1729])
    y = rng.integers(0, 10, size=n)
    x = np.stack([_signal(rng, int(c), length) for c in y])[:, None]
    a, b = int(0.6 * n), int(0.8 * n)
    sl = {"train": slice(0, a), "val": slice(a, b), "test": slice(b, n)}[split]
    card = {"name": "signals", "source": "generated (MNIST-1D-style templates with padding, shift, scale, shear, noise)",
            "n_total": n, "shape": [1, length], "classes": 10, "split": "60/20/20 by index"}
    return Dataset("signals", split, x[sl], y[sl].astype(np.int64), card=card)


# ----------------------------------------------------------------------------- spurious backgrounds

def _background(rng: np.random.Generator, kind: int, size: int) -> np.ndarray:
    """kind 0 ("land"): warm, plain with a vertical gradient; kind 1 ("water"): cool, with horizontal stripes."""
    yy = np.linspace(0, 1, size)[:, None, None]
    if kind == 0:
        base = np.array([rng.uniform(150, 210), rng.uniform(120, 170), rng.uniform(60, 100)])
        img = base * (0.85 + 0.3 * yy) * np.ones((size, size, 1))
    else:
        base = np.array([rng.uniform(40, 90), rng.uniform(100, 150), rng.uniform(160, 220)])
        period = rng.uniform(4, 8)
        stripes = 0.85 + 0.15 * np.sin(2 * np.pi * np.arange(size) / period + rng.uniform(0, 6))[:, None, None]
        img = base * stripes * np.ones((size, size, 1))
    return np.clip(img, 0, 255)


def spurious_images(
    split: str = "train",
    n: int = 1000,
    size: int = 32,
    correlation: float = 0.95,
    seed: int = 0,
) -> Dataset:
    """Product images on a background that predicts the label in training only (see the module docstring).

    Returns ``x`` float32 (n, 3, size, size) in [0, 1], ``y`` the group label (0/1),
    ``groups`` = 2 * label + background, and ``attrs`` with each image's category index,
    product id, background kind, main colour and pattern.
    """
    _check_split(split)
    if not 0.0 <= correlation <= 1.0:
        raise ValueError(f"correlation is a probability, got {correlation}")
    from icmlgym.corpora.products import CATEGORIES, ProductCatalog

    catalog = ProductCatalog(n_products=800, seed=seed)
    offset = {"train": 0, "val": 1, "test": 2}[split]
    rng = np.random.default_rng([seed, offset, 4242])
    # products are disjoint across splits: product i belongs to split i % 3
    ids = np.array([i for i in range(len(catalog)) if i % 3 == offset])
    pick = rng.choice(ids, size=n, replace=True)
    cats = pick % len(CATEGORIES)
    y = (cats >= len(CATEGORIES) // 2).astype(np.int64)
    if split == "train":
        agree = rng.random(n) < correlation
        bg = np.where(agree, y, 1 - y)
    else:  # balanced groups
        bg = np.tile([0, 1], n // 2 + 1)[:n]
        rng.shuffle(bg)
    xs = np.empty((n, 3, size, size), dtype=np.float32)
    for k, (pid, b) in enumerate(zip(pick, bg)):
        img = catalog.render(int(pid), max(16, size))
        a = img.obj[..., 3:4].astype(np.float32) / 255.0
        comp = img.obj[..., :3].astype(np.float32) * a + _background(rng, int(b), img.size) * (1 - a)
        xs[k] = (comp / 255.0).transpose(2, 0, 1)[:, :size, :size]
    attrs = {
        "category": cats.astype(np.int64),
        "product": pick.astype(np.int64),
        "background": bg.astype(np.int64),
        "pattern": np.array([catalog.product(int(p)).params["pattern"] for p in pick]),
        "main_colour": np.array([catalog.product(int(p)).params["main"] for p in pick], dtype=np.int64),
    }
    card = {"name": "spurious-images", "source": "generated product catalogue (icmlgym.corpora.products)",
            "label": "category group: categories 0-3 vs 4-7", "background": "0 land (warm, plain), 1 water (cool, striped)",
            "train_correlation": correlation, "groups": "2 * label + background; val/test balanced",
            "shape": [3, size, size], "products": "disjoint across splits (product id mod 3)"}
    return Dataset("spurious-images", split, xs, y, groups=(2 * y + bg).astype(np.int64), attrs=attrs, card=card)


__all__ = ["Dataset", "digits", "signals", "spurious_images"]
