"""Reference agents of the games family: FTRL learners and the preference-graph predictor.

- :class:`FTRLAgent` (``games-hedge``, ``games-ftrl-euclidean``): follow the
  regularized leader with the entropic (Hedge / exponential weights) or Euclidean
  (projected) regularizer. With a ``Box`` action space (full information: the
  observation is the payoff vector of the last round) it plays ``Q(eta_t S_t)``;
  with a ``Discrete`` action space (bandit feedback: only its own reward) it
  becomes EXP3-style: it samples from ``Q`` mixed with ``gamma`` uniform
  exploration and adds an importance-weighted, upper-bounded payoff estimate to
  its scores.
- :class:`Exp3Agent` (``games-exp3``): the bandit version by name (needs ``Discrete`` actions).
- :class:`SinkPredictorAgent` (``games-sink-predictor``): for
  ``icmlgym/StabilityPrediction-v0``, labels the profiles of the preference
  graph's sink components as the ones long-run play uses.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.envs.games.basins import predict_sinks
from icmlgym.envs.games.dynamics import choice_map, step_size


class FTRLAgent(BaseAgent):
    """Follow the regularized leader for one player of a repeated game.

    Args:
        regularizer: ``"entropic"`` (Hedge / EXP3) or ``"euclidean"`` (projected FTRL).
        eta: base step size; ``None`` picks 0.1 with full information and
            ``sqrt(2 ln n / (n T))`` with bandit feedback (``T`` = the env's ``horizon``
            when the spec's env kwargs give it, else 1000).
        schedule: ``"constant"``, ``"sqrt"`` (eta / sqrt(t)) or ``"linear"`` (eta / t).
        gamma: uniform exploration mixed in under bandit feedback (0 for full information).
        payoff_bound: an upper bound on payoffs for the bandit estimates; ``None`` reads it
            from the observation space (its finite maximum) or tracks the largest reward seen.
        init: the first mixed strategy: ``"random"`` (uniform on the simplex, from the agent's
            seed — the random initialisations of the paper's basin experiments), ``"uniform"``,
            or ``"auto"`` (random with full information, uniform under bandit feedback as in EXP3).
    """

    name = "games-hedge"
    vectorized = "icmlgym.agents.games_vector:VectorFTRLAgent"  # bandit feedback, for --batch-seeds
    joint = "icmlgym.agents.games_joint:JointFTRLAgent"  # all players of RepeatedGame-v0 as one array

    def __init__(
        self,
        regularizer: str = "entropic",
        eta: float | None = None,
        schedule: str = "constant",
        gamma: float = 0.01,
        payoff_bound: float | None = None,
        init: str = "auto",
    ) -> None:
        super().__init__()
        if init not in ("auto", "random", "uniform"):
            raise ValueError(f"init must be 'auto', 'random' or 'uniform', got {init!r}")
        self.init = init
        self.Q = choice_map(regularizer)  # type: ignore[arg-type]
        step_size(1.0, schedule, 1)
        if eta is not None and eta <= 0:
            raise ValueError(f"eta must be positive, got {eta}")
        if not 0.0 <= gamma <= 1.0:
            raise ValueError(f"gamma must lie in [0, 1], got {gamma}")
        self.regularizer, self.eta, self.schedule, self.gamma = regularizer, eta, schedule, gamma
        self.payoff_bound = payoff_bound

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        space = spec.action_space
        if isinstance(space, gym.spaces.Discrete):
            self.bandit, self.n, self.start = True, int(space.n), int(space.start)
        elif isinstance(space, gym.spaces.Box) and len(space.shape) == 1:
            self.bandit, self.n, self.start = False, int(space.shape[0]), 0
        else:
            raise TypeError(f"{type(self).__name__} needs a Discrete or 1-d Box (simplex) action space, got {space}")
        horizon = int(spec.env_kwargs.get("horizon", 1000)) if spec.env_kwargs else 1000
        if self.eta is not None:
            self._eta = float(self.eta)
        elif self.bandit:
            self._eta = float(np.sqrt(2.0 * np.log(max(self.n, 2)) / (self.n * max(horizon, 1))))
        else:
            self._eta = 0.1
        self._hi = self.payoff_bound
        if self._hi is None and isinstance(spec.observation_space, gym.spaces.Box):
            high = np.asarray(spec.observation_space.high, dtype=np.float64)
            if np.all(np.isfinite(high)):
                self._hi = float(high.max())
        self._adaptive_hi = self._hi is None
        self.scores = np.zeros(self.n)
        init = self.init if self.init != "auto" else ("uniform" if self.bandit else "random")
        if init == "random":
            x0 = self.np_random.dirichlet(np.ones(self.n))
            e1 = step_size(self._eta, self.schedule, 1)
            # scores whose choice map at round 1 is exactly x0
            self.scores = np.log(np.clip(x0, 1e-300, None)) / e1 if self.regularizer == "entropic" else x0 / e1
        self.t = 0
        self._x = np.full(self.n, 1.0 / self.n)

    def strategy(self) -> np.ndarray:
        """The mixed strategy FTRL plays next."""
        e = step_size(self._eta, self.schedule, self.t + 1)
        x = self.Q(e * self.scores[None])[0]
        if self.bandit and self.gamma > 0:
            x = (1.0 - self.gamma) * x + self.gamma / self.n
        return x

    def act(self, obs: Any, info: dict[str, Any]) -> Any:
        self._x = self.strategy()
        if self.bandit:
            return self.start + int(self.np_random.choice(self.n, p=self._x))
        return self._x.astype(np.float32)

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        self.t += 1
        if not self.bandit:
            self.scores = self.scores + np.asarray(next_obs, dtype=np.float64)
            return
        r = float(reward)
        if self._adaptive_hi:
            self._hi = r if self._hi is None else max(self._hi, r)
        hi = float(self._hi)  # type: ignore[arg-type]
        a = int(action) - self.start
        # unbiased estimate that never exceeds hi, so exponential weights stay stable
        est = np.full(self.n, hi)
        est[a] = hi - (hi - r) / self._x[a]
        self.scores = self.scores + est


class Exp3Agent(FTRLAgent):
    """EXP3 (Auer et al. 2002) as bandit FTRL with the entropic regularizer; needs Discrete actions."""

    name = "games-exp3"
    vectorized = "icmlgym.agents.games_vector:VectorExp3Agent"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        if not isinstance(spec.action_space, gym.spaces.Discrete):
            raise TypeError(
                f"games-exp3 needs bandit feedback (a Discrete action space), got {spec.action_space}; "
                "use games-hedge with full information"
            )
        super().reset(seed, spec)


class GraphPredictorAgent(BaseAgent):
    """Labels profiles of StabilityPrediction-v0 from the observed preference graph alone.

    Subclasses set ``predict``: adjacency matrix (bool, n x n) -> boolean label per profile.
    """

    predict = staticmethod(predict_sinks)

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        if not isinstance(spec.action_space, gym.spaces.MultiBinary):
            raise TypeError(f"{type(self).__name__} needs a MultiBinary action space, got {spec.action_space}")
        self.n = int(np.prod(spec.action_space.shape))

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        adj = np.asarray(obs).reshape(self.n, self.n) > 0.5
        return type(self).predict(adj).astype(np.int8)


class SinkPredictorAgent(GraphPredictorAgent):
    """Labels the profiles of the preference graph's sink components (StabilityPrediction-v0)."""

    name = "games-sink-predictor"
    predict = staticmethod(predict_sinks)
    vectorized = "icmlgym.agents.games_vector:VectorGraphPredictorAgent"  # StabilityPrediction-v0, --batch-seeds
