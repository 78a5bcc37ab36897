"""Crafter's tech tree, read from Crafter's own recipe file (``crafter/data.yaml``).

Nothing here is retyped: the actions, materials, items and the ``collect`` /
``place`` / ``make`` recipes come from the installed package's data file, so a
Crafter release that changes a recipe changes our tasks and planners with it.
The file is located without importing Crafter's engine (which pulls in imageio
and Pillow), so task listing stays cheap.
"""

from __future__ import annotations

import functools
import importlib.util
import pathlib
from dataclasses import dataclass
from typing import Any

from icmlgym.catalog import require_extra

# Crafter's semantic map numbers the materials from 1 in data.yaml's order and then
# the object types in the order crafter.Env passes them to engine.SemanticView.
OBJECT_TYPES: tuple[str, ...] = ("player", "cow", "zombie", "skeleton", "arrow", "plant")


def data_file() -> pathlib.Path:
    """The path of the installed Crafter's ``data.yaml`` (needs the ``[craft]`` extra)."""
    require_extra("craft", what="the Crafter tech tree")
    spec = importlib.util.find_spec("crafter")
    assert spec is not None and spec.submodule_search_locations
    return pathlib.Path(list(spec.submodule_search_locations)[0]) / "data.yaml"


@dataclass(frozen=True)
class TechTree:
    """Crafter's rules as data: what each action needs and gives."""

    actions: tuple[str, ...]
    materials: tuple[str, ...]
    walkable: tuple[str, ...]
    items: dict[str, dict[str, int]]
    collect: dict[str, dict[str, Any]]
    place: dict[str, dict[str, Any]]
    make: dict[str, dict[str, Any]]
    achievements: tuple[str, ...]

    @property
    def semantic_names(self) -> tuple[str, ...]:
        """Name of each id of Crafter's semantic map (id 0 = outside the world)."""
        return ("none",) + self.materials + OBJECT_TYPES

    def semantic_id(self, name: str) -> int:
        return self.semantic_names.index(name)

    @property
    def inventory_items(self) -> tuple[str, ...]:
        return tuple(self.items)

    def source_of(self, item: str) -> tuple[str, str]:
        """How an inventory item is obtained: ``("collect", material)`` or ``("make", item)``."""
        if item in self.make:
            return ("make", item)
        for material, rule in self.collect.items():
            if item in rule["receive"]:
                return ("collect", material)
        raise KeyError(f"no Crafter recipe yields {item!r}")

    def achievement_rule(self, achievement: str) -> tuple[str, str, dict[str, Any] | None]:
        """``(verb, target, rule)`` of an achievement; ``rule`` is None for the ones without a recipe."""
        if achievement not in self.achievements:
            raise KeyError(f"unknown Crafter achievement {achievement!r}")
        verb, _, target = achievement.partition("_")
        if verb == "collect":
            return verb, target, self.collect[self.source_of(target)[1]]
        if verb == "make":
            return verb, target, self.make[target]
        if verb == "place":
            return verb, target, self.place[target]
        return verb, target, None

    def prerequisites(self, achievement: str) -> dict[str, int]:
        """Inventory that makes ``achievement`` one action away (given a free tile next to the player).

        Tools a recipe requires, the items its final action uses, and the items
        needed to place the stations (table, furnace) a ``make`` recipe needs nearby.
        """
        verb, target, rule = self.achievement_rule(achievement)
        need: dict[str, int] = {}

        def add(items: dict[str, int]) -> None:
            for k, v in items.items():
                need[k] = need.get(k, 0) + int(v)

        if rule is None:
            if achievement == "eat_plant":
                add(self.place["plant"]["uses"])
            return need
        if verb == "collect":
            add(rule["require"])
        elif verb == "make":
            add(rule["uses"])
            for station in rule["nearby"]:
                add(self.place[station]["uses"])
        elif verb == "place":
            add(rule["uses"])
        return need

    def depth(self, achievement: str) -> int:
        """Number of distinct recipe steps from an empty inventory (1 = a single action)."""
        return len(self._steps_for_achievement(achievement))

    def _steps_for_achievement(self, achievement: str) -> frozenset[str]:
        verb, target, rule = self.achievement_rule(achievement)
        steps = {achievement}
        if rule is None:
            if achievement == "eat_plant":
                steps |= self._steps_for_achievement("place_plant")
            return frozenset(steps)
        items: dict[str, int] = {}
        if verb == "collect":
            items = dict(rule["require"])
        elif verb == "make":
            items = dict(rule["uses"])
            for station in rule["nearby"]:
                steps |= self._steps_for_achievement(f"place_{station}")
        elif verb == "place":
            items = dict(rule["uses"])
        for item in items:
            how, what = self.source_of(item)
            sub = f"make_{what}" if how == "make" else f"collect_{item}"
            steps |= self._steps_for_achievement(sub)
        return frozenset(steps)


@functools.lru_cache(maxsize=1)
def load() -> TechTree:
    """Parse Crafter's ``data.yaml`` (cached)."""
    import ruamel.yaml  # a dependency of crafter

    raw = ruamel.yaml.YAML(typ="safe", pure=True).load(data_file().read_text())
    return TechTree(
        actions=tuple(raw["actions"]),
        materials=tuple(raw["materials"]),
        walkable=tuple(raw["walkable"]),
        items={k: dict(v) for k, v in raw["items"].items()},
        collect={k: dict(v) for k, v in raw["collect"].items()},
        place={k: dict(v) for k, v in raw["place"].items()},
        make={k: dict(v) for k, v in raw["make"].items()},
        achievements=tuple(raw["achievements"]),
    )
