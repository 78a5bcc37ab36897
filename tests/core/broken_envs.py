"""Deliberately broken variants of the Bernoulli bandit: the catalog-wide suite must catch each one."""

from __future__ import annotations

import warnings

import numpy as np

from icmlgym.envs.bandit.bernoulli_bandit import BernoulliBanditEnv


class ObservationOutsideBox(BernoulliBanditEnv):
    """Returns an observation above its Box's upper bound of 1 once the horizon is half spent."""

    def _obs(self, last_reward: float) -> np.ndarray:
        return np.array([last_reward, 2.0 * self._t / self.horizon], dtype=np.float32)


class PrimaryMetricMissing(BernoulliBanditEnv):
    """Ends its episode without the card's primary metric ``pseudo_regret`` in ``info["metrics"]``."""

    def step(self, action):
        obs, reward, terminated, truncated, info = super().step(action)
        if "metrics" in info:
            del info["metrics"]["pseudo_regret"]
        return obs, reward, terminated, truncated, info


class WarnsOnStep(BernoulliBanditEnv):
    """Emits a warning on every step (the checks turn warnings into errors)."""

    def step(self, action):
        warnings.warn("reward scale is approximate", UserWarning, stacklevel=2)
        return super().step(action)


class CostGoesDown(BernoulliBanditEnv):
    """Reports a cost counter that decreases (counters must be cumulative)."""

    def _info(self):
        return {"cost": {"env_steps": self._t, "pulls_left": self.horizon - self._t}}


class TupleActions(BernoulliBanditEnv):
    """Takes its arm inside a ``Tuple`` action, which neither SB3 nor SB3Compatible can encode."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        from gymnasium import spaces

        self._arms = self.action_space
        self.action_space = spaces.Tuple((self._arms,))

    def step(self, action):
        if not self.action_space.contains(action):
            raise ValueError(f"action {action!r} is not in {self.action_space}")
        return super().step(action[0])
