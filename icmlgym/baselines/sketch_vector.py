"""Vector twins of the oblivious sketch attackers (see :mod:`icmlgym.agents.vector`).

- :class:`VectorObliviousWorstCaseStream`: the worst-case stream's schedule (queries, the heavy
  key, the sliding window's inserts and resets) depends on nothing but the step and the query
  budget left, which is the same for every seed still playing, so it runs once, on label
  indices, and each seed maps the indices through its own permutation of the keys: one
  schedule step and one gather per step for all seeds.
- :class:`VectorObliviousRandomStream`: the random stream interleaves ``random()`` and
  ``integers()`` calls on each seed's generator (a double takes a whole 64-bit output, a small
  integer a buffered 32-bit half), so its draws stay the single agent's own calls: one single
  agent per seed (:class:`~icmlgym.agents.vector.PerSeedAgents`), the env and the loop batched.
"""

from __future__ import annotations

from collections import deque
from typing import Any, Sequence

import numpy as np

from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.vector import PerSeedAgents, VectorBaseAgent
from icmlgym.baselines.sketch import OP_INCREMENT, OP_QUERY, OP_RESET, ObliviousRandomStream, ObliviousWorstCaseStream


class VectorObliviousRandomStream(PerSeedAgents):
    """N seeds of :class:`~icmlgym.baselines.sketch.ObliviousRandomStream`, one single agent per seed."""

    single = ObliviousRandomStream
    idle = (OP_QUERY, 0, 0)


class VectorObliviousWorstCaseStream(VectorBaseAgent):
    """N seeds of :class:`~icmlgym.baselines.sketch.ObliviousWorstCaseStream`: one schedule, per-seed labels.

    Takes the single agent's constructor arguments (checked with its messages)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__()
        self.template = ObliviousWorstCaseStream(**kwargs)

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        t = self.template
        t.reset(seeds[0] if len(seeds) else None, spec)  # seed 0's single agent: the sizes and window
        self.n_keys, self.max_inc, self.statistic, self.w, self.heavy_every = t.n_keys, t.max_inc, t.statistic, t.w, t.heavy_every
        self.labels = np.stack([rng.permutation(self.n_keys) for rng in self.rngs]).astype(np.int64, copy=False)
        self.cycle = self.n_keys - 1 if self.n_keys > 1 else 1
        self.next_key = 0
        self.alive: deque[int] = deque()  # label indices
        self.updates = 0
        self.pending: int | None = None
        self.query_next = False
        self.live = np.ones(self.num, dtype=bool)
        self._first_live = 0
        self._out = np.zeros((self.num, 3), dtype=np.int64)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        out = self._out.copy()
        # every seed still playing has made the same moves, so has the same queries left
        if self.query_next and float(obs[self._first_live, 2]) > 0:
            self.query_next = False
            out[:, 0] = OP_QUERY
            return out
        self.query_next = True
        self.updates += 1
        if self.statistic != "cardinality" and self.updates % self.heavy_every == 0:
            out[:, 0] = OP_INCREMENT
            out[:, 1] = self.labels[:, -1]
            out[:, 2] = self.max_inc - 1
            return out
        if self.pending is not None:
            idx, self.pending = self.pending, None
            out[:, 0] = OP_RESET
            out[:, 1] = self.labels[:, idx]
            return out
        idx = self.next_key % self.cycle
        self.next_key += 1
        self.alive.append(idx)
        if len(self.alive) > self.w:
            self.pending = self.alive.popleft()
        out[:, 0] = OP_INCREMENT
        out[:, 1] = self.labels[:, idx]
        return out

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        ended = np.logical_or(terminated, truncated)
        if ended[self._first_live]:
            self.live &= ~ended
            live = np.flatnonzero(self.live)
            self._first_live = int(live[0]) if len(live) else 0


__all__ = ["VectorObliviousRandomStream", "VectorObliviousWorstCaseStream"]
