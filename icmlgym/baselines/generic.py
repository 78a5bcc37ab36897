"""Generic baselines: random for any env, epsilon-greedy and UCB1 over Discrete actions."""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.baselines.draws import TIE_BLOCK, log_of


class RandomAgent(BaseAgent):
    """Samples the action space uniformly, seeded by the agent's own seed (not the env's)."""

    name = "random"
    vectorized = "icmlgym.baselines.vector:VectorRandomAgent"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._space = spec.action_space
        self._space.seed(int(self.np_random.integers(2**31 - 1)))

    def act(self, obs: Any, info: dict[str, Any]) -> Any:
        return self._space.sample()


class DiscreteValueAgent(BaseAgent):
    """Keeps per-action counts and reward sums over a Discrete action space."""

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        space = spec.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise TypeError(f"{type(self).__name__} needs a Discrete action space, got {space}")
        self.n = int(space.n)
        self.start = int(space.start)
        self.counts = np.zeros(self.n)
        self.sums = np.zeros(self.n)
        self.t = 0
        self._untried = self.n  # actions never played (their count is 0)
        self._tie_block: list[float] = []  # tie-break uniforms, TIE_BLOCK at a time (draws.UniformBlocks' stream)
        self._tie_pos = TIE_BLOCK

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        a = int(action) - self.start
        if self.counts[a] == 0:
            self._untried -= 1
        self.counts[a] += 1
        self.sums[a] += float(reward)
        self.t += 1

    def _first_untried(self) -> int | None:
        """The lowest action index never played, None once every action has been."""
        return int((self.counts == 0).argmax()) if self._untried else None

    def _argmax(self, values: np.ndarray) -> int:
        """The index of the maximum; ties broken uniformly by a tie-break uniform.

        Every call takes the next uniform of the agent's tie-break block, tie or not (one per
        decision: the vector twins take one per seed and step, as one array)."""
        if self._tie_pos == TIE_BLOCK:
            self._tie_block = self.np_random.random(TIE_BLOCK).tolist()
            self._tie_pos = 0
        u = self._tie_block[self._tie_pos]
        self._tie_pos += 1
        i = int(values.argmax())
        if self.n <= 32:  # Python list ops beat numpy's per-call overhead on short vectors
            vals = values.tolist()
            if vals.count(vals[i]) == 1:
                return i
        elif np.count_nonzero(values == values[i]) == 1:
            return i
        ties = np.flatnonzero(values == values[i])
        return int(ties[int(u * len(ties))])  # = draws.pick_ties, which the vector twins use


class EpsilonGreedyAgent(DiscreteValueAgent):
    """Explores uniformly with probability ``epsilon``, else plays the best sample mean."""

    name = "epsilon-greedy"
    vectorized = "icmlgym.baselines.vector:VectorEpsilonGreedyAgent"

    def __init__(self, epsilon: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= epsilon <= 1.0:
            raise ValueError(f"epsilon must lie in [0, 1], got {epsilon}")
        self.epsilon = epsilon

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        untried = self._first_untried()
        if untried is not None:
            return self.start + untried
        if self.np_random.random() < self.epsilon:
            return self.start + int(self.np_random.integers(self.n))
        return self.start + self._argmax(self.sums / self.counts)


class UCB1Agent(DiscreteValueAgent):
    """UCB1: plays each action once, then argmax of mean + c * sqrt(2 ln t / n)."""

    name = "ucb1"
    vectorized = "icmlgym.baselines.vector:VectorUCB1Agent"

    def __init__(self, c: float = 1.0) -> None:
        super().__init__()
        if c < 0:
            raise ValueError(f"c must be non-negative, got {c}")
        self.c = c

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._means = np.zeros(self.n)  # sums / counts of the played arms, kept per pull
        self._values = np.empty(self.n)

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        super().update(obs, action, reward, next_obs, terminated, truncated, info)
        a = int(action) - self.start
        self._means[a] = self.sums[a] / self.counts[a]  # the same division as sums / counts, one element

    def act(self, obs: Any, info: dict[str, Any]) -> int:
        untried = self._first_untried()
        if untried is not None:
            return self.start + untried
        # mean + c * sqrt(2 ln t / n), computed as bonus + mean (the same doubles: + commutes exactly,
        # 1.0 * x is x, log_of(t) is np.log(t)) in one buffer
        v = np.divide(2.0 * log_of(self.t), self.counts, out=self._values)
        np.sqrt(v, out=v)
        if self.c != 1.0:
            v *= self.c
        v += self._means
        return self.start + self._argmax(v)
