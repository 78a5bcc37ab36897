"""Single-level views of Craft-v0 with plain ``Discrete`` actions (stable-baselines3 works unchanged).

- :class:`MotorOnly`: ``Discrete(17)``, Crafter's primitive actions.
- :class:`SkillOnly`: ``Discrete(n_skills)``, the skill library (each runs its controller).

Both drop the ``prompt`` (a ``Text`` space, which SB3 policies cannot encode);
with ``image=False`` they also drop the image for a small vector observation.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces


class _SingleLevel(gym.Wrapper, gym.utils.RecordConstructorArgs):
    level = ""

    def __init__(self, env: gym.Env, image: bool = True) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, image=image)
        gym.Wrapper.__init__(self, env)
        base = env.unwrapped
        if not hasattr(base, "skill_names"):
            raise TypeError(f"{type(self).__name__} wraps icmlgym/Craft-v0 envs, got {base!r}")
        keep = [k for k in env.observation_space.spaces if k != "prompt" and (image or k != "image")]
        self._keep = keep
        self.observation_space = spaces.Dict({k: env.observation_space.spaces[k] for k in keep})

    def _filter(self, obs: dict[str, Any]) -> dict[str, Any]:
        return {k: obs[k] for k in self._keep}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self._filter(obs), info

    def step(self, action: Any):
        if isinstance(action, np.ndarray) and action.shape in ((), (1,)):
            action = int(action.reshape(()))
        if not self.action_space.contains(action) if np.isscalar(action) else True:
            raise ValueError(f"action {action!r} is not in the action space {self.action_space} of {type(self).__name__}")
        obs, reward, terminated, truncated, info = self.env.step({self.level: int(action)})
        return self._filter(obs), reward, terminated, truncated, info


class MotorOnly(_SingleLevel):
    """Craft-v0 with Crafter's 17 primitive actions as ``Discrete(17)``."""

    level = "motor"

    def __init__(self, env: gym.Env, image: bool = True) -> None:
        super().__init__(env, image)
        self.action_space = spaces.Discrete(len(env.unwrapped.motor_names))


class SkillOnly(_SingleLevel):
    """Craft-v0 with the skill library as ``Discrete(n_skills)``."""

    level = "skill"

    def __init__(self, env: gym.Env, image: bool = True) -> None:
        super().__init__(env, image)
        self.action_space = spaces.Discrete(len(env.unwrapped.skill_names))
