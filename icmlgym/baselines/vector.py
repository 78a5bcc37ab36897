"""Vector twins of the Discrete-action baselines (random, epsilon-greedy, UCB1, Bernoulli Thompson).

Each class plays N seeds of its single agent in lock step and reproduces it seed by
seed, bit for bit (see :mod:`icmlgym.agents.vector`): the arithmetic is the single
agent's, elementwise over a ``(N, n_actions)`` array, and every random draw of seed
``i`` comes from ``rngs[i]`` in the single agent's order. Tie-breaks and Beta samples
come from per-seed blocks (:mod:`icmlgym.baselines.draws`) shared with the single
agents; epsilon-greedy's exploration still loops over the seeds.
"""

from __future__ import annotations

import copy
from typing import Any, Sequence

import gymnasium as gym
import numpy as np

from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.vector import VectorBaseAgent
from icmlgym.baselines.draws import BetaBlocks, UniformBlocks, argmax_ties, argmax_ties_lockstep, log_of

_BLOCK = 1024  # uniform action indices drawn per generator call (the same stream as one call per step)
_MULTI_BLOCK = 256  # MultiDiscrete samples drawn per generator call


class VectorRandomAgent(VectorBaseAgent):
    """N seeds of :class:`icmlgym.baselines.generic.RandomAgent`."""

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        space = spec.action_space
        # the single agent seeds its action space with one draw from its own generator
        space_seeds = [int(rng.integers(2**31 - 1)) for rng in self.rngs]
        self._discrete = type(space) is gym.spaces.Discrete
        self._multi = type(space) is gym.spaces.MultiDiscrete
        if self._discrete or self._multi:  # the generator Space.seed(s) gives the space
            self._space_rngs = [np.random.Generator(np.random.PCG64(np.random.SeedSequence(s))) for s in space_seeds]
            self._pos = 0
        if self._discrete:
            self._start, self._n, self._dtype = int(space.start), int(space.n), space.dtype.type
            self._buffer = np.empty((0, self.num), dtype=self._dtype)  # step by seed: a step's actions are one contiguous row
        elif self._multi:
            # MultiDiscrete.sample is (random(shape) * nvec).astype(dtype) + start: a block of
            # uniforms of shape (B, *shape) is B such calls' uniforms in order, and the rest is elementwise
            self._space = space
            self._buffer = np.empty((self.num, 0) + space.shape, dtype=space.dtype)
        else:
            self._spaces = [copy.deepcopy(space) for _ in seeds]
            for sp, s in zip(self._spaces, space_seeds):
                sp.seed(s)

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if self._multi:
            if self._pos >= self._buffer.shape[1]:
                sp = self._space
                u = np.stack([rng.random((_MULTI_BLOCK,) + sp.shape) for rng in self._space_rngs])
                self._buffer = (u * sp.nvec).astype(sp.dtype) + sp.start
                self._pos = 0
            a = self._buffer[:, self._pos]
            self._pos += 1
            return a
        if not self._discrete:
            return np.stack([np.asarray(sp.sample()) for sp in self._spaces])
        if self._pos >= self._buffer.shape[0]:
            self._buffer = np.stack([rng.integers(self._n, size=_BLOCK, dtype=self._dtype) for rng in self._space_rngs], axis=1)
            self._pos = 0
        a = self._buffer[self._pos] + self._start
        self._pos += 1
        return a


class _VectorDiscreteValueAgent(VectorBaseAgent):
    """Per-seed counts and reward sums over a Discrete action space (``(N, n)`` arrays)."""

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        space = spec.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise TypeError(f"{type(self).__name__} needs a Discrete action space, got {space}")
        self.n = int(space.n)
        self.start = int(space.start)
        self.counts = np.zeros((self.num, self.n))
        self.sums = np.zeros((self.num, self.n))
        self._flat_counts, self._flat_sums = self.counts.ravel(), self.sums.ravel()  # views
        self.t = 0
        self._rows = np.arange(self.num)
        self._offsets = self._rows * self.n  # row starts in the flattened (N, n) arrays
        self._any_untried = True
        self._ties = UniformBlocks(self.rngs)

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        flat = self._offsets + (np.asarray(actions) - self.start if self.start else actions)
        self._flat_counts[flat] += 1
        self._flat_sums[flat] += rewards if type(rewards) is np.ndarray and rewards.dtype == np.float64 else np.asarray(rewards, dtype=np.float64)
        self.t += 1

    def _untried(self) -> tuple[np.ndarray, np.ndarray] | None:
        """(rows with an unplayed action, the lowest unplayed action of every row) or None once all are played."""
        if not self._any_untried:
            return None
        zero = self.counts == 0
        rows = zero.any(axis=1)
        if not rows.any():
            self._any_untried = False
            return None
        return rows, zero.argmax(axis=1)

    def _argmax(self, values: np.ndarray, seeds: np.ndarray | None = None) -> np.ndarray:
        """Row-wise argmax, ties broken by each seed's next tie-break uniform (one per decision, as the single agent).

        ``seeds``: the seed index of each row of ``values`` (default: row ``i`` is seed ``i``)."""
        if seeds is None:
            return argmax_ties_lockstep(values, self._ties, self._rows)
        u = self._ties.take_rows(np.asarray(seeds))
        return argmax_ties(values, u)


class VectorEpsilonGreedyAgent(_VectorDiscreteValueAgent):
    """N seeds of :class:`icmlgym.baselines.generic.EpsilonGreedyAgent`."""

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon = epsilon

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        untried = self._untried()
        with np.errstate(invalid="ignore", divide="ignore"):  # rows still sweeping have zero counts
            values = self.sums / self.counts
        best = values.argmax(axis=1)
        top = values[self._rows, best]
        out = np.empty(self.num, dtype=np.int64)
        for i in range(self.num):
            if untried is not None and untried[0][i]:
                out[i] = untried[1][i]
                continue
            rng = self.rngs[i]
            if rng.random() < self.epsilon:
                out[i] = int(rng.integers(self.n))
                continue
            row = values[i]
            b = int(best[i])
            u = self._ties.take(i)  # one tie-break uniform per exploiting decision, as the single agent
            if np.count_nonzero(row == top[i]) > 1:
                ties = np.flatnonzero(row == top[i])
                b = int(ties[int(u * len(ties))])
            out[i] = b
        return out + self.start


class VectorUCB1Agent(_VectorDiscreteValueAgent):
    """N seeds of :class:`icmlgym.baselines.generic.UCB1Agent`."""

    def __init__(self, c: float = 1.0) -> None:
        super().__init__()
        if c < 0:
            raise ValueError(f"c must be non-negative, got {c}")
        self.c = c

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        untried = self._untried()
        if untried is None:  # every arm played in every row: no zero counts
            values = np.divide(2.0 * log_of(self.t), self.counts)  # the single agent's bonus + mean, same doubles
            np.sqrt(values, out=values)
            if self.c != 1.0:
                values *= self.c
            values += self.sums / self.counts
            return self._argmax(values) + self.start
        if untried[0].all():
            return untried[1] + self.start
        with np.errstate(invalid="ignore", divide="ignore"):
            means = self.sums / self.counts
            bonus = self.c * np.sqrt(2.0 * np.log(self.t) / self.counts)
        values = means + bonus
        out = untried[1].copy()
        done = ~untried[0]
        out[done] = self._argmax(values[done], np.flatnonzero(done))
        return out + self.start


class VectorBernoulliThompsonAgent(_VectorDiscreteValueAgent):
    """N seeds of :class:`icmlgym.baselines.bandit.BernoulliThompsonAgent`."""

    def __init__(self, alpha: float = 1.0, beta: float = 1.0) -> None:
        super().__init__()
        if alpha <= 0 or beta <= 0:
            raise ValueError(f"alpha and beta must be positive, got {alpha}, {beta}")
        self.alpha, self.beta = alpha, beta

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        self._beta = BetaBlocks(self.rngs, self.n)
        self._beta.set_shapes(np.full((self.num, self.n), self.alpha + 0.0), np.full((self.num, self.n), self.beta + 0.0))

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        return self._beta.sample().argmax(axis=1) + self.start

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        super().update(obs, actions, rewards, next_obs, terminated, truncated, info)
        a = np.asarray(actions) - self.start
        wins, pulls = self.sums[self._rows, a], self.counts[self._rows, a]
        self._beta.set_arms(a, self.alpha + wins, self.beta + (pulls - wins))


__all__ = ["VectorBernoulliThompsonAgent", "VectorEpsilonGreedyAgent", "VectorRandomAgent", "VectorUCB1Agent"]
