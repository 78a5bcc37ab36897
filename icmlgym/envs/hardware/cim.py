"""Compute-in-memory (CIM) weight perturbations, the network they act on, and an energy table.

Everything here is our own documented model (docs/hardware.md), not IBM's aihwkit; the PCM
coefficients follow the statistical phase-change-memory model of Nandakumar et al. (2019) as
aihwkit's ``PCMLikeNoiseModel`` documents them.

Perturbations act on the weight matrices (biases are digital and exact):

- **mismatch** (device-to-device variation): ``W * (1 + sigma * eps)``, ``eps ~ N(0, 1)`` per
  weight; ``sigma = 0.7`` is "70% mismatch";
- **additive** (conductance noise): ``W + sigma * max|W| * eps`` per weight;
- **PCM drift** (:func:`pcm_drift`): weights mapped to conductances of a differential pair
  (``G = |W| / max|W| * g_max``, ``g_max = 25 uS``), programming noise
  ``sigma_prog(g) = max(0.2635 + 1.9650 g - 1.1731 g^2, 0) uS`` (``g = G / g_max``), power-law
  drift ``G(t) = G_p (t / t0)^-nu`` with ``t0 = 20 s`` and a per-device exponent
  ``nu ~ N(mu(g), s(g))``, ``mu = clip(-0.0155 ln g + 0.0244, 0.049, 0.1)``,
  ``s = clip(-0.0125 ln g - 0.0059, 0.008, 0.045)``, then 1/f read noise of standard deviation
  ``G(t) * Q(g) * sqrt(ln((t + t_r) / (2 t_r)))``, ``Q = min(0.0088 / g^0.65, 0.2)``,
  ``t_r = 250 ns``; with **global drift compensation** each layer's output is rescaled by the
  ratio of its mean absolute weight at ``t0`` to that at ``t`` (what a reference read measures).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import torch
import torch.nn.functional as F

G_MAX = 25.0  # uS
T0 = 20.0  # s after programming
T_READ = 250e-9  # s
SECONDS = {"1min": 60.0, "1hour": 3600.0, "1day": 86_400.0, "1week": 604_800.0, "1month": 2_592_000.0, "1year": 31_536_000.0}

# Energy per operation (pJ): an ASSUMPTION for a relative estimate, not a measurement.
# Digital: 45 nm figures of Horowitz (ISSCC 2014): fp32 multiply 3.7, fp32 add 0.9, a 32-bit read
# from an 8 KB SRAM ~5 (half of his 10 pJ per 64-bit word). CIM: a low-precision analog
# crossbar; the input DAC, the analog multiply-accumulate per cell and the output ADC are
# round numbers in the range reported for PCM/RRAM macros (about 10-100 TOPS/W overall).
ENERGY_PJ: dict[str, float] = {
    "digital_fp32_mult": 3.7,
    "digital_fp32_add": 0.9,
    "digital_sram_read_32bit": 5.0,
    "cim_dac_per_input": 0.1,
    "cim_analog_mac": 0.005,
    "cim_adc_per_output": 1.0,
}


def init_mlp(sizes: Sequence[int], seed: int) -> list[torch.Tensor]:
    """Weights and biases ``[W1, b1, W2, b2, ...]`` of an MLP (Kaiming-uniform like torch.nn.Linear), seeded."""
    gen = torch.Generator().manual_seed(int(seed))
    params: list[torch.Tensor] = []
    for fan_in, fan_out in zip(sizes[:-1], sizes[1:]):
        bound = 1.0 / math.sqrt(fan_in)
        params.append(((torch.rand(fan_out, fan_in, generator=gen) * 2 - 1) * bound).requires_grad_(True))
        params.append(((torch.rand(fan_out, generator=gen) * 2 - 1) * bound).requires_grad_(True))
    return params


def mlp_forward(x: torch.Tensor, weights: Sequence[torch.Tensor], biases: Sequence[torch.Tensor],
                scales: Sequence[float] | None = None) -> torch.Tensor:
    """Logits of the MLP with the given (possibly perturbed) weights; ``scales`` rescale each layer's output."""
    h = x.reshape(len(x), -1)
    last = len(weights) - 1
    for i, (w, b) in enumerate(zip(weights, biases)):
        z = h @ w.T
        if scales is not None:
            z = z * scales[i]
        h = z + b
        if i < last:
            h = F.relu(h)
    return h


def mismatch(weights: Sequence[torch.Tensor], sigma: float, gen: torch.Generator) -> list[torch.Tensor]:
    return [w * (1 + sigma * torch.randn(w.shape, generator=gen)) for w in weights]


def additive(weights: Sequence[torch.Tensor], sigma: float, gen: torch.Generator) -> list[torch.Tensor]:
    return [w + sigma * w.abs().max() * torch.randn(w.shape, generator=gen) for w in weights]


def _nu(g: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    lg = torch.log(g.clamp_min(1e-6))
    mu = (-0.0155 * lg + 0.0244).clamp(0.049, 0.1)
    s = (-0.0125 * lg - 0.0059).clamp(0.008, 0.045)
    return (mu + s * torch.randn(g.shape, generator=gen)).clamp_min(0.0)


def pcm_drift(weights: Sequence[torch.Tensor], seconds: float, gen: torch.Generator,
              compensate: bool = True) -> tuple[list[torch.Tensor], list[float]]:
    """Weights read ``seconds`` after programming (``>= T0``) under the PCM model, and the
    per-layer output scales of global drift compensation (1.0 each without it)."""
    if seconds < T0:
        raise ValueError(f"drift is modelled from t0 = {T0} s after programming, got {seconds} s")
    out, scales = [], []
    for w in weights:
        wmax = float(w.abs().max()) or 1.0
        g_t = w.abs() / wmax  # target conductance / g_max, on the device of the weight's sign
        sig_prog = (0.2635 + 1.9650 * g_t - 1.1731 * g_t**2).clamp_min(0.0) / G_MAX
        g_p = (g_t + sig_prog * torch.randn(w.shape, generator=gen)).clamp_min(0.0)
        g_d = g_p * (seconds / T0) ** (-_nu(g_t, gen))
        q = (0.0088 / g_t.clamp_min(1e-6) ** 0.65).clamp_max(0.2)
        read = g_d * q * math.sqrt(math.log((seconds + T_READ) / (2 * T_READ)))
        g_r = (g_d + read * torch.randn(w.shape, generator=gen)).clamp_min(0.0)
        w_t = torch.sign(w) * g_r * wmax
        w_0 = torch.sign(w) * g_p * wmax
        out.append(w_t)
        scales.append(float(w_0.abs().mean() / w_t.abs().mean().clamp_min(1e-12)) if compensate else 1.0)
    return out, scales


def energy_per_inference(sizes: Sequence[int]) -> dict[str, float]:
    """Energy (pJ) of one inference of an MLP of layer ``sizes`` under :data:`ENERGY_PJ` (an assumption).

    Digital: one fp32 multiply, one add and one 32-bit weight read per MAC. CIM: one DAC
    conversion per layer input, one analog MAC per weight, one ADC conversion per layer output;
    the bias add (fp32) is digital in both."""
    macs = sum(a * b for a, b in zip(sizes[:-1], sizes[1:]))
    ins, outs = sum(sizes[:-1]), sum(sizes[1:])
    e = ENERGY_PJ
    digital = macs * (e["digital_fp32_mult"] + e["digital_fp32_add"] + e["digital_sram_read_32bit"]) + outs * e["digital_fp32_add"]
    cim = ins * e["cim_dac_per_input"] + macs * e["cim_analog_mac"] + outs * (e["cim_adc_per_output"] + e["digital_fp32_add"])
    return {"macs": float(macs), "energy_digital_pj": digital, "energy_cim_pj": cim, "energy_saving": 1.0 - cim / digital}


__all__ = ["ENERGY_PJ", "SECONDS", "additive", "energy_per_inference", "init_mlp", "mismatch", "mlp_forward", "pcm_drift"]
