"""The Craft task suite: programmatic tasks generated from Crafter's tech tree.

Every task is a serialisable :class:`CraftTask` (``to_dict`` / ``from_dict``)
with a prompt string. Categories:

- ``collect``: collect an item ``q`` times (``collect_wood``, ``collect_stone_x3``),
- ``make``: make a tool ``q`` times (``make_stone_pickaxe``),
- ``place``: place a block or station ``q`` times (``place_table_x2``),
- ``achieve``: an achievement without a recipe (``achieve_eat_cow``),
- ``survive``: stay alive for ``n`` steps (``survive_300``),
- ``ordered``: one achievement, then another after it (``collect_wood_then_place_table``).

Each comes in two difficulties, a name suffix: ``/simple`` starts with the
prerequisites of the final recipe step in the inventory (tools, materials, and
the materials to place the stations a recipe needs); ``/hard`` starts
bare-handed. For ``survive`` tasks ``simple`` starts with full stats and
``hard`` with food, drink and energy at 3.

The held-out split holds the ordered compositions of a fixed fifth of the
unordered achievement pairs (chosen by a hash of the pair, so the split does not
depend on generation order): neither order of a held-out pair occurs in the
training split, while every atomic task is in training.
"""

from __future__ import annotations

import difflib
import functools
import hashlib
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

import numpy as np

from icmlgym.envs.craft.techtree import TechTree, load

CATEGORIES: tuple[str, ...] = ("collect", "make", "place", "achieve", "survive", "ordered")
DIFFICULTIES: tuple[str, ...] = ("simple", "hard")
COLLECT_QUANTITIES: tuple[int, ...] = (1, 2, 3, 5)
MAKE_QUANTITIES: tuple[int, ...] = (1, 2)
PLACE_QUANTITIES: tuple[int, ...] = (1, 2, 3)
SURVIVE_STEPS: tuple[int, ...] = (100, 200, 300, 500, 1000)
HELDOUT_FRACTION_DENOMINATOR = 5  # one pair in five is held out
# base step limit per tech-tree step of a task (primitive steps)
STEPS_PER_DEPTH = 150

SMOKE_TASKS: tuple[str, ...] = (
    "collect_wood/simple",
    "collect_wood/hard",
    "collect_wood_x3/hard",
    "collect_drink/hard",
    "collect_sapling/hard",
    "place_table/simple",
    "place_table/hard",
    "place_stone/simple",
    "make_wood_pickaxe/simple",
    "make_wood_pickaxe/hard",
    "make_wood_sword/hard",
    "collect_stone/simple",
    "collect_stone/hard",
    "collect_coal/simple",
    "make_stone_pickaxe/simple",
    "make_stone_pickaxe/hard",
    "achieve_eat_cow/hard",
    "survive_100/hard",
    "collect_wood_then_place_table/hard",
    "place_table_then_make_wood_pickaxe/hard",
)


@dataclass(frozen=True)
class CraftTask:
    """One task: ordered goals over Crafter's achievement counters, a start inventory, a prompt.

    Attributes:
        name: unique name, ``<base>/<difficulty>``.
        category: one of :data:`CATEGORIES`.
        goals: ordered ``(achievement, count)`` pairs; goal ``i`` counts only
            achievements unlocked after goal ``i - 1`` was met.
        difficulty: ``"simple"`` or ``"hard"``.
        initial_inventory: items set at reset (on top of Crafter's initial health/food/drink/energy).
        prompt: the instruction in words.
        depth: tech-tree steps from an empty inventory to the last goal (the most of its goals).
        split: ``"train"`` or ``"heldout"``.
        survive_steps: for ``survive`` tasks the number of steps to stay alive, else 0.
        max_steps: default step limit (primitive steps).
    """

    name: str
    category: str
    goals: tuple[tuple[str, int], ...]
    difficulty: str
    initial_inventory: dict[str, int] = field(default_factory=dict)
    prompt: str = ""
    depth: int = 1
    split: Literal["train", "heldout"] = "train"
    survive_steps: int = 0
    max_steps: int = 300

    @property
    def multi_step(self) -> bool:
        """More than one tech-tree step (or more than one goal) is needed."""
        return self.depth > 1 or len(self.goals) > 1 or any(c > 1 for _, c in self.goals)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["goals"] = [list(g) for g in self.goals]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> "CraftTask":
        d = dict(d)
        d["goals"] = tuple((str(a), int(c)) for a, c in d["goals"])
        d["initial_inventory"] = {str(k): int(v) for k, v in d.get("initial_inventory", {}).items()}
        return cls(**d)


def _words(achievement: str) -> str:
    verb, _, target = achievement.partition("_")
    target = target.replace("_", " ")
    return {
        "collect": f"collect {target}",
        "make": f"make a {target}",
        "place": f"place a {target}",
        "eat": f"eat a {target}",
        "defeat": f"defeat a {target}",
        "wake": "sleep and wake up",
    }[verb]


def _merge_max(*invs: dict[str, int]) -> dict[str, int]:
    out: dict[str, int] = {}
    for inv in invs:
        for k, v in inv.items():
            out[k] = max(out.get(k, 0), v)
    return out


def _clamp(tree: TechTree, inv: dict[str, int]) -> dict[str, int]:
    return {k: min(v, tree.items[k]["max"]) for k, v in sorted(inv.items())}


def _scaled_prereqs(tree: TechTree, achievement: str, count: int) -> dict[str, int]:
    """Prerequisites for doing ``achievement`` ``count`` times (tools once, consumables ``count`` times)."""
    pre = tree.prerequisites(achievement)
    verb = achievement.partition("_")[0]
    if count == 1 or verb == "collect":
        return pre
    uses: dict[str, int] = {}
    if verb == "make":
        uses = tree.make[achievement[len("make_"):]]["uses"]
    elif verb == "place":
        uses = tree.place[achievement[len("place_"):]]["uses"]
    return {k: v + (count - 1) * uses.get(k, 0) for k, v in pre.items()}


def _heldout_pair(a: str, b: str) -> bool:
    key = "|".join(sorted((a, b))).encode()
    return int(hashlib.sha256(key).hexdigest(), 16) % HELDOUT_FRACTION_DENOMINATOR == 0


def _limit(depth: int, count: int = 1) -> int:
    return STEPS_PER_DEPTH * (depth + count - 1) + 100


def generate(tree: TechTree | None = None) -> list[CraftTask]:
    """Generate the full task suite from the tech tree (deterministic order)."""
    tree = tree or load()
    tasks: list[CraftTask] = []
    recipe_achievements = [a for a in tree.achievements if tree.achievement_rule(a)[2] is not None]
    other_achievements = [a for a in tree.achievements if tree.achievement_rule(a)[2] is None]

    def atomic(category: str, achievement: str, quantities: tuple[int, ...]) -> None:
        for q in quantities:
            base = achievement if q == 1 else f"{achievement}_x{q}"
            for diff in DIFFICULTIES:
                inv = _clamp(tree, _scaled_prereqs(tree, achievement, q)) if diff == "simple" else {}
                times = "" if q == 1 else f" {q} times"
                start = " You start bare-handed." if diff == "hard" else " You start with the prerequisites."
                depth = tree.depth(achievement)
                tasks.append(
                    CraftTask(
                        name=f"{base}/{diff}",
                        category=category,
                        goals=((achievement, q),),
                        difficulty=diff,
                        initial_inventory=inv,
                        prompt=_words(achievement).capitalize() + times + "." + start,
                        depth=depth,
                        max_steps=_limit(1 if diff == "simple" else depth, q),
                    )
                )

    for a in recipe_achievements:
        verb = a.partition("_")[0]
        quantities = {"collect": COLLECT_QUANTITIES, "make": MAKE_QUANTITIES, "place": PLACE_QUANTITIES}[verb]
        atomic(verb, a, quantities)
    for a in other_achievements:
        for diff in DIFFICULTIES:
            inv = _clamp(tree, tree.prerequisites(a)) if diff == "simple" else {}
            depth = tree.depth(a)
            start = " You start bare-handed." if diff == "hard" else " You start with the prerequisites."
            tasks.append(
                CraftTask(
                    name=f"achieve_{a}/{diff}",
                    category="achieve",
                    goals=((a, 1),),
                    difficulty=diff,
                    initial_inventory=inv,
                    prompt=_words(a).capitalize() + "." + start,
                    depth=depth,
                    max_steps=_limit(depth) * (3 if a in ("wake_up", "eat_plant") else 1),
                )
            )
    for n in SURVIVE_STEPS:
        for diff in DIFFICULTIES:
            inv = {} if diff == "simple" else {"food": 3, "drink": 3, "energy": 3}
            tasks.append(
                CraftTask(
                    name=f"survive_{n}/{diff}",
                    category="survive",
                    goals=(),
                    difficulty=diff,
                    initial_inventory=inv,
                    prompt=f"Stay alive for {n} steps."
                    + (" You start with full health, food, drink and energy." if diff == "simple" else " You start hungry, thirsty and tired."),
                    depth=1,
                    survive_steps=n,
                    max_steps=n,
                )
            )
    for a in tree.achievements:
        for b in tree.achievements:
            if a == b:
                continue
            split = "heldout" if _heldout_pair(a, b) else "train"
            depth = max(tree.depth(a), tree.depth(b))
            for diff in DIFFICULTIES:
                inv = _clamp(tree, _merge_max(tree.prerequisites(a), tree.prerequisites(b))) if diff == "simple" else {}
                start = " You start bare-handed." if diff == "hard" else " You start with the prerequisites."
                tasks.append(
                    CraftTask(
                        name=f"{a}_then_{b}/{diff}",
                        category="ordered",
                        goals=((a, 1), (b, 1)),
                        difficulty=diff,
                        initial_inventory=inv,
                        prompt=f"First {_words(a)}, then {_words(b)}." + start,
                        depth=depth,
                        split=split,
                        max_steps=_limit(depth if diff == "hard" else 1, 2)
                        * (3 if {"wake_up", "eat_plant"} & {a, b} else 1),
                    )
                )
    return tasks


@functools.lru_cache(maxsize=1)
def _by_name() -> dict[str, CraftTask]:
    out: dict[str, CraftTask] = {}
    for t in generate():
        if t.name in out:
            raise RuntimeError(f"duplicate task name {t.name}")
        out[t.name] = t
    return out


def all_tasks() -> list[CraftTask]:
    """Every generated task, in generation order."""
    return list(_by_name().values())


def task_names(split: str | None = None, category: str | None = None) -> list[str]:
    """Task names, optionally filtered by split (``train`` / ``heldout``) and category."""
    if split is not None and split not in ("train", "heldout"):
        raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
    if category is not None and category not in CATEGORIES:
        raise ValueError(f"category must be one of {CATEGORIES}, got {category!r}")
    return [
        t.name
        for t in _by_name().values()
        if (split is None or t.split == split) and (category is None or t.category == category)
    ]


class UnknownTaskError(KeyError):
    """A task name that the suite does not contain."""

    def __str__(self) -> str:
        return str(self.args[0])


def get_task(name: str | CraftTask | dict[str, Any]) -> CraftTask:
    """A task by name (``"make_stone_pickaxe/hard"``), or from a spec dict / CraftTask.

    A bare name without ``/difficulty`` means ``/hard``. An unknown name raises
    :class:`UnknownTaskError` listing the closest names.
    """
    if isinstance(name, CraftTask):
        return name
    if isinstance(name, dict):
        return CraftTask.from_dict(name)
    if not isinstance(name, str):
        raise TypeError(f"task must be a name, a dict or a CraftTask, got {type(name).__name__}")
    table = _by_name()
    key = name if "/" in name else f"{name}/hard"
    if key in table:
        return table[key]
    close = difflib.get_close_matches(key, list(table), n=5, cutoff=0.6)
    hint = f"; close names: {', '.join(close)}" if close else ""
    raise UnknownTaskError(
        f"no Craft task {name!r} ({len(table)} tasks){hint}. "
        f"List them with icmlgym.envs.craft.tasks.task_names() or `icmlgym info icmlgym/Craft-v0`"
    )


def smoke_tasks() -> list[CraftTask]:
    return [get_task(n) for n in SMOKE_TASKS]


SMOKE_EXCLUDED = frozenset({"defeat_skeleton", "defeat_zombie", "wake_up", "eat_plant", "collect_diamond"})


def heldout_smoke_tasks(n: int = 8) -> list[CraftTask]:
    """A small held-out evaluation set: ``n`` held-out ordered tasks (hard), spread evenly over
    those whose achievements reach at most tech-tree depth 5 and do not hinge on rare events
    (skeletons, zombies at night, sleeping, ripe plants, diamonds)."""
    pool = [
        t
        for t in _by_name().values()
        if t.split == "heldout" and t.difficulty == "hard" and t.depth <= 5
        and not SMOKE_EXCLUDED & {g for g, _ in t.goals}
    ]
    if n >= len(pool):
        return pool
    idx = np.linspace(0, len(pool) - 1, n).round().astype(int)
    return [pool[i] for i in idx]


def task_table():
    """All tasks as a pandas DataFrame (what ``icmlgym info icmlgym/Craft-v0`` lists)."""
    import pandas as pd

    rows = []
    for t in _by_name().values():
        rows.append(
            {
                "task": t.name,
                "category": t.category,
                "difficulty": t.difficulty,
                "split": t.split,
                "depth": t.depth,
                "max_steps": t.max_steps,
                "prompt": t.prompt,
            }
        )
    return pd.DataFrame(rows)
