"""A thin adapter over Crafter 1.8.3's old gym API (extra ``[craft]``).

Crafter's ``reset()`` takes no seed and returns only the observation; its
``step`` returns four values; the world seed is a constructor argument and each
reset derives the world from ``hash((seed, episode))``. The adapter keeps one
``crafter.Env`` (its textures load once) and, at every reset, sets the seed and
episode counter so the world depends on our seed alone. Crafter's own episode
length is switched off: the Craft env owns the step limit.

Crafter 1.8.3 is not deterministic under a fixed seed by itself: its world keeps
the creatures of each chunk in a Python ``set``, whose iteration order follows
object ids (memory addresses), and creature despawning picks from that order.
The adapter swaps those sets for insertion-ordered ones, which makes episodes
reproducible bit for bit (tested in ``tests/craft/test_env.py``).
"""

from __future__ import annotations

import collections
from dataclasses import dataclass
from typing import Any

import numpy as np

from icmlgym.catalog import require_extra

require_extra("craft", what="the Crafter backend of icmlgym/Craft-v0")

import crafter  # noqa: E402

from icmlgym.envs.craft.skills import VIEW_H, VIEW_W  # noqa: E402
from icmlgym.envs.craft.techtree import TechTree, load  # noqa: E402


def warm_fork_server() -> None:
    """Load, once in the runner's fork server, the JIT-compiled noise functions crafter's world generator calls.

    opensimplex compiles them with numba (``cache=True``): the first world of every process
    loads them from numba's cache and builds numba's typing context, about 0.35 CPU-s of each
    Craft-v0 run. The call has the argument types of crafter's own (``noise3(float, float,
    int)`` on an ``OpenSimplex(seed)``) and draws from no random stream. Called by
    :func:`icmlgym.runner.warm.run_hooks`.
    """
    import opensimplex

    opensimplex.OpenSimplex(seed=0).noise3(0.5, 0.5, 0)


class _OrderedSet(dict):
    """The slice of ``set`` that crafter's World uses (add, remove, iteration), in insertion order."""

    def add(self, item: Any) -> None:
        self[item] = None

    def remove(self, item: Any) -> None:
        del self[item]


_TEXTURES: dict[str, Any] = {}


def _crafter_env(**kwargs: Any) -> "crafter.Env":
    """``crafter.Env(**kwargs)`` sharing one loaded texture set per process: crafter reads its
    56 PNG textures from disk for every env (a fifth of a short run's time); the textures are
    read-only once loaded (resized copies are cached inside the object), so sharing is safe."""
    engine = crafter.engine
    original = engine.Textures

    def shared(directory: Any) -> Any:
        key = str(directory)
        if key not in _TEXTURES:
            _TEXTURES[key] = original(directory)
        return _TEXTURES[key]

    engine.Textures = shared
    try:
        return crafter.Env(**kwargs)
    finally:
        engine.Textures = original


def _ordered_world_reset(world: Any) -> None:
    original = world.reset

    def reset(seed: int | None = None) -> None:
        original(seed=seed)
        world._chunks = collections.defaultdict(_OrderedSet)

    world.reset = reset
    world._chunks = collections.defaultdict(_OrderedSet)


@dataclass
class BackendState:
    """One observation of the world, in backend-neutral form."""

    image: np.ndarray  # (size, size, 3) uint8
    local_semantic: np.ndarray  # (VIEW_W, VIEW_H) uint8, player at the centre
    facing: tuple[int, int]
    inventory: dict[str, int]
    achievements: dict[str, int]
    player_pos: tuple[int, int]
    dead: bool
    world_semantic: np.ndarray | None  # the full map (privileged; for oracles and analysis)


class CrafterBackend:
    """Seeded reset, initial inventory and local semantic view on top of ``crafter.Env``."""

    name = "crafter"

    def __init__(self, area: int = 64, size: int = 64) -> None:
        if int(area) < VIEW_W:
            raise ValueError(f"area must be at least {VIEW_W}, got {area}")
        if int(size) < 9:
            raise ValueError(f"size (image pixels) must be at least 9, got {size}")
        self.tree: TechTree = load()
        self.area = int(area)
        self.env = _crafter_env(area=(self.area, self.area), size=(int(size), int(size)), length=None, reward=False, seed=0)
        _ordered_world_reset(self.env._world)
        self.actions: tuple[str, ...] = tuple(self.env.action_names)
        if self.actions != self.tree.actions:
            raise RuntimeError("crafter's action list differs from its data.yaml")
        self._pad = np.zeros((self.area + VIEW_W, self.area + VIEW_H), dtype=np.uint8)

    def reset(self, seed: int, inventory: dict[str, int] | None = None) -> BackendState:
        env = self.env
        env._seed = int(seed)
        env._episode = 0
        image = env.reset()
        player = env._player
        if inventory:
            for k, v in inventory.items():
                if k not in player.inventory:
                    raise ValueError(f"unknown Crafter inventory item {k!r}; items: {sorted(player.inventory)}")
                player.inventory[k] = int(v)
            env._last_health = player.health
            image = env.render()
        sem = env._sem_view()
        return BackendState(
            image=image,
            local_semantic=self._local(sem, player.pos),
            facing=tuple(int(v) for v in player.facing),
            inventory=dict(player.inventory),
            achievements=dict(player.achievements),
            player_pos=(int(player.pos[0]), int(player.pos[1])),
            dead=False,
            world_semantic=sem,
        )

    def step(self, action: int) -> BackendState:
        image, _, done, info = self.env.step(action)
        player = self.env._player
        sem = info["semantic"]
        pos = info["player_pos"]
        return BackendState(
            image=image,
            local_semantic=self._local(sem, pos),
            facing=(int(player.facing[0]), int(player.facing[1])),
            inventory=info["inventory"],
            achievements=info["achievements"],
            player_pos=(int(pos[0]), int(pos[1])),
            dead=player.health <= 0,
            world_semantic=sem,
        )

    def _local(self, sem: np.ndarray, pos) -> np.ndarray:
        """The 9x7 cells around the player (0 outside the world), as in Crafter's local view."""
        hw, hh = VIEW_W // 2, VIEW_H // 2
        pad = self._pad
        pad[hw: hw + self.area, hh: hh + self.area] = sem
        x, y = int(pos[0]), int(pos[1])
        return pad[x: x + VIEW_W, y: y + VIEW_H].copy()

    def render(self) -> np.ndarray:
        return self.env.render()

    def close(self) -> None:
        return None


def raw_env(seed: int = 0, **kwargs: Any) -> "crafter.Env":
    """A plain ``crafter.Env`` (for benchmarks against the library itself)."""
    return crafter.Env(seed=seed, **kwargs)
