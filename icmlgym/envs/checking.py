"""Conformance checks every registered env must pass: ``icmlgym check`` and ``tests/core/test_all_envs.py``.

Each env is made with its card's smoke kwargs (or another tier's) and checked for:

- ``check_env``: Gymnasium's ``check_env`` (PettingZoo's ``parallel_api_test`` and
  ``parallel_seed_test`` for a multi-agent env), with **warnings turned into errors**
  except the few in :data:`ALLOWED_WARNINGS`, each with the reason it is fine;
- ``sb3 check_env``: stable-baselines3's own ``check_env`` on a single-agent env, through
  :func:`icmlgym.envs.sb3_compat.sb3_compatible` (the env itself when SB3 supports its spaces,
  else the :class:`~icmlgym.envs.sb3_compat.SB3Compatible` wrapper), with warnings as errors except
  SB3's advice in :data:`SB3_ADVICE`; skipped where the ``[rl]`` extra is not installed;
- ``card contract``: one episode played to its end under seeded random actions (warnings
  as errors here too): every observation inside the observation space, ``info["cost"]``
  on every step with exactly the card's ``cost_units`` (``env_steps`` may be left to the
  runner), every counter non-decreasing, and at the end ``info["metrics"]`` holding the
  card's ``primary_metric`` with every value a finite scalar number;
- ``seed determinism``: two instances, one seed and one action sequence give the same trace;
- ``invalid action``: a value outside the action space raises ``ValueError``;
- ``step after end``: ``step`` once the episode ended raises (rather than play on silently);
- ``docstrings``: the env class and its module have docstrings (``help()`` shows them);
- ``recorded rollout``: a hash of the first :data:`HASH_STEPS` steps of that episode (observations,
  rewards, end flags, cost counters, and the primary metric at the end) equals
  the one recorded for this env id in ``icmlgym/envs/<family>/rollouts.json``. Behaviour
  never changes under an existing version: a different hash means bump the version
  (``Name-v<N+1>``) and record it (``icmlgym check --record ID``). An env whose steps run
  torch kernels (a trained model inside) hashes differently on another CPU model
  (:func:`icmlgym.nn.runtime.numerics_platform`), so an entry may also hold the hash of the
  same code on other platforms (``other_platforms``, added by ``icmlgym check
  --record-platform ID`` on a machine where the recorded one does not match while the code
  is unchanged); the check accepts the recorded hash or any of those.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.util
import io
import json
import math
import re
import time
import traceback
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import TaskCard, card, extra_installed
from icmlgym.envs import make

# Warnings the checkers may raise that are genuinely fine for an icmlgym env. Everything else
# is an error (an observation outside its space, a dtype mismatch, a non-deterministic reset...).
ALLOWED_WARNINGS: tuple[tuple[str, str], ...] = (
    # unbounded features (scores, embeddings, counts) are honest Box bounds; clipping them would lie
    (r"A Box observation space (maximum|minimum) value is -?infinity", "unbounded observation features"),
    # an action that is a parameter vector (CognitiveRNN-v0 takes trained network weights) has no natural bounds
    (r"A Box action space (maximum|minimum) value is -?infinity", "parameter-vector actions"),
    # advice for RL policy outputs, not a correctness issue: actions keep their natural units here
    (r"For Box action spaces, we recommend using a symmetric and normalized space", "actions in natural units"),
    # render checks are skipped on purpose: the envs have no render modes (headless benchmarks)
    (r"Not able to test alternative render modes", "no render modes"),
    # PettingZoo's own deprecation notice about its old env-creation API, raised on import
    (r"The old environment creation API has been deprecated", "PettingZoo's import-time notice"),
    # torch 2.13 deprecates torch.jit.script_method, which transformers' model code still calls when
    # a model first loads (LayerOOD-v0 encodes its corpus under a cold ICMLGYM_HOME): third-party, not the env's
    (r"`torch\.jit\.script_method` is deprecated", "transformers' use of torch.jit under torch 2.13"),
)
# stable-baselines3's check_env advice that is fine for a benchmark env (everything else it warns
# about, e.g. "not supported by Stable-Baselines3", is an error)
SB3_ADVICE: tuple[tuple[str, str], ...] = (
    # tables (per-arm features, per-block statistics, histories) keep their 2-D shape; SB3's
    # MultiInputPolicy flattens them itself
    (r"has an unconventional shape", "2-D feature tables"),
    (r"We recommend you to use a symmetric and normalized Box action space", "actions in natural units"),
    # 3-D float feature stacks (LayerOOD-v0's layer features) look like images to SB3's heuristics
    (r"is an image but", "3-D float features, not images"),
    (r"The minimal resolution for an image is 36x36", "3-D float features, not images"),
    (r"Treating image space as channels-last", "3-D float features, not images"),
)
HASH_STEPS = 50
"""Steps of the recorded rollout (from ``reset(seed=0)`` under actions sampled from the
action space seeded with 0), at the card's smoke kwargs."""
MAX_EPISODE_STEPS = 20_000
"""The card-contract episode must end (terminated or truncated) within this many steps at smoke kwargs."""
ROLLOUTS_FILE = "rollouts.json"


@dataclass
class CheckResult:
    """The outcome of one check of one env: passed True/False, or None when skipped."""

    env_id: str
    check: str
    passed: bool | None  # None: skipped
    detail: str = ""
    seconds: float = 0.0


@dataclass
class Trace:
    """One played episode: the hash of its first steps and what broke the card contract."""

    problems: list[str] = field(default_factory=lambda: _Problems())
    ended: bool = False
    rollout_hash: str = ""
    after_end: str = ""  # what went wrong when stepping once more after the end ("" = it raised, as it should)


@contextlib.contextmanager
def strict_warnings(also_allowed: tuple[tuple[str, str], ...] = ()) -> Iterator[None]:
    """Every warning raises, except those in :data:`ALLOWED_WARNINGS` and ``also_allowed``."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for pattern, _reason in ALLOWED_WARNINGS + also_allowed:
            warnings.filterwarnings("ignore", message=f".*{pattern}")
        yield


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


def _canon(x: Any) -> Any:
    """A JSON-able, platform-stable form of an observation, reward or info value (floats to 6 decimals)."""
    if isinstance(x, dict):
        return {str(k): _canon(x[k]) for k in sorted(x, key=str)}
    if isinstance(x, (list, tuple)):
        return [_canon(v) for v in x]
    if isinstance(x, np.ndarray):
        if np.issubdtype(x.dtype, np.floating):
            return np.round(x.astype(np.float64), 6).tolist()
        if x.dtype.kind in "iub":
            return x.tolist()
        return [_canon(v) for v in x.tolist()]
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return None if math.isnan(x) else round(float(x), 6)
    if x is None or isinstance(x, str):
        return x
    return repr(type(x).__name__)


def _is_number(v: Any) -> bool:
    return isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, (bool, np.bool_))


class _Problems(list):
    """A list of problems that keeps only the first step at which each kind of problem shows."""

    def append(self, text: str) -> None:
        kind = re.sub(r"^step \d+", "step", text)
        kind = re.sub(r"from \S+ to \S+", "", kind)
        if kind not in getattr(self, "_kinds", set()):
            self._kinds = getattr(self, "_kinds", set()) | {kind}
            super().append(text)


def _check_info(info: dict[str, Any], c: TaskCard, prev: dict[str, float], step: int, problems: list[str], where: str = "", final: bool = False) -> dict[str, float]:
    cost = info.get("cost")
    if not isinstance(cost, dict):
        problems.append(f"step {step}{where}: info['cost'] is missing (the card lists cost units {list(c.cost_units)})")
        return prev
    declared = set(c.cost_units)
    extra = sorted(set(cost) - declared)
    if extra:
        problems.append(f"step {step}{where}: info['cost'] has {extra}, which the card's cost_units {list(c.cost_units)} do not list")
    # a counter may appear late (an evaluation at the end), but by the end every declared unit is there;
    # env_steps may be left to the runner, which meters it itself
    missing = sorted(declared - set(cost) - {"env_steps"})
    if missing and final:
        problems.append(f"step {step}{where}: the episode ended without cost unit(s) {missing} of the card in info['cost'] {sorted(cost)}")
    for k, v in cost.items():
        if not _is_number(v):
            problems.append(f"step {step}{where}: info['cost'][{k!r}] = {v!r} is not a number")
            continue
        if k in prev and float(v) < prev[k]:
            problems.append(f"step {step}{where}: info['cost'][{k!r}] went down from {prev[k]} to {float(v)} (counters are cumulative)")
    return {k: float(v) for k, v in cost.items() if _is_number(v)}


def _check_metrics(info: dict[str, Any], c: TaskCard, step: int, problems: list[str], where: str = "") -> None:
    metrics = info.get("metrics")
    if not isinstance(metrics, dict):
        problems.append(f"step {step}{where}: the episode ended without info['metrics'] (the card's primary metric is {c.primary_metric!r})")
        return
    if c.primary_metric not in metrics:
        problems.append(f"primary metric {c.primary_metric!r} of the card is missing from info['metrics'] {sorted(metrics)}{where}")
    for k, v in metrics.items():
        if not _is_number(v) or np.ndim(v) != 0:
            problems.append(f"info['metrics'][{k!r}] = {v!r} is not a scalar number{where} (the runner stores scalars only; put curves in other info keys)")
        elif not math.isfinite(float(v)) and k == c.primary_metric:
            problems.append(f"primary metric {k!r} is {v}{where}")


def _record_step(trace: Trace, step: int, payload: Any, digest: "hashlib._Hash") -> None:
    if step <= HASH_STEPS:
        digest.update(json.dumps(_canon(payload), sort_keys=True, separators=(",", ":")).encode())


def _primary(info: dict[str, Any], c: TaskCard) -> Any:
    """The card's primary metric at the end: what the leaderboard scores. Other metrics may be added
    under an existing version (they change no stored score), so the recorded rollout leaves them out."""
    return (info.get("metrics") or {}).get(c.primary_metric)


def play_single(env_id: str, kwargs: dict[str, Any], seed: int = 0, max_steps: int = MAX_EPISODE_STEPS, stop_after: int | None = None) -> Trace:
    """One episode of a Gymnasium env under seeded random actions, checked against its card as it goes."""
    c = card(env_id)
    trace, digest = Trace(), hashlib.sha256()
    env = make(env_id, **kwargs)
    try:
        env.action_space.seed(seed)
        obs, info = env.reset(seed=seed)
        _record_step(trace, 0, obs, digest)
        if not env.observation_space.contains(obs):
            trace.problems.append(f"reset: observation {_short(obs)} is outside the observation space {env.observation_space}")
        prev = _check_info(info, c, {}, 0, trace.problems) if "cost" in info else {}
        for step in range(1, max_steps + 1):
            obs, reward, terminated, truncated, info = env.step(env.action_space.sample())
            if not env.observation_space.contains(obs):
                trace.problems.append(f"step {step}: observation {_short(obs)} is outside the observation space {env.observation_space}")
            ended = bool(terminated or truncated)
            prev = _check_info(info, c, prev, step, trace.problems, final=ended)
            _record_step(trace, step, (obs, float(reward), bool(terminated), bool(truncated), info.get("cost"), _primary(info, c) if ended else None), digest)
            if ended:
                _check_metrics(info, c, step, trace.problems)
                trace.ended = True
                try:
                    env.step(env.action_space.sample())
                    trace.after_end = "step() after the episode ended played on instead of raising (e.g. RuntimeError: call reset())"
                except Exception:
                    pass
                break
            if len(trace.problems) > 5 or step == stop_after:
                break
        if not trace.ended and len(trace.problems) <= 5 and stop_after is None:
            trace.problems.append(f"the episode did not end within {max_steps} steps at these kwargs {kwargs}")
    finally:
        env.close()
    trace.rollout_hash = digest.hexdigest()[:16]
    return trace


def play_multi(env_id: str, kwargs: dict[str, Any], seed: int = 0, max_steps: int = MAX_EPISODE_STEPS, stop_after: int | None = None) -> Trace:
    """One episode of a PettingZoo Parallel env under seeded random actions, checked against its card."""
    c = card(env_id)
    trace, digest = Trace(), hashlib.sha256()
    env = make(env_id, **kwargs)
    try:
        for i, a in enumerate(env.possible_agents):
            env.action_space(a).seed(seed + i)
        obs, infos = env.reset(seed=seed)
        _record_step(trace, 0, obs, digest)
        prev: dict[str, dict[str, float]] = {}
        for step in range(1, max_steps + 1):
            if not env.agents:
                break
            actions = {a: env.action_space(a).sample() for a in env.agents}
            obs, rewards, terms, truncs, infos = env.step(actions)
            for a, o in obs.items():
                if not env.observation_space(a).contains(o):
                    trace.problems.append(f"step {step}: {a}'s observation {_short(o)} is outside its space {env.observation_space(a)}")
            ended = all(terms.get(a, False) or truncs.get(a, False) for a in actions)
            for a, info in infos.items():
                prev[a] = _check_info(info, c, prev.get(a, {}), step, trace.problems, f" ({a})", final=ended)
            _record_step(trace, step, (obs, rewards, terms, truncs, {a: i.get("cost") for a, i in infos.items()},
                                       {a: _primary(i, c) for a, i in infos.items()} if ended else None), digest)
            if ended:
                for a in actions:
                    _check_metrics(infos.get(a, {}), c, step, trace.problems, f" ({a})")
                trace.ended = True
                try:
                    env.step(actions)
                    trace.after_end = "step() after the episode ended played on instead of raising (e.g. RuntimeError: call reset())"
                except Exception:
                    pass
                break
            if len(trace.problems) > 5 or step == stop_after:
                break
        if not trace.ended and len(trace.problems) <= 5 and stop_after is None:
            trace.problems.append(f"the episode did not end within {max_steps} steps at these kwargs {kwargs}")
    finally:
        env.close()
    trace.rollout_hash = digest.hexdigest()[:16]
    return trace


def _short(x: Any) -> str:
    text = np.array2string(x, threshold=8, precision=4) if isinstance(x, np.ndarray) else repr(x)
    return text if len(text) < 120 else text[:117] + "..."


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


def rollouts_path(c: TaskCard) -> Path | None:
    """``icmlgym/envs/<family>/rollouts.json`` of the card's family (None for a family outside the package)."""
    spec = importlib.util.find_spec(f"icmlgym.envs.{c.family}")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / ROLLOUTS_FILE


def recorded_hashes(c: TaskCard) -> dict[str, str]:
    """The rollout hashes recorded for this env id, each with where it was recorded (empty: none).

    The first is the entry's ``sha256`` (the version's recording); the others, its
    ``other_platforms`` (the same code's hash on another numerics platform)."""
    path = rollouts_path(c)
    if path is None or not path.exists():
        return {}
    entry = json.loads(path.read_text()).get(c.id, {})
    if "sha256" not in entry:
        return {}
    out = {entry["sha256"]: entry.get("recorded_on", "the version's recording")}
    out.update({h: where for where, h in entry.get("other_platforms", {}).items()})
    return out


def recorded_hash(c: TaskCard) -> str | None:
    """The rollout hash recorded for this env id's version, or None."""
    return next(iter(recorded_hashes(c)), None)


def record_rollout(env_id: str, platform_only: bool = False) -> str:
    """Play the smoke-tier rollout of ``env_id`` and store its hash in the family's ``rollouts.json``.

    ``platform_only``: keep the version's recorded hash and add this machine's hash under
    ``other_platforms`` (for an env whose unchanged code hashes differently on this CPU model:
    see :func:`icmlgym.nn.runtime.numerics_platform`); without it the entry is replaced (a new
    env or version)."""
    from icmlgym.nn.runtime import numerics_platform

    c = card(env_id)
    path = rollouts_path(c)
    if path is None:
        raise ValueError(f"{c.id} belongs to family {c.family!r}, which has no package under icmlgym/envs/ to record into")
    kwargs = c.tier("smoke").env_kwargs
    trace = (play_multi if c.kind == "multi" else play_single)(c.id, kwargs)
    data = json.loads(path.read_text()) if path.exists() else {}
    entry = data.get(c.id)
    if platform_only and entry is not None and "sha256" in entry:
        if trace.rollout_hash not in recorded_hashes(c):
            entry.setdefault("other_platforms", {})[numerics_platform()] = trace.rollout_hash
    else:
        data[c.id] = {"steps": HASH_STEPS, "sha256": trace.rollout_hash, "kwargs": "smoke tier",
                      "actions": "action_space.seed(0).sample(); reset(seed=0)", "recorded_on": numerics_platform()}
    path.write_text(json.dumps(dict(sorted(data.items())), indent=1) + "\n")
    return trace.rollout_hash


def _timed(env_id: str, name: str, fn: Callable[[], tuple[bool | None, str]]) -> CheckResult:
    t = time.perf_counter()
    try:
        with strict_warnings():
            passed, detail = fn()
    except Exception as err:
        passed, detail = False, f"{type(err).__name__}: {err}"
    return CheckResult(env_id, name, passed, detail, time.perf_counter() - t)


def _contract(c: TaskCard, play: Callable[..., Trace], kwargs: dict, expected: dict[str, str], tier: str) -> list[CheckResult]:
    """The card-contract episode, and its first steps' hash against the recorded one."""
    t = time.perf_counter()
    try:
        with strict_warnings():
            trace = play(c.id, kwargs)
    except Exception as err:
        return [CheckResult(c.id, "card contract", False, f"{type(err).__name__}: {err}", time.perf_counter() - t)]
    out = [CheckResult(c.id, "card contract", not trace.problems, "; ".join(trace.problems[:6]), time.perf_counter() - t)]
    if trace.ended:
        out.append(CheckResult(c.id, "step after end", not trace.after_end, trace.after_end))
    t = time.perf_counter()
    try:
        with strict_warnings():
            again = play(c.id, kwargs, stop_after=HASH_STEPS)
        same = again.rollout_hash == trace.rollout_hash
        detail = "" if same else f"two runs from reset(seed=0) under the same actions differ within {HASH_STEPS} steps ({trace.rollout_hash} vs {again.rollout_hash})"
        out.append(CheckResult(c.id, "seed determinism", same, detail, time.perf_counter() - t))
    except Exception as err:
        out.append(CheckResult(c.id, "seed determinism", False, f"{type(err).__name__}: {err}", time.perf_counter() - t))
    if tier != "smoke":
        out.append(CheckResult(c.id, "recorded rollout", None, "recorded at the smoke tier's own kwargs only"))
    elif not expected:
        out.append(CheckResult(c.id, "recorded rollout", False, f"no rollout recorded for {c.id}: record it with `icmlgym check --record {c.id}`"))
    elif trace.rollout_hash not in expected:
        from icmlgym.nn.runtime import numerics_platform

        recorded = "; ".join(f"{h} ({where})" for h, where in expected.items())
        out.append(CheckResult(
            c.id, "recorded rollout", False,
            f"behaviour of {c.id} changed without a version bump: its first {HASH_STEPS} steps hash to {trace.rollout_hash} "
            f"on {numerics_platform()}, recorded {recorded}. Behaviour never changes under an existing version: register the "
            f"new behaviour as a new version and record it (`icmlgym check --record ID`). If the code is unchanged and only the "
            f"machine differs (torch's kernels round differently on another CPU model), add this machine's hash with "
            f"`icmlgym check --record-platform ID`",
        ))
    else:
        out.append(CheckResult(c.id, "recorded rollout", True, trace.rollout_hash))
    return out


def _single_checks(c: TaskCard, kwargs: dict, expected: dict[str, str], tier: str) -> list[CheckResult]:
    from gymnasium.utils.env_checker import check_env

    def run_check_env():
        env = make(c.id, **kwargs)
        try:
            check_env(env.unwrapped, skip_render_check=True)
        finally:
            env.close()
        return True, ""

    out = [_timed(c.id, "check_env", run_check_env), _sb3_check(c, kwargs)]
    out += _contract(c, play_single, kwargs, expected, tier)

    def invalid():
        env = make(c.id, **kwargs)
        try:
            env.reset(seed=0)
            bad = invalid_action(env.action_space)
            if bad is None:
                return None, f"cannot build an invalid action for {env.action_space}"
            try:
                env.unwrapped.step(bad)
            except ValueError:
                return True, ""
            except Exception as err:
                return False, f"raised {type(err).__name__} instead of ValueError: {err}"
            return False, f"step({bad!r}) did not raise ValueError"
        finally:
            env.close()

    out.append(_timed(c.id, "invalid action", invalid))
    return out


def _sb3_check(c: TaskCard, kwargs: dict) -> CheckResult:
    """SB3's own check_env, directly or through the SB3Compatible wrapper."""
    if importlib.util.find_spec("stable_baselines3") is None:
        return CheckResult(c.id, "sb3 check_env", None, "stable-baselines3 is not installed (extra [rl])")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    from icmlgym.envs.sb3_compat import sb3_compatible

    def run() -> tuple[bool, str]:
        env = make(c.id, **kwargs)
        try:
            checked = sb3_compatible(env)
            with strict_warnings(SB3_ADVICE):
                sb3_check_env(checked, warn=True, skip_render_check=True)
        finally:
            env.close()
        return True, "through SB3Compatible" if checked is not env else ""

    return _timed(c.id, "sb3 check_env", run)


def _multi_checks(c: TaskCard, kwargs: dict, expected: dict[str, str], tier: str) -> list[CheckResult]:
    from pettingzoo.test import parallel_api_test, parallel_seed_test

    def api():
        with contextlib.redirect_stdout(io.StringIO()):
            parallel_api_test(make(c.id, **kwargs), num_cycles=200)
        return True, ""

    def seed_test():
        parallel_seed_test(lambda: make(c.id, **kwargs), num_cycles=200)
        return True, ""

    out = [_timed(c.id, "parallel_api_test", api), _timed(c.id, "parallel_seed_test", seed_test)]
    out += _contract(c, play_multi, kwargs, expected, tier)

    def invalid():
        env = make(c.id, **kwargs)
        env.reset(seed=0)
        agent = env.agents[0]
        bad = invalid_action(env.action_space(agent))
        if bad is None:
            return None, "cannot build an invalid action"
        actions = {a: env.action_space(a).sample() for a in env.agents}
        actions[agent] = bad
        try:
            env.step(actions)
        except ValueError:
            return True, ""
        except Exception as err:
            return False, f"raised {type(err).__name__} instead of ValueError: {err}"
        return False, f"step with {agent}={bad!r} did not raise ValueError"

    out.append(_timed(c.id, "invalid action", invalid))
    return out


def check(env_id: str, tier: str = "smoke", recorded: str | None = None, **kwargs: Any) -> list[CheckResult]:
    """Run every conformance check on one env (made with the tier's kwargs plus ``kwargs``).

    ``recorded`` overrides the rollout hashes recorded in the family's ``rollouts.json``."""
    c = card(env_id)
    if not extra_installed(c.extra):
        return [CheckResult(c.id, "all", None, f'extra [{c.extra}] not installed: pip install "icmlgym[{c.extra}]"')]
    env_kwargs = {**c.tier(tier).env_kwargs, **kwargs}
    expected = {recorded: "given"} if recorded is not None else recorded_hashes(c)
    if kwargs:
        tier = "custom"  # the recorded rollout is for the card's own smoke kwargs
    try:
        with strict_warnings():
            make(c.id, **env_kwargs).close()
    except Exception as err:  # an env that cannot even be made (or warns when made)
        return [CheckResult(c.id, "make", False, f"{type(err).__name__}: {err}\n{traceback.format_exc(limit=5)}")]
    out = _multi_checks(c, env_kwargs, expected, tier) if c.kind == "multi" else _single_checks(c, env_kwargs, expected, tier)
    return out + [docstrings(c)]


def docstrings(c: TaskCard) -> CheckResult:
    """The env class has its own docstring (what ``help()`` shows) and its module opens with one."""
    import importlib
    import sys

    module_name, _, attr = c.entry_point.partition(":")
    cls = getattr(importlib.import_module(module_name), attr)
    missing = []
    if not (cls.__dict__.get("__doc__") or "").strip():
        missing.append(f"class {attr} has no docstring")
    if not (sys.modules[module_name].__doc__ or "").strip():
        missing.append(f"module {module_name} has no docstring")
    return CheckResult(c.id, "docstrings", not missing, "; ".join(missing))


def failures(results: list[CheckResult]) -> str:
    """The failed checks, one per line (empty when every check passed or was skipped)."""
    return "\n".join(f"{r.env_id} · {r.check}: {r.detail}" for r in results if r.passed is False)


__all__ = [
    "ALLOWED_WARNINGS",
    "CheckResult",
    "HASH_STEPS",
    "check",
    "determinism_single",
    "failures",
    "invalid_action",
    "play_multi",
    "play_single",
    "record_rollout",
    "recorded_hash",
    "recorded_hashes",
    "strict_warnings",
]

