"""Run findings through the runner, store the runs, and compute each finding's effect and verdict."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from icmlgym.catalog import canonical_json, card
from icmlgym.findings.claims import MIN_UNITS, Arm, Finding
from icmlgym.findings.stats import Effect, paired_effect, verdict
from icmlgym.runner import RunRecord, RunTask, make_tasks, run_tasks


@dataclass
class Result:
    """A finding evaluated on a set of units."""

    finding: Finding
    units: list[int]
    tier: str
    treatment: np.ndarray  # per-unit values (NaN: undefined on that unit)
    control: np.ndarray
    effect: Effect
    verdict: str
    failed_runs: list[str] = field(default_factory=list)

    @property
    def matches_declaration(self) -> bool:
        return self.verdict == self.finding.expected

    def row(self) -> dict[str, Any]:
        """One table row (what ``icmlgym findings`` prints)."""
        e = self.effect
        return {
            "family": self.finding.family,
            "finding": self.finding.id,
            "claim": self.finding.comparison,
            "metric": self.finding.measure.describe(),
            "unit": f"{self.finding.unit} x{e.n}",
            "treatment": float(np.nanmean(self.treatment)) if np.isfinite(self.treatment).any() else math.nan,
            "control": float(np.nanmean(self.control)) if np.isfinite(self.control).any() else math.nan,
            "effect": e.mean,
            "ci_low": e.low,
            "ci_high": e.high,
            "p_value": e.p_value,
            "verdict": self.verdict,
            "declared": self.finding.expected,
        }


def _key(arm: Arm, unit: int, variant: dict, seed: int, tier: str) -> str:
    # the same key as _record_key gives the record of this run (shipped agents are named by their name)
    return canonical_json([card(arm.env_id).id, arm.agent, arm.env_kwargs_for(unit, variant), dict(arm.agent_kwargs), seed, tier, arm.episodes])


def _tasks(arm: Arm, unit: int, tier: str) -> list[tuple[str, RunTask]]:
    out = []
    for variant in arm.variants:
        kw = arm.env_kwargs_for(unit, dict(variant))
        for t in make_tasks(arm.env_id, arm.agent, arm.seeds(unit), tier, kw, dict(arm.agent_kwargs), episodes=arm.episodes):
            out.append((_key(arm, unit, dict(variant), t.seed, tier), t))
    return out


def check_units(units: Sequence[int]) -> list[int]:
    units = [int(u) for u in units]
    if len(set(units)) != len(units):
        raise ValueError(f"units must be distinct, got {units}")
    if len(units) < MIN_UNITS:
        raise ValueError(f"a finding needs at least {MIN_UNITS} independent units, got {len(units)}: {units}")
    return units


def evaluate(
    findings: Finding | Iterable[Finding],
    units: Sequence[int] | None = None,
    tier: str = "smoke",
    executor: str = "inprocess",
    workers: int | None = None,
    on_record: Callable[[RunRecord], None] | None = None,
    progress: bool = False,
) -> list[Result]:
    """Evaluate findings on ``units`` (default: each finding's ``test_units``).

    A finding not declared at ``tier`` (its ``tiers``) is skipped: no result.
    Every run goes through :func:`icmlgym.runner.run_tasks` (one call for all findings, so a
    run two findings share happens once); ``on_record`` sees each record (e.g.
    ``Leaderboard.add`` to store them). A failed run leaves its unit without a value.
    """
    fs = [f for f in ([findings] if isinstance(findings, Finding) else findings) if tier in f.tiers]
    plan: dict[str, RunTask] = {}
    per: list[tuple[Finding, list[int]]] = []
    for f in fs:
        us = check_units(f.test_units if units is None else units)
        per.append((f, us))
        for arm in f.arms:
            for u in us:
                for k, t in _tasks(arm, u, tier):
                    plan.setdefault(k, t)
    recs = run_tasks(list(plan.values()), executor=executor, workers=workers, on_record=on_record, progress=progress)
    episodes = {k: t.episodes for k, t in plan.items()}
    records = {_record_key(r, episodes): r for r in recs}
    return [_result(f, us, tier, records) for f, us in per]


def _record_key(r: RunRecord, episodes: dict[str, int | None]) -> str:
    base = [r.env_id, r.agent_name, r.env_kwargs, r.agent_kwargs, r.seed, r.tier]
    # a run's requested episode count is not in its record: match the planned key that has it
    for n in (len(r.episodes), None):
        k = canonical_json(base + [n])
        if k in episodes and episodes[k] == n:
            return k
    return canonical_json(base + [len(r.episodes)])


def _arm_values(f: Finding, arm: Arm, units: list[int], tier: str, records: dict[str, RunRecord], failed: list[str]) -> np.ndarray:
    vals = []
    for u in units:
        groups, ok = [], True
        for variant in arm.variants:
            g = []
            for s in arm.seeds(u):
                r = records.get(_key(arm, u, dict(variant), s, tier))
                if r is None or r.status != "ok":
                    failed.append(f"{arm.label} unit {u} seed {s}: {'missing' if r is None else r.error.strip().splitlines()[-1:]}")
                    ok = False
                    continue
                g.append(r)
            groups.append(g)
        vals.append(f.measure.value(groups, [dict(v) for v in arm.variants]) if ok else math.nan)
    return np.array(vals, dtype=float)


def _result(f: Finding, units: list[int], tier: str, records: dict[str, RunRecord]) -> Result:
    failed: list[str] = []
    treat = _arm_values(f, f.treatment, units, tier, records, failed)
    if isinstance(f.control, Arm):
        ctrl = _arm_values(f, f.control, units, tier, records, failed)
    else:
        ctrl = np.full(len(units), float(f.control))
    effect = paired_effect(treat - ctrl, f.direction)
    return Result(f, units, tier, treat, ctrl, effect, verdict(effect, f.direction, f.min_effect), failed)
