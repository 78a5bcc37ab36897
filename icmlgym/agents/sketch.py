"""Adaptive attackers on sketches of resettable streams (the adversaries of SketchAttack-v0).

The reference attack (Cohen, Gribelyuk, Nelson & Stemmer 2026; in the line of
Cohen et al. ICML 2022 and Ahmadian & Cohen ICML 2024) probes the sketch one
key at a time: insert a key, query, and compare the rise of the published
answer with the rise of the true statistic, which the attacker knows because it
wrote the stream. A rise larger than the truth means the sketch counted the key
at more than its weight (a sampling sketch held it and scaled it by 1/p): reset
it. A smaller rise means the key is invisible or under-counted: keep it. The
kept keys are exactly the ones the sketch misses, so the true statistic grows
while the estimate does not. Comparing with the truth rather than with "did
the answer move" is what makes the attack work through output rounding: a
rounded output rides a rounding boundary after each detected key is reset,
so every later probe that the sketch holds crosses the boundary again.

Two refinements make it the known attacks on other defenders:

- ``repeats > 1`` averages several queries before and after each probe, which
  defeats defenders that re-randomise every answer (a DP median whose privacy
  loss composes over queries); it buys nothing against the Binary Tree
  Mechanism, whose answer does not change until the stream does.
- ``pump > 0`` re-adds kept keys (for ``sum`` and ``lp``): against a sampling
  sketch it grows an unsampled key's value at no cost to the estimate.
- With ``pump = 0`` the same rule is the greedy descent of the attacks on
  linear (CountSketch-style, median-estimator) sketches: keep exactly the
  fresh keys whose random column pulls the estimate below the truth
  (:class:`LinearDescentAttack`).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent

OP_INCREMENT, OP_RESET, OP_QUERY = 0, 1, 2


class ProbeResetAttack(BaseAgent):
    """Probe-and-reset: keep the keys the sketch under-counts, reset the ones it over-counts.

    Args:
        repeats: queries averaged for each reading of the published answer.
        pump: probability of re-adding a kept key instead of probing a fresh one
            (``sum`` and ``lp`` only; a nonzero key adds nothing to cardinality).
        amount: increment per probe; ``None`` = 1 for cardinality, ``max_increment`` otherwise.
        keep_ratio: keep a key when the published rise is at most ``keep_ratio`` times the true rise.
        warmup: fresh keys inserted (and kept) before probing starts, e.g. to make the answer
            large enough that output rounding hides single keys.
    """

    name = "sketch-probe-reset"
    vectorized = "icmlgym.agents.sketch_vector:VectorProbeResetAttack"  # N seeds in arrays, for --batch-seeds

    def __init__(self, repeats: int = 1, pump: float = 0.5, amount: int | None = None, keep_ratio: float = 1.0, warmup: int = 0) -> None:
        super().__init__()
        if int(warmup) < 0:
            raise ValueError(f"warmup must be a nonnegative integer, got {warmup!r}")
        self.warmup = int(warmup)
        if int(repeats) < 1:
            raise ValueError(f"repeats must be a positive integer, got {repeats!r}")
        if not 0.0 <= float(pump) <= 1.0:
            raise ValueError(f"pump must be a probability in [0, 1], got {pump!r}")
        if amount is not None and int(amount) < 1:
            raise ValueError(f"amount must be a positive integer, got {amount!r}")
        self.repeats = int(repeats)
        self.pump = float(pump)
        self.amount = amount
        self.keep_ratio = float(keep_ratio)

    def settings(self, spec: AgentSpec) -> tuple[int, int, str, float, int]:
        """``(n_keys, max_increment, statistic, q, step_amount)`` of an episode of ``spec``'s env."""
        nvec = np.asarray(spec.action_space.nvec)
        n_keys, max_inc = int(nvec[1]), int(nvec[2])
        kw = spec.env_kwargs or {}
        card_kw = spec.card.default_kwargs if spec.card is not None else {}
        statistic = kw.get("statistic", card_kw.get("statistic", "cardinality"))
        q = float(kw.get("q", card_kw.get("q", 0.5)))
        amount = self.amount if self.amount is not None else (1 if statistic == "cardinality" else max_inc)
        return n_keys, max_inc, statistic, q, int(min(max(1, amount), max_inc))

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.n_keys, self.max_inc, self.statistic, self.q, self.step_amount = self.settings(spec)
        self.fresh = [int(k) for k in self.np_random.permutation(self.n_keys)]
        self.values: dict[int, int] = {}  # the attacker's own copy of the true vector
        self.kept: list[int] = []
        self.plan: list[tuple[int, int, int]] = []
        self.readings: list[float] = []
        self.baseline: float | None = None
        self.probe: tuple[int, float] | None = None  # (key, true rise)
        self.stage = "baseline"
        for _ in range(min(self.warmup, len(self.fresh))):
            key = self.fresh.pop()
            self.values[key] = self.step_amount
            self.kept.append(key)
            self.plan.append((OP_INCREMENT, key, self.step_amount - 1))

    def _f(self, v: float) -> float:
        if self.statistic == "cardinality":
            return float(v > 0)
        if self.statistic == "sum":
            return float(v)
        return float(v) ** self.q

    def _queries(self) -> list[tuple[int, int, int]]:
        return [(OP_QUERY, 0, 0)] * self.repeats

    def _next_probe(self) -> list[tuple[int, int, int]]:
        if self.kept and self.statistic != "cardinality" and self.np_random.random() < self.pump:
            key = self.kept[int(self.np_random.integers(len(self.kept)))]
        elif self.fresh:
            key = self.fresh.pop()
        elif self.kept and self.statistic != "cardinality":
            key = self.kept[int(self.np_random.integers(len(self.kept)))]
        else:
            return self._queries()  # nothing left to probe: watch
        old = self.values.get(key, 0)
        new = old + self.step_amount
        self.probe = (key, self._f(new) - self._f(old))
        self.values[key] = new
        return [(OP_INCREMENT, key, self.step_amount - 1)] + self._queries()

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if not self.plan:
            self.plan = self._queries() if self.stage == "baseline" else self._next_probe()
        return np.array(self.plan.pop(0), dtype=np.int64)

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        if int(action[0]) != OP_QUERY:
            return
        self.readings.append(float(next_obs[0]))
        if len(self.readings) < self.repeats or self.plan:
            return
        reading = float(np.mean(self.readings))
        self.readings = []
        if self.stage == "baseline" or self.probe is None:
            self.baseline = reading
            self.stage = "probe"
            return
        key, true_rise = self.probe
        self.probe = None
        rise = reading - (self.baseline if self.baseline is not None else 0.0)
        # equal rises (an exact count) are kept: only over-counted keys give the sketch away
        if rise <= self.keep_ratio * true_rise + 1e-9 * (1.0 + abs(true_rise)):
            if key not in self.kept:
                self.kept.append(key)
            self.baseline = reading
        else:
            # over-counted: reset the key and read the answer again
            self.values.pop(key, None)
            if key in self.kept:
                self.kept.remove(key)
            self.plan = [(OP_RESET, key, 0)] + self._queries()
            self.stage = "baseline"


class ProbeAverageAttack(ProbeResetAttack):
    """Probe-and-reset that averages ``repeats`` queries per reading (defeats per-query noise)."""

    name = "sketch-probe-average"
    vectorized = "icmlgym.agents.sketch_vector:VectorProbeAverageAttack"  # N seeds in arrays, for --batch-seeds

    def __init__(self, repeats: int = 5, pump: float = 0.5, amount: int | None = None, keep_ratio: float = 1.0) -> None:
        super().__init__(repeats=repeats, pump=pump, amount=amount, keep_ratio=keep_ratio)


class LinearDescentAttack(ProbeResetAttack):
    """The attack on linear (CountSketch-style) median estimators: a greedy descent that adds fresh
    keys one at a time and keeps exactly those whose random column pulls the estimate below the
    truth (the rise of the answer is below the rise of the statistic), resetting the rest.

    It never re-adds a kept key (``pump = 0``): a column that lowered the median at one state of
    the sketch is no more likely than a fresh one to lower it later (we measured re-adding to
    cut the bias about in half). Its cost grows with the number of rows: at 256 rows it needs a
    few thousand updates."""

    name = "sketch-linear-descent"
    vectorized = "icmlgym.agents.sketch_vector:VectorLinearDescentAttack"  # N seeds in arrays, for --batch-seeds

    def __init__(self, repeats: int = 1, pump: float = 0.0, amount: int | None = None, keep_ratio: float = 1.0) -> None:
        super().__init__(repeats=repeats, pump=pump, amount=amount, keep_ratio=keep_ratio)


class ProbeRefreshAttack(ProbeResetAttack):
    """Probe-and-reset that knows the defender publishes a Binary Tree Mechanism's noisy prefix sum.

    Against :class:`~icmlgym.envs.sketch.sketches.DPTreeSketch` a repeated query returns the
    same value (the tree only moves when the stream does), so ``repeats`` alone learns nothing.
    This attacker spends updates instead: around every reading it resets a key it never
    inserted (``refresh`` times). Such a reset leaves the sampler's estimate unchanged but is a
    tree input, so the low-level nodes of the tree close and re-draw their noise; averaging the
    ``refresh + 1`` readings removes most of the noise that differs between the reading before
    a probe and the reading after it, and the probe's true effect (the key was held and counted
    at 1/p, or not) shows through. It pays ``refresh`` updates per reading out of the budget.
    """

    name = "sketch-probe-refresh"
    vectorized = "icmlgym.agents.sketch_vector:VectorProbeRefreshAttack"  # N seeds in arrays, for --batch-seeds

    def __init__(self, refresh: int = 8, pump: float = 0.5, amount: int | None = None, keep_ratio: float = 1.0, warmup: int = 0) -> None:
        if int(refresh) < 1:
            raise ValueError(f"refresh must be a positive integer, got {refresh!r}")
        super().__init__(repeats=int(refresh) + 1, pump=pump, amount=amount, keep_ratio=keep_ratio, warmup=warmup)
        self.refresh = int(refresh)

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        # a key never inserted: resetting it changes no count, only advances the tree
        self.dummy = self.fresh.pop(0)

    def _queries(self) -> list[tuple[int, int, int]]:
        plan = [(OP_QUERY, 0, 0)]
        for _ in range(self.refresh):
            plan += [(OP_RESET, self.dummy, 0), (OP_QUERY, 0, 0)]
        return plan
