"""Comparators of the heavy-tailed Dale RNN: each changes only the constraint on the recurrent weights.

Same data, optimiser, steps and initial gain (RMS of ``W_rec`` = ``gain / sqrt(n)``) as
:class:`icmlgym.agents.cognitive.HeavyTailedDaleAgent`:

- :class:`DaleAgent`: Dale's signs, the same log-normal start, no distribution constraint.
- :class:`LightTailedDaleAgent`: the same optimal-transport projection onto a light-tailed
  (half-normal) target with the log-normal's second moment: isolates the tail from the
  projection itself.
- :class:`UnconstrainedAgent`: a free Gaussian-initialised RNN.
- :class:`L1SparseAgent`: a free RNN with an L1 penalty on the recurrent weights.
"""

from __future__ import annotations

from icmlgym.agents.cognitive import RNNTrainerAgent


class DaleAgent(RNNTrainerAgent):
    """Dale's principle without a distribution constraint (log-normal start)."""

    name = "cognitive-dale"
    constraint_name = "dale"


class LightTailedDaleAgent(RNNTrainerAgent):
    """Dale's principle, magnitudes held to a half-normal of equal second moment by the same OT projection."""

    name = "cognitive-dale-halfnormal"
    constraint_name = "dale-halfnormal"


class UnconstrainedAgent(RNNTrainerAgent):
    """An unconstrained rate RNN."""

    name = "cognitive-unconstrained"
    constraint_name = "none"


class L1SparseAgent(RNNTrainerAgent):
    """An unconstrained rate RNN with an L1 penalty (default 1e-4) on its recurrent weights."""

    name = "cognitive-l1"
    constraint_name = "none"

    def __init__(self, l1: float = 1e-4, **kwargs) -> None:
        super().__init__(l1=l1, **kwargs)


__all__ = ["DaleAgent", "L1SparseAgent", "LightTailedDaleAgent", "UnconstrainedAgent"]
