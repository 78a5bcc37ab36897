"""Joint FTRL for every player of a repeated game at once: the players x actions state as one array.

:class:`JointFTRLAgent` is the joint twin of :class:`icmlgym.agents.games.FTRLAgent`
(``games-hedge``, ``games-ftrl-euclidean``): when the runner lifts FTRL to a
multi-agent env (``icmlgym/RepeatedGame-v0``) it plays all players with one
agent instead of one :class:`~icmlgym.agents.multi.DictAgent` member each (see
:func:`icmlgym.agents.multi.lift`). With full information and the same number of
actions for every player, the scores are one ``(N, n)`` array and a round is one
choice map and one addition over it; the values are those of ``N`` separate
``FTRLAgent`` instances bit for bit (each player is reset by its own instance,
with the seed :class:`~icmlgym.agents.multi.DictAgent` gives it, and the choice
maps work row by row). Anything else (bandit feedback, unequal action counts) is
played by exactly those per-player instances.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.games import FTRLAgent
from icmlgym.agents.multi import DictAgent
from icmlgym.agents.protocol import AgentSpec
from icmlgym.envs.games.dynamics import step_size


class JointFTRLAgent:
    """FTRL for all players of a PettingZoo game, the joint twin of :class:`FTRLAgent` (same constructor).

    ``members`` are the per-player ``FTRLAgent`` instances (a :class:`DictAgent`); while
    ``joint`` is True their scores live in ``scores``, one row per agent id of the specs.
    A round in which not every player acts hands the state back to the members, which
    play the rest of the episode.
    """

    multi_agent = True
    vectorized = "icmlgym.agents.games_vector:VectorJointFTRLAgent"  # N seeds of RepeatedGame-v0, for --batch-seeds

    def __init__(self, **kwargs: Any) -> None:
        FTRLAgent(**kwargs)  # the same argument errors, at construction
        self.kwargs = kwargs
        self.members = DictAgent(lambda: FTRLAgent(**self.kwargs))
        self.joint = False

    def reset(self, seed: int | None, spec: dict[str, AgentSpec]) -> None:
        self.members.reset(seed, spec)
        self.ids = list(spec)
        players = [self.members.agents[a] for a in self.ids]
        obs_shapes = {getattr(s.observation_space, "shape", None) for s in spec.values()}
        self.joint = all(not p.bandit for p in players) and len({p.n for p in players}) == 1 and obs_shapes == {(players[0].n,)}
        if not self.joint:
            return
        first = players[0]
        self.Q, self._eta, self.schedule = first.Q, first._eta, first.schedule
        self.scores = np.array([p.scores for p in players], dtype=np.float64)
        self.t = 0
        self._x = None

    def _leave_joint(self) -> None:
        """Hand the joint state to the per-player instances (what they would hold by now)."""
        for i, a in enumerate(self.ids):
            p = self.members.agents[a]
            p.scores, p.t = self.scores[i].copy(), self.t
            if self._x is not None:
                p._x = self._x[i].copy()
        self.joint = False

    def act(self, observations: dict[str, Any], infos: dict[str, dict]) -> dict[str, Any]:
        if self.joint and list(observations) != self.ids:
            self._leave_joint()
        if not self.joint:
            return self.members.act(observations, infos)
        self._x = self.Q(step_size(self._eta, self.schedule, self.t + 1) * self.scores)
        return dict(zip(self.ids, self._x.astype(np.float32)))  # rows of one array: views

    def update(
        self,
        observations: dict[str, Any],
        actions: dict[str, Any],
        rewards: dict[str, float],
        next_observations: dict[str, Any],
        terminations: dict[str, bool],
        truncations: dict[str, bool],
        infos: dict[str, dict],
    ) -> None:
        if self.joint and list(actions) != self.ids:
            self._leave_joint()
        if not self.joint:
            self.members.update(observations, actions, rewards, next_observations, terminations, truncations, infos)
            return
        self.t += 1
        self.scores = self.scores + np.array([next_observations.get(a, observations[a]) for a in self.ids], dtype=np.float64)


__all__ = ["JointFTRLAgent"]
