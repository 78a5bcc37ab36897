"""Baselines for the screening family.

On ``icmlgym/Screening-v0`` (partition level):

- :class:`RoundRobinAgent` (``screening-round-robin``): uniform allocation, the
  arms in turn (skipping exhausted ones).
- :class:`PartitionEpsilonGreedyAgent` (``screening-epsilon-greedy``): the best
  mean reward among tried arms, a uniformly random available arm with
  probability ``epsilon`` (no initial sweep).
- the generic ``random`` and ``sb3-ppo`` apply as they are.

On ``icmlgym/ScreeningCompounds-v0`` (compound level):

- :class:`ReagentThompsonAgent` (``screening-reagent-thompson``): Thompson
  sampling over reagents (Klarich et al., JCIM 2024). Each building block at
  each position of each reaction has a Gaussian posterior over the objectives
  of the products that contain it; a step samples every block's posterior,
  takes the best block per position (and the best reaction by the mean of its
  sampled blocks), and evaluates that product. Klarich et al. warm up every
  reagent with three random products; at our budgets (a few hundred
  evaluations for hundreds of reagents) that alone would exceed the budget, so
  the prior is empirical Bayes (mean and spread of all objectives seen) and an
  untried reagent is sampled from it.
- :class:`RandomCompoundAgent` (``screening-random-compounds``): uniformly
  random compounds, the compound-level random baseline.
- :class:`FullLibraryGreedyAgent` (``screening-full-greedy``): MolPAL-style
  greedy with full-library inference each round (``op=1`` every step).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.agents.screening import PartitionBandit


class RoundRobinAgent(PartitionBandit):
    """Uniform allocation: every arm in turn, so each is pulled equally often.

    Args:
        order: ``"shuffled"`` (default): the arms in a random order drawn per seed, so every
            arm is equally likely to be reached within a budget shorter than a sweep;
            ``"index"``: arms 0, 1, 2, ... (a budget shorter than the arm count never reaches
            the last arms, which can hold the best compounds: not a fair comparator).
    """

    name = "screening-round-robin"

    def __init__(self, order: str = "shuffled") -> None:
        super().__init__()
        if order not in ("shuffled", "index"):
            raise ValueError(f"order must be 'shuffled' or 'index', got {order!r}")
        self.order = order

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._perm = self.np_random.permutation(self.n) if self.order == "shuffled" else np.arange(self.n)
        self._next = 0

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        avail = self._available(obs)
        for k in range(self.n):
            i = (self._next + k) % self.n
            a = int(self._perm[i])
            if avail[a]:
                self._next = i + 1
                return a
        return int(self._perm[self._next % self.n])


class PartitionEpsilonGreedyAgent(PartitionBandit):
    """Epsilon-greedy over partitions without an initial sweep (untried arms are explored at random)."""

    name = "screening-epsilon-greedy"

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon = float(epsilon)

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        avail = self._available(obs)
        tried = (self.counts > 0) & avail
        if not tried.any() or self.np_random.random() < self.epsilon:
            return int(self.np_random.choice(np.flatnonzero(avail)))
        return self._argmax(self.sums / np.maximum(self.counts, 1), tried)


class ReagentThompsonAgent(BaseAgent):
    """Thompson sampling over reagents (Klarich et al. 2024) on ScreeningCompounds-v0."""

    name = "screening-reagent-thompson"

    def __init__(self, max_resample: int = 20) -> None:
        super().__init__()
        self.max_resample = int(max_resample)

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.layout: list[dict] | None = None
        self._sums: list[list[np.ndarray]] = []
        self._counts: list[list[np.ndarray]] = []
        self._all: list[float] = []
        self._tried: set[int] = set()

    def _init_layout(self, layout: list[dict]) -> None:
        self.layout = layout
        self._sums = [[np.zeros(n) for n in r["shape"]] for r in layout]
        self._counts = [[np.zeros(n) for n in r["shape"]] for r in layout]

    def _prior(self) -> tuple[float, float]:
        if len(self._all) < 2:
            return (self._all[0] if self._all else 0.0), 1.0
        return float(np.mean(self._all)), max(float(np.std(self._all)), 1e-6)

    def _propose(self) -> int:
        m0, s0 = self._prior()
        var = s0 * s0
        best_val, best_idx = -np.inf, 0
        for r, lay in enumerate(self.layout):
            picks = []
            vals = []
            for k in range(len(lay["shape"])):
                prec = 1.0 / var + self._counts[r][k] / var
                mean = (m0 / var + self._sums[r][k] / var) / prec
                draw = self.np_random.normal(mean, 1.0 / np.sqrt(prec))
                b = int(np.argmax(draw))
                picks.append(b)
                vals.append(draw[b])
            v = float(np.mean(vals))
            if v > best_val:
                best_val = v
                best_idx = int(lay["offset"] + np.ravel_multi_index(tuple(picks), tuple(lay["shape"])))
        return best_idx

    def act(self, obs: Any, info: dict[str, Any]) -> dict[str, int]:
        if self.layout is None:
            if "layout" not in info:
                raise ValueError("ReagentThompsonAgent needs info['layout'] from ScreeningCompounds-v0's reset")
            self._init_layout(info["layout"])
        for _ in range(self.max_resample):
            idx = self._propose()
            if idx not in self._tried:
                break
        else:  # the posterior keeps proposing evaluated compounds: take a random untried one
            size = int(self.layout[-1]["offset"] + np.prod(self.layout[-1]["shape"]))
            idx = int(self.np_random.integers(size))
            while idx in self._tried and len(self._tried) < size:
                idx = int(self.np_random.integers(size))
        self._tried.add(idx)
        return {"op": 0, "compound": idx}

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        ev = info.get("evaluated")
        if not ev or self.layout is None:
            return
        offsets = np.array([lay["offset"] for lay in self.layout])
        for i, y in zip(np.asarray(ev["indices"]), np.asarray(ev["objectives"])):
            if not np.isfinite(y):
                continue
            self._all.append(float(y))
            r = int(np.searchsorted(offsets, i, side="right") - 1)
            lay = self.layout[r]
            coords = np.unravel_index(int(i - lay["offset"]), tuple(lay["shape"]))
            for k, b in enumerate(coords):
                self._sums[r][k][b] += y
                self._counts[r][k][b] += 1


class RandomCompoundAgent(BaseAgent):
    """Evaluates uniformly random compounds (never the same twice): the compound-level random baseline."""

    name = "screening-random-compounds"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._tried: set[int] = set()

    def act(self, obs: Any, info: dict[str, Any]) -> dict[str, int]:
        n = int(self.spec.action_space["compound"].n)
        idx = int(self.np_random.integers(n))
        while idx in self._tried and len(self._tried) < n:
            idx = int(self.np_random.integers(n))
        self._tried.add(idx)
        return {"op": 0, "compound": idx}


class FullLibraryGreedyAgent(BaseAgent):
    """MolPAL-style greedy: every step asks for a full-library inference round (``op=1``)."""

    name = "screening-full-greedy"

    def act(self, obs: Any, info: dict[str, Any]) -> dict[str, int]:
        return {"op": 1, "compound": 0}
