"""Baselines of the games family.

Learners for ``icmlgym/RepeatedGame-v0`` with full information (a ``Box`` simplex
action; the observation is the payoff vector ``u_i(., x_{-i})`` of the last round):

- :class:`OptimisticFTRLAgent` (``games-optimistic-ftrl``): entropic FTRL that counts
  the last payoff vector twice (a prediction of the next one; Rakhlin & Sridharan 2013);
- :class:`FictitiousPlayAgent` (``games-fictitious-play``): a best response to the
  time-averaged payoff vector (Brown 1951);
- :class:`BestResponseAgent` (``games-best-response``): a best response to the last
  payoff vector (best-response dynamics);
- :class:`RegretMatchingAgent` (``games-regret-matching``): plays in proportion to
  positive cumulative regrets (Hart & Mas-Colell 2000).

They need full information and raise ``TypeError`` on a ``Discrete`` action space.
For ``icmlgym/StabilityPrediction-v0``: :class:`StrictNashPredictorAgent`
(``games-nash-predictor``) labels only the profiles with no outgoing arrow;
:class:`VectorStrictNashPredictorAgent` is its vector twin (``--batch-seeds``).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from icmlgym.agents.games import GraphPredictorAgent
from icmlgym.agents.games_vector import VectorGraphPredictorAgent
from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.envs.games.basins import predict_strict_nash, predict_strict_nash_many
from icmlgym.envs.games.dynamics import softmax


class _FullInfoAgent(BaseAgent):
    """Keeps the last and the summed payoff vectors of a full-information player."""

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        space = spec.action_space
        if not (isinstance(space, gym.spaces.Box) and len(space.shape) == 1):
            raise TypeError(
                f"{type(self).__name__} needs full-information feedback (a Box simplex action space), got {space}; "
                "make the env with feedback='full'"
            )
        self.n = int(space.shape[0])
        self.sum_u = np.zeros(self.n)
        self.last_u = np.zeros(self.n)
        self.t = 0
        # a random first mixed strategy (uniform on the simplex) so that seeds give different runs
        self.x0 = self.np_random.dirichlet(np.ones(self.n))

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        u = np.asarray(next_obs, dtype=np.float64)
        self.sum_u += u
        self.last_u = u
        self.t += 1

    def _best_response(self, u: np.ndarray) -> np.ndarray:
        best = np.flatnonzero(u >= u.max() - 1e-12)
        x = np.zeros(self.n, dtype=np.float32)
        x[int(self.np_random.choice(best))] = 1.0
        return x


class OptimisticFTRLAgent(_FullInfoAgent):
    """Optimistic Hedge: ``x_t = softmax(eta (S_{t-1} + u_{t-1}))``."""

    name = "games-optimistic-ftrl"

    def __init__(self, eta: float = 0.1) -> None:
        super().__init__()
        if eta <= 0:
            raise ValueError(f"eta must be positive, got {eta}")
        self.eta = eta

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.init_scores = np.log(self.x0) / self.eta

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        return softmax(self.eta * (self.init_scores + self.sum_u + self.last_u)[None])[0].astype(np.float32)


class FictitiousPlayAgent(_FullInfoAgent):
    """Best response to the average payoff vector so far (uniform at the first round)."""

    name = "games-fictitious-play"

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if self.t == 0:
            return self.x0.astype(np.float32)
        return self._best_response(self.sum_u)


class BestResponseAgent(_FullInfoAgent):
    """Best response to the last round's payoff vector (uniform at the first round)."""

    name = "games-best-response"

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if self.t == 0:
            return self.x0.astype(np.float32)
        return self._best_response(self.last_u)


class RegretMatchingAgent(_FullInfoAgent):
    """Plays each action in proportion to its positive cumulative regret (a random first strategy; uniform when no regret is positive)."""

    name = "games-regret-matching"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.regret = np.zeros(self.n)
        self._x = self.x0

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        if self.t == 0:
            self._x = self.x0
            return self._x.astype(np.float32)
        pos = np.maximum(self.regret, 0.0)
        s = pos.sum()
        self._x = pos / s if s > 0 else np.full(self.n, 1.0 / self.n)
        return self._x.astype(np.float32)

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        u = np.asarray(next_obs, dtype=np.float64)
        self.regret += u - float(self._x @ u)
        super().update(obs, action, reward, next_obs, terminated, truncated, info)


class StrictNashPredictorAgent(GraphPredictorAgent):
    """Labels only the profiles with no outgoing arrow (pure strict Nash equilibria)."""

    name = "games-nash-predictor"
    predict = staticmethod(predict_strict_nash)
    vectorized = "icmlgym.baselines.games:VectorStrictNashPredictorAgent"  # StabilityPrediction-v0, --batch-seeds


class VectorStrictNashPredictorAgent(VectorGraphPredictorAgent):
    """N seeds of :class:`StrictNashPredictorAgent` (the profiles without an outgoing arrow, as one array)."""

    predict_many = staticmethod(predict_strict_nash_many)
