"""Grid navigation over Crafter semantic maps (breadth-first search), shared by the
env's skill / grounding controllers and by the agents.

Maps are indexed ``[x, y]`` like Crafter's (x to the right, y downwards). A cell
is passable when its id is a walkable material (grass, sand, path) and no object
stands on it; lava is never entered. Everything works on any 2-D id array: the
9x7 local view or an agent's remembered world map.
"""

from __future__ import annotations

from collections import deque
from typing import Iterable

import numpy as np

from icmlgym.envs.craft.techtree import TechTree

# motor-action name of a unit step, and the step of each direction name
DIRECTIONS: dict[str, tuple[int, int]] = {"left": (-1, 0), "right": (1, 0), "up": (0, -1), "down": (0, 1)}
STEP_TO_DIR: dict[tuple[int, int], str] = {v: k for k, v in DIRECTIONS.items()}


def passable_ids(tree: TechTree) -> np.ndarray:
    """Boolean lookup over semantic ids: True where the player may step."""
    names = tree.semantic_names
    return np.array([n in tree.walkable for n in names], dtype=bool)


def ids_of(tree: TechTree, names: Iterable[str]) -> np.ndarray:
    wanted = set(names)
    return np.array([i for i, n in enumerate(tree.semantic_names) if n in wanted], dtype=np.int64)


def bfs_next_step(
    grid: np.ndarray,
    origin: tuple[int, int],
    target_mask: np.ndarray,
    passable: np.ndarray,
    adjacent: bool = True,
    max_nodes: int = 20_000,
) -> tuple[str | None, tuple[int, int] | None, int]:
    """First move on a shortest path from ``origin`` to a target cell.

    With ``adjacent=True`` the path ends on a passable cell 4-adjacent to a
    target (to interact with it); otherwise it ends on the target itself.

    Returns:
        ``(direction, target, distance)``: ``direction`` is ``None`` when the
        player already stands at the goal (then ``target`` is the target cell to
        face, or the origin); ``(None, None, -1)`` when no target is reachable.
    """
    w, h = grid.shape
    ox, oy = origin
    walk = passable[grid]
    walk[ox, oy] = True
    if adjacent:
        goal = np.zeros_like(target_mask)
        goal[1:, :] |= target_mask[:-1, :]
        goal[:-1, :] |= target_mask[1:, :]
        goal[:, 1:] |= target_mask[:, :-1]
        goal[:, :-1] |= target_mask[:, 1:]
        goal &= walk
    else:
        goal = target_mask & walk
    if not goal.any():
        return None, None, -1
    first = np.full((w, h), -1, dtype=np.int8)
    seen = np.zeros((w, h), dtype=bool)
    seen[ox, oy] = True
    queue: deque[tuple[int, int, int]] = deque([(ox, oy, 0)])
    dirs = list(DIRECTIONS.values())
    nodes = 0
    while queue and nodes < max_nodes:
        x, y, d = queue.popleft()
        nodes += 1
        if goal[x, y]:
            direction = None if (x, y) == (ox, oy) else list(DIRECTIONS)[first[x, y]]
            return direction, _facing_target(target_mask, (x, y)) if adjacent else (x, y), d
        for k, (dx, dy) in enumerate(dirs):
            nx, ny = x + dx, y + dy
            if 0 <= nx < w and 0 <= ny < h and not seen[nx, ny] and walk[nx, ny]:
                seen[nx, ny] = True
                first[nx, ny] = first[x, y] if (x, y) != (ox, oy) else k
                queue.append((nx, ny, d + 1))
    return None, None, -1


def _facing_target(target_mask: np.ndarray, pos: tuple[int, int]) -> tuple[int, int]:
    w, h = target_mask.shape
    for dx, dy in DIRECTIONS.values():
        nx, ny = pos[0] + dx, pos[1] + dy
        if 0 <= nx < w and 0 <= ny < h and target_mask[nx, ny]:
            return (nx, ny)
    return pos


def direction_to(src: tuple[int, int], dst: tuple[int, int]) -> str | None:
    """Name of the unit direction from ``src`` to a 4-adjacent ``dst`` (None if not adjacent)."""
    return STEP_TO_DIR.get((dst[0] - src[0], dst[1] - src[1]))
