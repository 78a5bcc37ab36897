"""Comparators on UIRefine-v0: absolute-reward training, single pass, greedy hill climbing, random edits.

- :class:`AbsoluteRewardAgent`: RVPO's policy and update, trained instead on the evaluator's
  absolute judgements: a candidate's advantage is its judged score minus the judged score of
  the page it edits (judged one round earlier), scaled by a running standard deviation, as an
  absolute-reward RL method would use them. Under the noisy evaluator the round offsets do
  not cancel in this difference.
- :class:`SinglePassAgent`: one-shot generation (``action_mode="html"``): the segmentation
  predictor's draft of the target, submitted every round unchanged.
- :class:`GreedyHillClimbAgent`: "keep the current page" plus ``G - 1`` applicable edits drawn
  uniformly; the env commits what the evaluator judges best, so the page never gets worse in
  the evaluator's eyes.
- :class:`RandomEditAgent`: ``G`` applicable edits drawn uniformly (no keep option).
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.agents.ui import EditPolicyAgent
from icmlgym.envs.ui.edit_features import candidates
from icmlgym.envs.ui.edits import OPS
from icmlgym.envs.ui.layout import to_html
from icmlgym.envs.ui.segment import predict_layout


class AbsoluteRewardAgent(EditPolicyAgent):
    """The same edit policy trained on absolute (noisy) judgements (REINFORCE, running scale)."""

    name = "ui-absolute"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self._var = getattr(self, "_var", 1e-4)

    def advantages(self, feedback: dict[str, Any], prev_judged: float) -> np.ndarray:
        gain = np.asarray(feedback["scores"], dtype=np.float64) - prev_judged
        self._var = 0.99 * self._var + 0.01 * float(np.mean(gain**2))
        return gain / np.sqrt(self._var + 1e-12)


class SinglePassAgent(BaseAgent):
    """One pass from screenshot to code: the predicted page, every round the same."""

    name = "ui-single-pass"

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        if not isinstance(spec.action_space, gym.spaces.Text):
            raise ValueError("SinglePassAgent writes HTML: run UIRefine-v0 with action_mode='html'")
        self._html: str | None = None

    def act(self, obs: dict, info: dict[str, Any]) -> str:
        if self._html is None:
            self._html = to_html(predict_layout(obs["target"]))
        return self._html


class RandomEditAgent(BaseAgent):
    """``G`` distinct applicable edits drawn uniformly each round."""

    name = "ui-random-edits"
    keep_current = False

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        shape = getattr(spec.action_space, "shape", None)
        if shape is None or len(shape) != 2 or shape[1] != 3:
            raise ValueError(f"{type(self).__name__} needs UIRefine-v0's edit mode, got action space {spec.action_space}")
        self.group_size = int(shape[0])
        self._cache: dict = {}

    def act(self, obs: dict, info: dict[str, Any]) -> np.ndarray:
        edits, _ = candidates(obs, cache=self._cache)
        edits = edits[edits[:, 1] != OPS.index("noop")]
        k = self.group_size - int(self.keep_current)
        picks = edits[self.np_random.choice(len(edits), size=min(k, len(edits)), replace=False)]
        if self.keep_current:
            picks = np.concatenate([[[0, OPS.index("noop"), 0]], picks])
        return np.resize(picks, (self.group_size, 3)).astype(np.int64)


class GreedyHillClimbAgent(RandomEditAgent):
    """Keep-current plus ``G - 1`` uniformly drawn applicable edits; the evaluator's best is kept."""

    name = "ui-greedy"
    keep_current = True
