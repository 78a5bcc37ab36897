"""Adapter that wraps any stable-baselines3 algorithm as an icmlgym agent (extra ``[rl]``).

``train(env, budget)`` calls ``model.learn(budget)`` on the env the runner hands
over; ``act`` calls ``model.predict(obs, deterministic=...)``. An env whose spaces SB3
cannot encode (text observations, ``Dict`` actions, ...) is trained through
:class:`icmlgym.envs.sb3_compat.SB3Compatible`, and ``act`` converts observations and
actions the same way. Use it by name
(``sb3-ppo``, ``sb3-a2c``, ``sb3-dqn``) or subclass/parametrise it::

    icmlgym run icmlgym/Bandit-v0 --agent sb3-ppo
    SB3Agent(algo="PPO", policy="MlpPolicy", algo_kwargs={"n_steps": 256})
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.catalog import require_extra
from icmlgym.envs.sb3_compat import SB3Compatible, sb3_compatible


def learn_quietly(model: Any, total_timesteps: int) -> None:
    """Call ``model.learn(total_timesteps)`` with a logger that writes nothing anywhere.

    SB3's default logger (``verbose=0``, no tensorboard) still makes an empty
    ``<tmp>/SB3-<timestamp>`` directory for every ``learn``; a run must leave no such litter.
    The logger only records, so training is the same step for step.

    Args:
        model: a stable-baselines3 algorithm instance (``PPO``, ``A2C``, ``DQN``, ...).
        total_timesteps: the environment steps to learn for (``> 0``).
    """
    from stable_baselines3.common.logger import Logger

    if int(total_timesteps) <= 0:
        raise ValueError(f"learn_quietly: total_timesteps must be > 0, got {total_timesteps!r}")
    model.set_logger(Logger(folder=None, output_formats=[]))
    model.learn(total_timesteps=int(total_timesteps))


class SB3Agent(BaseAgent):
    """Train-then-act wrapper around a stable-baselines3 algorithm class."""

    name = "sb3"

    def __init__(
        self,
        algo: str = "PPO",
        policy: str | None = None,
        algo_kwargs: dict[str, Any] | None = None,
        deterministic: bool = True,
        device: str = "auto",
    ) -> None:
        super().__init__()
        require_extra("rl", what=f"SB3Agent({algo})")
        import stable_baselines3

        if not hasattr(stable_baselines3, algo):
            raise ValueError(f"stable_baselines3 has no algorithm {algo!r}")
        self.algo_cls = getattr(stable_baselines3, algo)
        self.algo = algo
        self.policy = policy
        self.algo_kwargs = dict(algo_kwargs or {})
        self.deterministic = deterministic
        self.device = device
        self.model = None
        self._seed: int | None = None
        self._adapter: SB3Compatible | None = None

    def _policy_for(self, env) -> str:
        if self.policy:
            return self.policy
        import gymnasium as gym

        return "MultiInputPolicy" if isinstance(env.observation_space, gym.spaces.Dict) else "MlpPolicy"

    def _device(self, spec_device: str | None) -> str:
        if self.device != "auto":
            return self.device
        return spec_device or "auto"

    def train(self, env, budget: int) -> None:
        """Fit the model on ``env`` for ``budget`` environment steps (0: build it untrained)."""
        seed = None if self._seed is None else int(self._seed)
        wrapped = sb3_compatible(env)
        self._adapter = wrapped if isinstance(wrapped, SB3Compatible) else None
        env = wrapped
        kwargs = dict(self.algo_kwargs)
        if self.algo == "PPO" and budget > 0 and "n_steps" not in kwargs:
            # PPO collects a whole rollout (2,048 steps by default) before its first update;
            # a smaller training budget would be overrun, so the rollout shrinks to fit it.
            n_steps = max(16, min(2048, int(budget)))
            kwargs["n_steps"] = n_steps
            kwargs.setdefault("batch_size", min(64, n_steps))
        self.model = self.algo_cls(
            self._policy_for(env),
            env,
            seed=seed,
            verbose=0,
            device=self._device(self.spec.device if self.spec else None),
            **kwargs,
        )
        if budget > 0:
            learn_quietly(self.model, int(budget))

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        first = self.spec is None
        super().reset(seed, spec)
        if first:
            self._seed = seed

    def act(self, obs: Any, info: dict[str, Any]) -> Any:
        if self.model is None:
            raise RuntimeError("SB3Agent.act called before train(env, budget); the runner calls train first")
        if self._adapter is not None:
            obs = self._adapter.observation(obs)
        action, _ = self.model.predict(obs, deterministic=self.deterministic)
        if self._adapter is not None:
            return self._adapter.action(action)
        if isinstance(action, np.ndarray) and action.shape == ():
            return action.item()
        return action


class PPOAgent(SB3Agent):
    name = "sb3-ppo"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(algo="PPO", **kwargs)


class A2CAgent(SB3Agent):
    name = "sb3-a2c"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(algo="A2C", **kwargs)


class DQNAgent(SB3Agent):
    name = "sb3-dqn"

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(algo="DQN", **kwargs)
