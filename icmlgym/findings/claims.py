"""Claims as data: what a finding compares, on which unit, in which direction, by how much.

A :class:`Finding` is a declaration, never code that runs experiments: it names the
paper's claim (quoted), the two sides of the comparison (each an :class:`Arm`: an env,
an agent and their arguments), the metric (a :class:`Measure` turning the runs of one
independent unit into one number), the claimed direction, the independent unit and the
smallest effect that counts. :mod:`icmlgym.findings.evaluate` runs the arms through the
runner and :mod:`icmlgym.findings.stats` turns the per-unit values into an interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icmlgym.catalog import TIERS

HOLDS = "holds"
DOES_NOT_HOLD = "does not hold"
NOT_AT_SCALE = "not at our scale"
VERDICTS = (HOLDS, DOES_NOT_HOLD, NOT_AT_SCALE)
DIRECTIONS = ("greater", "less")
MIN_UNITS = 10


class Measure:
    """Turns the runs of one independent unit into one number (NaN when it is undefined)."""

    def value(self, runs: Sequence[Sequence[Any]], variants: Sequence[Mapping[str, Any]]) -> float:
        """``runs[i]``: the run records of variant ``i`` of one unit (one per seed of the unit)."""
        raise NotImplementedError

    def describe(self) -> str:
        raise NotImplementedError


@dataclass(frozen=True)
class Mean(Measure):
    """The mean of an episode metric over every episode of the unit (all its variants and seeds).

    ``given``: keep only the episodes whose metric ``given`` is 1 (e.g. steps *given success*);
    a unit with no such episode has no value (it drops out of the paired comparison, and the
    table says how many did).
    """

    metric: str
    given: str | None = None

    def value(self, runs, variants) -> float:
        vals = []
        for group in runs:
            for rec in group:
                for ep in rec.episodes:
                    if self.given is not None and ep.metrics.get(self.given, 0.0) < 0.5:
                        continue
                    vals.append(ep.metrics[self.metric])
        return float(np.mean(vals)) if vals else math.nan

    def describe(self) -> str:
        return self.metric if self.given is None else f"{self.metric} | {self.given}"


@dataclass(frozen=True)
class Share(Measure):
    """The fraction of the unit's episodes whose metric is at most ``at_most`` (e.g. runs with
    no closure violation: ``Share("closure_violations", 0)``)."""

    metric: str
    at_most: float = 0.0

    def value(self, runs, variants) -> float:
        vals = [ep.metrics[self.metric] <= self.at_most for group in runs for rec in group for ep in rec.episodes]
        return float(np.mean(vals)) if vals else math.nan

    def describe(self) -> str:
        return f"share with {self.metric} <= {self.at_most:g}"


@dataclass(frozen=True)
class ExAntePMeans(Measure):
    """Ex-ante p-means regret of the unit's runs (the expectation over the algorithm's
    randomness inside the mean, estimated across the unit's seeds per round); see
    :func:`icmlgym.leaderboard.exante.ex_ante_pmeans_regret` and docs/fairbandit.md."""

    p: float

    def value(self, runs, variants) -> float:
        from icmlgym.leaderboard.exante import ex_ante_pmeans_regret

        (group,) = runs
        return ex_ante_pmeans_regret(group, self.p)

    def describe(self) -> str:
        return "ex-ante Nash regret" if self.p == 0 else f"ex-ante p-means regret (p={self.p:g})"


@dataclass(frozen=True)
class Exponent(Measure):
    """The fitted exponent ``b`` of ``inner ~ a * x^b`` over the unit's variants, ``x`` the
    variants' env argument ``over`` (e.g. the horizon); least squares on log-log."""

    inner: Measure
    over: str = "horizon"

    def value(self, runs, variants) -> float:
        xs = np.array([float(v[self.over]) for v in variants])
        ys = np.array([self.inner.value([g], [v]) for g, v in zip(runs, variants)])
        if np.any(~np.isfinite(ys)) or np.any(ys <= 0):
            return math.nan
        return float(np.polyfit(np.log(xs), np.log(ys), 1)[0])

    def describe(self) -> str:
        return f"exponent of {self.inner.describe()} in {self.over}"


@dataclass(frozen=True)
class Arm:
    """One side of a comparison: an agent on an env with fixed arguments.

    Args:
        label: how the table names this side.
        env_id, agent: what runs (an agent name as ``icmlgym.run`` accepts it).
        env_kwargs, agent_kwargs: fixed arguments (they override the tier's).
        variants: env arguments that vary within a unit (e.g. the tasks of one world, the
            horizons of a rate fit); the measure sees the runs of every variant.
        unit_kwarg: the env argument set to the unit's id (e.g. ``instance_seed``, ``game_seed``);
            None when the run seed itself is the unit.
        runs_per_unit: seeds per unit and variant (e.g. random initialisations in one game).
        episodes: evaluation episodes per run (default: the tier's).
    """

    label: str
    env_id: str
    agent: str
    env_kwargs: Mapping[str, Any] = field(default_factory=dict)
    agent_kwargs: Mapping[str, Any] = field(default_factory=dict)
    variants: Sequence[Mapping[str, Any]] = ({},)
    unit_kwarg: str | None = None
    runs_per_unit: int = 1
    episodes: int | None = None

    def seeds(self, unit: int) -> list[int]:
        """The run seeds of one unit: the unit itself, or ``1000 * unit + j`` for several runs."""
        if self.runs_per_unit == 1:
            return [int(unit)]
        return [1000 * int(unit) + j for j in range(self.runs_per_unit)]

    def env_kwargs_for(self, unit: int, variant: Mapping[str, Any]) -> dict[str, Any]:
        kw = {**self.env_kwargs, **variant}
        if self.unit_kwarg is not None:
            kw[self.unit_kwarg] = int(unit)
        return kw


@dataclass(frozen=True)
class Finding:
    """A paper's claim as data (see the module docstring and docs/findings.md).

    The effect is ``measure(treatment) - measure(control)`` per unit (``control`` may be a
    number: a one-sample claim against it). The claim holds when the 95% interval of the
    mean effect lies on the ``direction`` side of zero and the mean effect is at least
    ``min_effect`` that way; it does not hold when the interval lies on the other side; any
    other outcome is "not at our scale". ``expected`` is the verdict we observe and declare
    (a claim that does not reproduce is declared so); ``test_units`` are the units the
    family's finding test runs; ``tiers`` are the tiers it is declared at (a claim too costly for
    the smoke tier leaves it out: :func:`~icmlgym.findings.evaluate.evaluate` skips it there).
    """

    id: str
    family: str
    claim: str
    source: str
    treatment: Arm
    control: Arm | float
    measure: Measure
    direction: str
    unit: str
    min_effect: float = 0.0
    expected: str = HOLDS
    test_units: Sequence[int] = tuple(range(10))
    note: str = ""
    tiers: Sequence[str] = TIERS

    def __post_init__(self) -> None:
        bad = [t for t in self.tiers if t not in TIERS]
        if bad or not self.tiers:
            raise ValueError(f"finding {self.id}: tiers must be a non-empty subset of {TIERS}, got {tuple(self.tiers)}")
        if self.direction not in DIRECTIONS:
            raise ValueError(f"finding {self.id}: direction must be one of {DIRECTIONS}, got {self.direction!r}")
        if self.expected not in VERDICTS:
            raise ValueError(f"finding {self.id}: expected must be one of {VERDICTS}, got {self.expected!r}")
        if len(self.test_units) < MIN_UNITS:
            raise ValueError(f"finding {self.id}: test_units names {len(self.test_units)} units, a finding needs >= {MIN_UNITS}")
        if self.min_effect < 0:
            raise ValueError(f"finding {self.id}: min_effect is a size (>= 0) in the claimed direction, got {self.min_effect}")

    @property
    def arms(self) -> list[Arm]:
        return [self.treatment] + ([self.control] if isinstance(self.control, Arm) else [])

    @property
    def comparison(self) -> str:
        ctrl = self.control.label if isinstance(self.control, Arm) else f"{self.control:g}"
        op = ">" if self.direction == "greater" else "<"
        return f"{self.treatment.label} {op} {ctrl}"


def tier_twins(findings: Sequence[Finding], verdicts: Mapping[str, tuple[str, str]], tier: str = "standard",
               base: str = "smoke") -> list[Finding]:
    """``findings`` with each one named in ``verdicts`` split in two: itself declared at ``base`` only, and a
    twin with the id ``<id>-<tier>`` declared at ``tier`` only with ``verdicts[id] = (expected, note)``.

    For a claim whose verdict differs by tier: the original keeps what ``base`` gave, the twin says what
    ``tier`` gave, so ``icmlgym findings FAMILY --tier TIER`` checks each tier against its own runs.
    A name in ``verdicts`` that is no finding's id is refused (a typo would silently declare nothing).
    """
    from dataclasses import replace

    unknown = set(verdicts) - {f.id for f in findings}
    if unknown:
        raise ValueError(f"tier_twins: no finding with the ids {sorted(unknown)}")
    out: list[Finding] = []
    for f in findings:
        if f.id not in verdicts:
            out.append(f)
            continue
        expected, note = verdicts[f.id]
        out.append(replace(f, tiers=(base,)))
        out.append(replace(f, id=f"{f.id}-{tier}", tiers=(tier,), expected=expected, note=note))
    return out
