"""TopK sparse autoencoders over any model's layer activations (Gao et al. 2024 style).

``TopKSAE(d_in, d_latent, k)`` encodes ``x`` to ``d_latent`` codes of which only the
``k`` largest (after ReLU) stay non-zero, and decodes linearly; decoder columns are kept
at unit norm. :func:`train_sae` fits one on an activation matrix with the budgeted
training loop (counters included); :func:`sae_quality` reports the fraction of variance
explained on held-out activations and the fraction of dead latents. A random-feature SAE
(the sanity check the literature asks for) is ``TopKSAE(...)`` left untrained.
"""

from __future__ import annotations

import numpy as np
import torch
import torch.nn as nn

from icmlgym.nn.counters import CostMeter
from icmlgym.nn.train import Budget, train_loop


class TopKSAE(nn.Module):
    """A TopK sparse autoencoder: ``codes = topk(relu(W_e (x - b_d) + b_e))``, ``x_hat = W_d codes + b_d``."""

    def __init__(self, d_in: int, d_latent: int, k: int) -> None:
        super().__init__()
        if not 1 <= k <= d_latent:
            raise ValueError(f"k must be in 1..d_latent ({d_latent}), got {k}")
        self.k = int(k)
        self.enc = nn.Linear(d_in, d_latent)
        self.dec = nn.Linear(d_latent, d_in)
        with torch.no_grad():
            self.dec.weight.copy_(self.enc.weight.t())
            self.normalise()

    @torch.no_grad()
    def normalise(self) -> None:
        self.dec.weight.div_(self.dec.weight.norm(dim=0, keepdim=True).clamp(min=1e-8))

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        pre = torch.relu(self.enc(x - self.dec.bias))
        vals, idx = pre.topk(self.k, dim=-1)
        return torch.zeros_like(pre).scatter_(-1, idx, vals)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        codes = self.encode(x)
        return self.dec(codes), codes


def train_sae(
    acts: np.ndarray | torch.Tensor,
    d_latent: int,
    k: int,
    steps: int = 500,
    batch_size: int = 256,
    lr: float = 2e-3,
    seed: int = 0,
    meter: CostMeter | None = None,
) -> TopKSAE:
    """Fit a TopK SAE to an ``(n, d)`` activation matrix (mean squared reconstruction error)."""
    x = torch.as_tensor(np.asarray(acts), dtype=torch.float32)
    if x.ndim != 2 or len(x) < 2:
        raise ValueError(f"activations must be an (n >= 2, d) matrix, got shape {tuple(x.shape)}")
    gen = torch.Generator().manual_seed(seed)
    torch.manual_seed(seed)
    sae = TopKSAE(x.shape[1], d_latent, k)
    with torch.no_grad():
        sae.dec.bias.copy_(x.mean(0))
    opt = torch.optim.Adam(sae.parameters(), lr)

    def loss_fn(model: TopKSAE, batch: torch.Tensor):
        recon, _ = model(batch)
        return ((recon - batch) ** 2).mean(), len(batch), 0

    train_loop(sae, lambda step: x[torch.randint(0, len(x), (batch_size,), generator=gen)], loss_fn, opt,
               Budget(steps), meter=meter, grad_clip=None, on_step=lambda s, v: sae.normalise())
    return sae


@torch.no_grad()
def sae_quality(sae: TopKSAE, acts: np.ndarray | torch.Tensor) -> dict[str, float]:
    """Fraction of variance explained and the fraction of latents never active, on ``acts``."""
    x = torch.as_tensor(np.asarray(acts), dtype=torch.float32)
    recon, codes = sae(x)
    resid = ((recon - x) ** 2).sum()
    total = ((x - x.mean(0)) ** 2).sum().clamp(min=1e-12)
    return {"variance_explained": float(1 - resid / total), "dead_fraction": float(((codes > 0).sum(0) == 0).float().mean())}


__all__ = ["TopKSAE", "sae_quality", "train_sae"]
