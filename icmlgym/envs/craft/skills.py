"""The skill and grounding controllers: closed-loop policies that turn one high-level
action into several motor actions.

A *skill* is a named verb with an argument (``"collect wood"``, ``"place table"``,
``"go to stone"``, ``"make wood_pickaxe"``, ``"attack cow"``, ``"sleep"``,
``"explore"``); the list is generated from Crafter's tech tree. A *grounding*
action names a cell of the 9x7 local view and a verb (``move_to`` or
``interact``). Each controller sees only what the env shows an agent (the local
semantic view, facing, inventory and achievement counters) and returns one motor
action at a time until it reports ``done`` or ``failed``; the env runs it for at
most a step budget. Agents may reuse these controllers as their own low level.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

import numpy as np

from icmlgym.envs.craft.navigation import DIRECTIONS, bfs_next_step, direction_to, ids_of, passable_ids
from icmlgym.envs.craft.techtree import TechTree

VIEW_W, VIEW_H = 9, 7  # Crafter's local view (the image shows these cells above the inventory rows)
CENTER = (VIEW_W // 2, VIEW_H // 2)
CREATURES: tuple[str, ...] = ("cow", "zombie", "skeleton")
GROUNDING_VERBS: tuple[str, ...] = ("move_to", "interact")


@dataclass(frozen=True)
class Skill:
    verb: str  # collect | place | make | go_to | attack | sleep | explore
    arg: str = ""

    @property
    def name(self) -> str:
        verb = self.verb.replace("_", " ")
        return f"{verb} {self.arg}".strip()


def skill_library(tree: TechTree) -> tuple[Skill, ...]:
    """Every skill, generated from the tech tree (fixed order: its index is the Discrete action)."""
    out: list[Skill] = []
    for material, rule in tree.collect.items():
        for item in rule["receive"]:
            out.append(Skill("collect", item))
    out += [Skill("place", p) for p in tree.place]
    out += [Skill("make", m) for m in tree.make]
    targets = [m for m in tree.materials if m not in tree.walkable] + list(CREATURES)
    out += [Skill("go_to", t) for t in targets]
    out += [Skill("attack", c) for c in CREATURES]
    out += [Skill("sleep"), Skill("explore")]
    return tuple(out)


@dataclass
class View:
    """What a controller sees at one step (all of it is in the env's observation or info)."""

    semantic: np.ndarray  # (VIEW_W, VIEW_H) Crafter semantic ids, player at CENTER
    facing: tuple[int, int]
    inventory: dict[str, int]
    achievements: dict[str, int]


Status = Literal["running", "done", "failed"]


class Controller:
    """Base: ``act(view)`` returns a motor action name or None when finished (see ``status``)."""

    def __init__(self, tree: TechTree, rng: np.random.Generator) -> None:
        self.tree = tree
        self.rng = rng
        self.status: Status = "running"
        self.reason = ""
        self.passable = passable_ids(tree)
        self._explore_dir: str | None = None
        self._explore_left = 0
        self._start: dict[str, int] | None = None

    def finish(self, ok: bool, reason: str = "") -> None:
        self.status = "done" if ok else "failed"
        self.reason = reason

    def act(self, view: View) -> str | None:
        if self._start is None:
            self._start = dict(view.achievements)
        if self.status != "running":
            return None
        action = self._act(view)
        if action is None and self.status == "running":
            self.finish(False, "no action")
        return action

    def _act(self, view: View) -> str | None:  # pragma: no cover - abstract
        raise NotImplementedError

    def gained(self, view: View, achievement: str) -> bool:
        assert self._start is not None
        return view.achievements.get(achievement, 0) > self._start.get(achievement, 0)

    # -- shared low-level moves -------------------------------------------------
    def facing_cell(self, view: View) -> tuple[int, int]:
        return (CENTER[0] + view.facing[0], CENTER[1] + view.facing[1])

    def mask(self, view: View, names) -> np.ndarray:
        return np.isin(view.semantic, ids_of(self.tree, names))

    def explore(self, view: View) -> str:
        """Walk straight in a random direction for a few steps, turning when blocked."""
        sem = view.semantic
        free = [
            d for d, (dx, dy) in DIRECTIONS.items()
            if self.passable[sem[CENTER[0] + dx, CENTER[1] + dy]]
        ]
        if self._explore_dir not in free or self._explore_left <= 0:
            options = free or list(DIRECTIONS)
            self._explore_dir = options[int(self.rng.integers(len(options)))]
            self._explore_left = int(self.rng.integers(3, 8))
        self._explore_left -= 1
        return f"move_{self._explore_dir}"

    def interact_with(self, view: View, target: np.ndarray, verb_action: str, walkable_target: bool) -> str | None:
        """Get next to a target cell, face it, then emit ``verb_action``; explore if none is visible."""
        fx, fy = self.facing_cell(view)
        if target[fx, fy]:
            return verb_action
        if walkable_target:
            # facing a walkable cell without stepping onto it is impossible: step so that the
            # cell beyond is a target (then the player faces it)
            for d, (dx, dy) in DIRECTIONS.items():
                n1 = (CENTER[0] + dx, CENTER[1] + dy)
                n2 = (CENTER[0] + 2 * dx, CENTER[1] + 2 * dy)
                if self.passable[view.semantic[n1]] and 0 <= n2[0] < VIEW_W and 0 <= n2[1] < VIEW_H and target[n2]:
                    return f"move_{d}"
            direction, _, dist = bfs_next_step(view.semantic, CENTER, target, self.passable, adjacent=True)
            if dist > 0 and direction:
                return f"move_{direction}"
            return self.explore(view)
        direction, cell, dist = bfs_next_step(view.semantic, CENTER, target, self.passable, adjacent=True)
        if dist < 0:
            return self.explore(view)
        if direction is not None:
            return f"move_{direction}"
        d = direction_to(CENTER, cell)  # adjacent: turn toward it (moving into a blocked cell turns)
        return f"move_{d}" if d else self.explore(view)


class SkillController(Controller):
    """Runs one :class:`Skill` to completion or failure."""

    def __init__(self, skill: Skill, tree: TechTree, rng: np.random.Generator, explore_steps: int = 12) -> None:
        super().__init__(tree, rng)
        self.skill = skill
        self.explore_steps = explore_steps
        self.steps = 0

    def _missing(self, view: View, need: dict[str, int]) -> list[str]:
        return [k for k, v in need.items() if view.inventory.get(k, 0) < v]

    def _act(self, view: View) -> str | None:
        s, tree = self.skill, self.tree
        self.steps += 1
        if s.verb == "collect":
            if self.gained(view, f"collect_{s.arg}"):
                return self.finish(True)
            material = tree.source_of(s.arg)[1]
            missing = self._missing(view, tree.collect[material]["require"])
            if missing:
                return self.finish(False, f"missing {', '.join(missing)}")
            return self.interact_with(view, self.mask(view, [material]), "do", material in tree.walkable)
        if s.verb == "place":
            if self.gained(view, f"place_{s.arg}"):
                return self.finish(True)
            rule = tree.place[s.arg]
            missing = self._missing(view, rule["uses"])
            if missing:
                return self.finish(False, f"missing {', '.join(missing)}")
            target = self.mask(view, rule["where"])
            walkable = any(w in tree.walkable for w in rule["where"])
            return self.interact_with(view, target, f"place_{s.arg}", walkable)
        if s.verb == "make":
            if self.gained(view, f"make_{s.arg}"):
                return self.finish(True)
            rule = tree.make[s.arg]
            missing = self._missing(view, rule["uses"])
            if missing:
                return self.finish(False, f"missing {', '.join(missing)}")
            near = view.semantic[CENTER[0] - 1: CENTER[0] + 2, CENTER[1] - 1: CENTER[1] + 2]
            absent = [st for st in rule["nearby"] if not (near == tree.semantic_id(st)).any()]
            if not absent:
                return f"make_{s.arg}"
            target = self.mask(view, absent[:1])
            if not target.any():
                return self.finish(False, f"no {absent[0]} in view")
            direction, _, dist = bfs_next_step(view.semantic, CENTER, target, self.passable, adjacent=True)
            if dist < 0 or direction is None:
                return self.finish(False, f"cannot reach {absent[0]}")
            return f"move_{direction}"
        if s.verb == "go_to":
            target = self.mask(view, [s.arg])
            direction, cell, dist = bfs_next_step(view.semantic, CENTER, target, self.passable, adjacent=True)
            if dist == 0:
                return self.finish(True)
            if dist > 0:
                return f"move_{direction}"
            if self.steps > self.explore_steps:
                return self.finish(False, f"no {s.arg} found")
            return self.explore(view)
        if s.verb == "attack":
            done_key = {"cow": "eat_cow", "zombie": "defeat_zombie", "skeleton": "defeat_skeleton"}[s.arg]
            if self.gained(view, done_key):
                return self.finish(True)
            target = self.mask(view, [s.arg])
            if not target.any() and self.steps > self.explore_steps:
                return self.finish(False, f"no {s.arg} found")
            return self.interact_with(view, target, "do", False)
        if s.verb == "sleep":
            if self.gained(view, "wake_up"):
                return self.finish(True)
            if view.inventory.get("energy", 0) >= tree.items["energy"]["max"] and self.steps == 1:
                return self.finish(False, "not tired")
            return "sleep"
        if s.verb == "explore":
            if self.steps > self.explore_steps:
                return self.finish(True)
            return self.explore(view)
        raise ValueError(f"unknown skill verb {s.verb!r}")


class GroundingController(Controller):
    """Moves to, or interacts with, one cell of the local view (the cell is tracked as the player moves)."""

    def __init__(self, verb: str, cell: tuple[int, int], tree: TechTree, rng: np.random.Generator) -> None:
        super().__init__(tree, rng)
        if verb not in GROUNDING_VERBS:
            raise ValueError(f"grounding verb must be one of {GROUNDING_VERBS}, got {verb!r}")
        self.verb = verb
        self.offset = (cell[0] - CENTER[0], cell[1] - CENTER[1])  # relative to the player at the call
        self.moved = (0, 0)
        self._last_pos: tuple[int, int] | None = None

    def track(self, pos: tuple[int, int]) -> None:
        """Update the target's offset from the player's absolute position."""
        if self._last_pos is not None:
            self.moved = (self.moved[0] + pos[0] - self._last_pos[0], self.moved[1] + pos[1] - self._last_pos[1])
        self._last_pos = (int(pos[0]), int(pos[1]))

    def _act(self, view: View) -> str | None:
        rel = (self.offset[0] - self.moved[0], self.offset[1] - self.moved[1])
        cell = (CENTER[0] + rel[0], CENTER[1] + rel[1])
        if not (0 <= cell[0] < VIEW_W and 0 <= cell[1] < VIEW_H):
            return self.finish(False, "target left the view")
        target = np.zeros_like(view.semantic, dtype=bool)
        target[cell] = True
        if self.verb == "move_to":
            if rel == (0, 0):
                return self.finish(True)
            if self.passable[view.semantic[cell]]:
                direction, _, dist = bfs_next_step(view.semantic, CENTER, target, self.passable, adjacent=False)
                if dist > 0:
                    return f"move_{direction}"
            direction, _, dist = bfs_next_step(view.semantic, CENTER, target, self.passable, adjacent=True)
            if dist == 0:
                return self.finish(True)
            if dist > 0:
                return f"move_{direction}"
            return self.finish(False, "unreachable")
        # interact: face the cell, then "do" once
        if rel == (0, 0):
            return self.finish(False, "cannot interact with own cell")
        if self.facing_cell(view) == cell:
            self.finish(True)
            return "do"
        if abs(rel[0]) + abs(rel[1]) == 1 and not self.passable[view.semantic[cell]]:
            return f"move_{direction_to(CENTER, cell)}"
        direction, _, dist = bfs_next_step(view.semantic, CENTER, target, self.passable, adjacent=True)
        if dist > 0:
            return f"move_{direction}"
        if dist == 0:
            return f"move_{direction_to(CENTER, cell)}"
        return self.finish(False, "unreachable")
