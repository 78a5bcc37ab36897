"""Parameterised image edits: the moves a visual prompt optimizer can make.

An edit state is a vector ``theta`` in ``[-1, 1]^len(EDITS)``, one magnitude per
edit type; 0 everywhere is the original photo. :func:`apply_edits` always
renders from the original layers in a fixed order (placement and zoom on the
layers, then background, shadow, and the photometric edits on the composite), so edits never compound
resampling artefacts and the same ``theta`` always gives the same pixels.

Edit types and what a positive / negative magnitude does:

- ``lighting``: exposure x 2**(0.7 m) (brighter / darker).
- ``contrast``: luminance contrast about the mean x (1 + 0.6 m).
- ``saturation``: chroma x (1 + 0.8 m) (vivid / washed out).
- ``background``: blend towards a clean studio backdrop (m > 0) or a busy shelf (m < 0).
- ``zoom``: scale about the centre by 2**(0.45 m) (crop in / pull back, edges padded).
- ``shadow``: a soft drop shadow under the object (m > 0) or a bright halo around it (m < 0).
- ``placement``: move the object towards the centre by a fraction m (m > 0) or off-centre (m < 0).

A generative editor (an image-editing model) plugs in through :class:`GenerativeEditor`.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Protocol, Sequence, runtime_checkable

import numpy as np
from PIL import Image, ImageDraw, ImageFilter

from icmlgym.envs.arena.images import ProductImage

EDITS: tuple[str, ...] = ("lighting", "contrast", "saturation", "background", "zoom", "shadow", "placement")
EDIT_INDEX: dict[str, int] = {e: i for i, e in enumerate(EDITS)}
_LUMA = np.array([0.299, 0.587, 0.114], dtype=np.float32)


def edit_vector(edits: dict[str, float] | None = None) -> np.ndarray:
    """A ``theta`` vector from ``{edit name: magnitude}`` (unnamed edits are 0).

    Raises:
        ValueError: an unknown edit name or a magnitude outside [-1, 1].
    """
    theta = np.zeros(len(EDITS), dtype=np.float32)
    for name, m in (edits or {}).items():
        if name not in EDIT_INDEX:
            raise ValueError(f"unknown edit {name!r}; edits: {EDITS}")
        if not -1.0 <= float(m) <= 1.0:
            raise ValueError(f"edit {name!r} magnitude must lie in [-1, 1], got {m}")
        theta[EDIT_INDEX[name]] = float(m)
    return theta


@lru_cache(maxsize=16)
def _studio(size: int) -> np.ndarray:
    t = np.linspace(0.0, 1.0, size, dtype=np.float32)[:, None, None]
    top, bottom = np.array([246, 246, 244], np.float32), np.array([222, 222, 220], np.float32)
    return np.broadcast_to(top * (1 - t) + bottom * t, (size, size, 3)).copy()


@lru_cache(maxsize=16)
def _shelf(size: int) -> np.ndarray:
    rng = np.random.default_rng(12345)
    img = Image.new("RGB", (size, size), (120, 110, 100))
    d = ImageDraw.Draw(img)
    for _ in range(28):
        c = tuple(int(x) for x in rng.integers(40, 230, 3))
        x, y = rng.uniform(0, size, 2)
        r = rng.uniform(0.04, 0.16) * size
        if rng.random() < 0.5:
            d.rectangle([x - r, y - r * 0.7, x + r, y + r * 0.7], fill=c)
        else:
            d.ellipse([x - r, y - r, x + r, y + r], fill=c)
    return np.asarray(img, dtype=np.float32)


def _blur(a: np.ndarray, radius: float) -> np.ndarray:
    im = Image.fromarray(np.clip(a * 255.0, 0, 255).astype(np.uint8))
    return np.asarray(im.filter(ImageFilter.GaussianBlur(radius)), dtype=np.float32) / 255.0


def _shift(a: np.ndarray, dy: int, dx: int) -> np.ndarray:
    """Translate an array by whole pixels, filling with zeros."""
    out = np.zeros_like(a)
    H, W = a.shape[:2]
    ys, yd = (slice(0, H - dy), slice(dy, H)) if dy >= 0 else (slice(-dy, H), slice(0, H + dy))
    xs, xd = (slice(0, W - dx), slice(dx, W)) if dx >= 0 else (slice(-dx, W), slice(0, W + dx))
    out[yd, xd] = a[ys, xs]
    return out


def _zoom(a: np.ndarray, scale: float, pad_edge: bool) -> np.ndarray:
    """Scale an (H, W, C) uint8 image about its centre with PIL, keeping its size."""
    H = a.shape[0]
    n = max(2, int(round(H * scale)))
    z = np.asarray(Image.fromarray(a).resize((n, n), Image.BILINEAR))
    if n >= H:
        o = (n - H) // 2
        return z[o : o + H, o : o + H]
    lo = (H - n) // 2
    hi = H - n - lo
    mode = "edge" if pad_edge else "constant"
    return np.pad(z, ((lo, hi), (lo, hi), (0, 0)), mode=mode)


def apply_edits(img: ProductImage, theta: Sequence[float] | np.ndarray) -> np.ndarray:
    """Render ``img`` with the edit magnitudes ``theta`` (one per :data:`EDITS`); returns (H, W, 3) uint8.

    Raises:
        ValueError: ``theta`` has the wrong length or a value outside [-1, 1].
    """
    th = np.asarray(theta, dtype=np.float32).reshape(-1)
    if th.shape != (len(EDITS),):
        raise ValueError(f"theta must have {len(EDITS)} magnitudes ({', '.join(EDITS)}), got shape {th.shape}")
    if not np.all(np.isfinite(th)) or np.any(np.abs(th) > 1.0 + 1e-6):
        raise ValueError(f"edit magnitudes must lie in [-1, 1], got {th.tolist()}")
    if not np.any(th):
        return img.composite()
    lighting, contrast, saturation, background, zoom, shadow, placement = (float(x) for x in th)
    S = img.size
    bg_u8, obj_u8 = img.background, img.obj

    # geometry first, on the uint8 layers
    if placement != 0:
        alpha = obj_u8[..., 3].astype(np.float32)
        total = alpha.sum()
        if total > 1e-6:
            idx = np.arange(S, dtype=np.float32)
            cy, cx = (alpha.sum(axis=1) @ idx) / total, (alpha.sum(axis=0) @ idx) / total
            c = (S - 1) / 2
            if placement > 0:
                dy, dx = (c - cy) * placement, (c - cx) * placement
            else:
                vy, vx = cy - c, cx - c
                norm = float(np.hypot(vy, vx))
                if norm < 1e-3:
                    vy, vx, norm = 0.0, 1.0, 1.0
                dy, dx = -placement * 0.3 * S * vy / norm, -placement * 0.3 * S * vx / norm
            obj_u8 = _shift(obj_u8, int(round(dy)), int(round(dx)))
    if zoom != 0:
        scale = float(2.0 ** (0.45 * zoom))
        obj_u8 = _zoom(obj_u8, scale, pad_edge=False)
        bg_u8 = _zoom(bg_u8, scale, pad_edge=True)

    bg = bg_u8.astype(np.float32)
    obj = obj_u8.astype(np.float32) / 255.0  # rgb in [0, 1], alpha in [0, 1]
    if background > 0:
        bg = bg * (1 - background) + _studio(S) * background
    elif background < 0:
        bg = bg * (1 + background) - _shelf(S) * background

    if shadow != 0:
        alpha = obj[..., 3]
        if shadow > 0:
            sh = _blur(_shift(alpha, int(round(S * 0.04)), int(round(S * 0.03))), S * 0.04)
            bg = bg * (1.0 - 0.65 * shadow * sh)[..., None]
        else:
            halo = _blur(alpha, S * 0.06)
            bg = bg + (255.0 - bg) * (-0.8 * shadow * np.clip(halo * 1.5, 0, 1))[..., None]

    a = obj[..., 3:4]
    rgb = obj[..., :3] * 255.0 * a + bg * (1.0 - a)

    if lighting != 0:
        rgb = rgb * float(2.0 ** (0.7 * lighting))
    if contrast != 0:
        lum = rgb @ _LUMA
        rgb = lum.mean() + (rgb - lum.mean()) * (1.0 + 0.6 * contrast)
    if saturation != 0:
        lum = (rgb @ _LUMA)[..., None]
        rgb = lum + (rgb - lum) * (1.0 + 0.8 * saturation)
    return np.clip(rgb + 0.5, 0, 255).astype(np.uint8)


@runtime_checkable
class GenerativeEditor(Protocol):
    """The slot for a generative (model-based) image editor.

    An implementation takes the current RGB image, a natural-language instruction
    (for example "place the product on a marble kitchen counter") and a strength in
    [0, 1], and returns an edited image of the same shape. It must be deterministic
    given ``seed`` so episodes stay reproducible, and must not download anything at
    run time (load weights from a path the user gives).
    """

    def edit(self, image: np.ndarray, instruction: str, strength: float, seed: int) -> np.ndarray: ...


class GenerativeEdit:
    """Wrap a :class:`GenerativeEditor` with a fixed instruction as an extra edit step.

    ``GenerativeEdit(editor, "on a marble counter")(rgb, m, seed)`` applies the instruction
    with strength ``|m|`` (``m = 0`` returns the input unchanged) and checks the result.
    """

    def __init__(self, editor: GenerativeEditor, instruction: str) -> None:
        if not isinstance(editor, GenerativeEditor):
            raise TypeError(f"editor must implement edit(image, instruction, strength, seed), got {type(editor).__name__}")
        if not instruction.strip():
            raise ValueError("a generative edit needs a non-empty instruction")
        self.editor = editor
        self.instruction = instruction

    def __call__(self, image: np.ndarray, magnitude: float, seed: int = 0) -> np.ndarray:
        if not -1.0 <= float(magnitude) <= 1.0:
            raise ValueError(f"magnitude must lie in [-1, 1], got {magnitude}")
        if magnitude == 0:
            return image
        out = np.asarray(self.editor.edit(image, self.instruction, abs(float(magnitude)), int(seed)))
        if out.shape != image.shape or out.dtype != np.uint8:
            raise ValueError(
                f"generative editor returned shape {out.shape} dtype {out.dtype}; expected {image.shape} uint8"
            )
        return out
