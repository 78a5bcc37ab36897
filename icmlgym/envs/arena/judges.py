"""Held-out judges: synthetic choosers drawn from a distribution of tastes around the optimised one.

An optimiser that is judged by the very utility it optimised can only look good. A held-out
judge has other feature weights (each weight moved by Gaussian noise of standard deviation
``spread`` times the mean absolute weight), another decision noise (temperature drawn
log-uniformly in [1/2, 2]) and another position bias (first-slot bias uniform in [0, 0.8]).
ChoiceArena-v0 draws ``heldout_judges`` of them per episode (from the episode's seed, after the
episode, so that the episode itself is unchanged) and reports the edited photo's win rate
under them beside the win rate under the chooser the agent queried: the transfer of an
optimised edit to judges with other tastes.
"""

from __future__ import annotations

import numpy as np

from icmlgym.envs.arena.choosers import DEFAULT_WEIGHTS, SyntheticChooser
from icmlgym.envs.arena.features import FEATURES


def draw_judges(n: int, seed: int, spread: float = 0.5, base: dict[str, float] | None = None) -> list[SyntheticChooser]:
    """``n`` synthetic judges with tastes around ``base`` (default: the default chooser's weights)."""
    if n < 0:
        raise ValueError(f"the number of held-out judges must be >= 0, got {n}")
    if spread < 0:
        raise ValueError(f"judge_spread must be >= 0, got {spread}")
    w0 = np.array([float((base or DEFAULT_WEIGHTS).get(f, 0.0)) for f in FEATURES])
    scale = float(np.mean(np.abs(w0))) or 1.0
    rng = np.random.default_rng(seed)
    judges = []
    for _ in range(n):
        w = w0 + spread * scale * rng.normal(size=len(w0))
        temperature = float(np.exp(rng.uniform(np.log(0.5), np.log(2.0))))
        bias = float(rng.uniform(0.0, 0.8))
        judges.append(SyntheticChooser(weights=dict(zip(FEATURES, w)), position_bias=(bias,), temperature=temperature, mode="exact", seed=0))
    return judges
