"""Oblivious attackers on sketches of resettable streams (baselines for SketchAttack-v0).

An oblivious adversary fixes its stream without looking at the answers; a
sketch's ordinary (non-adaptive) guarantee covers it. Both baselines ignore
the observation entirely.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent

OP_INCREMENT, OP_RESET, OP_QUERY = 0, 1, 2


def budgets(spec: AgentSpec) -> tuple[int, int, int, int, str]:
    """``(n_keys, max_increment, update_budget, query_budget, statistic)`` of an episode of ``spec``'s env."""
    nvec = np.asarray(spec.action_space.nvec)
    kw = dict(spec.card.default_kwargs) if spec.card is not None else {}
    kw.update(spec.env_kwargs or {})
    return (
        int(nvec[1]),
        int(nvec[2]),
        int(kw.get("update_budget", 1000)),
        int(kw.get("query_budget", 1000)),
        str(kw.get("statistic", "cardinality")),
    )


class ObliviousRandomStream(BaseAgent):
    """A random stream fixed in advance: increments of random keys by random amounts, resets of
    random keys with probability ``reset_prob``, queries spread evenly over the update budget.

    Args:
        reset_prob: the fraction of updates that are resets.
    """

    name = "sketch-oblivious-random"
    vectorized = "icmlgym.baselines.sketch_vector:VectorObliviousRandomStream"  # N seeds stepped together, for --batch-seeds

    def __init__(self, reset_prob: float = 0.2) -> None:
        super().__init__()
        if not 0.0 <= float(reset_prob) < 1.0:
            raise ValueError(f"reset_prob must be in [0, 1), got {reset_prob!r}")
        self.reset_prob = float(reset_prob)

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.n_keys, self.max_inc, u, q, _ = budgets(spec)
        self.query_frac = q / float(u + q)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        rng = self.np_random
        if rng.random() < self.query_frac:
            return np.array([OP_QUERY, 0, 0], dtype=np.int64)
        key = int(rng.integers(self.n_keys))
        if rng.random() < self.reset_prob:
            return np.array([OP_RESET, key, 0], dtype=np.int64)
        return np.array([OP_INCREMENT, key, int(rng.integers(self.max_inc))], dtype=np.int64)


class ObliviousWorstCaseStream(BaseAgent):
    """A fixed worst-case oblivious stream for sampling sketches: a sliding window of keys.

    Inserts ``window`` fresh keys, then churns: each update resets the oldest
    key of the window and inserts a fresh one, so the sketch sees many
    incarnations while ``F`` stays flat (and, for bottom-k, the threshold set by
    the first window never recovers from the resets). For ``sum`` and ``lp``
    every ``heavy_every``-th update instead adds ``max_increment`` to one heavy
    key, which uniform key sampling misses with probability ``1 - p``. A query
    follows every update while the query budget lasts. The agent's seed only
    relabels the keys.

    Args:
        window: keys alive at once (default: a quarter of the key universe).
        heavy_every: period of the heavy-key increments (sum / lp).
    """

    name = "sketch-oblivious-worst"
    vectorized = "icmlgym.baselines.sketch_vector:VectorObliviousWorstCaseStream"  # N seeds stepped together, for --batch-seeds

    def __init__(self, window: int | None = None, heavy_every: int = 3) -> None:
        super().__init__()
        if window is not None and int(window) < 1:
            raise ValueError(f"window must be a positive integer, got {window!r}")
        if int(heavy_every) < 1:
            raise ValueError(f"heavy_every must be a positive integer, got {heavy_every!r}")
        self.window = window
        self.heavy_every = int(heavy_every)

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.n_keys, self.max_inc, _, _, self.statistic = budgets(spec)
        self.labels = self.np_random.permutation(self.n_keys)
        # at most half the keys alive, so a key is reused (a new incarnation) only after its reset
        self.w = int(max(1, min(self.window or self.n_keys // 4, (self.n_keys - 1) // 2)))
        self.heavy = int(self.labels[-1])
        self.next_key = 0  # index into labels of the next fresh key
        self.alive: list[int] = []
        self.updates = 0
        self.pending_reset: int | None = None
        self.query_next = False

    def _fresh(self) -> int:
        key = int(self.labels[self.next_key % (self.n_keys - 1 if self.n_keys > 1 else 1)])
        self.next_key += 1
        return key

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        queries_left = float(obs[2])
        if self.query_next and queries_left > 0:
            self.query_next = False
            return np.array([OP_QUERY, 0, 0], dtype=np.int64)
        self.query_next = True
        self.updates += 1
        if self.statistic != "cardinality" and self.updates % self.heavy_every == 0:
            return np.array([OP_INCREMENT, self.heavy, self.max_inc - 1], dtype=np.int64)
        if self.pending_reset is not None:
            key, self.pending_reset = self.pending_reset, None
            return np.array([OP_RESET, key, 0], dtype=np.int64)
        key = self._fresh()
        self.alive.append(key)
        if len(self.alive) > self.w:
            self.pending_reset = self.alive.pop(0)
        return np.array([OP_INCREMENT, key, 0], dtype=np.int64)
