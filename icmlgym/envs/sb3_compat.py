"""A wrapper that gives any single-agent icmlgym env spaces stable-baselines3 can train on.

Some icmlgym envs use spaces SB3 policies cannot encode: ``Text`` observations
(Craft-v0's prompt, UIRefine-v0's instruction), nested ``Dict`` observations,
``Dict`` actions (ChoiceArena-v0, Craft-v0, ScreeningCompounds-v0, CognitiveRNN-v0)
and multi-dimensional ``MultiDiscrete`` actions (UIRefine-v0). :class:`SB3Compatible`
rewrites them, and leaves an env whose spaces SB3 already supports unchanged
(:func:`sb3_compatible` returns such an env as it is). The conformance suite runs
SB3's own ``check_env`` on every single-agent env through :func:`sb3_compatible`,
and the ``sb3-*`` agents train through it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

BINS = 11
"""Levels per dimension when a ``Box`` part of a mixed ``Dict`` action becomes discrete."""
BOUND = 10.0
"""An infinite ``Box`` action bound becomes ``-BOUND`` / ``+BOUND``: SB3 samples continuous actions
within finite bounds (CognitiveRNN-v0's weights are the case: trained weights lie well inside it)."""


@dataclass(frozen=True)
class _Part:
    key: str
    space: spaces.Space
    kind: str  # "discrete", "multi", "binary", "box" (continuous), "levels" (a Box as BINS levels)
    size: int  # entries of the flat action it takes


def _flat_obs_spaces(space: spaces.Space, prefix: str = "") -> dict[str, spaces.Space]:
    if isinstance(space, spaces.Dict):
        out: dict[str, spaces.Space] = {}
        for k, sub in space.spaces.items():
            out.update(_flat_obs_spaces(sub, f"{prefix}{k}."))
        return out
    return {prefix[:-1]: space}


def _text_box(space: spaces.Text) -> spaces.Box:
    return spaces.Box(0, len(space.character_set), (space.max_length,), np.int32)


def _needs_obs_change(space: spaces.Space) -> bool:
    if isinstance(space, spaces.Text):
        return True
    if isinstance(space, spaces.Dict):
        return any(isinstance(s, (spaces.Dict, spaces.Text)) for s in space.spaces.values())
    if isinstance(space, (spaces.Box, spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary)):
        return False
    raise TypeError(f"SB3Compatible cannot encode the observation space {space} (SB3 supports Box, Discrete, MultiDiscrete, MultiBinary and a flat Dict of them)")


def _needs_action_change(space: spaces.Space) -> bool:
    if isinstance(space, spaces.MultiDiscrete):
        return space.nvec.ndim != 1
    if isinstance(space, spaces.Box):
        return not space.is_bounded("both")
    if isinstance(space, (spaces.Discrete, spaces.MultiBinary)):
        return False
    if isinstance(space, spaces.Dict):
        return True
    raise TypeError(f"SB3Compatible cannot encode the action space {space} (a {type(space).__name__} action has no SB3 policy)")


class SB3Compatible(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """A single-agent env with the spaces stable-baselines3 supports.

    Observations:
      - a ``Text`` part becomes ``Box(0, len(charset), (max_length,), int32)``: character ``i``'s
        position in the charset's ``character_list`` plus one, 0 after the end of the string;
      - a nested ``Dict`` is flattened, its keys joined with ``"."``.

    Actions:
      - an infinite ``Box`` bound becomes ``-bound`` / ``+bound`` (also inside a ``Dict``);
      - a multi-dimensional ``MultiDiscrete`` becomes the 1-D ``MultiDiscrete`` of its entries;
      - a ``Dict`` of ``Box`` parts becomes one flat ``Box`` (the parts concatenated in key order);
      - any other ``Dict`` (discrete parts, possibly with bounded ``Box`` parts) becomes one
        ``MultiDiscrete``: ``Discrete(n)`` one entry, ``MultiDiscrete`` its entries,
        ``MultiBinary`` one ``2`` per bit, and each dimension of a bounded ``Box`` :data:`BINS`
        evenly spaced levels from ``low`` to ``high``;
      - a ``Text`` action raises ``TypeError`` (no SB3 policy writes text).

    Rewards, end flags and ``info`` pass through unchanged. An action outside the wrapped
    action space raises ``ValueError``. :meth:`observation` and :meth:`action` convert single
    values, for agents that train on the wrapper and act on the raw env.

    Args:
        env: the single-agent env to wrap.
        bins: levels per dimension of a ``Box`` part of a mixed ``Dict`` action.
        bound: what an infinite ``Box`` action bound becomes (``-bound`` below, ``+bound`` above).
    """

    def __init__(self, env: gym.Env, bins: int = BINS, bound: float = BOUND) -> None:
        gym.utils.RecordConstructorArgs.__init__(self, bins=bins, bound=bound)
        gym.Wrapper.__init__(self, env)
        if bins < 2:
            raise ValueError(f"bins must be at least 2, got {bins}")
        if not (np.isfinite(bound) and bound > 0):
            raise ValueError(f"bound must be a finite positive number, got {bound}")
        self.bins, self.bound = int(bins), float(bound)
        raw_obs, raw_act = env.observation_space, env.action_space
        self._obs_change = _needs_obs_change(raw_obs)
        if self._obs_change:
            flat = _flat_obs_spaces(raw_obs) if isinstance(raw_obs, spaces.Dict) else {"": raw_obs}
            self._obs_parts = flat
            conv = {k: (_text_box(s) if isinstance(s, spaces.Text) else s) for k, s in flat.items()}
            self.observation_space = conv[""] if list(conv) == [""] else spaces.Dict(conv)
        self._parts: list[_Part] = []
        self._act_change = _needs_action_change(raw_act)
        if self._act_change:
            self.action_space = self._build_action_space(raw_act)

    # ---- actions ---------------------------------------------------------------------------
    def _build_action_space(self, raw: spaces.Space) -> spaces.Space:
        if isinstance(raw, spaces.MultiDiscrete):
            return spaces.MultiDiscrete(raw.nvec.ravel(), dtype=raw.dtype, start=raw.start.ravel())
        if isinstance(raw, spaces.Box):
            return spaces.Box(self._low(raw).reshape(raw.shape), self._high(raw).reshape(raw.shape), dtype=raw.dtype)
        assert isinstance(raw, spaces.Dict)
        subs = raw.spaces
        bad = [k for k, s in subs.items() if not isinstance(s, (spaces.Discrete, spaces.MultiDiscrete, spaces.MultiBinary, spaces.Box))]
        if bad:
            raise TypeError(f"SB3Compatible cannot encode the Dict action part(s) {bad} of {raw}")
        if all(isinstance(s, spaces.Box) for s in subs.values()):
            self._parts = [_Part(k, s, "box", int(np.prod(s.shape))) for k, s in subs.items()]
            low = np.concatenate([self._low(s) for s in subs.values()]).astype(np.float32)
            high = np.concatenate([self._high(s) for s in subs.values()]).astype(np.float32)
            return spaces.Box(low, high, dtype=np.float32)
        nvec: list[np.ndarray] = []
        for k, s in subs.items():
            if isinstance(s, spaces.Discrete):
                self._parts.append(_Part(k, s, "discrete", 1))
                nvec.append(np.array([s.n]))
            elif isinstance(s, spaces.MultiDiscrete):
                self._parts.append(_Part(k, s, "multi", int(s.nvec.size)))
                nvec.append(s.nvec.ravel())
            elif isinstance(s, spaces.MultiBinary):
                self._parts.append(_Part(k, s, "binary", int(np.prod(s.shape))))
                nvec.append(np.full(int(np.prod(s.shape)), 2))
            else:
                self._parts.append(_Part(k, s, "levels", int(np.prod(s.shape))))
                nvec.append(np.full(int(np.prod(s.shape)), self.bins))
        return spaces.MultiDiscrete(np.concatenate(nvec).astype(np.int64))

    def _low(self, s: spaces.Box) -> np.ndarray:
        return np.maximum(np.asarray(s.low, np.float64).ravel(), -self.bound)

    def _high(self, s: spaces.Box) -> np.ndarray:
        return np.minimum(np.asarray(s.high, np.float64).ravel(), self.bound)

    def action(self, action: Any) -> Any:
        """The raw env's action for an action of this wrapper's space (ValueError when outside it)."""
        if not self._act_change:
            return action
        arr = np.asarray(action)
        if arr.dtype.kind in "iu" or isinstance(self.action_space, spaces.Box):
            arr = arr.astype(self.action_space.dtype)  # SB3's predict returns int64 / float64 arrays
        if not self.action_space.contains(arr):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space} of SB3Compatible({self.env.spec.id if self.env.spec else self.env})")
        raw = self.env.action_space
        if isinstance(raw, (spaces.MultiDiscrete, spaces.Box)):
            return arr.astype(raw.dtype).reshape(raw.shape)
        out: dict[str, Any] = {}
        i = 0
        for p in self._parts:
            chunk = arr[i : i + p.size]
            i += p.size
            s = p.space
            if p.kind == "discrete":
                out[p.key] = int(chunk[0]) + int(s.start)
            elif p.kind == "multi":
                out[p.key] = chunk.astype(s.dtype).reshape(s.shape) + s.start
            elif p.kind == "binary":
                out[p.key] = chunk.astype(s.dtype).reshape(s.shape)
            elif p.kind == "box":
                out[p.key] = chunk.astype(s.dtype).reshape(s.shape)
            else:
                frac = chunk.astype(np.float64) / (self.bins - 1)
                low, high = self._low(s), self._high(s)
                out[p.key] = (low + frac * (high - low)).astype(s.dtype).reshape(s.shape)
        return out

    # ---- observations ----------------------------------------------------------------------
    def observation(self, obs: Any) -> Any:
        """This wrapper's observation for a raw env observation."""
        if not self._obs_change:
            return obs
        out: dict[str, Any] = {}
        for k, s in self._obs_parts.items():
            v = obs
            for part in (k.split(".") if k else []):
                v = v[part]
            if isinstance(s, spaces.Text):
                codes = np.zeros(s.max_length, np.int32)
                text = str(v)[: s.max_length]
                codes[: len(text)] = [s.character_index(ch) + 1 for ch in text]
                v = codes
            out[k] = v
        return out[""] if list(out) == [""] else out

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        obs, info = self.env.reset(seed=seed, options=options)
        return self.observation(obs), info

    def step(self, action: Any):
        obs, reward, terminated, truncated, info = self.env.step(self.action(action))
        return self.observation(obs), reward, terminated, truncated, info


def sb3_compatible(env: gym.Env, bins: int = BINS, bound: float = BOUND) -> gym.Env:
    """``env`` itself when SB3 supports its spaces, else ``SB3Compatible(env, bins, bound)``."""
    if not _needs_obs_change(env.observation_space) and not _needs_action_change(env.action_space):
        return env
    return SB3Compatible(env, bins=bins, bound=bound)
