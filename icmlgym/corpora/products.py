"""Product images: an embedded generated catalogue and a folder loader (used by the choice arenas and the image corpora).

Every product is drawn by our own code (PIL primitives, numpy lighting), so
nothing is downloaded: a product id and a catalogue seed fix its category,
shape, colours, pattern and the scene it is photographed in (background,
lighting, shadow, placement). An image is kept as two layers, a background and
an RGBA object, so that the editors in :mod:`icmlgym.envs.arena.editors` can
change the background or move the object without inpainting.

User images load from a folder with :func:`load_image_folder`; their object
layer is estimated from the distance to the median border colour (a product
shot on a plain backdrop separates cleanly; a busy photo gives a rough mask).
"""

from __future__ import annotations

import colorsys
import hashlib
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

CATEGORIES: tuple[str, ...] = (
    "mug",
    "bottle",
    "sneaker",
    "lamp",
    "backpack",
    "watch",
    "chair",
    "headphones",
)
IMAGE_SUFFIXES: tuple[str, ...] = (".png", ".jpg", ".jpeg", ".bmp", ".webp", ".gif", ".tif", ".tiff")


@dataclass
class ProductImage:
    """An image as a background layer and an RGBA object layer (uint8, same height and width).

    Attributes:
        background: ``(H, W, 3)`` uint8, the scene without the object.
        obj: ``(H, W, 4)`` uint8, the object with its alpha mask.
        name: a label (product id and category, or the file name).
        category: the product category ("" when unknown).
        meta: generation parameters or the source path.
    """

    background: np.ndarray
    obj: np.ndarray
    name: str = ""
    category: str = ""
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.background.ndim != 3 or self.background.shape[2] != 3:
            raise ValueError(f"background must be (H, W, 3), got {self.background.shape}")
        if self.obj.shape != self.background.shape[:2] + (4,):
            raise ValueError(f"object layer must be (H, W, 4) matching the background, got {self.obj.shape}")

    @property
    def size(self) -> int:
        return int(self.background.shape[0])

    def composite(self) -> np.ndarray:
        """The flattened RGB image, uint8 ``(H, W, 3)``."""
        a = self.obj[..., 3:4].astype(np.float32) / 255.0
        out = self.obj[..., :3].astype(np.float32) * a + self.background.astype(np.float32) * (1.0 - a)
        return np.clip(out + 0.5, 0, 255).astype(np.uint8)


def image_id(rgb: np.ndarray) -> str:
    """A content hash of an image (shape and pixels): how query logs name images."""
    h = hashlib.sha1(str(rgb.shape).encode())
    h.update(np.ascontiguousarray(rgb).tobytes())
    return h.hexdigest()[:16]


# ----------------------------------------------------------------------------- drawing


def _rgb(h: float, s: float, v: float) -> tuple[int, int, int]:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, min(max(s, 0.0), 1.0), min(max(v, 0.0), 1.0))
    return int(r * 255), int(g * 255), int(b * 255)


def _darker(c: tuple[int, int, int], f: float = 0.7) -> tuple[int, int, int]:
    return tuple(int(x * f) for x in c)  # type: ignore[return-value]


def _pattern(draw: ImageDraw.ImageDraw, box: tuple[float, float, float, float], kind: str, colour, scale: float) -> None:
    """Stripes or dots inside a box (drawn on the object layer, clipped later by the shape mask)."""
    x0, y0, x1, y1 = box
    if kind == "stripes":
        step = max(3.0, (y1 - y0) / 5)
        y = y0 + step / 2
        while y < y1:
            draw.rectangle([x0, y, x1, y + step * 0.35], fill=colour + (255,))
            y += step
    elif kind == "dots":
        r = max(1.5, scale * 0.04)
        step = r * 4
        y = y0 + step / 2
        while y < y1:
            x = x0 + step / 2
            while x < x1:
                draw.ellipse([x - r, y - r, x + r, y + r], fill=colour + (255,))
                x += step
            y += step


def _draw_product(category: str, S: int, box: tuple[float, float, float, float], p: dict[str, Any]) -> Image.Image:
    """Draw one product into an RGBA layer of size S x S inside ``box``."""
    shape = Image.new("L", (S, S), 0)
    body = Image.new("RGBA", (S, S), (0, 0, 0, 0))
    ms = ImageDraw.Draw(shape)
    d = ImageDraw.Draw(body)
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    main, acc = p["main"], p["accent"]
    dark = _darker(main)
    lw = max(1, int(S * 0.02))
    a = p["aspect"]

    def fill_shape(kind: str, xy, colour, **kw) -> None:
        getattr(ms, kind)(xy, fill=255, **kw)
        getattr(d, kind)(xy, fill=colour + (255,), **kw)

    if category == "mug":
        bw = w * (0.55 + 0.15 * a)
        bx0 = x0 + (w - bw) * 0.35
        fill_shape("rounded_rectangle", [bx0, y0 + h * 0.15, bx0 + bw, y1], main, radius=w * 0.06)
        hx = bx0 + bw
        ms.ellipse([hx - w * 0.12, y0 + h * 0.3, hx + w * 0.25, y0 + h * 0.75], outline=255, width=int(w * 0.08) + 1)
        d.ellipse([hx - w * 0.12, y0 + h * 0.3, hx + w * 0.25, y0 + h * 0.75], outline=dark + (255,), width=int(w * 0.08) + 1)
        fill_shape("ellipse", [bx0, y0 + h * 0.1, bx0 + bw, y0 + h * 0.22], _darker(main, 0.5))
        _pattern(d, (bx0, y0 + h * 0.3, bx0 + bw, y1 - h * 0.1), p["pattern"], acc, S)
    elif category == "bottle":
        bw = w * (0.35 + 0.2 * a)
        cx = (x0 + x1) / 2
        fill_shape("rounded_rectangle", [cx - bw / 2, y0 + h * 0.35, cx + bw / 2, y1], main, radius=bw * 0.25)
        fill_shape("polygon", [(cx - bw / 2, y0 + h * 0.4), (cx - bw * 0.18, y0 + h * 0.18), (cx + bw * 0.18, y0 + h * 0.18), (cx + bw / 2, y0 + h * 0.4)], main)
        fill_shape("rectangle", [cx - bw * 0.2, y0, cx + bw * 0.2, y0 + h * 0.2], acc)
        fill_shape("rectangle", [cx - bw / 2, y0 + h * 0.55, cx + bw / 2, y0 + h * 0.78], acc)
        _pattern(d, (cx - bw / 2, y0 + h * 0.55, cx + bw / 2, y0 + h * 0.78), p["pattern"], main, S)
    elif category == "sneaker":
        top = y0 + h * (0.3 + 0.15 * a)
        fill_shape("polygon", [(x0, y1 - h * 0.15), (x0 + w * 0.05, top + h * 0.2), (x0 + w * 0.45, top), (x0 + w * 0.6, top + h * 0.25), (x1, y1 - h * 0.3), (x1, y1 - h * 0.15)], main)
        fill_shape("rectangle", [x0, y1 - h * 0.17, x1, y1], (235, 235, 230))
        for k in range(4):
            lx = x0 + w * (0.38 + 0.06 * k)
            d.line([lx, top + h * 0.08 + k * h * 0.04, lx + w * 0.08, top + h * 0.12 + k * h * 0.04], fill=acc + (255,), width=lw)
        _pattern(d, (x0 + w * 0.6, top + h * 0.25, x1, y1 - h * 0.17), p["pattern"], acc, S)
    elif category == "lamp":
        cx = (x0 + x1) / 2
        sw = w * (0.6 + 0.3 * a)
        fill_shape("polygon", [(cx - sw * 0.3, y0), (cx + sw * 0.3, y0), (cx + sw / 2, y0 + h * 0.4), (cx - sw / 2, y0 + h * 0.4)], main)
        fill_shape("rectangle", [cx - w * 0.03, y0 + h * 0.4, cx + w * 0.03, y1 - h * 0.08], (90, 90, 95))
        fill_shape("ellipse", [cx - w * 0.25, y1 - h * 0.12, cx + w * 0.25, y1], acc)
        _pattern(d, (cx - sw / 2, y0, cx + sw / 2, y0 + h * 0.4), p["pattern"], acc, S)
    elif category == "backpack":
        fill_shape("rounded_rectangle", [x0 + w * 0.1, y0 + h * 0.12, x1 - w * 0.1, y1], main, radius=w * 0.2)
        ms.arc([x0 + w * 0.3, y0, x1 - w * 0.3, y0 + h * 0.3], 180, 360, fill=255, width=lw * 2)
        d.arc([x0 + w * 0.3, y0, x1 - w * 0.3, y0 + h * 0.3], 180, 360, fill=dark + (255,), width=lw * 2)
        fill_shape("rounded_rectangle", [x0 + w * 0.22, y0 + h * (0.55 + 0.1 * a), x1 - w * 0.22, y1 - h * 0.06], acc, radius=w * 0.08)
        _pattern(d, (x0 + w * 0.22, y0 + h * 0.6, x1 - w * 0.22, y1 - h * 0.06), p["pattern"], main, S)
    elif category == "watch":
        cx, cy = (x0 + x1) / 2, (y0 + y1) / 2
        fill_shape("rectangle", [cx - w * 0.15, y0, cx + w * 0.15, y1], acc)
        r = w * (0.28 + 0.1 * a)
        fill_shape("ellipse", [cx - r, cy - r, cx + r, cy + r], main)
        fill_shape("ellipse", [cx - r * 0.8, cy - r * 0.8, cx + r * 0.8, cy + r * 0.8], (245, 245, 240))
        d.line([cx, cy, cx + r * 0.5, cy - r * 0.3], fill=(20, 20, 20, 255), width=lw)
        d.line([cx, cy, cx - r * 0.1, cy - r * 0.65], fill=(20, 20, 20, 255), width=lw)
        _pattern(d, (cx - w * 0.15, y0, cx + w * 0.15, cy - r), p["pattern"], main, S)
    elif category == "chair":
        seat = y0 + h * (0.5 + 0.1 * a)
        fill_shape("rectangle", [x0 + w * 0.2, y0, x0 + w * 0.32, seat], main)
        fill_shape("rectangle", [x0 + w * 0.2, y0, x1 - w * 0.2, y0 + h * 0.3], main)
        fill_shape("rectangle", [x0 + w * 0.15, seat, x1 - w * 0.15, seat + h * 0.1], acc)
        for lx in (x0 + w * 0.18, x1 - w * 0.24):
            fill_shape("rectangle", [lx, seat + h * 0.1, lx + w * 0.06, y1], dark)
        _pattern(d, (x0 + w * 0.2, y0, x1 - w * 0.2, y0 + h * 0.3), p["pattern"], acc, S)
    elif category == "headphones":
        cx = (x0 + x1) / 2
        band = [x0 + w * 0.1, y0, x1 - w * 0.1, y0 + h * (1.1 + 0.2 * a)]
        ms.arc(band, 180, 360, fill=255, width=int(w * 0.08) + 1)
        d.arc(band, 180, 360, fill=dark + (255,), width=int(w * 0.08) + 1)
        mid = y0 + h * 0.55
        for ex in (x0 + w * 0.02, x1 - w * 0.3):
            fill_shape("rounded_rectangle", [ex, mid - h * 0.2, ex + w * 0.28, y1 - h * 0.05], main, radius=w * 0.08)
            fill_shape("ellipse", [ex + w * 0.06, mid - h * 0.1, ex + w * 0.22, y1 - h * 0.15], acc)
        del cx
    else:  # pragma: no cover - CATEGORIES is closed
        raise ValueError(f"unknown category {category!r}")
    # clip patterns to the shape and add an outline so the silhouette reads at small sizes
    alpha = shape
    body.putalpha(alpha)
    edge = alpha.filter(ImageFilter.FIND_EDGES)
    outline = Image.new("RGBA", (S, S), _darker(main, 0.45) + (255,))
    body.paste(outline, (0, 0), edge)
    return body


def _background(S: int, p: dict[str, Any], rng: np.random.Generator) -> np.ndarray:
    kind = p["bg_kind"]
    base = np.array(p["bg"], dtype=np.float32)
    if kind == "plain":
        bg = np.broadcast_to(base, (S, S, 3)).copy()
    elif kind == "gradient":
        t = np.linspace(0.0, 1.0, S, dtype=np.float32)[:, None, None]
        other = np.array(p["bg2"], dtype=np.float32)
        bg = np.broadcast_to(base * (1 - t) + other * t, (S, S, 3)).copy()
    else:  # clutter: a busy shelf of muted shapes
        img = Image.new("RGB", (S, S), tuple(int(c) for c in base))
        d = ImageDraw.Draw(img)
        for _ in range(int(rng.integers(10, 22))):
            c = _rgb(rng.random(), rng.uniform(0.2, 0.6), rng.uniform(0.3, 0.9))
            x, y = rng.uniform(0, S, 2)
            r = rng.uniform(0.05, 0.2) * S
            if rng.random() < 0.5:
                d.rectangle([x - r, y - r * 0.6, x + r, y + r * 0.6], fill=c)
            else:
                d.ellipse([x - r, y - r, x + r, y + r], fill=c)
        bg = np.asarray(img, dtype=np.float32)
    return bg


@dataclass(frozen=True)
class Product:
    """One catalogue product: its id, category and the parameters that draw it."""

    id: int
    category: str
    params: dict[str, Any]

    @property
    def name(self) -> str:
        return f"{self.category}-{self.id:04d}"


class ProductCatalog:
    """A deterministic catalogue of generated products over :data:`CATEGORIES`.

    Args:
        n_products: number of distinct products (at least ``len(CATEGORIES)``); product ``i``
            has category ``CATEGORIES[i % 8]``.
        seed: the catalogue seed; the same seed always gives the same products and scenes.

    Example:
        >>> cat = ProductCatalog(400, seed=0)
        >>> img = cat.render(17, size=64)   # a ProductImage
        >>> rgb = img.composite()           # (64, 64, 3) uint8
    """

    def __init__(self, n_products: int = 400, seed: int = 0) -> None:
        if int(n_products) < len(CATEGORIES):
            raise ValueError(f"n_products must be at least {len(CATEGORIES)} (one per category), got {n_products}")
        self.n_products = int(n_products)
        self.seed = int(seed)

    def __len__(self) -> int:
        return self.n_products

    def product(self, i: int) -> Product:
        if not 0 <= int(i) < self.n_products:
            raise IndexError(f"product id {i} outside the catalogue [0, {self.n_products})")
        rng = np.random.default_rng([self.seed, int(i)])
        hue = rng.random()
        p: dict[str, Any] = {
            "main": _rgb(hue, rng.uniform(0.25, 0.95), rng.uniform(0.3, 0.95)),
            "accent": _rgb(hue + rng.uniform(0.25, 0.75), rng.uniform(0.2, 0.9), rng.uniform(0.4, 1.0)),
            "aspect": float(rng.random()),
            "pattern": str(rng.choice(["plain", "plain", "stripes", "dots"])),
            "bg_kind": str(rng.choice(["plain", "gradient", "clutter"], p=[0.4, 0.35, 0.25])),
            "bg": _rgb(rng.random(), rng.uniform(0.0, 0.5), rng.uniform(0.45, 0.97)),
            "bg2": _rgb(rng.random(), rng.uniform(0.0, 0.5), rng.uniform(0.35, 0.97)),
            "scale": float(rng.uniform(0.45, 0.8)),
            "offset": (float(rng.uniform(-0.15, 0.15)), float(rng.uniform(-0.12, 0.12))),
            "light_angle": float(rng.uniform(0, 2 * np.pi)),
            "light_strength": float(rng.uniform(0.0, 0.5)),
            "exposure": float(rng.uniform(0.7, 1.15)),
            "shadow": float(rng.uniform(0.0, 0.6)),
            "scene_seed": int(rng.integers(2**31 - 1)),
        }
        return Product(int(i), CATEGORIES[int(i) % len(CATEGORIES)], p)

    def ids_in(self, category: str) -> list[int]:
        if category not in CATEGORIES:
            raise ValueError(f"unknown category {category!r}; categories: {CATEGORIES}")
        k = CATEGORIES.index(category)
        return list(range(k, self.n_products, len(CATEGORIES)))

    def render(self, i: int, size: int = 64) -> ProductImage:
        """The product's photo as a :class:`ProductImage` of ``size x size`` pixels (cached)."""
        if int(size) < 16:
            raise ValueError(f"size must be at least 16 pixels, got {size}")
        return _render_cached(self.seed, self.n_products, int(i), int(size))


@lru_cache(maxsize=4096)
def _render_cached(seed: int, n: int, i: int, size: int) -> ProductImage:
    prod = ProductCatalog(n, seed).product(i)
    p = prod.params
    ss = 2 if size <= 128 else 1  # supersample small images so edges are antialiased
    S = size * ss
    rng = np.random.default_rng(p["scene_seed"])
    bg = _background(S, p, rng)
    ext = p["scale"] * S
    cx = S / 2 + p["offset"][0] * S
    cy = S / 2 + p["offset"][1] * S
    box = (cx - ext / 2, cy - ext / 2, cx + ext / 2, cy + ext / 2)
    layer = _draw_product(prod.category, S, box, p)
    obj = np.asarray(layer, dtype=np.float32)
    # directional lighting: a linear ramp across the object along the light direction
    yy, xx = np.mgrid[0:S, 0:S].astype(np.float32) / S - 0.5
    ramp = np.cos(p["light_angle"]) * xx + np.sin(p["light_angle"]) * yy
    shade = 1.0 + p["light_strength"] * ramp * 1.6
    obj[..., :3] *= shade[..., None]
    # cast shadow: a blurred ellipse under the object
    if p["shadow"] > 0.02:
        sh = Image.new("L", (S, S), 0)
        ImageDraw.Draw(sh).ellipse([box[0], box[3] - ext * 0.08, box[2], box[3] + ext * 0.08], fill=255)
        sh = np.asarray(sh.filter(ImageFilter.GaussianBlur(S * 0.03)), dtype=np.float32) / 255.0
        bg *= (1.0 - p["shadow"] * sh)[..., None]
    bg *= p["exposure"]
    obj[..., :3] *= p["exposure"]
    bg_u8 = np.clip(bg, 0, 255).astype(np.uint8)
    obj_u8 = np.clip(obj, 0, 255).astype(np.uint8)
    if ss > 1:
        bg_u8 = np.asarray(Image.fromarray(bg_u8).resize((size, size), Image.BOX))
        obj_u8 = _downsample_rgba(obj_u8, size)
    img = ProductImage(bg_u8, obj_u8, name=prod.name, category=prod.category, meta={"product_id": i, **p})
    img.background.setflags(write=False)
    img.obj.setflags(write=False)
    return img


def _downsample_rgba(rgba: np.ndarray, size: int) -> np.ndarray:
    """Downsample with premultiplied alpha so edges do not darken."""
    a = rgba[..., 3:4].astype(np.float32) / 255.0
    pre = rgba[..., :3].astype(np.float32) * a
    pre_s = np.asarray(Image.fromarray(np.clip(pre, 0, 255).astype(np.uint8)).resize((size, size), Image.BOX), dtype=np.float32)
    a_s = np.asarray(Image.fromarray(rgba[..., 3]).resize((size, size), Image.BOX), dtype=np.float32)[..., None] / 255.0
    rgb = np.where(a_s > 1e-3, pre_s / np.maximum(a_s, 1e-3), 0.0)
    return np.concatenate([np.clip(rgb, 0, 255), a_s * 255.0], axis=2).astype(np.uint8)


# ----------------------------------------------------------------------------- user images


def layers_from_rgb(rgb: np.ndarray, threshold: float = 0.12, name: str = "", meta: dict[str, Any] | None = None) -> ProductImage:
    """Split a photo into background and object layers by distance to the median border colour.

    The object's alpha is 1 where any channel differs from the border colour by more than
    ``threshold`` (fraction of 255), softened by a small blur; the background layer is the
    border colour (a product shot on a plain backdrop separates cleanly).
    """
    rgb = np.asarray(rgb)
    if rgb.ndim != 3 or rgb.shape[2] != 3 or rgb.dtype != np.uint8:
        raise ValueError(f"expected an (H, W, 3) uint8 image, got shape {rgb.shape} dtype {rgb.dtype}")
    H, W = rgb.shape[:2]
    b = max(1, int(round(min(H, W) * 0.06)))
    border = np.concatenate([rgb[:b].reshape(-1, 3), rgb[-b:].reshape(-1, 3), rgb[:, :b].reshape(-1, 3), rgb[:, -b:].reshape(-1, 3)])
    bgc = np.median(border, axis=0)
    dist = np.abs(rgb.astype(np.float32) - bgc).max(axis=2) / 255.0
    mask = Image.fromarray(((dist > threshold) * 255).astype(np.uint8)).filter(ImageFilter.GaussianBlur(0.7))
    obj = np.concatenate([rgb, np.asarray(mask)[..., None]], axis=2)
    bg = np.broadcast_to(bgc.astype(np.uint8), rgb.shape).copy()
    return ProductImage(bg, obj, name=name, meta=dict(meta or {}))


def load_image_folder(path: str | Path, size: int = 64, threshold: float = 0.12) -> list[ProductImage]:
    """Load every image in a folder (sorted by name) as square :class:`ProductImage` s.

    Each file is converted to RGB, centre-cropped to a square and resized to ``size``; the
    object layer is estimated with :func:`layers_from_rgb`. The category is the name of the
    file's parent folder when images sit in sub-folders (``folder/mug/a.png``), else "".

    Raises:
        FileNotFoundError: the folder does not exist.
        ValueError: it holds no readable image, or a file cannot be decoded (the message names it).
    """
    root = Path(path)
    if not root.is_dir():
        raise FileNotFoundError(f"image folder {str(root)!r} does not exist or is not a directory")
    if int(size) < 16:
        raise ValueError(f"size must be at least 16 pixels, got {size}")
    files = sorted(f for f in root.rglob("*") if f.is_file() and f.suffix.lower() in IMAGE_SUFFIXES)
    if not files:
        raise ValueError(f"no images ({', '.join(IMAGE_SUFFIXES)}) found under {str(root)!r}")
    out = []
    for f in files:
        try:
            with Image.open(f) as im:
                im = im.convert("RGB")
        except Exception as err:
            raise ValueError(f"cannot read image {str(f)!r}: {type(err).__name__}: {err}") from err
        w, h = im.size
        s = min(w, h)
        im = im.crop(((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s)).resize((size, size), Image.LANCZOS)
        category = f.parent.name if f.parent != root else ""
        pi = layers_from_rgb(np.asarray(im), threshold, name=f.stem, meta={"path": str(f)})
        pi.category = category
        out.append(pi)
    return out
