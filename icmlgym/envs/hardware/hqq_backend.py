"""HQQ (half-quadratic quantisation, Badri & Shaji 2023) as an optional quantiser of MoEQuantAlloc-v0 (extra ``[quant]``).

Calibration-free: per group of ``group_size`` weights HQQ optimises the zero-point (and keeps the
scale) to minimise an l_p<1 error of the dequantised weights, instead of RTN's min/max grid.
Same storage as the default backend (``bits`` per weight + a scale and a zero per group), so
:func:`icmlgym.envs.hardware.quant.linear_bytes` counts its memory too.
"""

from __future__ import annotations

import torch

from icmlgym.catalog import require_extra
from icmlgym.envs.hardware.quant import check_bits

require_extra("quant", what="backend='hqq' of icmlgym/MoEQuantAlloc-v0")

from hqq.core.quantize import Quantizer  # noqa: E402


def fake_quantize_hqq(w: torch.Tensor, bits: int, group_size: int = 32) -> torch.Tensor:
    """``w`` quantised by HQQ to ``bits`` (groups along the input dimension) and dequantised, float32."""
    b = check_bits(bits)
    out, cols = w.shape
    x = w.detach().float()
    pad = (-cols) % group_size
    if pad:  # the same groups as the default backend: each row padded with copies of its last column
        x = torch.cat([x, x[:, -1:].expand(out, pad)], dim=1)
    wq, meta = Quantizer.quantize(x, nbits=b, group_size=group_size, optimize=True, axis=1,
                                  compute_dtype=torch.float32, device="cpu")
    return Quantizer.dequantize(wq, meta).reshape(x.shape).float()[:, :cols].contiguous()


__all__ = ["fake_quantize_hqq"]
