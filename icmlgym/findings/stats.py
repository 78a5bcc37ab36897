"""Paired statistics over independent units: a bootstrap interval and an exact sign-flip test."""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

from icmlgym.findings.claims import DOES_NOT_HOLD, HOLDS, NOT_AT_SCALE

N_BOOT = 10_000
EXACT_UP_TO = 16  # units; beyond, the sign-flip test samples 2**16 random sign patterns


@dataclass(frozen=True)
class Effect:
    """The mean per-unit difference, its percentile-bootstrap 95% interval and a one-sided p-value."""

    mean: float
    low: float
    high: float
    p_value: float
    n: int


def paired_effect(diff: np.ndarray, direction: str, ci: float = 0.95, n_boot: int = N_BOOT, seed: int = 0) -> Effect:
    """Effect of per-unit differences ``diff`` (NaNs dropped).

    The interval resamples units with replacement (``n_boot`` draws, fixed ``seed`` so the
    table is reproducible). The p-value is the one-sided sign-flip (paired permutation) test
    of "mean difference = 0" against ``direction`` (``greater``/``less``): exact over all
    ``2**n`` sign patterns up to 16 units, Monte Carlo beyond.
    """
    d = np.asarray(diff, dtype=float)
    d = d[np.isfinite(d)]
    n = d.size
    if n == 0:
        return Effect(math.nan, math.nan, math.nan, math.nan, 0)
    rng = np.random.default_rng(seed)
    boot = d[rng.integers(0, n, size=(n_boot, n))].mean(axis=1)
    a = (1.0 - ci) / 2.0
    low, high = np.quantile(boot, [a, 1.0 - a])
    obs = d.mean()
    if n <= EXACT_UP_TO:
        signs = np.array(list(itertools.product((1.0, -1.0), repeat=n)))
    else:
        signs = rng.choice((1.0, -1.0), size=(1 << EXACT_UP_TO, n))
    null = (signs * np.abs(d)).mean(axis=1)
    eps = 1e-12 * max(1.0, abs(obs))
    p = np.mean(null >= obs - eps) if direction == "greater" else np.mean(null <= obs + eps)
    return Effect(float(obs), float(low), float(high), float(p), int(n))


def verdict(effect: Effect, direction: str, min_effect: float = 0.0) -> str:
    """holds / does not hold / not at our scale (see :class:`icmlgym.findings.claims.Finding`)."""
    if effect.n == 0 or not math.isfinite(effect.low):
        return NOT_AT_SCALE
    sign = 1.0 if direction == "greater" else -1.0
    lo, hi = sorted((sign * effect.low, sign * effect.high))
    if lo > 0 and sign * effect.mean >= min_effect:
        return HOLDS
    if hi < 0:
        return DOES_NOT_HOLD
    return NOT_AT_SCALE
