"""The zoo's mixture-of-experts transformer under expert quantisation: what MoEQuantAlloc-v0 measures.

:class:`QuantMoE` wraps a private copy of a zoo MoE (``reasoner-moe``, or ``reasoner-moe-outlier``
for MoEQuantAlloc-v1; :mod:`icmlgym.zoo.transformer`, top-2 routing over the experts of every layer). It keeps each expert's full-precision
weights, applies a bit-width per expert (group-wise RTN, :mod:`~icmlgym.envs.hardware.quant`),
and measures:

- the language-model loss and next-token accuracy on a token set (:func:`lm_metrics`);
- the router's probabilities on that set, and the router shift against full precision
  (mean KL divergence of the routing distributions, and top-k agreement);
- per expert and candidate bit-width, three quantisation-error estimates on calibration
  tokens (:meth:`QuantMoE.estimates`): the relative weight error, the gated output error
  (mean squared change of the expert's gated contribution per token), and a second-order
  (empirical Fisher) estimate of the loss increase, ``0.5 / N * sum_t (g_t . gate_t delta_t)^2``
  with ``g_t`` the gradient of the summed loss with respect to the MoE layer's output at
  token ``t`` and ``delta_t`` the change of the expert's output there. Every estimate is
  taken in the model's current state (other experts quantised, router as fine-tuned), so a
  progressive allocator can re-estimate after each round;
- router fine-tuning: Adam on the routers only (every other weight frozen), distilling the
  full-precision model's next-token distribution on the calibration tokens.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from icmlgym.envs.hardware.quant import fake_quantize, linear_bytes
from icmlgym.zoo.transformer import GPT, MoE

PAD = 0  # icmlgym.corpora.reasoning.PAD


def split_tokens(data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Inputs and next-token targets of padded sequences, trimmed to the longest one."""
    width = int((data != PAD).sum(1).max())
    return data[:, : width - 1], data[:, 1:width]


@dataclass
class Estimates:
    """Per expert (rows) and offered bit-width (columns), measured on calibration tokens."""

    freq: np.ndarray  # (E,) share of the layer's routed (token, slot) pairs
    weight_error: np.ndarray  # (E, B) ||W_q - W||^2 / ||W||^2 over the expert's weights
    output_error: np.ndarray  # (E, B) mean over tokens of ||gate * delta||^2
    fisher: np.ndarray  # (E, B) second-order estimate of the mean loss increase


class QuantMoE:
    """A private, quantisable copy of a mixture-of-experts :class:`~icmlgym.zoo.transformer.GPT`."""

    def __init__(self, model: GPT, bit_widths: Sequence[int], group_size: int = 32, backend: str = "rtn") -> None:
        self.model = copy.deepcopy(model).eval()
        for p in self.model.parameters():
            p.requires_grad_(False)
        self.moes: list[MoE] = [blk.mlp for blk in self.model.blocks if isinstance(blk.mlp, MoE)]
        if not self.moes:
            raise ValueError("QuantMoE needs a mixture-of-experts model (n_expert > 0)")
        self.bit_widths = tuple(int(b) for b in bit_widths)
        self.group_size = int(group_size)
        self.experts = [(li, ei, ex) for li, moe in enumerate(self.moes) for ei, ex in enumerate(moe.experts)]
        self.layer = np.array([li for li, _, _ in self.experts], dtype=np.int64)
        self.fp = [(ex.fc.weight.detach().clone(), ex.out.weight.detach().clone()) for _, _, ex in self.experts]
        self.size = np.array([fc.numel() + out.numel() for fc, out in self.fp], dtype=np.int64)
        self.router_fp = [m.router.weight.detach().clone() for m in self.moes]
        if backend == "rtn":
            quantizer = fake_quantize
        elif backend == "hqq":
            from icmlgym.envs.hardware.hqq_backend import fake_quantize_hqq as quantizer
        else:
            raise ValueError(f"backend must be 'rtn' or 'hqq', got {backend!r}")
        # dequantised weights of every (expert, offered bit-width): quantising is deterministic
        self.table = {(e, b): (quantizer(fc, b, self.group_size), quantizer(out, b, self.group_size))
                      for e, (fc, out) in enumerate(self.fp) for b in self.bit_widths}
        self.bits = np.full(len(self.experts), -1, dtype=np.int64)  # -1: full precision

    @property
    def n_experts(self) -> int:
        return len(self.experts)

    # ------------------------------------------------------------------ state
    def apply(self, bits: Sequence[int]) -> None:
        """Quantise expert ``e`` to ``bits[e]`` (one of the offered widths; -1 keeps full precision)."""
        if len(bits) != self.n_experts:
            raise ValueError(f"an allocation needs one bit-width per expert ({self.n_experts}), got {len(bits)}")
        with torch.no_grad():
            for e, b in enumerate(bits):
                b = int(b)
                fc, out = self.fp[e] if b == -1 else self.table[(e, b)]
                ex = self.experts[e][2]
                ex.fc.weight.copy_(fc)
                ex.out.weight.copy_(out)
        self.bits = np.asarray(bits, dtype=np.int64).copy()

    def reset_routers(self) -> None:
        with torch.no_grad():
            for m, w in zip(self.moes, self.router_fp):
                m.router.weight.copy_(w)

    def memory_bytes(self, bits: Sequence[int] | None = None) -> float:
        """Bytes of every expert's weights at ``bits`` (default: the current ones; -1 = float16)."""
        bits = self.bits if bits is None else bits
        total = 0.0
        for (_, _, ex), b in zip(self.experts, bits):
            b = None if int(b) == -1 else int(b)
            total += linear_bytes(ex.fc.out_features, ex.fc.in_features, b, self.group_size)
            total += linear_bytes(ex.out.out_features, ex.out.in_features, b, self.group_size)
        return total

    # ------------------------------------------------------------------ measurements
    def logits_and_routing(self, data: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, list[torch.Tensor]]:
        """Logits over the trimmed inputs, their targets, and per MoE layer the router logits of non-pad inputs."""
        x, y = split_tokens(data)
        with torch.no_grad():
            logits = self.model(x)
        mask = (x != PAD).reshape(-1)
        routing = [m.last_logits[mask] for m in self.moes]
        return logits, y, routing

    def lm_metrics(self, data: torch.Tensor) -> tuple[float, float]:
        """Mean next-token cross-entropy and accuracy over non-pad targets."""
        logits, y, _ = self.logits_and_routing(data)
        return lm_metrics(logits, y)

    def estimates(self, calib: torch.Tensor) -> Estimates:
        """Routing frequencies and the three error estimates of every (expert, offered bit-width)."""
        x, y = split_tokens(calib)
        captured: list[tuple[torch.Tensor, torch.Tensor]] = []

        def hook(module, inputs, output):
            output.retain_grad()
            captured.append((inputs[0].detach(), output))

        handles = [m.register_forward_hook(hook) for m in self.moes]
        try:
            with torch.enable_grad():
                emb = self.model.wte.weight
                emb.requires_grad_(True)  # so that the graph reaches every layer's output
                logits = self.model(x)
                loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=PAD, reduction="sum")
                loss.backward()
                emb.requires_grad_(False)
                emb.grad = None
        finally:
            for h in handles:
                h.remove()
        n_tok = int((y != PAD).sum())
        mask = (x != PAD).reshape(-1)
        E, B = self.n_experts, len(self.bit_widths)
        freq = np.zeros(E)
        werr, oerr, fisher = np.zeros((E, B)), np.zeros((E, B)), np.zeros((E, B))
        with torch.no_grad():
            for e, (li, ei, ex) in enumerate(self.experts):
                moe = self.moes[li]
                inp, out = captured[li]
                c = inp.shape[-1]
                flat, grad = inp.reshape(-1, c), out.grad.reshape(-1, c)
                logits_r = moe.last_logits
                gates_all, choice = logits_r.topk(moe.top_k, dim=-1)
                gates_all = gates_all.softmax(dim=-1)
                rows, slot = ((choice == ei) & mask[:, None]).nonzero(as_tuple=True)
                freq[e] = len(rows) / max(1, int(mask.sum()) * moe.top_k)
                fc_fp, out_fp = self.fp[e]
                xr, gr, gate = flat[rows], grad[rows], gates_all[rows, slot].unsqueeze(1)
                ref = F.linear(F.gelu(F.linear(xr, fc_fp, ex.fc.bias)), out_fp, ex.out.bias)
                norm = float((fc_fp**2).sum() + (out_fp**2).sum())
                for j, b in enumerate(self.bit_widths):
                    fc_q, out_q = self.table[(e, b)]
                    werr[e, j] = float(((fc_q - fc_fp) ** 2).sum() + ((out_q - out_fp) ** 2).sum()) / norm
                    if len(rows) == 0:
                        continue
                    delta = gate * (F.linear(F.gelu(F.linear(xr, fc_q, ex.fc.bias)), out_q, ex.out.bias) - ref)
                    oerr[e, j] = float((delta**2).sum()) / max(1, int(mask.sum()))
                    fisher[e, j] = 0.5 * float(((gr * delta).sum(1) ** 2).sum()) / max(1, n_tok)
        return Estimates(freq, werr, oerr, fisher)

    def finetune_routers(self, calib: torch.Tensor, teacher: torch.Tensor, steps: int, lr: float) -> float:
        """Adam on the routers only, distilling ``teacher`` (full-precision logits of ``calib``); the last loss."""
        x, y = split_tokens(calib)
        mask = (y != PAD).reshape(-1)
        target = F.log_softmax(teacher.reshape(-1, teacher.size(-1))[mask], dim=-1)
        params = [m.router.weight for m in self.moes]
        for p in params:
            p.requires_grad_(True)
        opt = torch.optim.Adam(params, lr=lr)
        last = float("nan")
        try:
            with torch.enable_grad():
                for _ in range(steps):
                    opt.zero_grad()
                    logits = self.model(x).reshape(-1, teacher.size(-1))[mask]
                    loss = F.kl_div(F.log_softmax(logits, dim=-1), target, log_target=True, reduction="batchmean")
                    loss.backward()
                    opt.step()
                    last = float(loss.detach())
        finally:
            for p in params:
                p.requires_grad_(False)
                p.grad = None
        return last


def lm_metrics(logits: torch.Tensor, y: torch.Tensor) -> tuple[float, float]:
    """Mean cross-entropy and next-token accuracy of ``logits`` over the non-pad targets ``y``."""
    flat, tgt = logits.reshape(-1, logits.size(-1)), y.reshape(-1)
    mask = tgt != PAD
    loss = F.cross_entropy(flat[mask], tgt[mask])
    acc = (flat[mask].argmax(-1) == tgt[mask]).float().mean()
    return float(loss), float(acc)


def router_shift(reference: Sequence[torch.Tensor], current: Sequence[torch.Tensor], top_k: int) -> tuple[float, float]:
    """Mean KL(reference || current) of the routers' softmax over tokens and layers, and mean top-k agreement."""
    kls, agree = [], []
    for p, q in zip(reference, current):
        lp, lq = F.log_softmax(p, dim=-1), F.log_softmax(q, dim=-1)
        kls.append(float((lp.exp() * (lp - lq)).sum(-1).mean()))
        tp, tq = p.topk(top_k, dim=-1).indices, q.topk(top_k, dim=-1).indices
        same = (tp.unsqueeze(-1) == tq.unsqueeze(-2)).any(-1).float().sum(-1) / top_k
        agree.append(float(same.mean()))
    return float(np.mean(kls)), float(np.mean(agree))


__all__ = ["Estimates", "QuantMoE", "lm_metrics", "router_shift", "split_tokens"]
