"""Comparators of GEMQ on MoEQuantAlloc-v0: uniform bits, layer-wise allocation, routing-frequency importance."""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.hardware import MILPAllocator, SampleWeighter, group_action
from icmlgym.agents.protocol import BaseAgent
from icmlgym.envs.hardware.moe_env import expert_table


class UniformBitsAgent(BaseAgent):
    """Every expert at the largest offered width that fits the cap (equal memory or less); no router tuning."""

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        widths = [int(b) for b in np.asarray(obs["bit_widths"])]
        cap = float(np.asarray(obs["budget"])[0])
        fits = [b for b in widths if b <= cap + 1e-9]
        return group_action(obs, [max(fits)] * len(expert_table(obs, "experts")), False)


class LayerwiseAgent(MILPAllocator):
    """Layer-wise mixed precision (the paper's main comparator): each layer gets the cap's average bits
    over its own weights, and its experts are ranked by their layer-local error (the gated output
    error of the expert, which is not comparable across layers); no router tuning."""

    def __init__(self) -> None:
        super().__init__(importance="output_error", scope="layer", router_ft=False)


class FrequencyAgent(MILPAllocator):
    """Routing-frequency importance: the global program with cost = routing frequency x relative
    weight error (frequently routed experts keep more bits); no router tuning."""

    def __init__(self) -> None:
        super().__init__(importance="frequency", scope="global", router_ft=False)




# ----------------------------------------------------------------------------- CIMRobustTraining-v0


class StandardTrainingAgent(SampleWeighter):
    """Standard training: every sample's clean loss at weight 1, no noise."""

    def __init__(self) -> None:
        super().__init__(noisy=0)


class NoiseInjectionAgent(SampleWeighter):
    """Noise-injection training, uniform weights: on one realisation (``realisations=1``) or on all K."""

    def __init__(self, realisations: int | str = "all") -> None:
        super().__init__(noisy=realisations)


class LossWeightedAgent(SampleWeighter):
    """Hard-example weighting: the K noisy losses weighted by the sample's mean noisy loss."""

    def __init__(self) -> None:
        super().__init__(noisy="all", score="noisy_loss")


__all__ = ["FrequencyAgent", "LayerwiseAgent", "LossWeightedAgent", "NoiseInjectionAgent", "StandardTrainingAgent", "UniformBitsAgent"]
