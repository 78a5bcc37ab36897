"""Group-wise round-to-nearest (RTN) weight quantisation, its memory accounting and a quantised linear layer.

The quantiser (the default backend of MoEQuantAlloc-v0, docs/hardware.md):

- a weight matrix ``W`` of shape ``(out, in)`` is cut into groups of ``group_size``
  consecutive input columns per output row (the last group of a row may be shorter);
- per group, asymmetric min/max quantisation to ``b`` bits: ``scale = (max - min) / (2^b - 1)``,
  codes ``q = clamp(round((w - min) / scale), 0, 2^b - 1)``; ``scale`` and ``min`` are stored in
  float16, so the dequantised weight is ``q * scale16 + min16`` computed in float32;
- memory: ``b`` bits per weight (packed) plus 4 bytes (two float16) per group; biases stay in
  float16 (2 bytes each).

:class:`QuantizedLinear` holds the codes (one uint8 per weight in memory; the packed size is what
:func:`linear_bytes` reports) and dequantises on the fly in ``forward``: a real weight-only
quantised layer in pure torch, used by the inference benchmark (benchmarks/hardware_quant.py).
"""

from __future__ import annotations

import math

import torch
import torch.nn as nn
import torch.nn.functional as F

MIN_BITS, MAX_BITS = 1, 8
META_BYTES_PER_GROUP = 4  # float16 scale + float16 minimum
BIAS_BYTES = 2  # float16


def check_bits(bits: int) -> int:
    """``bits`` as an int in 1..8, or a ValueError naming it."""
    if isinstance(bits, bool) or not hasattr(bits, "__index__") or not MIN_BITS <= int(bits) <= MAX_BITS:
        raise ValueError(f"a bit-width must be an integer in {MIN_BITS}..{MAX_BITS}, got {bits!r}")
    return int(bits)


def _groups(w: torch.Tensor, group_size: int) -> tuple[torch.Tensor, int]:
    """``w`` (out, in) padded to a multiple of ``group_size`` columns and viewed as (out, groups, group_size)."""
    if w.dim() != 2:
        raise ValueError(f"group-wise quantisation takes a 2-D weight, got shape {tuple(w.shape)}")
    if group_size < 1:
        raise ValueError(f"group_size must be >= 1, got {group_size}")
    out, cols = w.shape
    pad = (-cols) % group_size
    if pad:  # repeat the row's last column: it changes neither the group's min nor its max
        w = torch.cat([w, w[:, -1:].expand(out, pad)], dim=1)
    return w.reshape(out, -1, group_size), pad


def quantize(w: torch.Tensor, bits: int, group_size: int = 32) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Codes ``(out, groups, group_size)`` uint8, and per group ``scale`` and ``minimum`` (float16)."""
    b = check_bits(bits)
    g, _ = _groups(w.detach().float(), group_size)
    lo = g.amin(dim=2, keepdim=True)
    hi = g.amax(dim=2, keepdim=True)
    levels = 2**b - 1
    scale = ((hi - lo) / levels).clamp_min(1e-8).half()
    lo16 = lo.half()
    q = torch.clamp(torch.round((g - lo16.float()) / scale.float()), 0, levels).to(torch.uint8)
    return q, scale, lo16


def dequantize(q: torch.Tensor, scale: torch.Tensor, lo: torch.Tensor, cols: int) -> torch.Tensor:
    """The float32 weight ``(out, cols)`` of codes and per-group ``scale``/``minimum``."""
    w = q.float() * scale.float() + lo.float()
    return w.reshape(q.shape[0], -1)[:, :cols]


def fake_quantize(w: torch.Tensor, bits: int, group_size: int = 32) -> torch.Tensor:
    """``w`` quantised to ``bits`` and dequantised (float32, same shape): what the quantised model computes with."""
    q, s, lo = quantize(w, bits, group_size)
    return dequantize(q, s, lo, w.shape[1])


def linear_bytes(out_features: int, in_features: int, bits: int | None, group_size: int = 32, bias: bool = True) -> float:
    """Bytes of a linear layer: packed ``bits``-bit weights + float16 group metadata + float16 bias.

    ``bits=None``: float16 weights (the full-precision reference of the memory ratio)."""
    n = out_features * in_features
    b_bytes = out_features * BIAS_BYTES if bias else 0
    if bits is None:
        return 2.0 * n + b_bytes
    groups = out_features * math.ceil(in_features / group_size)
    return n * check_bits(bits) / 8.0 + groups * META_BYTES_PER_GROUP + b_bytes


class QuantizedLinear(nn.Module):
    """A linear layer whose weight is stored as ``bits``-bit group-wise codes and dequantised per call."""

    def __init__(self, linear: nn.Linear, bits: int, group_size: int = 32) -> None:
        super().__init__()
        self.bits, self.group_size = check_bits(bits), int(group_size)
        self.in_features, self.out_features = linear.in_features, linear.out_features
        q, s, lo = quantize(linear.weight, self.bits, self.group_size)
        self.register_buffer("codes", q)
        self.register_buffer("scale", s)
        self.register_buffer("minimum", lo)
        self.register_buffer("bias", None if linear.bias is None else linear.bias.detach().half())

    def weight(self) -> torch.Tensor:
        return dequantize(self.codes, self.scale, self.minimum, self.in_features)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return F.linear(x, self.weight(), None if self.bias is None else self.bias.float())

    def nbytes(self) -> float:
        return linear_bytes(self.out_features, self.in_features, self.bits, self.group_size, self.bias is not None)


__all__ = ["QuantizedLinear", "check_bits", "dequantize", "fake_quantize", "linear_bytes", "quantize"]
