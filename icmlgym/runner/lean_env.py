"""The env the runner steps: the registered env without wrapper layers that only guard interactive use.

``gymnasium.make`` wraps every env in ``PassiveEnvChecker`` (checks the first
``reset``/``step``, then only forwards) and ``OrderEnforcing`` (refuses ``step``
before ``reset``). The runner always resets first and the conformance suite runs
the checkers, so in the runner both layers are a Python call per step and
nothing else: about a microsecond each, a fifth of a Bernoulli bandit step.
Wrappers that change behaviour (``TimeLimit`` from a spec's
``max_episode_steps``, an env's own wrappers) stay.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
from gymnasium.wrappers import OrderEnforcing, PassiveEnvChecker

from icmlgym.catalog import TaskCard
from icmlgym.envs import make

_GUARDS = (OrderEnforcing, PassiveEnvChecker)


def strip_guards(env: Any) -> Any:
    """``env`` without its outer ``OrderEnforcing``/``PassiveEnvChecker`` layers (other wrappers kept)."""
    while isinstance(env, _GUARDS):
        env = env.env
    return env


def runner_env(c: TaskCard, kwargs: dict[str, Any]) -> Any:
    """Make the env of card ``c`` with ``kwargs`` for the runner: single-agent envs without guard layers."""
    if c.kind != "single":
        return make(c.id, **kwargs)
    env = make(c.id, disable_env_checker=True, **kwargs)
    return strip_guards(env) if isinstance(env, gym.Wrapper) else env


__all__ = ["runner_env", "strip_guards"]
