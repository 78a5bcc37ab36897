"""Optional MineRL backend (extra ``[minerl]``): the Craft tasks' motor level and
observations mapped onto MineRL's ``MineRLObtainDiamond-v0`` dictionaries.

MineRL 0.4 cannot be built offline (its build runs gradle, which downloads
Minecraft, and it needs Java 8), so the live env :class:`MineRLCraftEnv` runs
only where MineRL is installed. The mapping itself — pure functions over
MineRL's documented spaces — is importable and tested everywhere:

- :func:`observation_from_minerl`: MineRL's ``pov`` and ``inventory`` (and
  ``life_stats`` where an env has it) -> Craft's ``image`` and ``inventory``
  vector in Crafter's item order (counts clamped to Crafter's maximum of 9);
- :func:`actions_to_minerl`: one Crafter motor action -> the list of MineRL
  action dicts that perform it (crafting expands into its Minecraft recipe
  chain: planks, sticks, then the tool), or an empty list for actions MineRL's
  ObtainDiamond space cannot express (``sleep``, ``place_plant``, swords);
- :func:`achievements_from_inventories`: Crafter achievement counts implied by
  two consecutive MineRL inventories.

MineRL's documented ObtainDiamond spaces (minerl 0.4): observation ``pov``
Box(64, 64, 3) uint8, ``inventory`` Dict of 18 item counts (coal, cobblestone,
crafting_table, dirt, furnace, iron_axe, iron_ingot, iron_ore, iron_pickaxe,
log, planks, stick, stone, stone_axe, stone_pickaxe, torch, wooden_axe,
wooden_pickaxe), ``equipped_items.mainhand``; action ``attack`` / ``back`` /
``forward`` / ``jump`` / ``left`` / ``right`` / ``sneak`` / ``sprint``
(Discrete(2)), ``camera`` Box(-180, 180, (2,)), ``craft`` Enum(none, torch,
stick, planks, crafting_table), ``equip`` Enum(none, air, wooden_axe,
wooden_pickaxe, stone_axe, stone_pickaxe, iron_axe, iron_pickaxe),
``nearbyCraft`` Enum(none, wooden_axe, wooden_pickaxe, stone_axe,
stone_pickaxe, iron_axe, iron_pickaxe, furnace), ``nearbySmelt`` Enum(none,
iron_ingot, coal), ``place`` Enum(none, dirt, stone, cobblestone,
crafting_table, furnace, torch).
"""

from __future__ import annotations

from typing import Any

import numpy as np

MINERL_ENV_ID = "MineRLObtainDiamond-v0"
MINERL_INVENTORY: tuple[str, ...] = (
    "coal", "cobblestone", "crafting_table", "dirt", "furnace", "iron_axe", "iron_ingot", "iron_ore",
    "iron_pickaxe", "log", "planks", "stick", "stone", "stone_axe", "stone_pickaxe", "torch",
    "wooden_axe", "wooden_pickaxe",
)
MINERL_BINARY_KEYS: tuple[str, ...] = ("attack", "back", "forward", "jump", "left", "right", "sneak", "sprint")
MINERL_ENUMS: dict[str, tuple[str, ...]] = {
    "craft": ("none", "torch", "stick", "planks", "crafting_table"),
    "equip": ("none", "air", "wooden_axe", "wooden_pickaxe", "stone_axe", "stone_pickaxe", "iron_axe", "iron_pickaxe"),
    "nearbyCraft": ("none", "wooden_axe", "wooden_pickaxe", "stone_axe", "stone_pickaxe", "iron_axe", "iron_pickaxe", "furnace"),
    "nearbySmelt": ("none", "iron_ingot", "coal"),
    "place": ("none", "dirt", "stone", "cobblestone", "crafting_table", "furnace", "torch"),
}
# Crafter item <- MineRL items whose counts add up to it
ITEM_MAP: dict[str, tuple[str, ...]] = {
    "wood": ("log",),
    "stone": ("cobblestone", "stone"),
    "coal": ("coal",),
    "iron": ("iron_ore", "iron_ingot"),
    "diamond": ("diamond",),
    "wood_pickaxe": ("wooden_pickaxe",),
    "stone_pickaxe": ("stone_pickaxe",),
    "iron_pickaxe": ("iron_pickaxe",),
}
CRAFTER_MAX = 9


def noop_action() -> dict[str, Any]:
    """MineRL's no-op: every binary key 0, camera (0, 0), every enum ``"none"``."""
    act: dict[str, Any] = {k: 0 for k in MINERL_BINARY_KEYS}
    act["camera"] = np.zeros(2, dtype=np.float32)
    act.update({k: "none" for k in MINERL_ENUMS})
    return act


def _with(**changes: Any) -> dict[str, Any]:
    act = noop_action()
    for k, v in changes.items():
        if k in MINERL_ENUMS and v not in MINERL_ENUMS[k]:
            raise ValueError(f"{v!r} is not in MineRL's {k} enum {MINERL_ENUMS[k]}")
        act[k] = v
    return act


_TOOL_RECIPES: dict[str, list[dict[str, Any]]] = {
    # Minecraft needs planks and sticks first; each list is the chain that makes the tool at a table
    "make_wood_pickaxe": [_with(craft="planks"), _with(craft="stick"), _with(nearbyCraft="wooden_pickaxe")],
    "make_stone_pickaxe": [_with(craft="planks"), _with(craft="stick"), _with(nearbyCraft="stone_pickaxe")],
    "make_iron_pickaxe": [
        _with(nearbySmelt="iron_ingot"), _with(craft="planks"), _with(craft="stick"), _with(nearbyCraft="iron_pickaxe"),
    ],
}


def actions_to_minerl(action_name: str) -> list[dict[str, Any]]:
    """The MineRL action dicts that perform one Crafter motor action (empty: not expressible).

    Movement is first-person: up/down are forward/back, left/right strafe.
    """
    moves = {"move_up": "forward", "move_down": "back", "move_left": "left", "move_right": "right"}
    if action_name == "noop":
        return [noop_action()]
    if action_name in moves:
        return [_with(**{moves[action_name]: 1})]
    if action_name == "do":
        return [_with(attack=1)]
    if action_name == "place_stone":
        return [_with(place="cobblestone")]
    if action_name == "place_table":
        return [_with(craft="planks"), _with(craft="crafting_table"), _with(place="crafting_table")]
    if action_name == "place_furnace":
        return [_with(nearbyCraft="furnace"), _with(place="furnace")]
    if action_name in _TOOL_RECIPES:
        return [dict(a) for a in _TOOL_RECIPES[action_name]]
    if action_name in ("sleep", "place_plant", "make_wood_sword", "make_stone_sword", "make_iron_sword"):
        return []
    raise ValueError(f"unknown Crafter motor action {action_name!r}")


def inventory_from_minerl(inventory: dict[str, Any], items: tuple[str, ...], life_stats: dict[str, Any] | None = None) -> np.ndarray:
    """Crafter's inventory vector (``items`` order) from a MineRL inventory dict."""
    unknown = set(inventory) - set(MINERL_INVENTORY) - {"diamond"}
    if unknown:
        raise ValueError(f"MineRL inventory has unknown items {sorted(unknown)}")
    out = np.zeros(len(items), dtype=np.int32)
    for i, item in enumerate(items):
        if item in ITEM_MAP:
            total = sum(int(np.asarray(inventory.get(src, 0))) for src in ITEM_MAP[item])
            out[i] = min(total, CRAFTER_MAX)
        elif item in ("health", "food", "drink", "energy"):
            out[i] = CRAFTER_MAX
    if life_stats:
        # MineRL's life (0-20) and food (0-20) scale onto Crafter's 0-9
        scale = {"health": "life", "food": "food"}
        for item, key in scale.items():
            if key in life_stats and item in items:
                out[items.index(item)] = int(round(float(np.asarray(life_stats[key])) / 20.0 * CRAFTER_MAX))
    return out


def observation_from_minerl(obs: dict[str, Any], items: tuple[str, ...]) -> dict[str, Any]:
    """Craft's ``image`` and ``inventory`` from a MineRL observation dict."""
    if "pov" not in obs or "inventory" not in obs:
        raise ValueError(f"a MineRL observation has 'pov' and 'inventory'; got keys {sorted(obs)}")
    pov = np.asarray(obs["pov"])
    if pov.dtype != np.uint8 or pov.ndim != 3 or pov.shape[2] != 3:
        raise ValueError(f"MineRL 'pov' must be an (H, W, 3) uint8 image, got {pov.dtype} {pov.shape}")
    return {"image": pov, "inventory": inventory_from_minerl(obs["inventory"], items, obs.get("life_stats"))}


def achievements_from_inventories(before: dict[str, Any], after: dict[str, Any]) -> dict[str, int]:
    """Crafter achievements implied by a change of MineRL inventory (gains only)."""

    def gain(*names: str) -> int:
        return max(0, sum(int(np.asarray(after.get(n, 0))) - int(np.asarray(before.get(n, 0))) for n in names))

    out = {
        "collect_wood": gain("log"),
        "collect_stone": gain("cobblestone"),
        "collect_coal": gain("coal"),
        "collect_iron": gain("iron_ore"),
        "collect_diamond": gain("diamond"),
        "make_wood_pickaxe": gain("wooden_pickaxe"),
        "make_stone_pickaxe": gain("stone_pickaxe"),
        "make_iron_pickaxe": gain("iron_pickaxe"),
    }
    # placing spends the item from the inventory
    out["place_table"] = max(0, int(np.asarray(before.get("crafting_table", 0))) - int(np.asarray(after.get("crafting_table", 0))))
    out["place_furnace"] = max(0, int(np.asarray(before.get("furnace", 0))) - int(np.asarray(after.get("furnace", 0))))
    return {k: v for k, v in out.items() if v > 0}


class MineRLCraftEnv:
    """Craft tasks on MineRL's ObtainDiamond world, motor level only (needs ``[minerl]`` and Java 8).

    ``step`` takes a Crafter motor action index, runs its MineRL action chain and
    returns Gymnasium's five values; ``info["achievements"]`` accumulates the
    Crafter achievements implied by inventory changes, and the task succeeds as
    in Craft-v0.
    """

    def __init__(self, task: str = "collect_wood/hard", max_steps: int | None = None) -> None:
        from icmlgym.catalog import require_extra

        require_extra("minerl", what="the MineRL backend of the Craft family")
        import gym as old_gym  # MineRL registers its envs with the old gym
        import minerl  # noqa: F401

        from icmlgym.envs.craft.tasks import get_task
        from icmlgym.envs.craft.techtree import load

        self.task = get_task(task)
        self.tree = load()
        self.max_steps = int(max_steps or self.task.max_steps)
        self.env = old_gym.make(MINERL_ENV_ID)
        self._inv: dict[str, Any] = {}
        self._ach: dict[str, int] = {}
        self._t = 0
        self._goal = 0

    def reset(self, seed: int | None = None):
        if seed is not None:
            self.env.seed(int(seed))
        obs = self.env.reset()
        self._inv = dict(obs["inventory"])
        self._ach = {a: 0 for a in self.tree.achievements}
        self._t = 0
        self._goal = 0
        return observation_from_minerl(obs, self.tree.inventory_items), {"achievements": dict(self._ach)}

    def step(self, action: int):
        name = self.tree.actions[int(action)]
        chain = actions_to_minerl(name) or [noop_action()]
        done = False
        obs = None
        for act in chain:
            obs, _, done, _ = self.env.step(act)
            for k, v in achievements_from_inventories(self._inv, obs["inventory"]).items():
                self._ach[k] = self._ach.get(k, 0) + v
            self._inv = dict(obs["inventory"])
            if done:
                break
        self._t += 1
        goals = self.task.goals
        while self._goal < len(goals) and self._ach.get(goals[self._goal][0], 0) >= goals[self._goal][1]:
            self._goal += 1
        success = bool(goals) and self._goal == len(goals)
        truncated = not success and (self._t >= self.max_steps or done)
        info = {"achievements": dict(self._ach), "minerl_actions": len(chain), "expressible": bool(actions_to_minerl(name))}
        return observation_from_minerl(obs, self.tree.inventory_items), float(success), success, truncated, info

    def close(self) -> None:
        self.env.close()
