"""Baselines for the choice arenas: no edit, greedy coordinate search, cross-entropy method, UCB over edits.

Random edits are the generic ``random`` agent (it samples the Dict action space:
a uniform edit type and a uniform magnitude). Greedy, CEM and UCB share the
keep-what-wins machinery of :class:`icmlgym.agents.arena.IncumbentAgent`, so
they differ from the reference only in how they propose edits.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.arena import IncumbentAgent
from icmlgym.agents.protocol import AgentSpec, BaseAgent


class NoEditAgent(BaseAgent):
    """Never changes the photo: sets edit 0 to its current magnitude (0) every step."""

    name = "arena-no-edit"

    def act(self, obs: dict[str, np.ndarray], info: dict[str, Any]) -> dict[str, Any]:
        return {"edit": 0, "magnitude": np.array([obs["theta"][0]], dtype=np.float32)}


class GreedyCoordinateAgent(IncumbentAgent):
    """Greedy coordinate search: for each edit type in turn try ``+step`` then ``-step``
    from the incumbent; after a full pass with no improvement halve the step.

    Args:
        step: initial step; min_step: smallest step (the search then keeps cycling at it).
    """

    name = "arena-greedy"

    def __init__(self, step: float = 0.5, min_step: float = 0.125, drift_penalty: float | None = None) -> None:
        super().__init__(drift_penalty=drift_penalty)
        if not 0 < min_step <= step <= 1:
            raise ValueError(f"need 0 < min_step <= step <= 1, got {min_step}, {step}")
        self.step0, self.min_step = step, min_step

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.step = self.step0
        self.coord = 0
        self.sign = 1.0
        self.improved_in_pass = False

    def _advance(self) -> None:
        if self.sign > 0:
            self.sign = -1.0
            return
        self.sign = 1.0
        self.coord += 1
        if self.coord == self.n_edits:
            self.coord = 0
            if not self.improved_in_pass:
                self.step = max(self.min_step, self.step / 2)
            self.improved_in_pass = False

    def prefers_edit(self) -> int | None:
        return self.coord

    def propose(self, theta_inc: np.ndarray) -> tuple[int, float]:
        for _ in range(2 * self.n_edits):
            m = float(np.clip(theta_inc[self.coord] + self.sign * self.step, -1, 1))
            if m != theta_inc[self.coord]:
                return self.coord, m
            self._advance()
        return self.coord, float(theta_inc[self.coord])  # every coordinate sits at a bound

    def feedback(self, edit: int, magnitude: float, gain: float, accepted: bool) -> None:
        if accepted:
            self.improved_in_pass = True
            self.sign = 1.0
            self.coord = (self.coord + 1) % self.n_edits
            if self.coord == 0:
                self.improved_in_pass = False
        else:
            self._advance()


class CrossEntropyAgent(IncumbentAgent):
    """Cross-entropy method over edit proposals.

    The proposal distribution is a categorical over edit types and, per type, a
    Gaussian over the absolute magnitude. Each generation of ``population`` proposals
    is scored by its gain over the incumbent; the ``elite`` best refit the distribution
    (smoothed by ``smoothing``).
    """

    name = "arena-cem"

    def __init__(
        self,
        population: int = 6,
        elite: int = 2,
        smoothing: float = 0.7,
        init_std: float = 0.6,
        min_std: float = 0.1,
        drift_penalty: float | None = None,
    ) -> None:
        super().__init__(drift_penalty=drift_penalty)
        if not 1 <= elite < population:
            raise ValueError(f"need 1 <= elite < population, got elite={elite}, population={population}")
        if not 0 < smoothing <= 1:
            raise ValueError(f"smoothing must lie in (0, 1], got {smoothing}")
        self.population, self.elite, self.smoothing = population, elite, smoothing
        self.init_std, self.min_std = init_std, min_std

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.probs = np.full(self.n_edits, 1.0 / self.n_edits)
        self.mu = np.zeros(self.n_edits)
        self.std = np.full(self.n_edits, self.init_std)
        self.generation: list[tuple[int, float, float]] = []

    def propose(self, theta_inc: np.ndarray) -> tuple[int, float]:
        e = int(self.np_random.choice(self.n_edits, p=self.probs))
        m = float(np.clip(self.mu[e] + self.std[e] * self.np_random.standard_normal(), -1, 1))
        if abs(m - theta_inc[e]) < 0.05:  # a proposal must change something
            m = float(np.clip(theta_inc[e] + (0.3 if m <= 0.7 else -0.3), -1, 1))
        return e, m

    def feedback(self, edit: int, magnitude: float, gain: float, accepted: bool) -> None:
        self.generation.append((edit, magnitude, gain))
        if len(self.generation) < self.population:
            return
        elite = sorted(self.generation, key=lambda g: -g[2])[: self.elite]
        counts = np.bincount([g[0] for g in elite], minlength=self.n_edits) / self.elite
        a = self.smoothing
        self.probs = (1 - a) * self.probs + a * counts
        self.probs = np.maximum(self.probs, 0.02)
        self.probs /= self.probs.sum()
        for e in {g[0] for g in elite}:
            ms = np.array([g[1] for g in elite if g[0] == e])
            self.mu[e] = (1 - a) * self.mu[e] + a * ms.mean()
            self.std[e] = max(self.min_std, (1 - a) * self.std[e] + a * (ms.std() if len(ms) > 1 else self.std[e] * 0.7))
        self.generation = []


class UCBEditAgent(IncumbentAgent):
    """UCB1 over a grid of discrete edits (edit type x absolute magnitude level).

    Each arm sets one edit type to one level; its reward is the score gain over the
    incumbent. Untried arms go first, in a random order; then the UCB1 index
    ``mean + c * sqrt(2 ln t / n)`` picks the arm.
    """

    name = "arena-ucb"

    def __init__(self, levels: tuple[float, ...] = (-0.8, -0.4, 0.4, 0.8), c: float = 0.1, drift_penalty: float | None = None) -> None:
        super().__init__(drift_penalty=drift_penalty)
        if not levels or any(not -1 <= x <= 1 for x in levels):
            raise ValueError(f"levels must be magnitudes in [-1, 1], got {levels}")
        if c < 0:
            raise ValueError(f"c must be non-negative, got {c}")
        self.levels = tuple(float(x) for x in levels)
        self.c = c

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        n = self.n_edits * len(self.levels)
        self.counts = np.zeros(n)
        self.sums = np.zeros(n)
        self.order = list(self.np_random.permutation(n))
        self._arm = 0

    def _pick(self, theta_inc: np.ndarray) -> int:
        L = len(self.levels)
        valid = np.array([self.levels[a % L] != theta_inc[a // L] for a in range(len(self.counts))])
        for a in self.order:
            if self.counts[a] == 0 and valid[a]:
                return int(a)
        t = self.counts.sum()
        with np.errstate(divide="ignore", invalid="ignore"):
            idx = self.sums / self.counts + self.c * np.sqrt(2 * np.log(max(t, 1.0)) / self.counts)
        idx[~valid] = -np.inf
        return int(np.argmax(idx))

    def propose(self, theta_inc: np.ndarray) -> tuple[int, float]:
        self._arm = self._pick(theta_inc)
        L = len(self.levels)
        return self._arm // L, self.levels[self._arm % L]

    def feedback(self, edit: int, magnitude: float, gain: float, accepted: bool) -> None:
        self.counts[self._arm] += 1
        self.sums[self._arm] += gain
