"""Vector twins of the games family's agents: the bandit learners and the preference-graph predictors.

Each class plays N seeds of its single agent in lock step and reproduces it seed by
seed, bit for bit (see :mod:`icmlgym.agents.vector`): the FTRL scores of all seeds are
one ``(N, n)`` array updated with the single agent's arithmetic, and each seed's
action draws come from its own generator in the single agent's order
(``Generator.choice(n, p=x)`` draws one ``random()``: the twin draws those uniforms
a block at a time, the same doubles, and samples by counting ``cdf <= u``).
Full-information play (a ``Box`` action space) is a multi-agent env's, which the
batched runner does not batch; the twins refuse it.

:class:`VectorGraphPredictorAgent` (``games-sink-predictor``'s twin; the strict-Nash
predictor's is in :mod:`icmlgym.baselines.games`) labels the preference graphs of
StabilityPrediction-v0's N seeds in one array computation
(:func:`icmlgym.envs.games.basins.predict_sinks_many`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from icmlgym.agents.protocol import AgentSpec
from icmlgym.agents.vector import VectorBaseAgent
from icmlgym.envs.games.basins import predict_sinks_many
from icmlgym.envs.games.dynamics import choice_map, softmax, step_size
from icmlgym.envs.games.stability_vector import softmax_rows

_BLOCK = 1024  # uniforms drawn per generator call (the same stream as one call per round)


class VectorFTRLAgent(VectorBaseAgent):
    """N seeds of :class:`icmlgym.agents.games.FTRLAgent` under bandit feedback (EXP3-style FTRL)."""

    def __init__(self, **kwargs: Any) -> None:
        from icmlgym.agents.games import FTRLAgent

        super().__init__()
        self._single = FTRLAgent(**kwargs)  # validates the arguments exactly as the single agent does

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        space = spec.action_space
        if not isinstance(space, gym.spaces.Discrete):
            raise TypeError(f"{type(self).__name__} batches bandit feedback only (a Discrete action space), got {space}")
        one = self._single
        one.reset(0, spec)  # the step size, payoff bound and initial scores' rule, from the single agent
        self.n, self.start = one.n, one.start
        self._eta, self.schedule, self.gamma, self.regularizer = one._eta, one.schedule, one.gamma, one.regularizer
        self.Q = choice_map(self.regularizer)  # type: ignore[arg-type]
        self._adaptive = one._adaptive_hi
        self._hi = np.full(self.num, np.nan if one._hi is None else float(one._hi))
        init = one.init if one.init != "auto" else "uniform"  # bandit feedback: "auto" is uniform
        if init == "random":
            e1 = step_size(self._eta, self.schedule, 1)
            rows = []
            for rng in self.rngs:
                x0 = rng.dirichlet(np.ones(self.n))
                rows.append(np.log(np.clip(x0, 1e-300, None)) / e1 if self.regularizer == "entropic" else x0 / e1)
            self.scores = np.stack(rows)
        else:
            self.scores = np.zeros((self.num, self.n))
        self.t = 0
        self._x = np.full((self.num, self.n), 1.0 / self.n)
        self._rows = np.arange(self.num)
        self._u = np.empty((self.num, 0))
        self._pos = 0

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        e = step_size(self._eta, self.schedule, self.t + 1)
        x = self.Q(e * self.scores)
        if self.gamma > 0:
            x = (1.0 - self.gamma) * x + self.gamma / self.n
        self._x = x
        if self._pos >= self._u.shape[1]:
            self._u = np.stack([rng.random(_BLOCK) for rng in self.rngs])
            self._pos = 0
        u = self._u[:, self._pos]
        self._pos += 1
        cdf = x.cumsum(axis=1)
        cdf /= cdf[:, -1:]
        return self.start + np.count_nonzero(cdf <= u[:, None], axis=1)

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        self.t += 1
        r = np.asarray(rewards, dtype=np.float64)
        if self._adaptive:
            self._hi = np.where(np.isnan(self._hi), r, np.maximum(self._hi, r))
        hi = self._hi
        a = np.asarray(actions) - self.start
        # the single agent's importance-weighted estimate, never above hi
        est = np.repeat(hi[:, None], self.n, axis=1)
        est[self._rows, a] = hi - (hi - r) / self._x[self._rows, a]
        self.scores = self.scores + est


class VectorExp3Agent(VectorFTRLAgent):
    """N seeds of :class:`icmlgym.agents.games.Exp3Agent`."""

    def __init__(self, **kwargs: Any) -> None:
        from icmlgym.agents.games import Exp3Agent

        VectorBaseAgent.__init__(self)
        self._single = Exp3Agent(**kwargs)


class VectorGraphPredictorAgent(VectorBaseAgent):
    """N seeds of :class:`icmlgym.agents.games.SinkPredictorAgent`: each row of the observations is one seed's graph.

    Subclasses set ``predict_many``: a stack of adjacency matrices ``(N, P, P)`` (bool) ->
    the labels ``(N, P)`` that the single agent's ``predict`` gives each of them."""

    predict_many = staticmethod(predict_sinks_many)

    def reset(self, seeds: Sequence[int], spec: AgentSpec) -> None:
        super().reset(seeds, spec)
        if not isinstance(spec.action_space, gym.spaces.MultiBinary):
            raise TypeError(f"{type(self).__name__} needs a MultiBinary action space, got {spec.action_space}")
        self.n = int(np.prod(spec.action_space.shape))

    def act(self, obs: Any, info: dict[str, Any]) -> np.ndarray:
        adj = np.asarray(obs).reshape(-1, self.n, self.n) > 0.5
        return type(self).predict_many(adj).astype(np.int8)


class VectorJointFTRLAgent:
    """N seeds of :class:`icmlgym.agents.games_joint.JointFTRLAgent`: every seed's players as one ``(N, players, n)`` array.

    The multi-agent vector protocol of RepeatedGame-v0's vector form
    (:class:`icmlgym.envs.games.repeated_vector.RepeatedGameVectorEnv`): ``reset(seeds, specs)``
    with the single env's per-player specs, ``act`` maps observations ``(N, players, n)`` to
    mixed strategies of that shape, ``update`` adds the observed payoff vectors. Each seed
    is reset by its own ``JointFTRLAgent`` (the per-player seeds and initial scores of the
    single run), and a round is one choice map and one addition over all seeds' scores,
    row by row the single agent's. Full information with equal action counts only (what
    ``JointFTRLAgent`` plays as one array); anything else raises ``TypeError``, and the
    runner plays those seeds singly.
    """

    multi_agent = True

    def __init__(self, **kwargs: Any) -> None:
        from icmlgym.agents.games_joint import JointFTRLAgent

        JointFTRLAgent(**kwargs)  # the same argument errors, at construction
        self._cls, self.kwargs = JointFTRLAgent, kwargs

    def reset(self, seeds: Sequence[int], specs: dict[str, AgentSpec]) -> None:
        rows = []
        one = self._cls(**self.kwargs)  # reset seed after seed: a reset sets every member's state and stream anew
        for seed in seeds:
            one.reset(seed, specs)
            if not one.joint:
                raise TypeError(f"{type(self).__name__} batches full-information FTRL with equal action counts only")
            rows.append(one.scores)
        self.ids = list(specs)
        self.Q = softmax_rows if one.Q is softmax else one.Q  # the same values, as column operations
        self._eta, self.schedule = one._eta, one.schedule
        self.scores = np.stack(rows)
        self.t = 0

    def act(self, obs: np.ndarray, info: dict[str, Any]) -> np.ndarray:
        self._x = self.Q(step_size(self._eta, self.schedule, self.t + 1) * self.scores)
        return self._x.astype(np.float32)

    def update(self, obs, actions, rewards, next_obs, terminated, truncated, info) -> None:
        self.t += 1
        self.scores = self.scores + np.asarray(next_obs, dtype=np.float64)


__all__ = ["VectorExp3Agent", "VectorFTRLAgent", "VectorGraphPredictorAgent", "VectorJointFTRLAgent"]
