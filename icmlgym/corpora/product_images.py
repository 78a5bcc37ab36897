"""Generated product images as fine-grained classes (object x colour x material), drawn with numpy.

A class is one combination of an object (mug, bottle, lamp, ...), a colour (red, blue,
...) and a material (matte, glossy, metal, wood, fabric): with 4 objects, 4 colours and 3
materials there are 48 classes that differ in one attribute from their neighbours, so
telling them apart needs shape, hue and texture at once. Each image is small (16x16 RGB
by default) and drawn by vectorised numpy code from a seed: nothing is downloaded and
the same arguments give the same arrays bit for bit.

Usage::

    from icmlgym.corpora.product_images import product_images, product_classes

    train = product_images("train", per_class=8)          # 48 classes x 8 images, (384, 3, 16, 16)
    test = product_images("test", per_class=20)
    classes = product_classes()                           # names "red matte mug", attribute table
    wb = product_images("train", spurious=0.95)           # Waterbirds-like: background follows the group
    wb_test = product_images("test", spurious=0.95)       # ... balanced over (group, background) at test

:func:`product_images` returns an :class:`icmlgym.corpora.vision.Dataset`:

- ``x``: float32 ``(n, 3, size, size)`` in [0, 1]; ``y``: int64 class index
  ``(object * n_colours + colour) * n_materials + material`` (:func:`class_index`);
- exactly ``per_class`` images of every class in every split, in a seeded random order;
- ``attrs``: int64 arrays ``object``, ``colour``, ``material`` (indices into
  :data:`OBJECTS`, :data:`COLOURS`, :data:`MATERIALS`), ``group`` (the class group, below)
  and ``background`` (0 plain, 1 land, 2 water);
- ``groups``: with ``spurious`` set, ``2 * group + (background - 1)`` (the four
  Waterbirds groups: 0 group 0 on land, 1 group 0 on water, 2 group 1 on land,
  3 group 1 on water); ``None`` otherwise;
- ``card``: the arguments, the class names, the attribute vocabularies and the
  per-class attribute table (what an oracle "attribute signature" needs).

Splits: ``train``, ``val`` and ``test`` are independent draws (different random
generators) of the same classes; a split's images depend on ``(seed, split, the class
counts, per_class, size, spurious, group_by)`` only.

Per-image variation (within a class): position (+-12% of the image), scale (0.75-1.0),
brightness and a per-channel colour jitter, the light direction (shading, where the
gloss highlight falls), the phase of the wood grain and metal bands, the background's
grey level and tint, and pixel noise (s.d. 0.02).

Spurious background (``spurious=p``, a Waterbirds-like split): each class belongs to a
group, 0 or 1, by its ``group_by`` attribute (``object`` by default: the first half of
the objects in use is group 0, the second half group 1). Group 0's "own" background is
land (warm, plain gradient), group 1's water (cool, horizontal stripes). In the train
split an image gets its group's background with probability ``p`` and the other one
otherwise; in ``val`` and ``test`` every class has half its images on each background
(balanced groups; ``per_class`` odd gives one more on the group's own background), so
worst-group accuracy measures reliance on the background.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icmlgym.corpora.vision import SPLITS, Dataset

OBJECTS: tuple[str, ...] = ("mug", "bottle", "lamp", "vase", "shoe", "bag", "watch", "chair")
COLOURS: tuple[str, ...] = ("red", "blue", "green", "yellow", "purple", "orange", "white", "black")
MATERIALS: tuple[str, ...] = ("matte", "glossy", "metal", "wood", "fabric")
BACKGROUNDS: tuple[str, ...] = ("plain", "land", "water")
ATTRIBUTES: tuple[str, ...] = ("object", "colour", "material")

_RGB: dict[str, tuple[float, float, float]] = {
    "red": (0.85, 0.14, 0.14), "blue": (0.14, 0.30, 0.86), "green": (0.14, 0.64, 0.20),
    "yellow": (0.93, 0.82, 0.14), "purple": (0.55, 0.20, 0.72), "orange": (0.96, 0.50, 0.10),
    "white": (0.93, 0.93, 0.90), "black": (0.10, 0.10, 0.12),
}
_SUPERSAMPLE = 2  # each pixel averages 2x2 sub-pixels (anti-aliased edges)


@dataclass(frozen=True)
class ProductClasses:
    """The classes of one configuration: names and attribute indices, in class-index order.

    Attributes:
        objects, colours, materials: the attribute values in use (prefixes of
            :data:`OBJECTS`, :data:`COLOURS`, :data:`MATERIALS`).
        names: ``"<colour> <material> <object>"`` per class, e.g. ``"red glossy mug"``.
        attributes: int64 ``(n_classes, 3)``: object, colour and material index of each class.
        group_by: the attribute that sets the class group.
        groups: int64 ``(n_classes,)``: 0 for the first half of the ``group_by`` values, else 1.
    """

    objects: tuple[str, ...]
    colours: tuple[str, ...]
    materials: tuple[str, ...]
    names: tuple[str, ...]
    attributes: np.ndarray = field(repr=False)
    group_by: str = "object"
    groups: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64), repr=False)

    def __len__(self) -> int:
        return len(self.names)


def _check_counts(n_objects: int, n_colours: int, n_materials: int) -> None:
    for name, v, vocab in (("n_objects", n_objects, OBJECTS), ("n_colours", n_colours, COLOURS), ("n_materials", n_materials, MATERIALS)):
        if not isinstance(v, (int, np.integer)) or not 1 <= int(v) <= len(vocab):
            raise ValueError(f"{name} must be an integer in 1..{len(vocab)} (values: {', '.join(vocab)}), got {v!r}")


def class_index(obj: np.ndarray | int, colour: np.ndarray | int, material: np.ndarray | int, n_colours: int = 4, n_materials: int = 3):
    """The class index of an (object, colour, material) triple: ``(obj * n_colours + colour) * n_materials + material``."""
    return (np.asarray(obj) * n_colours + np.asarray(colour)) * n_materials + np.asarray(material)


def product_classes(n_objects: int = 4, n_colours: int = 4, n_materials: int = 3, group_by: str = "object") -> ProductClasses:
    """The classes of a configuration: the first ``n_objects`` objects, ``n_colours`` colours and ``n_materials`` materials."""
    _check_counts(n_objects, n_colours, n_materials)
    if group_by not in ATTRIBUTES:
        raise ValueError(f"group_by must be one of {ATTRIBUTES}, got {group_by!r}")
    objs, cols, mats = OBJECTS[:n_objects], COLOURS[:n_colours], MATERIALS[:n_materials]
    o, c, m = np.meshgrid(np.arange(n_objects), np.arange(n_colours), np.arange(n_materials), indexing="ij")
    attrs = np.stack([o.ravel(), c.ravel(), m.ravel()], axis=1).astype(np.int64)
    names = tuple(f"{cols[ci]} {mats[mi]} {objs[oi]}" for oi, ci, mi in attrs)
    k = ATTRIBUTES.index(group_by)
    n_values = (n_objects, n_colours, n_materials)[k]
    groups = (attrs[:, k] >= (n_values + 1) // 2).astype(np.int64) if n_values > 1 else np.zeros(len(attrs), np.int64)
    return ProductClasses(objs, cols, mats, names, attrs, group_by, groups)


# ----------------------------------------------------------------------------- shapes

def _ring(u, v, cu, cv, r0, r1):
    d = np.hypot(u - cu, v - cv)
    return (d > r0) & (d < r1)


def _box(u, v, u0, u1, v0, v1):
    return (u > u0) & (u < u1) & (v > v0) & (v < v1)


def _shape(name: str, u: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The silhouette of ``name`` in object coordinates (u right, v down, both about -1..1)."""
    if name == "mug":
        return _box(u, v, -0.6, 0.3, -0.55, 0.7) | (_ring(u, v, 0.32, 0.08, 0.14, 0.32) & (u > 0.3))
    if name == "bottle":
        body = _box(u, v, -0.36, 0.36, 0.0, 0.8) | (np.hypot(u / 0.36, (v - 0.0) / 0.3) < 1.0)
        return body | _box(u, v, -0.13, 0.13, -0.8, 0.0)
    if name == "lamp":
        shade = (v > -0.75) & (v < -0.1) & (np.abs(u) < 0.28 + 0.5 * (v + 0.75))
        return shade | _box(u, v, -0.07, 0.07, -0.1, 0.66) | _box(u, v, -0.45, 0.45, 0.62, 0.8)
    if name == "vase":
        half = 0.14 + 0.46 * np.exp(-(((v - 0.3) / 0.38) ** 2))
        return (np.abs(u) < half) & (v > -0.8) & (v < 0.8)
    if name == "shoe":
        return _box(u, v, -0.75, -0.1, -0.5, 0.62) | ((((u - 0.02) / 0.78) ** 2 + ((v - 0.38) / 0.3) ** 2) < 1.0) & (v < 0.7)
    if name == "bag":
        return _box(u, v, -0.62, 0.62, -0.2, 0.72) | (_ring(u, v, 0.0, -0.2, 0.24, 0.4) & (v < -0.2))
    if name == "watch":
        return (np.hypot(u, v) < 0.45) | _box(u, v, -0.2, 0.2, -0.92, 0.92)
    if name == "chair":
        return (_box(u, v, -0.55, -0.35, -0.85, 0.1) | _box(u, v, -0.55, 0.55, -0.02, 0.16)
                | _box(u, v, -0.55, -0.4, 0.1, 0.82) | _box(u, v, 0.4, 0.55, 0.1, 0.82))
    raise ValueError(f"unknown object {name!r}; objects: {OBJECTS}")


# ----------------------------------------------------------------------------- materials

def _surface(material: str, colour: np.ndarray, u, v, light, phase, px, py) -> np.ndarray:
    """RGB ``(n, H, W, 3)`` of a surface of ``material`` and per-image ``colour`` ``(n, 3)``."""
    c = colour[:, None, None, :]
    lx, ly = light[:, 0, None, None], light[:, 1, None, None]
    grad = (u * lx + v * ly)[..., None]  # -1..1 across the object, toward the light
    ph = phase[:, None, None, None]
    if material == "matte":
        return c * (0.82 + 0.15 * grad)
    if material == "glossy":
        spot = np.exp(-(((u + 0.35 * lx) ** 2 + (v + 0.35 * ly) ** 2) / 0.03))[..., None]
        return c * (0.75 + 0.25 * grad) + (1.0 - c * 0.6) * 0.85 * spot
    if material == "metal":
        grey = c.mean(-1, keepdims=True)
        bands = 0.6 + 0.4 * np.cos(5.0 * u[..., None] + ph)
        return (0.45 * c + 0.55 * grey) * bands + 0.12
    if material == "wood":
        grain = np.sin(13.0 * v[..., None] + 2.0 * np.sin(3.0 * u[..., None] + ph) + ph)
        return c * np.where(grain > 0.35, 0.55, 0.95)
    if material == "fabric":
        weave = ((px + py) % 2)[None, :, :, None]  # a one-pixel checker on the output grid
        return c * (0.72 + 0.28 * weave)
    raise ValueError(f"unknown material {material!r}; materials: {MATERIALS}")


# ----------------------------------------------------------------------------- backgrounds

def _backgrounds(kind: np.ndarray, rng: np.random.Generator, S: int, py: np.ndarray) -> np.ndarray:
    n = len(kind)
    t = (py / max(S - 1, 1))[None, :, :, None]  # 0 at the top, 1 at the bottom
    grey = rng.uniform(0.45, 0.72, n)[:, None] + rng.normal(0, 0.02, (n, 3))
    land = np.stack([rng.uniform(0.62, 0.80, n), rng.uniform(0.48, 0.62, n), rng.uniform(0.22, 0.36, n)], 1)
    water = np.stack([rng.uniform(0.14, 0.32, n), rng.uniform(0.40, 0.56, n), rng.uniform(0.66, 0.84, n)], 1)
    period = rng.uniform(3.0, 5.0, n)[:, None, None, None]
    shift = rng.uniform(0, 2 * np.pi, n)[:, None, None, None]
    plain = grey[:, None, None, :] * (0.92 + 0.12 * t)
    warm = land[:, None, None, :] * (0.85 + 0.25 * t)
    cool = water[:, None, None, :] * (0.8 + 0.2 * np.sin(2 * np.pi * py[None, :, :, None] / period + shift))
    k = kind[:, None, None, None]
    return np.where(k == 0, plain, np.where(k == 1, warm, cool))


# ----------------------------------------------------------------------------- the data set

def render(obj: np.ndarray, colour: np.ndarray, material: np.ndarray, background: np.ndarray,
           rng: np.random.Generator, size: int = 16) -> np.ndarray:
    """Draw one image per row of the index arrays: float32 ``(n, 3, size, size)`` in [0, 1].

    ``obj``, ``colour``, ``material`` index :data:`OBJECTS`, :data:`COLOURS`, :data:`MATERIALS`;
    ``background`` indexes :data:`BACKGROUNDS`. All random variation comes from ``rng``.
    """
    obj, colour, material, background = (np.asarray(a, dtype=np.int64) for a in (obj, colour, material, background))
    n = len(obj)
    if not (len(colour) == len(material) == len(background) == n):
        raise ValueError(f"obj, colour, material and background must have one entry per image, got lengths "
                         f"{n}, {len(colour)}, {len(material)}, {len(background)}")
    for name, a, vocab in (("obj", obj, OBJECTS), ("colour", colour, COLOURS), ("material", material, MATERIALS),
                           ("background", background, BACKGROUNDS)):
        if n and (a.min() < 0 or a.max() >= len(vocab)):
            raise ValueError(f"{name} indices must be in 0..{len(vocab) - 1}, got range {a.min()}..{a.max()}")
    S, ss = int(size), _SUPERSAMPLE
    G = S * ss
    # sub-pixel centres in image coordinates -1..1, and the output pixel each belongs to
    g = (np.arange(G) + 0.5) / G * 2.0 - 1.0
    gy, gx = np.meshgrid(g, g, indexing="ij")
    py, px = np.meshgrid(np.arange(G) // ss, np.arange(G) // ss, indexing="ij")
    # per-image variation (drawn in a fixed order: the stream defines the data set)
    centre = rng.uniform(-0.12, 0.12, (n, 2))
    scale = rng.uniform(0.75, 1.0, n)
    angle = rng.uniform(0, 2 * np.pi, n)
    light = np.stack([np.cos(angle), np.sin(angle)], 1)
    phase = rng.uniform(0, 2 * np.pi, n)
    base = np.array([_RGB[c] for c in COLOURS])[colour]
    tint = np.clip(base * rng.uniform(0.85, 1.1, (n, 1)) + rng.normal(0, 0.03, (n, 3)), 0, 1)
    u = (gx[None] - centre[:, 0, None, None]) / (0.92 * scale[:, None, None])
    v = (gy[None] - centre[:, 1, None, None]) / (0.92 * scale[:, None, None])
    mask = np.zeros((n, G, G), dtype=bool)
    for k, name in enumerate(OBJECTS):
        sel = obj == k
        if sel.any():
            mask[sel] = _shape(name, u[sel], v[sel])
    surf = np.zeros((n, G, G, 3))
    for k, name in enumerate(MATERIALS):
        sel = material == k
        if sel.any():
            surf[sel] = _surface(name, tint[sel], u[sel], v[sel], light[sel], phase[sel], px, py)
    bg = _backgrounds(background, rng, S, py)
    img = np.where(mask[..., None], np.clip(surf, 0, 1), bg)
    img = img.reshape(n, S, ss, S, ss, 3).mean((2, 4))
    img = img + rng.normal(0, 0.02, img.shape)
    return np.clip(img, 0, 1).astype(np.float32).transpose(0, 3, 1, 2).copy()


def product_images(
    split: str = "train",
    *,
    n_objects: int = 4,
    n_colours: int = 4,
    n_materials: int = 3,
    per_class: int = 10,
    size: int = 16,
    seed: int = 0,
    spurious: float | None = None,
    group_by: str = "object",
) -> Dataset:
    """One split of the generated product images (see the module docstring for every field).

    Args:
        split: ``train``, ``val`` or ``test``.
        n_objects, n_colours, n_materials: how many values of each attribute (prefixes of
            :data:`OBJECTS`, :data:`COLOURS`, :data:`MATERIALS`); classes = their product.
        per_class: images per class in this split (exactly; >= 1).
        size: image height and width in pixels (8..64).
        seed: the data set's seed (every split derives its own generator from it).
        spurious: ``None`` for a plain grey background; a probability ``p`` in [0, 1] for the
            Waterbirds-like background (train: the group's own background with probability
            ``p``; val/test: balanced).
        group_by: the attribute that sets each class's group (``object``, ``colour``, ``material``).
    """
    if split not in SPLITS:
        raise ValueError(f"split must be one of {SPLITS}, got {split!r}")
    classes = product_classes(n_objects, n_colours, n_materials, group_by)
    if not isinstance(per_class, (int, np.integer)) or per_class < 1:
        raise ValueError(f"per_class must be an integer >= 1, got {per_class!r}")
    if not isinstance(size, (int, np.integer)) or not 8 <= size <= 64:
        raise ValueError(f"size must be an integer in 8..64 (pixels), got {size!r}")
    if spurious is not None and not (isinstance(spurious, (int, float)) and 0.0 <= float(spurious) <= 1.0):
        raise ValueError(f"spurious must be None or a probability in [0, 1], got {spurious!r}")
    if spurious is not None and len(set(classes.groups.tolist())) < 2:
        raise ValueError(f"spurious backgrounds need two class groups: group_by={group_by!r} has a single value in use")
    rng = np.random.default_rng([int(seed), SPLITS.index(split), 0x5EED])
    C = len(classes)
    y = np.repeat(np.arange(C), int(per_class))
    rng.shuffle(y)
    attrs = classes.attributes[y]
    group = classes.groups[y]
    if spurious is None:
        background = np.zeros(len(y), np.int64)
    elif split == "train":
        own = rng.random(len(y)) < float(spurious)
        background = np.where(own, group, 1 - group) + 1
    else:  # balanced within every class: alternate own / other background over the class's images
        rank = np.zeros(len(y), np.int64)
        for c in range(C):
            idx = np.flatnonzero(y == c)
            rank[idx] = np.arange(len(idx))
        background = np.where(rank % 2 == 0, group, 1 - group) + 1
    x = render(attrs[:, 0], attrs[:, 1], attrs[:, 2], background, rng, int(size))
    card: dict[str, Any] = {
        "name": "product-images", "source": "generated (icmlgym.corpora.product_images, numpy renderer)",
        "seed": int(seed), "shape": [3, int(size), int(size)], "classes": C, "per_class": int(per_class),
        "class_names": list(classes.names), "objects": list(classes.objects), "colours": list(classes.colours),
        "materials": list(classes.materials), "class_attributes": classes.attributes.tolist(),
        "group_by": group_by, "class_groups": classes.groups.tolist(), "backgrounds": list(BACKGROUNDS),
        "spurious": None if spurious is None else float(spurious),
        "split": "independent draws per split, exactly per_class images of every class",
    }
    out_attrs = {"object": attrs[:, 0].copy(), "colour": attrs[:, 1].copy(), "material": attrs[:, 2].copy(),
                 "group": group.astype(np.int64), "background": background.astype(np.int64)}
    groups = (2 * group + background - 1).astype(np.int64) if spurious is not None else None
    return Dataset("product-images", split, x, y.astype(np.int64), groups=groups, attrs=out_attrs, card=card)


__all__ = ["ATTRIBUTES", "BACKGROUNDS", "COLOURS", "MATERIALS", "OBJECTS", "ProductClasses", "class_index",
           "product_classes", "product_images", "render"]
