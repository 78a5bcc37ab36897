"""Interpretable image features: the coordinates of the synthetic chooser's visual utility.

Features are computed from the RGB pixels only (never from generation
parameters), on a copy resized to ``analysis_size`` (64 px by default) so that
the same photo gives the same features at any resolution, as a VLM's own
preprocessing would. All lie roughly in [0, 1].

==================  ===========================================================
feature             definition
==================  ===========================================================
brightness          mean luminance
contrast            standard deviation of luminance (RMS contrast)
colourfulness       Hasler & Suesstrunk (2003) colourfulness / 100
clutter             fraction of background pixels with a strong luminance edge
centring            1 - distance of the object's centroid from the centre (normalised)
bg_uniformity       1 - 3 x the mean per-channel std of the border pixels (clipped)
object_scale        fraction of the frame covered by the object
sharpness           mean absolute Laplacian of luminance x 4 (clipped)
warmth              mean of (R - B), shifted to [0, 1]
==================  ===========================================================

The object is found as the pixels that differ from the median border colour by
more than 0.12 in some channel (the photo's backdrop is assumed to reach the border).
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

import numpy as np
from PIL import Image

FEATURES: tuple[str, ...] = (
    "brightness",
    "contrast",
    "colourfulness",
    "clutter",
    "centring",
    "bg_uniformity",
    "object_scale",
    "sharpness",
    "warmth",
)
# what a human would call each feature when naming the themes that drive choices
THEMES: dict[str, str] = {
    "brightness": "bright, well-lit photo",
    "contrast": "punchy contrast",
    "colourfulness": "vivid colour",
    "clutter": "busy, cluttered scene",
    "centring": "product centred in frame",
    "bg_uniformity": "clean uniform backdrop",
    "object_scale": "product fills the frame",
    "sharpness": "crisp detail",
    "warmth": "warm colour cast",
}
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def extract_features(rgb: np.ndarray, analysis_size: int = 64) -> np.ndarray:
    """The :data:`FEATURES` of one image as a float64 vector.

    Args:
        rgb: ``(H, W, 3)`` uint8 image.
        analysis_size: side of the square copy the features are computed on.

    Raises:
        ValueError: not an (H, W, 3) uint8 array.
    """
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got shape {rgb.shape} dtype {rgb.dtype}")
    if rgb.shape[0] != analysis_size or rgb.shape[1] != analysis_size:
        rgb = np.asarray(Image.fromarray(rgb).resize((analysis_size, analysis_size), Image.BILINEAR))
    x = rgb.astype(np.float32) / 255.0
    S = analysis_size
    lum = x @ _LUMA
    r, g, b = x[..., 0], x[..., 1], x[..., 2]
    rg = r - g
    yb = 0.5 * (r + g) - b
    colourfulness = (np.hypot(rg.std(), yb.std()) + 0.3 * np.hypot(rg.mean(), yb.mean())) * 255.0 / 100.0

    k = max(1, int(round(S * 0.06)))
    border = np.concatenate([x[:k].reshape(-1, 3), x[-k:].reshape(-1, 3), x[:, :k].reshape(-1, 3), x[:, -k:].reshape(-1, 3)])
    bgc = np.median(border, axis=0)
    bg_uniformity = float(np.clip(1.0 - 3.0 * border.std(axis=0).mean(), 0.0, 1.0))
    mask = np.abs(x - bgc).max(axis=2) > 0.12
    object_scale = float(mask.mean())
    if mask.any():
        ys, xs = np.nonzero(mask)
        c = (S - 1) / 2
        dist = np.hypot(ys.mean() - c, xs.mean() - c) / (c * np.sqrt(2))
        centring = float(1.0 - dist)
    else:
        centring = 0.0

    gy = np.zeros_like(lum)
    gx = np.zeros_like(lum)
    gy[1:-1] = lum[2:] - lum[:-2]
    gx[:, 1:-1] = lum[:, 2:] - lum[:, :-2]
    edges = np.hypot(gx, gy) > 0.12
    bgmask = ~mask
    clutter = float(edges[bgmask].mean()) if bgmask.any() else 0.0
    lap = np.abs(4 * lum[1:-1, 1:-1] - lum[:-2, 1:-1] - lum[2:, 1:-1] - lum[1:-1, :-2] - lum[1:-1, 2:])
    sharpness = float(np.clip(lap.mean() * 4.0, 0.0, 1.0))
    warmth = float((r - b).mean() * 0.5 + 0.5)
    return np.array(
        [lum.mean(), lum.std(), colourfulness, clutter, centring, bg_uniformity, object_scale, sharpness, warmth],
        dtype=np.float64,
    )


_STATS_FILE = Path(__file__).with_name("feature_stats.json")
_DEFAULT_STATS = (160, 0, 64)


@lru_cache(maxsize=8)
def reference_stats(n_images: int = 160, seed: int = 0, analysis_size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Mean and std of each feature over catalogue photos with random edits (the z-score reference).

    The synthetic chooser scores z-scored features, so a weight of 1 means "one
    standard deviation of this feature across typical edited product photos is
    worth one unit of utility". The default arguments read ``feature_stats.json``,
    the stored result of :func:`compute_reference_stats` with those arguments (a test
    recomputes it and checks they agree; recomputing costs about 0.4 s per process);
    other arguments compute it.
    """
    if (n_images, seed, analysis_size) == _DEFAULT_STATS and _STATS_FILE.is_file():
        data = json.loads(_STATS_FILE.read_text())
        if data.get("features") == list(FEATURES):
            return np.array(data["mean"]), np.array(data["std"])
    return compute_reference_stats(n_images, seed, analysis_size)


def compute_reference_stats(n_images: int = 160, seed: int = 0, analysis_size: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Compute the feature reference statistics (see :func:`reference_stats`)."""
    from icmlgym.envs.arena.editors import EDITS, apply_edits
    from icmlgym.envs.arena.images import ProductCatalog

    rng = np.random.default_rng(seed)
    cat = ProductCatalog(400, seed=seed)
    feats = []
    for _ in range(n_images):
        img = cat.render(int(rng.integers(len(cat))), analysis_size)
        theta = rng.uniform(-1, 1, len(EDITS)) * (rng.random(len(EDITS)) < 0.5)
        feats.append(extract_features(apply_edits(img, theta), analysis_size))
    f = np.array(feats)
    return f.mean(axis=0), np.maximum(f.std(axis=0), 1e-3)


def write_reference_stats(path: str | Path = _STATS_FILE) -> None:
    """Recompute the default reference statistics and store them (run after changing features or edits)."""
    mu, sd = compute_reference_stats(*_DEFAULT_STATS)
    Path(path).write_text(json.dumps({"features": list(FEATURES), "mean": mu.tolist(), "std": sd.tolist(), "args": _DEFAULT_STATS}, indent=1) + "\n")
