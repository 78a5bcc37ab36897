"""Task suite: generated from Crafter's data file, >= 800 tasks, held-out split disjoint, errors name close tasks."""

from __future__ import annotations

import json
import string

import pytest

crafter = pytest.importorskip("crafter", reason="the Craft family needs the [craft] extra (crafter)")

import crafter.constants as cc  # noqa: E402

from icmlgym.envs.craft import tasks as T  # noqa: E402
from icmlgym.envs.craft.techtree import load  # noqa: E402


def test_tech_tree_is_crafters_own_data():
    tree = load()
    assert tree.actions == tuple(cc.actions)
    assert tree.collect == cc.collect and tree.make == cc.make and tree.place == cc.place
    assert tree.achievements == tuple(cc.achievements)
    # the semantic id order matches crafter.Env's SemanticView
    env = crafter.Env(seed=0)
    env.reset()
    assert tree.semantic_id("table") == env._world._mat_ids["table"]
    assert tree.semantic_id("cow") == env._sem_view._obj_ids[crafter.objects.Cow]


def test_prerequisites_follow_the_recipes():
    tree = load()
    uses = cc.make["stone_pickaxe"]["uses"]
    table = cc.place["table"]["uses"]
    pre = tree.prerequisites("make_stone_pickaxe")
    assert pre == {k: uses.get(k, 0) + table.get(k, 0) for k in set(uses) | set(table)}
    assert tree.prerequisites("collect_iron") == dict(cc.collect["iron"]["require"])
    assert tree.depth("collect_wood") == 1
    assert tree.depth("make_iron_pickaxe") > tree.depth("make_stone_pickaxe") > tree.depth("make_wood_pickaxe")


def test_suite_size_categories_and_unique_names():
    tasks = T.all_tasks()
    assert len(tasks) >= 800
    assert len(tasks) == 1048
    assert len({t.name for t in tasks}) == len(tasks)
    assert {t.category for t in tasks} == set(T.CATEGORIES)
    assert {t.difficulty for t in tasks} == {"simple", "hard"}
    for t in tasks:
        assert all(ch in string.printable for ch in t.prompt) and len(t.prompt) <= 256
        if t.difficulty == "hard" and t.category != "survive":
            assert t.initial_inventory == {}


def test_heldout_compositions_never_seen_in_training():
    train = [t for t in T.all_tasks() if t.split == "train"]
    held = [t for t in T.all_tasks() if t.split == "heldout"]
    assert held and all(t.category == "ordered" for t in held)
    train_pairs = {frozenset(g for g, _ in t.goals) for t in train if t.category == "ordered"}
    held_pairs = {frozenset(g for g, _ in t.goals) for t in held}
    assert not train_pairs & held_pairs
    # every atomic task is in training, so held-out tasks recombine seen skills
    held_atoms = {g for t in held for g, _ in t.goals}
    train_atoms = {g for t in train if t.category != "ordered" for g, _ in t.goals}
    assert held_atoms <= train_atoms
    assert 0.15 < len(held) / sum(t.category == "ordered" for t in T.all_tasks()) < 0.3


def test_task_by_name_roundtrip_and_close_names():
    t = T.get_task("make_stone_pickaxe/hard")
    assert t.goals == (("make_stone_pickaxe", 1),) and t.difficulty == "hard"
    assert T.get_task("make_stone_pickaxe") == t  # bare name means /hard
    assert T.CraftTask.from_dict(json.loads(json.dumps(t.to_dict()))) == t
    with pytest.raises(T.UnknownTaskError) as err:
        T.get_task("make_stone_pikaxe/hard")
    assert "make_stone_pickaxe/hard" in str(err.value)


def test_simple_tasks_start_with_prerequisites():
    t = T.get_task("make_wood_pickaxe/simple")
    tree = load()
    assert t.initial_inventory == tree.prerequisites("make_wood_pickaxe")
    x2 = T.get_task("place_stone_x3/simple")
    assert x2.initial_inventory["stone"] == 3 * cc.place["stone"]["uses"]["stone"]


def test_suites_registered():
    import icmlgym

    s = icmlgym.suites()
    assert len(s["craft-smoke"]) == 20
    assert len(s["craft-800"]) == len(T.all_tasks())
    assert all(T.get_task(kw["task"]).split == "heldout" for _, kw in s["craft-smoke-heldout"])
    assert len(T.task_table()) == len(T.all_tasks())


def test_bad_filters_raise():
    with pytest.raises(ValueError, match="split"):
        T.task_names(split="test")
    with pytest.raises(ValueError, match="category"):
        T.task_names(category="mine")


def test_describe_lists_every_task_for_icmlgym_info():
    from icmlgym.envs import craft

    text = craft.describe("icmlgym/Craft-v0")
    assert text.startswith(f"{len(T.all_tasks())} tasks")
    assert "make_stone_pickaxe/hard" in text and "collect_wood_then_place_table/hard" in text
    assert len(text.splitlines()) > len(T.all_tasks())
