"""A rate RNN with pluggable constraints on its recurrent weights.

The network (one definition, shared with :mod:`icmlgym.envs.cognitive.network`, which
runs the same dynamics in numpy to score a submitted network)::

    h_t = (1 - alpha) h_{t-1} + alpha (W_rec r_{t-1} + W_in x_t + b_rec),   h_0 = 0
    r_t = min(relu(h_t), rate_max)                                           (firing rates)
    y_t = W_out r_t + b_out                                                  (action logits)

``W_rec`` is what a :class:`WeightConstraint` makes of a free parameter:

- :class:`Unconstrained`: ``W_rec`` is the parameter.
- :class:`Dale`: each presynaptic unit is excitatory or inhibitory (Dale's principle;
  Song, Yang & Wang 2016): ``W_rec = |P| * sign`` column by column, ``P >= 0`` kept by
  projection after every optimiser step.
- :class:`DaleDistribution`: Dale's signs, and the magnitudes of each population held
  to a target distribution (log-normal: heavy-tailed; half-normal: light-tailed) by
  optimal transport after every step: the magnitudes are replaced by the target's
  quantiles in their own rank order, the exact optimal transport map in one
  dimension (:func:`rank_match`); :func:`ot_project` does the same with POT's exact
  solver for a target given as a weighted sample of any size.

Initial gains are matched: every constraint initialises ``W_rec`` with root-mean-square
entry ``gain / sqrt(n_hidden)``, so that variants differ in structure, not scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import torch
from scipy import stats
from torch import nn

Target = Literal["lognormal", "halfnormal"]


def rank_match(values: torch.Tensor, target_sorted: torch.Tensor) -> torch.Tensor:
    """The exact 1-D optimal transport of ``values`` onto ``target_sorted`` (same length):
    the i-th smallest value becomes the i-th smallest target value."""
    if values.numel() != target_sorted.numel():
        raise ValueError(f"rank_match needs as many targets as values ({target_sorted.numel()} != {values.numel()}); use ot_project")
    out = torch.empty_like(values.reshape(-1))
    out[torch.argsort(values.reshape(-1), stable=True)] = target_sorted.to(values.dtype)
    return out.reshape(values.shape)


def ot_project(values: np.ndarray, target: np.ndarray, target_weights: np.ndarray | None = None) -> np.ndarray:
    """Project ``values`` onto a weighted 1-D sample ``target`` with POT's exact OT plan.

    Each value moves to the barycentre of the target mass the optimal plan sends it to
    (``n * (P @ target)``); with equal sizes and uniform weights this is :func:`rank_match`.
    """
    import ot  # the [cognitive] extra

    x = np.asarray(values, dtype=np.float64).reshape(-1)
    y = np.asarray(target, dtype=np.float64).reshape(-1)
    a = np.full(len(x), 1.0 / len(x))
    b = np.full(len(y), 1.0 / len(y)) if target_weights is None else np.asarray(target_weights, float) / np.sum(target_weights)
    plan = ot.emd_1d(x, y, a, b, metric="sqeuclidean", dense=True)
    return (plan @ y / a).reshape(np.shape(values))


def target_quantiles(kind: Target, n: int, second_moment: float, shape: float = 1.0) -> np.ndarray:
    """``n`` quantiles (at (i + 0.5) / n) of a magnitude distribution, scaled so that their mean
    square is exactly ``second_moment``.

    ``lognormal``: log w ~ N(mu, shape^2), heavy-tailed; ``halfnormal``: |N(0, s^2)|, light-tailed.
    """
    q = (np.arange(n) + 0.5) / n
    if kind == "lognormal":
        x = np.exp(shape * stats.norm.ppf(q))
    elif kind == "halfnormal":
        x = stats.halfnorm.ppf(q)
    else:
        raise ValueError(f"unknown magnitude target {kind!r}; known: 'lognormal', 'halfnormal'")
    return x * math.sqrt(second_moment / np.mean(x**2))


class WeightConstraint(Protocol):
    """How a free parameter becomes the recurrent weight matrix."""

    def init(self, n: int, gain: float, generator: torch.Generator) -> torch.Tensor: ...

    def effective(self, raw: torch.Tensor) -> torch.Tensor: ...

    def project_(self, raw: torch.Tensor) -> None: ...


@dataclass
class Unconstrained:
    """A free recurrent matrix, initialised Gaussian N(0, gain^2 / n)."""

    def init(self, n: int, gain: float, generator: torch.Generator) -> torch.Tensor:
        return torch.randn(n, n, generator=generator) * (gain / math.sqrt(n))

    def effective(self, raw: torch.Tensor) -> torch.Tensor:
        return raw

    def project_(self, raw: torch.Tensor) -> None:
        return None


@dataclass
class Dale:
    """Dale's principle: the first ``round(frac_exc * n)`` units excitatory, the rest inhibitory.

    Initial magnitudes: ``target`` quantiles (log-normal or half-normal, randomly placed),
    inhibitory ones scaled by ``frac_exc / (1 - frac_exc)`` so that excitation and
    inhibition balance on average, then the whole matrix to RMS ``gain / sqrt(n)``.
    """

    frac_exc: float = 0.8
    target: Target = "halfnormal"
    shape: float = 1.0

    def __post_init__(self) -> None:
        if not 0 < self.frac_exc < 1:
            raise ValueError(f"frac_exc must be in (0, 1), got {self.frac_exc}")
        if self.shape <= 0:
            raise ValueError(f"shape must be positive, got {self.shape}")
        self._n_exc: int | None = None

    def signs(self, n: int) -> torch.Tensor:
        n_exc = int(round(self.frac_exc * n))
        if not 0 < n_exc < n:
            raise ValueError(f"{n} units with frac_exc={self.frac_exc} leave a population empty")
        return torch.cat([torch.ones(n_exc), -torch.ones(n - n_exc)])

    def _populations(self, n: int) -> tuple[slice, slice]:
        n_exc = int(self.signs(n).gt(0).sum())
        return slice(0, n_exc), slice(n_exc, n)

    def _scales(self, n: int, gain: float) -> tuple[float, float]:
        """Second moments of the excitatory and inhibitory magnitudes (RMS of the matrix = gain / sqrt n)."""
        f = int(self.signs(n).gt(0).sum()) / n
        ratio = f / (1 - f)  # inhibitory / excitatory magnitude
        base = (gain**2 / n) / (f + (1 - f) * ratio**2)
        return base, base * ratio**2

    def init(self, n: int, gain: float, generator: torch.Generator) -> torch.Tensor:
        self._targets = {}
        raw = torch.empty(n, n)
        for pop, m2 in zip(self._populations(n), self._scales(n, gain)):
            k = n * (pop.stop - pop.start)
            q = torch.as_tensor(target_quantiles(self.target, k, m2, self.shape), dtype=torch.float32)
            self._targets[(pop.start, pop.stop)] = q
            raw[:, pop] = q[torch.randperm(k, generator=generator)].reshape(n, pop.stop - pop.start)
        self._sign = self.signs(n)
        return raw

    def effective(self, raw: torch.Tensor) -> torch.Tensor:
        return raw.abs() * self._sign.to(raw.device, raw.dtype)[None, :]

    def project_(self, raw: torch.Tensor) -> None:
        raw.clamp_(min=0.0)


@dataclass
class DaleDistribution(Dale):
    """Dale's principle with each population's magnitudes held to its initial target distribution
    by exact 1-D optimal transport (rank matching) after every optimiser step
    (``solver="pot"``: POT's exact solver, same result, slower)."""

    target: Target = "lognormal"
    solver: Literal["rank", "pot"] = "rank"

    def project_(self, raw: torch.Tensor) -> None:
        for (lo, hi), q in self._targets.items():
            block = raw[:, lo:hi].abs()
            if self.solver == "pot":
                new = torch.as_tensor(ot_project(block.detach().cpu().numpy(), q.numpy()), dtype=raw.dtype)
            else:
                new = rank_match(block, q.to(raw.device))
            raw[:, lo:hi] = new.to(raw.device)


CONSTRAINTS = {"none": Unconstrained, "dale": Dale, "dale-distribution": DaleDistribution}


class RecurrentNetwork(nn.Module):
    """A rate RNN (see the module docstring) whose recurrent weights obey ``constraint``."""

    def __init__(
        self,
        n_input: int,
        n_hidden: int,
        n_output: int,
        constraint: WeightConstraint | None = None,
        alpha: float = 0.2,
        rate_max: float = 100.0,
        gain: float = 1.0,
        seed: int = 0,
    ) -> None:
        super().__init__()
        for name, v in (("n_input", n_input), ("n_hidden", n_hidden), ("n_output", n_output)):
            if int(v) < 1:
                raise ValueError(f"{name} must be >= 1, got {v}")
        if not 0 < alpha <= 1:
            raise ValueError(f"alpha must be in (0, 1], got {alpha}")
        self.n_input, self.n_hidden, self.n_output = int(n_input), int(n_hidden), int(n_output)
        self.alpha, self.rate_max, self.gain = float(alpha), float(rate_max), float(gain)
        self.constraint: WeightConstraint = constraint if constraint is not None else Unconstrained()
        g = torch.Generator().manual_seed(int(seed))
        self.w_in = nn.Parameter(torch.randn(n_hidden, n_input, generator=g) / math.sqrt(n_input))
        self.w_rec_raw = nn.Parameter(self.constraint.init(n_hidden, gain, g))
        self.b_rec = nn.Parameter(torch.zeros(n_hidden))
        self.w_out = nn.Parameter(torch.randn(n_output, n_hidden, generator=g) / math.sqrt(n_hidden))
        self.b_out = nn.Parameter(torch.zeros(n_output))

    @property
    def w_rec(self) -> torch.Tensor:
        """The effective recurrent weights (post x pre)."""
        return self.constraint.effective(self.w_rec_raw)

    def forward(self, x: torch.Tensor, return_rates: bool = False):
        """``x``: ``(batch, T, n_input)`` -> logits ``(batch, T, n_output)`` (and rates ``(batch, T, n_hidden)``)."""
        if x.dim() != 3 or x.shape[-1] != self.n_input:
            raise ValueError(f"inputs must be (batch, T, {self.n_input}), got {tuple(x.shape)}")
        w_rec = self.w_rec
        drive = x @ self.w_in.T + self.b_rec  # (B, T, N): the input part, computed for all steps at once
        h = x.new_zeros(x.shape[0], self.n_hidden)
        r = h
        rates = []
        for t in range(x.shape[1]):
            h = (1 - self.alpha) * h + self.alpha * (r @ w_rec.T + drive[:, t])
            r = torch.clamp(torch.relu(h), max=self.rate_max)
            rates.append(r)
        rates_t = torch.stack(rates, dim=1)
        logits = rates_t @ self.w_out.T + self.b_out
        return (logits, rates_t) if return_rates else logits

    @torch.no_grad()
    def project_(self) -> None:
        """Apply the constraint's projection (after an optimiser step)."""
        self.constraint.project_(self.w_rec_raw.data)

    def to_arrays(self) -> dict[str, np.ndarray]:
        """The effective weights as float32 arrays (the action of ``icmlgym/CognitiveRNN-v0``)."""
        with torch.no_grad():
            return {
                "w_in": self.w_in.detach().cpu().numpy().astype(np.float32),
                "w_rec": self.w_rec.detach().cpu().numpy().astype(np.float32),
                "b_rec": self.b_rec.detach().cpu().numpy().astype(np.float32),
                "w_out": self.w_out.detach().cpu().numpy().astype(np.float32),
                "b_out": self.b_out.detach().cpu().numpy().astype(np.float32),
            }


__all__ = [
    "CONSTRAINTS",
    "Dale",
    "DaleDistribution",
    "RecurrentNetwork",
    "Unconstrained",
    "WeightConstraint",
    "ot_project",
    "rank_match",
    "target_quantiles",
]
