"""SketchAttack-v0: an adaptive adversary against a sketch of a resettable stream.

## Description

From Cohen, Gribelyuk, Nelson & Stemmer, "Adaptively robust sketches for
resettable streams" (ICML 2026, arXiv 2601.21989). In a resettable stream each
key's value is increased or reset to zero; a sketch keeps a small summary and
publishes an estimate of ``F = sum_x f(v_x)`` (cardinality, sum or an L_q
moment, ``q`` in (0, 1)). The paper shows that every earlier sketch for this
model falls to an adversary that watches the published answers, and builds
sketches whose sampling randomness is protected with differential privacy
through the Binary Tree Mechanism. Here the agent *is* the adversary: it picks
the stream and the query times, sees only the published answers, and tries to
push the sketch's error past ``epsilon``.

## Action Space

``MultiDiscrete([3, n_keys, max_increment])``: ``(op, key, amount - 1)`` with
``op`` 0 = increment ``key`` by ``amount`` (1..max_increment), 1 = reset ``key``
to zero, 2 = query (``key`` and ``amount`` are ignored).

## Observation Space

``Box(0, inf, (3,), float64)``: the last published estimate (0 before the first
query), the updates left and the queries left. The defender, its randomness
and the true vector are hidden.

## Rewards

The growth of the prefix-max error ``E_t = max_{queries s <= t} |F^_s - F_s| /
max(max_{u <= s} F_u, min_scale)`` at each step (so the return equals the final
``E``). Errors are normalised by the prefix maximum of the true statistic, the
paper's prefix-max guarantee; ``min_scale`` keeps a handful of keys at the very
start from counting as a large relative error.

## Starting State

The all-zero vector and a fresh defender built by
:func:`icmlgym.envs.sketch.sketches.make_defender` at the space budget
``space``, its secret randomness drawn from the env's ``np_random`` at every
reset (so ``reset(seed=...)`` makes an episode reproducible, and no episode
shares randomness with another).

## Episode End

Terminated when the prefix-max error exceeds ``epsilon`` (the attack
succeeded). Truncated when the update budget or the query budget is spent.

## Arguments

- ``defender`` (str, default ``"bernoulli"``): one of ``exact``, ``bernoulli``,
  ``bottomk``, ``sample-hold``, ``switching``, ``dp-median``, ``dp-tree``,
  ``linear`` (sum / lp only), ``theta`` (cardinality only; ignores resets).
- ``statistic`` (``"cardinality"``, ``"sum"`` or ``"lp"``), ``q`` (float in (0, 1), for lp).
- ``n_keys`` (int, default 3000): the key universe.
- ``space`` (int, default 3000): the defender's space budget in words (matched across defenders).
- ``update_budget``, ``query_budget`` (int, default 3000 each; the update budget is also the
  horizon the Binary Tree Mechanism is calibrated for).
- ``epsilon`` (float, default 0.5): the error that counts as a successful attack.
- ``min_scale`` (float, default ``n_keys / 6``): the smallest normaliser of the error.
- ``max_increment`` (int, default 4).
- ``defender_kwargs`` (dict, optional): overrides the defender's parameters (e.g. ``epsilon_dp``).

## Metrics

``info["cost"]``: ``updates`` (increments and resets) and ``queries``. At
episode end ``info["metrics"]``: ``success`` (1 if the error exceeded
``epsilon``), ``prefix_max_error`` (``E`` at the end), ``steps_to_failure`` (the
step at which ``E`` first exceeded ``epsilon``; the episode length when it never
did, i.e. censored), ``defender_space`` (the most words the defender held),
``true_value`` and ``published`` (the last true statistic and published answer),
``updates`` and ``queries``.

## Version History

- v0: initial release.
"""

from __future__ import annotations

from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.fastspaces import contains_fn
from icmlgym.envs.sketch.sketches import DEFENDERS, ExactSketch, check_statistic, make_defender

OP_INCREMENT, OP_RESET, OP_QUERY = 0, 1, 2


class SketchAttackEnv(gym.Env):
    """SketchAttack-v0: an adaptive adversary against a sketch of a resettable stream.

    The action and observation spaces, rewards, episode end, arguments, metrics and version
    history are in the module docstring (``help(icmlgym.envs.sketch.attack_env)``).
    """

    metadata = {"render_modes": []}

    def __init__(
        self,
        defender: str = "bernoulli",
        statistic: str = "cardinality",
        q: float = 0.5,
        n_keys: int = 3000,
        space: int = 3000,
        update_budget: int = 3000,
        query_budget: int = 3000,
        epsilon: float = 0.5,
        min_scale: float | None = None,
        max_increment: int = 4,
        defender_kwargs: dict[str, Any] | None = None,
    ) -> None:
        if defender not in DEFENDERS:
            raise ValueError(f"unknown defender {defender!r}; defenders: {sorted(DEFENDERS)}")
        check_statistic(statistic, q)
        for name, v in (("n_keys", n_keys), ("space", space), ("update_budget", update_budget), ("query_budget", query_budget), ("max_increment", max_increment)):
            if int(v) != v or int(v) < 1:
                raise ValueError(f"{name} must be a positive integer, got {v!r}")
        if not (float(epsilon) > 0):
            raise ValueError(f"epsilon must be positive, got {epsilon!r}")
        if min_scale is None:
            min_scale = int(n_keys) / 6.0
        if not (float(min_scale) > 0):
            raise ValueError(f"min_scale must be positive, got {min_scale!r}")
        self.defender_name = defender
        self.statistic = statistic
        self.q = float(q)
        self.n_keys = int(n_keys)
        self.space = int(space)
        self.update_budget = int(update_budget)
        self.query_budget = int(query_budget)
        self.epsilon = float(epsilon)
        self.min_scale = float(min_scale)
        self.max_increment = int(max_increment)
        self.defender_kwargs = dict(defender_kwargs or {})
        # build one defender now so that bad kwargs fail at construction, not at reset
        self._make_defender(0)
        self.action_space = spaces.MultiDiscrete([3, self.n_keys, self.max_increment])
        self._contains = contains_fn(self.action_space)  # MultiDiscrete.contains's answers, without its cost per step
        self.observation_space = spaces.Box(0.0, np.inf, shape=(3,), dtype=np.float64)
        self._done = True

    def _make_defender(self, seed: int):
        return make_defender(
            self.defender_name,
            self.statistic,
            q=self.q,
            n_keys=self.n_keys,
            space=self.space,
            horizon=self.update_budget,
            max_delta=self.max_increment,
            seed=seed,
            **self.defender_kwargs,
        )

    def _obs(self) -> np.ndarray:
        return np.array([max(self._published, 0.0), self._updates_left, self._queries_left], dtype=np.float64)

    def _info(self) -> dict[str, Any]:
        return {"cost": {"updates": self.update_budget - self._updates_left, "queries": self.query_budget - self._queries_left}}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self.defender = self._make_defender(int(self.np_random.integers(2**62)))
        self.truth = ExactSketch(self.statistic, self.q)
        self._published = 0.0
        self._updates_left = self.update_budget
        self._queries_left = self.query_budget
        self._prefix_max_true = 0.0
        self._error = 0.0
        self._steps = 0
        self._failure_step: int | None = None
        self._max_space = self.defender.space_words()
        self._done = False
        return self._obs(), self._info()

    def step(self, action):
        a = np.asarray(action)
        if a.shape != (3,) or not np.issubdtype(a.dtype, np.integer) or not self._contains(a.astype(np.int64)):
            raise ValueError(f"action {action!r} is not in the action space {self.action_space}")
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        op, key, amount = (int(x) for x in a)
        self._steps += 1
        reward = 0.0
        if op == OP_QUERY:
            self._queries_left -= 1
            self._published = float(self.defender.estimate())
            true = self.truth.estimate()
            err = abs(self._published - true) / max(self._prefix_max_true, self.min_scale)
            if err > self._error:
                reward = err - self._error
                self._error = err
        else:
            self._updates_left -= 1
            if op == OP_INCREMENT:
                self.truth.update(key, amount + 1)
                self.defender.update(key, amount + 1)
            else:
                value = self.truth.value(key)
                self.truth.reset(key)
                self.defender.reset(key, value=value)
            self._prefix_max_true = max(self._prefix_max_true, self.truth.estimate())
            self._max_space = max(self._max_space, self.defender.space_words())
        success = self._error > self.epsilon
        if success and self._failure_step is None:
            self._failure_step = self._steps
        terminated = bool(success)
        truncated = bool(not terminated and (self._updates_left <= 0 or self._queries_left <= 0))
        info = self._info()
        if terminated or truncated:
            self._done = True
            info["metrics"] = {
                "success": float(success),
                "prefix_max_error": float(self._error),
                "steps_to_failure": float(self._failure_step if self._failure_step is not None else self._steps),
                "defender_space": float(self._max_space),
                "true_value": float(self.truth.estimate()),
                "published": float(self._published),
                "updates": float(self.update_budget - self._updates_left),
                "queries": float(self.query_budget - self._queries_left),
            }
        return self._obs(), float(reward), terminated, truncated, info
