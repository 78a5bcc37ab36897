"""Baselines for LatentActionTransfer-v0: LAPO, the same LAM without alignment, behaviour cloning from the labels."""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.agents.vision import (
    N_ACTIONS,
    LatentActionAgent,
    LaViDAgent,
    labelled_set,
    transition_encoder,
    transition_features,
)


class LAPOAgent(LatentActionAgent):
    """LAPO: inverse and forward dynamics with vector-quantised latent actions (a codebook of ``codes``), no alignment."""

    quantise = True


class NoAlignAgent(LatentActionAgent):
    """Seq-Delta-REPA's continuous-latent LAM trained on the same clips without the alignment loss."""


class LabelBCAgent(BaseAgent):
    """Behaviour cloning from the same labels: the IDM's network (convolutions over the cells) from a transition to its action,
    fitted per episode on the labelled transitions only (no pre-training)."""

    def __init__(self, hidden: int = 16, steps: int = 200, lr: float = 2e-3, weight_decay: float = 1e-3) -> None:
        super().__init__()
        self.hidden, self.steps, self.lr, self.weight_decay = int(hidden), int(steps), float(lr), float(weight_decay)
        self._net = None

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._seed = 0 if seed is None else int(seed)
        self._net = None

    def _fit(self, info: dict[str, Any]) -> None:
        import torch

        from icmlgym.nn.runtime import current, seed_everything

        b, a, y = labelled_set(info)
        seed_everything(self._seed)
        x = torch.as_tensor(transition_features(b, a))
        t = torch.as_tensor(y)
        net = transition_encoder(self.hidden, N_ACTIONS)
        opt = torch.optim.Adam(net.parameters(), lr=self.lr, weight_decay=self.weight_decay)
        for _ in range(self.steps):
            loss = torch.nn.functional.cross_entropy(net(x), t)
            opt.zero_grad()
            loss.backward()
            opt.step()
        ctx = current()
        if ctx is not None:
            ctx.meter.add("gradient_steps", self.steps)
            ctx.meter.add("train_examples", self.steps * len(x))
        self._net = net.eval()

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> int:
        import torch

        if self._net is None or "labelled" in info:
            self._fit(info)
        with torch.no_grad():
            x = torch.as_tensor(transition_features(np.asarray(obs["before"])[None], np.asarray(obs["after"])[None]))
            return int(self._net(x).argmax(1)[0])


__all__ = ["LAPOAgent", "LabelBCAgent", "NoAlignAgent"]


class SoftTargetAgent(LaViDAgent):
    """A LaViD comparator: the same per-epoch schedule with another soft-target source
    (``none``: cross-entropy only; ``smoothing``; ``shuffled`` or ``oracle`` signatures; the
    visual teacher through ``visual-kd``, ``dkd`` or ``mlkd``; on LanguageToVisualKD-v1 the vision-language
    teacher through ``vlm``, MaKD)."""

    def __init__(self, teacher: str = "none", weight: float = 1.0, temperature: float = 4.0, standardise: bool = False) -> None:
        super().__init__(teacher, 0.0 if teacher == "none" else weight, temperature, standardise)


__all__ += ["SoftTargetAgent"]
