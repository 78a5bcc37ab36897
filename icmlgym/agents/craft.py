"""The reference agent of icmlgym/Craft-v0: a hierarchical Chain-of-Action agent (DeepHA-style).

Every step it reasons top-down and emits the whole chain:

1. **plan** — the tech-tree planner (:mod:`icmlgym.envs.craft.planner`) turns the
   task's current goal and the inventory into a subgoal, whose skill name
   (``"collect wood"``) is the step's high-level thought;
2. **ground** — it picks the target cell for that thought: a visible, reachable
   cell of the local view (then the step carries a grounding action, which the
   env executes over several primitive steps), or a cell it remembers from
   earlier views (its world memory, built from ``obs["semantic"]`` and
   ``info["player_pos"]``), or the nearest frontier of unexplored cells;
3. **act** — when the target is out of view it adds the motor action of the
   first step of a shortest path on its memory, the most granular level, which
   the env executes.

Recipe steps that need no navigation (make, place, sleep) go to the env's skill
controller as skill-only steps. It replans every step and on failure: a
grounding call that fails blacklists its cell for a while, and a blocked motor
move triggers a side step.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import AgentSpec, BaseAgent
from icmlgym.catalog import require_extra

require_extra("craft", what="the Craft agents")

from icmlgym.envs.craft.navigation import DIRECTIONS, bfs_next_step, ids_of, passable_ids  # noqa: E402
from icmlgym.envs.craft.planner import (  # noqa: E402
    GoalTracker,
    StationKnowledge,
    Subgoal,
    next_subgoal,
    survival_subgoal,
    task_from_obs,
)
from icmlgym.envs.craft.skills import CENTER, VIEW_H, VIEW_W  # noqa: E402
from icmlgym.envs.craft.tasks import CraftTask  # noqa: E402
from icmlgym.envs.craft.techtree import TechTree, load  # noqa: E402

MOTOR_MOVES = tuple(f"move_{d}" for d in DIRECTIONS)


class WorldMemory:
    """What the agent has seen: a map of semantic ids in world coordinates and a ``known`` mask."""

    def __init__(self, area: int = 64) -> None:
        self.area = int(area)
        self.grid = np.zeros((self.area, self.area), dtype=np.uint8)
        self.known = np.zeros((self.area, self.area), dtype=bool)

    def update(self, local: np.ndarray, pos: tuple[int, int]) -> None:
        x0, y0 = pos[0] - CENTER[0], pos[1] - CENTER[1]
        xs, ys = max(0, x0), max(0, y0)
        xe, ye = min(self.area, x0 + VIEW_W), min(self.area, y0 + VIEW_H)
        self.grid[xs:xe, ys:ye] = local[xs - x0: xe - x0, ys - y0: ye - y0]
        self.known[xs:xe, ys:ye] = True

    def to_view(self, cell: tuple[int, int], pos: tuple[int, int]) -> tuple[int, int] | None:
        vx, vy = cell[0] - pos[0] + CENTER[0], cell[1] - pos[1] + CENTER[1]
        return (vx, vy) if 0 <= vx < VIEW_W and 0 <= vy < VIEW_H else None


class PlannerAgent(BaseAgent):
    """Shared machinery of the scripted Craft agents: task lookup, goal tracking, the planner."""

    def __init__(self) -> None:
        super().__init__()
        self.tree: TechTree = load()
        self.passable = passable_ids(self.tree)
        self.task: CraftTask | None = None
        self.tracker: GoalTracker | None = None

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        self.task = None
        self.tracker = None
        self.last_chain: dict[str, Any] | None = None

    def _begin(self, obs: dict[str, Any]) -> None:
        if self.task is None:
            self.task = task_from_obs(obs)
            self.tracker = GoalTracker(self.task)

    def inventory(self, obs: dict[str, Any]) -> dict[str, int]:
        return {k: int(v) for k, v in zip(self.tree.items, obs["inventory"])}

    def subgoal(self, obs: dict[str, Any], info: dict[str, Any], knowledge: StationKnowledge) -> Subgoal:
        self._begin(obs)
        assert self.tracker is not None
        inv = self.inventory(obs)
        goal = self.tracker.current(info)
        if goal is None:
            return survival_subgoal(inv)
        if self.zombie_close(obs["semantic"]):
            return Subgoal("attack", "zombie")  # fight back: zombies are the main cause of death
        urgent = survival_subgoal(inv, low=3)
        if urgent.verb in ("collect", "attack") and goal not in ("collect_drink", "eat_cow"):
            return urgent  # drink or eat before a task step when a stat is nearly gone
        return next_subgoal(self.tree, goal, inv, knowledge)

    def zombie_close(self, sem: np.ndarray, radius: int = 2) -> bool:
        cells = np.argwhere(sem == self.tree.semantic_id("zombie"))
        return bool(len(cells)) and int(np.abs(cells - np.array(CENTER)).sum(1).min()) <= radius

    def safe_random_move(self, sem: np.ndarray) -> str:
        """A random move into a passable cell (never into lava or water)."""
        free = [d for d, (dx, dy) in DIRECTIONS.items() if self.passable[sem[CENTER[0] + dx, CENTER[1] + dy]]]
        options = free or list(DIRECTIONS)
        return f"move_{options[int(self.np_random.integers(len(options)))]}"

    def local_adjacent(self, sem: np.ndarray, station: str) -> bool:
        near = sem[CENTER[0] - 1: CENTER[0] + 2, CENTER[1] - 1: CENTER[1] + 2]
        return bool((near == self.tree.semantic_id(station)).any())

    def target_names(self, sg: Subgoal) -> tuple[list[str], bool]:
        """Semantic names a subgoal walks to, and whether it interacts with them (vs. stands next to them)."""
        if sg.verb == "collect":
            return [self.tree.source_of(sg.arg)[1]], True
        if sg.verb == "attack":
            return [sg.arg], True
        if sg.verb == "station":
            return [sg.arg], False
        if sg.verb == "eat_plant":
            return ["plant"], True
        return [], False

    def update(self, obs, action, reward, next_obs, terminated, truncated, info) -> None:
        self.last_chain = info.get("chain")


class HierarchicalAgent(PlannerAgent):
    """DeepHA-style Chain-of-Action agent (reference for icmlgym/Craft-v0); see the module docstring.

    Args:
        blacklist_steps: how long a cell whose grounding call failed is avoided.
        use_grounding: emit grounding actions for visible targets (False: motor steps instead;
            an ablation of the grounding level).
    """

    name = "craft-hierarchical"

    def __init__(self, blacklist_steps: int = 30, use_grounding: bool = True) -> None:
        super().__init__()
        self.blacklist_steps = int(blacklist_steps)
        self.use_grounding = bool(use_grounding)

    def reset(self, seed: int | None, spec: AgentSpec) -> None:
        super().reset(seed, spec)
        area = int(spec.env_kwargs.get("area", 64)) if spec is not None else 64
        self.memory = WorldMemory(area)
        self.blacklist: dict[tuple[int, int], int] = {}
        self.t = 0
        self.last_pos: tuple[int, int] | None = None
        self.last_motor: str | None = None
        self.last_target: tuple[int, int] | None = None
        self.frontier_goal: tuple[int, int] | None = None

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> dict[str, Any]:
        self.t += 1
        pos = tuple(int(v) for v in info["player_pos"])
        sem = obs["semantic"]
        self.memory.update(sem, pos)
        self._replan_on_failure(pos)
        mem = self.memory
        station_ids = {s: self.tree.semantic_id(s) for s in self.tree.place if self.tree.place[s]["type"] == "material"}
        knowledge = StationKnowledge(
            lambda s: bool((mem.grid[mem.known] == station_ids[s]).any()) if s in station_ids else False,
            lambda s: self.local_adjacent(sem, s),
        )
        sg = self.subgoal(obs, info, knowledge)
        thought = sg.skill
        if sg.verb in ("make", "place", "sleep"):
            return {"skill": thought}
        if sg.verb == "survive":
            return {"skill": "explore", "motor": "noop"}
        names, interact = self.target_names(sg)
        if sg.verb == "collect" and self.tree.source_of(sg.arg)[1] in self.tree.walkable:
            return {"skill": thought}  # e.g. saplings from grass: the skill controller handles facing
        targets = np.isin(mem.grid, ids_of(self.tree, names)) & mem.known
        if sg.verb in ("attack", "eat_plant"):
            # creatures move: only trust the current view
            view_mask = np.zeros_like(targets)
            x0, y0 = pos[0] - CENTER[0], pos[1] - CENTER[1]
            xs, ys, xe, ye = max(0, x0), max(0, y0), min(mem.area, x0 + VIEW_W), min(mem.area, y0 + VIEW_H)
            view_mask[xs:xe, ys:ye] = True
            targets &= view_mask
        for cell, until in list(self.blacklist.items()):
            if until < self.t:
                del self.blacklist[cell]
            else:
                targets[cell] = False
        grid_pass = self.passable.copy()
        direction, cell, dist = bfs_next_step(mem.grid, pos, targets, grid_pass, adjacent=True)
        if dist >= 0 and cell is not None:
            view_cell = mem.to_view(cell, pos)
            if self.use_grounding and view_cell is not None and dist <= VIEW_W:
                self.last_target = cell
                verb = "interact" if interact else "move_to"
                return {"skill": thought, "grounding": (verb, view_cell[0], view_cell[1])}
            if direction is None:  # next to it already: face it and act
                d = direction_to(pos, cell)
                motor = "do" if interact and self._facing(obs) == d else f"move_{d}"
                return self._motor(thought, motor, pos, sem)
            return self._motor(thought, f"move_{direction}", pos, sem)
        # not known anywhere: walk to a frontier of the explored area, keeping the chosen frontier
        # cell until it is reached or explored (re-choosing every step makes the walk dither)
        frontier = self._frontier()
        goal = self.frontier_goal
        if goal is None or not frontier[goal] or goal == pos:
            _, goal, dist = bfs_next_step(mem.grid, pos, frontier, grid_pass, adjacent=False)
            self.frontier_goal = goal if dist > 0 else None
        if self.frontier_goal is not None:
            only = np.zeros_like(frontier)
            only[self.frontier_goal] = True
            direction, _, dist = bfs_next_step(mem.grid, pos, only, grid_pass, adjacent=False)
            if dist > 0 and direction:
                return self._motor(thought, f"move_{direction}", pos, sem)
            self.frontier_goal = None
        return {"skill": "explore"}

    def _facing(self, obs: dict[str, Any]) -> str:
        return list(DIRECTIONS)[int(obs["facing"])]

    def _motor(self, thought: str, motor: str, pos: tuple[int, int], sem: np.ndarray) -> dict[str, Any]:
        # a move that did not move us last time (a cow in the way): side-step at random
        if motor.startswith("move_") and motor == self.last_motor and pos == self.last_pos:
            motor = self.safe_random_move(sem)
        self.last_motor, self.last_pos = motor, pos
        return {"skill": thought, "motor": motor}

    def _frontier(self) -> np.ndarray:
        known, grid = self.memory.known, self.memory.grid
        walk = known & self.passable[grid]
        unknown = ~known
        near_unknown = np.zeros_like(unknown)
        near_unknown[1:, :] |= unknown[:-1, :]
        near_unknown[:-1, :] |= unknown[1:, :]
        near_unknown[:, 1:] |= unknown[:, :-1]
        near_unknown[:, :-1] |= unknown[:, 1:]
        return walk & near_unknown

    def _replan_on_failure(self, pos: tuple[int, int]) -> None:
        chain = self.last_chain
        if chain and chain.get("executed") == "grounding" and chain.get("status") == "failed" and self.last_target:
            self.blacklist[self.last_target] = self.t + self.blacklist_steps
        self.last_chain = None


def direction_to(src: tuple[int, int], dst: tuple[int, int]) -> str:
    dx, dy = dst[0] - src[0], dst[1] - src[1]
    for name, v in DIRECTIONS.items():
        if v == (int(np.sign(dx)), int(np.sign(dy))):
            return name
    return "down"
