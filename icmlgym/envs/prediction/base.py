"""A shared base for prediction tasks: problems that are not sequential decisions, as Gymnasium envs.

Detecting out-of-domain inputs, labelling responses, scoring candidates: an episode is
``n_batches`` steps; each observation is a batch of inputs (a fixed-shape ``Box``),
each action is one score (or label) per input of that batch, and at the last step the
env computes the task's metrics (AUROC, F1, ...) over all the episode's predictions and
returns the primary one as the reward (every earlier step's reward is 0). The
leaderboard scores them like any env.

Data: a subclass provides :meth:`PredictionTaskEnv.pool` (inputs and hidden labels of a
split) and :meth:`PredictionTaskEnv.task_metrics`. The evaluation env draws its batches
from the ``test`` split; an agent that trains gets the env's ``train`` split through
:meth:`PredictionTaskEnv.training_data` (in ``agent.train(env, budget)``) and never sees
test labels. Batches of an episode are drawn without replacement from the split,
seeded by ``reset(seed=...)``.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class PredictionTaskEnv(gym.Env):
    """Base class: batched inputs in, one prediction per input out, metrics at the end.

    Subclasses set ``primary`` (the metric returned as the final reward), implement
    :meth:`pool` and :meth:`task_metrics`, and may override :meth:`action_space_for`
    (default: one score in [0, 1] per input).

    Args:
        batch_size: inputs per step.
        n_batches: steps per episode.
        split: the split evaluated (``test`` by default; ``val`` for tuning).
    """

    metadata = {"render_modes": []}
    primary = "auroc"
    input_bounds: tuple[float, float] = (-np.inf, np.inf)  # the inputs' value range (the observation Box)

    def __init__(self, batch_size: int = 64, n_batches: int = 4, split: str = "test") -> None:
        if batch_size < 1 or n_batches < 1:
            raise ValueError(f"batch_size and n_batches must be >= 1, got {batch_size}, {n_batches}")
        if split not in ("train", "val", "test"):
            raise ValueError(f"split must be 'train', 'val' or 'test', got {split!r}")
        self.batch_size = int(batch_size)
        self.n_batches = int(n_batches)
        self.split = split
        x, y = self.pool(split)
        need = self.batch_size * self.n_batches
        if len(x) < need:
            raise ValueError(f"the {split} split holds {len(x)} inputs; an episode needs batch_size x n_batches = {need}")
        self._x, self._y = np.asarray(x, dtype=np.float32), np.asarray(y)
        feat = self._x.shape[1:]
        self.observation_space = spaces.Dict({
            "inputs": spaces.Box(*self.input_bounds, (self.batch_size, *feat), np.float32),
            "step": spaces.Discrete(self.n_batches),
        })
        self.action_space = self.action_space_for(self.batch_size)
        self._order: np.ndarray | None = None
        self._t = 0
        self._preds: list[np.ndarray] = []

    # ------------------------------------------------------------------ subclass API
    def pool(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        """Inputs ``(n, ...)`` and labels ``(n,)`` of a split."""
        raise NotImplementedError

    def task_metrics(self, labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
        """The task's metrics over one episode's labels and predictions."""
        raise NotImplementedError

    def action_space_for(self, batch_size: int) -> spaces.Space:
        return spaces.Box(0.0, 1.0, (batch_size,), np.float32)

    # ------------------------------------------------------------------ for training agents
    def training_data(self) -> tuple[np.ndarray, np.ndarray]:
        """The train split's inputs and labels (what a training agent may learn from)."""
        x, y = self.pool("train")
        return np.asarray(x, dtype=np.float32), np.asarray(y)

    # ------------------------------------------------------------------ gymnasium API
    def _obs(self) -> dict[str, Any]:
        idx = self._order[self._t * self.batch_size : (self._t + 1) * self.batch_size]
        return {"inputs": self._x[idx], "step": self._t}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._order = self.np_random.permutation(len(self._x))[: self.batch_size * self.n_batches]
        self._t = 0
        self._preds = []
        return self._obs(), {"cost": {"predictions": 0.0}}

    def step(self, action):
        if self._order is None:
            raise RuntimeError("call reset() before step()")
        if self._t >= self.n_batches:
            raise RuntimeError("the episode has ended; call reset()")
        a = np.asarray(action)
        if a.shape != self.action_space.shape or not np.all(np.isfinite(a.astype(np.float64))) or not self.action_space.contains(a.astype(self.action_space.dtype)):
            raise ValueError(f"action {np.array2string(a.ravel()[:8], precision=3)}{'...' if a.size > 8 else ''} (shape {a.shape}) is not in the action space {self.action_space}")
        self._preds.append(a.astype(np.float64).copy())
        self._t += 1
        done = self._t == self.n_batches
        info: dict[str, Any] = {"cost": {"predictions": float(self._t * self.batch_size)}}
        reward = 0.0
        if done:
            labels = self._y[self._order]
            metrics = self.task_metrics(labels, np.concatenate(self._preds))
            info["metrics"] = metrics
            reward = float(metrics[self.primary])
            obs = {"inputs": np.zeros(self.observation_space["inputs"].shape, np.float32), "step": self.n_batches - 1}
        else:
            obs = self._obs()
        return obs, reward, done, False, info


__all__ = ["PredictionTaskEnv"]
