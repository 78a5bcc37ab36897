"""Tech-tree planning: the next subgoal toward a task's current goal.

The planner is pure data over :class:`~icmlgym.envs.craft.techtree.TechTree`:
given the goal achievement, the inventory and which stations the agent can
reach, it walks the recipe tree backwards and returns the first missing step,
e.g. ``make_stone_pickaxe`` from an empty inventory -> ``("collect", "wood")``.
All shipped agents share it, so they differ only in how they execute subgoals.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from icmlgym.envs.craft.tasks import CraftTask, all_tasks
from icmlgym.envs.craft.techtree import TechTree

CREATURE_ACHIEVEMENTS = {"eat_cow": "cow", "defeat_zombie": "zombie", "defeat_skeleton": "skeleton"}


@dataclass(frozen=True)
class Subgoal:
    """``verb`` in collect | place | make | station | attack | sleep | eat_plant | survive."""

    verb: str
    arg: str = ""

    @property
    def skill(self) -> str:
        """The skill-library name of this subgoal (the Chain-of-Action "thought")."""
        if self.verb == "station":
            return f"go to {self.arg}"
        if self.verb == "eat_plant":
            return "collect sapling"
        if self.verb == "survive":
            return "explore"
        return f"{self.verb} {self.arg}".strip()


def next_subgoal(
    tree: TechTree,
    achievement: str,
    inventory: dict[str, int],
    station_reachable: Callable[[str], bool],
    depth: int = 0,
) -> Subgoal:
    """The first step still missing toward ``achievement``.

    ``station_reachable(name)`` says whether the agent knows a placed station
    (table, furnace) it can walk to; when it does not, the station's materials
    are gathered and it is placed.
    """
    if depth > 12:
        raise RuntimeError(f"tech-tree recursion too deep at {achievement}")
    verb, target, rule = tree.achievement_rule(achievement)
    if rule is None:
        if achievement in CREATURE_ACHIEVEMENTS:
            return Subgoal("attack", CREATURE_ACHIEVEMENTS[achievement])
        if achievement == "wake_up":
            return Subgoal("sleep")
        if achievement == "eat_plant":
            if inventory.get("sapling", 0) < 1:
                return Subgoal("collect", "sapling")
            return Subgoal("eat_plant")
        raise KeyError(f"no plan for {achievement}")
    if verb == "collect":
        for tool, n in rule["require"].items():
            if inventory.get(tool, 0) < n:
                return _obtain(tree, tool, inventory, station_reachable, depth)
        return Subgoal("collect", target)
    if verb == "place":
        for item, n in rule["uses"].items():
            if inventory.get(item, 0) < n:
                return _obtain(tree, item, inventory, station_reachable, depth)
        return Subgoal("place", target)
    # make: gather the recipe's items plus those of every station that must still be placed
    need = dict(rule["uses"])
    missing_stations = [s for s in rule["nearby"] if not station_reachable(s)]
    for s in missing_stations:
        for item, n in tree.place[s]["uses"].items():
            need[item] = need.get(item, 0) + n
    for item, n in need.items():
        if inventory.get(item, 0) < n:
            return _obtain(tree, item, inventory, station_reachable, depth)
    if missing_stations:
        return Subgoal("place", missing_stations[0])
    for s in rule["nearby"]:
        if not _adjacent_flag(station_reachable, s):
            return Subgoal("station", s)
    return Subgoal("make", target)


def _adjacent_flag(station_reachable: Callable[[str], bool], station: str) -> bool:
    # agents pass a callable with an ``adjacent`` attribute telling whether every station is next to them
    adjacent = getattr(station_reachable, "adjacent", None)
    return bool(adjacent(station)) if adjacent else False


def _obtain(tree: TechTree, item: str, inventory: dict[str, int], station_reachable, depth: int) -> Subgoal:
    how, what = tree.source_of(item)
    if how == "make":
        return next_subgoal(tree, f"make_{what}", inventory, station_reachable, depth + 1)
    return next_subgoal(tree, f"collect_{item}", inventory, station_reachable, depth + 1)


class StationKnowledge:
    """Callable ``reachable(station)`` with ``adjacent(station)``, from two predicates."""

    def __init__(self, reachable: Callable[[str], bool], adjacent: Callable[[str], bool]) -> None:
        self._reachable = reachable
        self.adjacent = adjacent

    def __call__(self, station: str) -> bool:
        return self._reachable(station)


def survival_subgoal(inventory: dict[str, int], low: int = 5) -> Subgoal:
    """What a survive task needs now: drink, food or sleep when a stat runs low, else keep safe."""
    if inventory.get("drink", 9) < low:
        return Subgoal("collect", "drink")
    if inventory.get("food", 9) < low:
        return Subgoal("attack", "cow")
    if inventory.get("energy", 9) < 3:
        return Subgoal("sleep")
    return Subgoal("survive")


class GoalTracker:
    """Follows a task's ordered goals from the env's ``info["goal_index"]``."""

    def __init__(self, task: CraftTask) -> None:
        self.task = task

    def current(self, info: dict) -> str | None:
        i = int(info.get("goal_index", 0))
        if self.task.survive_steps:
            return None
        return self.task.goals[i][0] if i < len(self.task.goals) else None


def task_from_obs(obs: dict) -> CraftTask:
    """The task an observation belongs to (its ``task`` index into the public suite)."""
    idx = int(obs["task"])
    tasks = all_tasks()
    if idx >= len(tasks):
        raise ValueError(
            "the shipped Craft agents plan from the suite's task index; this env runs a custom task "
            f"(index {idx}); add it to the suite or give the agent the task"
        )
    return tasks[idx]
