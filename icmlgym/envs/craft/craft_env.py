"""Craft-v0: Minecraft-style tasks over a mixture of action levels (DeepHA, ICML 2026).

## Description

The Deep Hierarchical Agent paper (DeepHA, ICML 2026) argues that agents tied
to one predefined action space generalise poorly and compound errors, and acts
instead over a *mixture of heterogeneous action spaces* — high-level semantic
skills, grounding (pointing at a place), low-level motor control — with
Chain-of-Action reasoning: the higher-level action of a step is a structured
"thought" that guides the more granular actions after it. It is evaluated on
800+ Minecraft tasks. MineRL cannot be built offline, so this env embeds Crafter
(Hafner 2021), a 2-D Minecraft-like world with the same tech-tree shape, and
generates its 1,048 tasks from Crafter's own recipe file
(:mod:`icmlgym.envs.craft.tasks`). ``task=`` picks one by name, e.g.
``gym.make("icmlgym/Craft-v0", task="make_stone_pickaxe/hard")``.

## Action Space

``Dict`` with four keys; one step may carry several levels at once (a
Chain-of-Action step):

- ``levels``: ``MultiBinary(3)``: which of (skill, grounding, motor) are present.
- ``skill``: ``Discrete(n_skills)``: index into :attr:`CraftEnv.skills` (``"collect wood"``,
  ``"place table"``, ``"go to stone"``, ``"make wood_pickaxe"``, ``"attack cow"``,
  ``"sleep"``, ``"explore"``, ...; generated from the tech tree).
- ``grounding``: ``MultiDiscrete([2, 9, 7])``: verb (0 ``move_to``, 1 ``interact``)
  and a cell ``(x, y)`` of the 9x7 local view (the player is at (4, 3)).
- ``motor``: ``Discrete(17)``: Crafter's primitive actions.

The step executes the **most granular level present** (motor, else grounding,
else skill) and logs the whole chain in ``info["chain"]``; the higher levels of
the chain are the agent's stated intent. A skill runs its controller
(:mod:`icmlgym.envs.craft.skills`) for up to ``max_skill_steps`` primitive
steps, a grounding action for up to ``max_grounding_steps``; a motor action is
one primitive step. No level present is a no-op. Agents may pass partial dicts:
without ``levels`` the keys present are the levels present, and ``skill`` /
``motor`` may be given by name. The wrappers
:class:`~icmlgym.envs.craft.wrappers.MotorOnly` and
:class:`~icmlgym.envs.craft.wrappers.SkillOnly` expose a single level as a plain
``Discrete`` space (for stable-baselines3).

## Observation Space

``Dict``: ``image`` (``Box(0, 255, (64, 64, 3), uint8)``, Crafter's view with
the inventory rows), ``inventory`` (``Box(0, 9, (16,), int32)`` in Crafter's
item order), ``facing`` (``Discrete(4)``: left, right, up, down), ``steps_left``
(``Box(0, 1e9, (1,), float32)``), ``task`` (``Discrete(n_tasks + 1)``: the task's
index in the suite; ``n_tasks`` for a custom task), ``prompt`` (``Text``), and,
with ``semantic=True`` (the default), ``semantic`` (``Box(0, 18, (9, 7), uint8)``:
Crafter's semantic ids of the local view).

## Rewards

1.0 when the task succeeds (sparse). With ``shaping=True``, also 0.1 the first
time each achievement on the task's tech-tree path is unlocked.

## Starting State

A Crafter world generated from the reset seed (64x64 by default), the player in
the middle, and the task's initial inventory (``/simple`` tasks start with the
final step's prerequisites, ``/hard`` bare-handed).

## Episode End

Terminated on success or on the player's death; truncated when the task's step
limit (primitive steps; ``max_steps`` overrides it) is used up.

## Arguments

- ``task`` (str | dict | CraftTask, default ``"collect_wood/hard"``): the task.
- ``max_steps`` (int, optional): step limit in primitive steps (default: the task's).
- ``semantic`` (bool, default True): include the local semantic view.
- ``shaping`` (bool, default False): progress shaping reward.
- ``max_skill_steps`` (int, default 40), ``max_grounding_steps`` (int, default 16).
- ``area`` (int, default 64): world side; ``size`` (int, default 64): image side in pixels.
- ``render_mode`` (``"rgb_array"`` or None).

## Metrics

``info["cost"]``: ``env_steps`` (primitive steps), ``macro_steps`` (env.step calls),
``skill_calls``, ``grounding_calls``, ``motor_calls`` (steps executed at each level).
At episode end ``info["metrics"]``: ``success`` (primary), ``steps``,
``steps_to_success`` (NaN on failure), ``goals_completed`` (fraction),
``achievements_unlocked``, ``died``, ``skill_calls``, ``grounding_calls``,
``motor_calls``, ``primitive_steps_skill`` / ``_grounding`` / ``_motor``,
``primitive_per_call``, ``task_depth``, ``multi_step``, ``heldout``. Suite-level
scores (success per task and category, Crafter's geometric-mean score, the
seen/held-out gap, results split by action level) are in
:mod:`icmlgym.envs.craft.metrics`.

## Version History

- v0: initial release (Crafter 1.8.3 backend).
"""

from __future__ import annotations

import string
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("craft", what="icmlgym/Craft-v0")

from icmlgym.envs.craft.crafter_backend import BackendState, CrafterBackend  # noqa: E402
from icmlgym.envs.craft.navigation import DIRECTIONS  # noqa: E402
from icmlgym.envs.craft.skills import (  # noqa: E402
    GROUNDING_VERBS,
    VIEW_H,
    VIEW_W,
    Controller,
    GroundingController,
    Skill,
    SkillController,
    View,
    skill_library,
)
from icmlgym.envs.craft.tasks import CraftTask, all_tasks, get_task  # noqa: E402

LEVELS: tuple[str, ...] = ("skill", "grounding", "motor")
PROMPT_CHARSET = string.ascii_letters + string.digits + " .,_-()'"
FACINGS: tuple[tuple[int, int], ...] = tuple(DIRECTIONS.values())


class CraftEnv(gym.Env):
    """Crafter tasks with skill / grounding / motor actions (see the module docstring)."""

    metadata = {"render_modes": ["rgb_array"], "render_fps": 10}

    def __init__(
        self,
        task: str | dict[str, Any] | CraftTask = "collect_wood/hard",
        max_steps: int | None = None,
        semantic: bool = True,
        shaping: bool = False,
        max_skill_steps: int = 40,
        max_grounding_steps: int = 16,
        area: int = 64,
        size: int = 64,
        render_mode: str | None = None,
    ) -> None:
        self.task: CraftTask = get_task(task)
        if max_steps is not None and int(max_steps) < 1:
            raise ValueError(f"max_steps must be a positive integer, got {max_steps}")
        for name, v in (("max_skill_steps", max_skill_steps), ("max_grounding_steps", max_grounding_steps)):
            if int(v) < 1:
                raise ValueError(f"{name} must be a positive integer, got {v}")
        if render_mode not in (None, "rgb_array"):
            raise ValueError(f"render_mode must be None or 'rgb_array', got {render_mode!r}")
        self.backend = CrafterBackend(area=area, size=size)
        self.tree = self.backend.tree
        self.render_mode = render_mode
        self.max_steps = int(max_steps) if max_steps is not None else self.task.max_steps
        self.semantic = bool(semantic)
        self.shaping = bool(shaping)
        self.max_skill_steps = int(max_skill_steps)
        self.max_grounding_steps = int(max_grounding_steps)
        self.skills: tuple[Skill, ...] = skill_library(self.tree)
        self.skill_names: tuple[str, ...] = tuple(s.name for s in self.skills)
        self.motor_names: tuple[str, ...] = self.tree.actions
        unknown = [k for k in self.task.initial_inventory if k not in self.tree.items]
        if unknown:
            raise ValueError(f"task {self.task.name!r}: unknown inventory items {unknown}")
        bad = [g for g, _ in self.task.goals if g not in self.tree.achievements]
        if bad:
            raise ValueError(f"task {self.task.name!r}: unknown achievements {bad}")
        names = [t.name for t in all_tasks()]
        self.n_tasks = len(names)
        self.task_index = names.index(self.task.name) if self.task.name in names else self.n_tasks
        self._closure: set[str] = set()
        for g, _ in self.task.goals:
            self._closure |= set(self.tree._steps_for_achievement(g))

        self.action_space = spaces.Dict(
            {
                "levels": spaces.MultiBinary(3),
                "skill": spaces.Discrete(len(self.skills)),
                "grounding": spaces.MultiDiscrete([len(GROUNDING_VERBS), VIEW_W, VIEW_H]),
                "motor": spaces.Discrete(len(self.motor_names)),
            }
        )
        obs_spaces: dict[str, spaces.Space] = {
            "image": spaces.Box(0, 255, (int(size), int(size), 3), np.uint8),
            "inventory": spaces.Box(0, 9, (len(self.tree.items),), np.int32),
            "facing": spaces.Discrete(4),
            "steps_left": spaces.Box(0.0, 1e9, (1,), np.float32),
            "task": spaces.Discrete(self.n_tasks + 1),
            "prompt": spaces.Text(max_length=256, min_length=0, charset=PROMPT_CHARSET),
        }
        if self.semantic:
            obs_spaces["semantic"] = spaces.Box(0, len(self.tree.semantic_names) - 1, (VIEW_W, VIEW_H), np.uint8)
        self.observation_space = spaces.Dict(obs_spaces)
        self._state: BackendState | None = None
        self._reset_counters()

    # -- episode bookkeeping ----------------------------------------------------
    def _reset_counters(self) -> None:
        self._t = 0
        self._macro = 0
        self._calls = {lvl: 0 for lvl in LEVELS}
        self._prim = {lvl: 0 for lvl in LEVELS}
        self._goal = 0
        self._goal_base: dict[str, int] = {}
        self._unlocked: set[str] = set()
        self._success_step: int | None = None
        self._done = False

    def _obs(self) -> dict[str, Any]:
        st = self._state
        assert st is not None
        obs: dict[str, Any] = {
            "image": st.image,
            "inventory": np.fromiter((st.inventory[k] for k in self.tree.items), np.int32, len(self.tree.items)),
            "facing": FACINGS.index(st.facing) if st.facing in FACINGS else 3,
            "steps_left": np.array([max(self.max_steps - self._t, 0)], np.float32),
            "task": self.task_index,
            "prompt": self.task.prompt,
        }
        if self.semantic:
            obs["semantic"] = st.local_semantic
        return obs

    def _cost(self) -> dict[str, float]:
        return {
            "env_steps": float(self._t),
            "macro_steps": float(self._macro),
            "skill_calls": float(self._calls["skill"]),
            "grounding_calls": float(self._calls["grounding"]),
            "motor_calls": float(self._calls["motor"]),
        }

    def _info(self) -> dict[str, Any]:
        st = self._state
        assert st is not None
        return {
            "cost": self._cost(),
            "inventory": dict(st.inventory),
            "achievements": dict(st.achievements),
            "player_pos": st.player_pos,
            "goal_index": self._goal,
            "world_semantic": st.world_semantic,
        }

    def _view(self) -> View:
        st = self._state
        assert st is not None
        return View(st.local_semantic, st.facing, st.inventory, st.achievements)

    # -- gymnasium API ----------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._reset_counters()
        world_seed = int(self.np_random.integers(2**31 - 1))
        self._state = self.backend.reset(world_seed, self.task.initial_inventory)
        self._goal_base = dict(self._state.achievements)
        return self._obs(), self._info()

    def parse_action(self, action: Any) -> tuple[int | None, tuple[int, int, int] | None, int | None]:
        """Validate an action; returns ``(skill, grounding, motor)`` with None for absent levels."""
        if not isinstance(action, dict):
            raise ValueError(
                f"action {action!r} is not in the action space {self.action_space}: expected a dict with keys "
                f"levels/skill/grounding/motor (wrap the env in MotorOnly or SkillOnly for a Discrete space)"
            )
        unknown = set(action) - {"levels", "skill", "grounding", "motor"}
        if unknown:
            raise ValueError(f"action {action!r} has keys {sorted(unknown)} that are not in the action space {self.action_space}")
        if "levels" in action:
            levels = np.asarray(action["levels"])
            if levels.shape != (3,) or not np.isin(levels, (0, 1)).all():
                raise ValueError(f"action['levels'] = {action['levels']!r} is not in MultiBinary(3) of the action space")
            present = {lvl: bool(levels[i]) for i, lvl in enumerate(LEVELS)}
            missing = [lvl for lvl in LEVELS if present[lvl] and lvl not in action]
            if missing:
                raise ValueError(f"action {action!r} marks levels {missing} present but does not give them")
        else:
            present = {lvl: action.get(lvl) is not None for lvl in LEVELS}
        skill = grounding = motor = None
        if present["skill"]:
            s = action["skill"]
            if isinstance(s, str):
                if s not in self.skill_names:
                    import difflib

                    close = difflib.get_close_matches(s, self.skill_names, n=3)
                    raise ValueError(f"skill {s!r} is not in the action space's skills; close: {close}")
                skill = self.skill_names.index(s)
            elif self.action_space["skill"].contains(np.int64(s)) if np.isscalar(s) else False:
                skill = int(s)
            else:
                raise ValueError(f"action['skill'] = {s!r} is not in {self.action_space['skill']} of the action space")
        if present["grounding"]:
            g = action["grounding"]
            if isinstance(g, (tuple, list)) and len(g) == 3 and isinstance(g[0], str):
                if g[0] not in GROUNDING_VERBS:
                    raise ValueError(f"grounding verb {g[0]!r} is not one of {GROUNDING_VERBS}")
                g = (GROUNDING_VERBS.index(g[0]), g[1], g[2])
            arr = np.asarray(g, dtype=np.int64) if np.ndim(g) == 1 else None
            if arr is None or not self.action_space["grounding"].contains(arr):
                raise ValueError(f"action['grounding'] = {g!r} is not in {self.action_space['grounding']} of the action space")
            grounding = (int(arr[0]), int(arr[1]), int(arr[2]))
        if present["motor"]:
            m = action["motor"]
            if isinstance(m, str):
                if m not in self.motor_names:
                    raise ValueError(f"motor action {m!r} is not one of {self.motor_names}")
                motor = self.motor_names.index(m)
            elif np.isscalar(m) and self.action_space["motor"].contains(np.int64(m)):
                motor = int(m)
            else:
                raise ValueError(f"action['motor'] = {m!r} is not in {self.action_space['motor']} of the action space")
        return skill, grounding, motor

    def step(self, action: Any):
        if self._state is None:
            raise RuntimeError("step() called before reset()")
        if self._done:
            raise RuntimeError("step() called after the episode ended; call reset()")
        skill, grounding, motor = self.parse_action(action)
        self._macro += 1
        chain: dict[str, Any] = {
            "levels": [lvl for lvl, v in zip(LEVELS, (skill, grounding, motor)) if v is not None],
            "skill": self.skill_names[skill] if skill is not None else None,
            "grounding": (GROUNDING_VERBS[grounding[0]], grounding[1], grounding[2]) if grounding else None,
            "motor": self.motor_names[motor] if motor is not None else None,
        }
        reward = 0.0
        status, reason = "done", ""
        if motor is not None:
            level = "motor"
            reward += self._primitive(motor, level)
            steps = 1
        elif grounding is not None or skill is not None:
            if grounding is not None:
                level = "grounding"
                ctrl: Controller = GroundingController(
                    GROUNDING_VERBS[grounding[0]], (grounding[1], grounding[2]), self.tree, self.np_random
                )
                ctrl.track(self._state.player_pos)
                budget = self.max_grounding_steps
            else:
                level = "skill"
                ctrl = SkillController(self.skills[skill], self.tree, self.np_random)
                budget = self.max_skill_steps
            steps = 0
            while steps < budget and not self._done:
                name = ctrl.act(self._view())
                if name is None:
                    break
                reward += self._primitive(self.motor_names.index(name), level)
                steps += 1
                if isinstance(ctrl, GroundingController):
                    ctrl.track(self._state.player_pos)
            # a controller that stopped on the budget, or ends the episode, reports it
            if ctrl.status == "running":
                final = ctrl.act(self._view()) if not self._done else None
                status, reason = ("done", "") if ctrl.status == "done" and final is None else ("failed", "step budget")
                if self._done and self._success_step is not None:
                    status, reason = "done", "task succeeded"
            else:
                status, reason = ctrl.status, ctrl.reason
        else:
            level = "none"
            reward += self._primitive(self.motor_names.index("noop"), "motor")
            steps = 1
        if level in self._calls:
            self._calls[level] += 1
        chain.update(executed=level, primitive_steps=steps, status=status, reason=reason)
        terminated = self._done and (self._success_step is not None or self._state.dead)
        truncated = self._done and not terminated
        info = self._info()
        info["chain"] = chain
        if self._done:
            info["metrics"] = self._metrics()
        return self._obs(), float(reward), bool(terminated), bool(truncated), info

    def _primitive(self, action: int, level: str) -> float:
        """One Crafter step: advance the task's goals and return its reward."""
        st = self._state = self.backend.step(action)
        self._t += 1
        if level in self._prim:
            self._prim[level] += 1
        reward = 0.0
        ach = st.achievements
        if self.shaping:
            for name in self._closure:
                if ach.get(name, 0) > 0 and name not in self._unlocked:
                    self._unlocked.add(name)
                    reward += 0.1
        goals = self.task.goals
        while self._goal < len(goals):
            g, count = goals[self._goal]
            if ach[g] - self._goal_base.get(g, 0) < count:
                break
            self._goal += 1
            self._goal_base = dict(ach)
        succeeded = (self._goal == len(goals) and bool(goals)) or (
            self.task.survive_steps > 0 and self._t >= self.task.survive_steps and not st.dead
        )
        if succeeded:
            self._success_step = self._t
            reward += 1.0
            self._done = True
        elif st.dead or self._t >= self.max_steps:
            self._done = True
        return reward

    def _metrics(self) -> dict[str, float]:
        st = self._state
        assert st is not None
        calls = sum(self._calls.values())
        n_goals = len(self.task.goals)
        return {
            "success": float(self._success_step is not None),
            "steps": float(self._t),
            "steps_to_success": float(self._success_step) if self._success_step is not None else float("nan"),
            "goals_completed": (self._goal / n_goals) if n_goals else float(self._success_step is not None),
            "achievements_unlocked": float(sum(1 for v in st.achievements.values() if v > 0)),
            "died": float(st.dead),
            "skill_calls": float(self._calls["skill"]),
            "grounding_calls": float(self._calls["grounding"]),
            "motor_calls": float(self._calls["motor"]),
            "primitive_steps_skill": float(self._prim["skill"]),
            "primitive_steps_grounding": float(self._prim["grounding"]),
            "primitive_steps_motor": float(self._prim["motor"]),
            "primitive_per_call": float(self._t / calls) if calls else float(self._t),
            "task_depth": float(self.task.depth),
            "multi_step": float(self.task.multi_step),
            "heldout": float(self.task.split == "heldout"),
        }

    def render(self):
        if self.render_mode == "rgb_array":
            if self._state is None:
                raise RuntimeError("render() called before reset()")
            return self.backend.render()
        return None

    def close(self) -> None:
        self.backend.close()
