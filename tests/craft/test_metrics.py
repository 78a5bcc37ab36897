"""Suite metrics: Crafter's geometric-mean score, per-category success, seen/held-out gap, level split."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("crafter", reason="the Craft family needs the [craft] extra (crafter)")

from icmlgym.envs.craft import metrics as M  # noqa: E402
from icmlgym.envs.craft.tasks import task_names  # noqa: E402


def test_crafter_score_matches_hafner_formula():
    assert M.crafter_score([1.0, 1.0]) == pytest.approx(100.0)
    assert M.crafter_score([0.0, 0.0]) == pytest.approx(0.0)
    s = [0.5, 0.1, 0.0]
    expected = math.exp(np.mean([math.log(1 + 50), math.log(1 + 10), math.log(1)])) - 1
    assert M.crafter_score(s) == pytest.approx(expected)
    # the geometric mean rewards breadth: same mean success, different scores
    assert M.crafter_score([0.5, 0.5]) > M.crafter_score([1.0, 0.0])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        M.crafter_score([1.5])
    with pytest.raises(ValueError):
        M.crafter_score([])


def _table() -> pd.DataFrame:
    held = task_names(split="heldout")[:2]
    rows = []
    for agent, levels in (("a", (2, 1, 5)), ("b", (4, 0, 0))):
        for task, succ in (("collect_wood/hard", [1, 1]), ("make_wood_pickaxe/hard", [1, 0]), (held[0], [0, 0]), (held[1], [1, 0])):
            for seed, s in enumerate(succ):
                if agent == "b":
                    s = 1 - s if task == held[0] else s
                rows.append({"agent": agent, "task": task, "seed": seed, "success": float(s), "steps": 10.0 + seed,
                             "skill_calls": levels[0], "grounding_calls": levels[1], "motor_calls": levels[2],
                             "primitive_steps_skill": 3.0 * levels[0], "primitive_steps_grounding": 2.0 * levels[1],
                             "primitive_steps_motor": float(levels[2])})
    return pd.DataFrame(rows)


def test_success_tables_and_gap():
    df = _table()
    by_task = M.success_by_task(df)
    assert by_task.loc["make_wood_pickaxe/hard", "a"] == 0.5
    cat = M.success_by_category(df)
    assert cat.loc["collect", "a"] == 1.0 and cat.loc["ordered", "a"] == pytest.approx(0.25)
    gap = M.seen_heldout_gap(df)
    assert gap.loc["a", "train"] == pytest.approx(0.75) and gap.loc["a", "heldout"] == pytest.approx(0.25)
    assert gap.loc["a", "gap"] == pytest.approx(0.5)
    assert gap.loc["b", "heldout"] == pytest.approx(0.75)
    scores = M.suite_scores(df)
    assert scores["a"] == pytest.approx(M.crafter_score(by_task["a"].values))
    split = M.multi_step_split(df)
    assert split.loc["a", "single_step"] == 1.0


def test_level_usage_and_split_by_level():
    df = _table()
    use = M.level_usage(df)
    assert use.loc["b", "share_skill"] == pytest.approx(3 * 4 * 8 / df[df.agent == "b"]["steps"].sum())
    assert use.loc["a", "skill_calls"] == 2 * 8
    by_level = M.by_action_level(df)
    assert set(by_level.index.get_level_values("levels_used")) == {"skill+grounding+motor", "skill"}
    assert by_level.loc[("b", "skill"), "episodes"] == 8


def test_bad_tables_raise():
    with pytest.raises(ValueError, match="no episodes"):
        M.success_by_task(pd.DataFrame())
    with pytest.raises(ValueError, match="lacks columns"):
        M.success_by_task(pd.DataFrame({"agent": ["a"]}))


def test_from_runner_records():
    import icmlgym

    recs = icmlgym.run("icmlgym/Craft-v0", "craft-motor-scripted", seeds=[0], tier="smoke",
                       env_kwargs={"task": "place_table/simple"})
    df = M.from_records(recs)
    assert df["task"].tolist() == ["place_table/simple"] and df["success"].tolist() == [1.0]
