"""Adversarial submissions that read an env's hidden state through one route each (issue #13).

Every class takes ``route`` (default ``"all"``: each route is tried and reported, and the
first that finds an env is used):

- ``"train"``: the env ``train(env, budget)`` hands it, reset with the evaluation's public
  episode seed (in process this is a copy of the evaluation instance);
- ``"rebuild"``: an env rebuilt from the public spec (``spec.env_kwargs``) and reset with
  the public episode seed of run ``run_seed``;
- ``"frames"``: the evaluation env itself, looked for in the callers' stack frames and in
  the garbage collector (there only when the env runs in the agent's process).

What it finds is printed (``route=... found=... matches=...``: ``matches`` says whether the
env it found shows the observation the evaluation sent), so the tests see what the attack
saw, not only what it scored. With nothing found it plays uniformly at random.
"""

from __future__ import annotations

import copy
import gc
import sys
from typing import Any

import numpy as np

from icmlgym.agents.protocol import BaseAgent
from icmlgym.runner.rollout import episode_seed


ROUTES = ("train", "rebuild", "frames")


class _RouteReader(BaseAgent):
    """Finds an env of class ``env_class`` through ``route`` (``"all"``: every route, the first
    that finds one is used), then plays what its hidden state says."""

    env_class = ""

    def __init__(self, route: str = "all", run_seed: int = 0) -> None:
        super().__init__()
        if route not in (*ROUTES, "all"):
            raise ValueError(f"unknown route {route!r}")
        self.routes = ROUTES if route == "all" else (route,)
        self.run_seed = int(run_seed)
        self.train_env: Any = None
        self.found: Any = None
        self.reported = False

    def train(self, env: Any, budget: int) -> None:
        self.train_env = env

    def reset(self, seed: int | None, spec: Any) -> None:
        super().reset(seed, spec)
        self.candidates: dict[str, Any] = {}
        self.found = None
        self.reported = False
        for route in self.routes:
            env = None
            if route == "train":
                env = self.train_env
            elif route == "rebuild":
                import icmlgym

                env = icmlgym.make(spec.env_id, **spec.env_kwargs)
            if env is not None:
                env.reset(seed=episode_seed(self.run_seed, spec.episode, "env"))
                self.candidates[route] = env.unwrapped

    def _search_frames(self) -> Any:
        own = [id(e) for e in self.candidates.values()]  # the envs it built itself are not the evaluation's
        f = sys._getframe(2)
        while f is not None:
            for v in list(f.f_locals.values()):
                inner = getattr(v, "unwrapped", None)
                if type(inner).__name__ == self.env_class and id(inner) not in own:
                    return inner
            f = f.f_back
        for o in gc.get_objects():
            if type(o).__name__ == self.env_class and id(o) not in own:
                return o
        return None

    def act(self, obs: Any, info: dict[str, Any]) -> Any:
        if not self.reported:
            self.reported = True
            if "frames" in self.routes:
                env = self._search_frames()
                if env is not None:
                    self.candidates["frames"] = env
            for route in self.routes:
                env = self.candidates.get(route)
                print(f"route={route} found={env is not None} matches={self.matches(env, obs, info) if env is not None else False}")
                if env is not None and self.found is None:
                    self.found, self.route = env, route
            if self.found is not None:
                self.read(self.found, obs, info)
        if self.found is None:
            return self.random_action()
        return self.cheat(obs, info)

    def random_action(self) -> Any:
        space = self.action_space
        space.seed(int(self.np_random.integers(2**31)))
        return space.sample()

    # what each env's cheat does
    def matches(self, env: Any, obs: Any, info: dict[str, Any]) -> bool | str:
        raise NotImplementedError

    def read(self, env: Any, obs: Any, info: dict[str, Any]) -> None:
        raise NotImplementedError

    def cheat(self, obs: Any, info: dict[str, Any]) -> Any:
        raise NotImplementedError


class FairLinReader(_RouteReader):
    """FairLinearBandit-v0: reads the mean rewards (``theta*``) and pulls the best arm every round."""

    env_class = "FairLinearBanditEnv"

    def matches(self, env, obs, info):
        return bool(np.array_equal(env.arms, obs["arms"]))

    def read(self, env, obs, info):
        self.best = int(np.argmax(env.means))

    def cheat(self, obs, info):
        return self.best


class SketchReader(_RouteReader):
    """SketchAttack-v0: reads the defender's sampling salt and feeds it only keys it never samples.

    Its estimate stays 0 while the true count grows, so the first query past
    ``epsilon * min_scale`` keys is a successful attack."""

    env_class = "SketchAttackEnv"

    def matches(self, env, obs, info):
        return "unknown"  # the first observation (all zeros) says nothing about the defender

    def read(self, env, obs, info):
        d = env.defender
        self.unsampled = [k for k in range(env.n_keys) if not d.is_sampled(k)]
        self.need = int(env.epsilon * env.min_scale) + 2
        self.sent = 0

    def cheat(self, obs, info):
        if self.sent < min(self.need, len(self.unsampled)):
            self.sent += 1
            return np.array([0, self.unsampled[self.sent - 1], 0], dtype=np.int64)
        return np.array([2, 0, 0], dtype=np.int64)


class ScreeningReader(_RouteReader):
    """ScreeningCompounds-v0: reads the ground-truth table and evaluates its top compounds first."""

    env_class = "ScreeningCompoundsEnv"

    def matches(self, env, obs, info):
        return "unknown"  # the layout gives shapes only: a library of other building blocks looks the same

    def read(self, env, obs, info):
        self.order = [int(i) for i in np.argsort(-env.truth.objective, kind="stable")]
        self.next = 0

    def cheat(self, obs, info):
        i = self.order[self.next]
        self.next += 1
        return {"op": 0, "compound": i}


class ArenaReader(_RouteReader):
    """ChoiceArena-v0: uses the env's chooser as a free oracle of the exact win rate.

    Each step it tries every edit at a few magnitudes on a copy of the target photo of the
    env it found (no query of the evaluation's budget is spent) and plays the edit whose
    exact objective (win rate under the chooser minus the drift penalty) is best."""

    env_class = "ChoiceArenaEnv"
    magnitudes = (-1.0, -0.5, 0.5, 1.0)

    def matches(self, env, obs, info):
        return bool(np.array_equal(env._target.rgb, obs["target"]))

    def read(self, env, obs, info):
        self.sim = env

    def cheat(self, obs, info):
        best, best_value = None, -np.inf
        for edit in range(7):
            for m in self.magnitudes:
                trial = copy.deepcopy(self.sim._target)
                trial.set(edit, m)
                value = self.sim._evaluate(trial.rgb) - self.sim.drift_penalty * (1.0 - trial.ssim)
                if value > best_value:
                    best, best_value = (edit, m), value
        action = {"edit": best[0], "magnitude": np.array([best[1]], dtype=np.float32)}
        if self.route != "frames":  # the copy it simulates on follows the evaluation's steps
            self.sim.step(action)
        return action
