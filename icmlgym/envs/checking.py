"""Conformance checks every registered env must pass (``icmlgym check``).

For a single-agent env: Gymnasium's ``check_env``, a seed-determinism test (two
instances, the same seed and the same action sequence give the same
observations, rewards and end flags) and an invalid-action test (a value
outside the action space raises ``ValueError``). For a multi-agent env:
PettingZoo's ``parallel_api_test`` and ``parallel_seed_test`` and the same
invalid-action test for one agent.
"""

from __future__ import annotations

import contextlib
import io
import time
import traceback
import warnings
from dataclasses import dataclass
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import card, extra_installed
from icmlgym.envs import make


@dataclass
class CheckResult:
    env_id: str
    check: str
    passed: bool | None  # None: skipped
    detail: str = ""
    seconds: float = 0.0


def invalid_action(space: gym.Space) -> Any:
    """A value that is certainly not in ``space`` (None where none can be built)."""
    if isinstance(space, spaces.Discrete):
        return int(space.start + space.n)
    if isinstance(space, spaces.MultiDiscrete):
        return np.asarray(space.nvec, dtype=np.int64) + np.asarray(space.start, dtype=np.int64)
    if isinstance(space, spaces.MultiBinary):
        return np.full(space.shape, 2, dtype=np.int8)
    if isinstance(space, spaces.Box):
        bad = np.full(space.shape, np.nan, dtype=np.float64)
        return bad.astype(space.dtype) if np.issubdtype(space.dtype, np.floating) else np.full(space.shape, np.iinfo(space.dtype).max, dtype=np.int64)
    if isinstance(space, spaces.Dict):
        return "not-an-action"
    if isinstance(space, spaces.Tuple):
        return "not-an-action"
    return None


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return isinstance(b, (tuple, list)) and len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return np.array_equal(np.asarray(a), np.asarray(b), equal_nan=True)
    if isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
        return True
    return a == b


def determinism_single(env_id: str, kwargs: dict, seed: int = 123, steps: int = 200) -> str:
    """Empty string when two runs with one seed agree step by step, else what differed."""
    rollouts = []
    for _ in range(2):
        env = make(env_id, **kwargs)
        env.action_space.seed(seed)
        obs, _ = env.reset(seed=seed)
        trace = [obs]
        for _ in range(steps):
            obs, r, term, trunc, _ = env.step(env.action_space.sample())
            trace.append((obs, float(r), bool(term), bool(trunc)))
            if term or trunc:
                obs, _ = env.reset()
                trace.append(obs)
        env.close()
        rollouts.append(trace)
    for i, (a, b) in enumerate(zip(*rollouts)):
        if not _same(a, b):
            return f"step {i} differs between two runs with seed {seed}"
    return ""


def _single_checks(env_id: str, kwargs: dict) -> list[CheckResult]:
    from gymnasium.utils.env_checker import check_env

    out = []
    t = time.perf_counter()
    try:
        env = make(env_id, **kwargs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            check_env(env.unwrapped, skip_render_check=True)
        env.close()
        out.append(CheckResult(env_id, "check_env", True, "", time.perf_counter() - t))
    except Exception as err:
        out.append(CheckResult(env_id, "check_env", False, f"{type(err).__name__}: {err}", time.perf_counter() - t))
    t = time.perf_counter()
    try:
        diff = determinism_single(env_id, kwargs)
        out.append(CheckResult(env_id, "seed determinism", not diff, diff, time.perf_counter() - t))
    except Exception as err:
        out.append(CheckResult(env_id, "seed determinism", False, f"{type(err).__name__}: {err}", time.perf_counter() - t))
    t = time.perf_counter()
    env = make(env_id, **kwargs)
    env.reset(seed=0)
    bad = invalid_action(env.action_space)
    if bad is None:
        out.append(CheckResult(env_id, "invalid action", None, f"cannot build an invalid action for {env.action_space}"))
    else:
        try:
            env.unwrapped.step(bad)
            out.append(CheckResult(env_id, "invalid action", False, f"step({bad!r}) did not raise ValueError", time.perf_counter() - t))
        except ValueError:
            out.append(CheckResult(env_id, "invalid action", True, "", time.perf_counter() - t))
        except Exception as err:
            out.append(CheckResult(env_id, "invalid action", False, f"raised {type(err).__name__} instead of ValueError: {err}", time.perf_counter() - t))
    env.close()
    return out


def _multi_checks(env_id: str, kwargs: dict) -> list[CheckResult]:
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    out = []
    t = time.perf_counter()
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            parallel_api_test(make(env_id, **kwargs), num_cycles=200)
        out.append(CheckResult(env_id, "parallel_api_test", True, "", time.perf_counter() - t))
    except Exception as err:
        out.append(CheckResult(env_id, "parallel_api_test", False, f"{type(err).__name__}: {err}", time.perf_counter() - t))
    t = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            parallel_seed_test(lambda: make(env_id, **kwargs), num_cycles=200)
        out.append(CheckResult(env_id, "parallel_seed_test", True, "", time.perf_counter() - t))
    except Exception as err:
        out.append(CheckResult(env_id, "parallel_seed_test", False, f"{type(err).__name__}: {err}", time.perf_counter() - t))
    t = time.perf_counter()
    env = make(env_id, **kwargs)
    env.reset(seed=0)
    agent = env.agents[0]
    bad = invalid_action(env.action_space(agent))
    if bad is None:
        out.append(CheckResult(env_id, "invalid action", None, "cannot build an invalid action"))
    else:
        actions = {a: env.action_space(a).sample() for a in env.agents}
        actions[agent] = bad
        try:
            env.step(actions)
            out.append(CheckResult(env_id, "invalid action", False, f"step with {agent}={bad!r} did not raise ValueError", time.perf_counter() - t))
        except ValueError:
            out.append(CheckResult(env_id, "invalid action", True, "", time.perf_counter() - t))
        except Exception as err:
            out.append(CheckResult(env_id, "invalid action", False, f"raised {type(err).__name__} instead of ValueError: {err}", time.perf_counter() - t))
    env.close()
    return out


def check(env_id: str, tier: str = "smoke", **kwargs: Any) -> list[CheckResult]:
    """Run every conformance check on one env (made with the tier's kwargs plus ``kwargs``)."""
    c = card(env_id)
    if not extra_installed(c.extra):
        return [CheckResult(c.id, "all", None, f'extra [{c.extra}] not installed: pip install "icmlgym[{c.extra}]"')]
    env_kwargs = {**c.tier(tier).env_kwargs, **kwargs}
    try:
        return _multi_checks(c.id, env_kwargs) if c.kind == "multi" else _single_checks(c.id, env_kwargs)
    except Exception as err:  # an env that cannot even be made
        return [CheckResult(c.id, "make", False, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}")]
