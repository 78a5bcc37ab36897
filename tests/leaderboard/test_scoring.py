"""Scoring on constructed runs with known answers, and on real Bandit-v0 runs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from icmlgym.catalog import card, task_label
from icmlgym.leaderboard import Leaderboard

from .conftest import BANDIT, make_record

REFS = {BANDIT: (100.0, 0.0)}  # random = 100 regret, reference = 0 regret


@pytest.fixture
def board(store_path):
    b = Leaderboard(store_path)
    yield b
    b.close()


def test_task_table_statistics_failures_and_flags(board):
    board.add([make_record("a", s, [1.0 + s, 3.0 + s]) for s in range(3)])  # run scores 2, 3, 4
    board.add([make_record("b", s, [50.0 + s]) for s in range(2)] + [make_record("b", 2, [], status="failed"), make_record("b", 3, [], status="timeout")])
    t = board.table(env=BANDIT, refs=REFS).set_index("entry")
    a, b = t.loc["a"], t.loc["b"]
    assert a["mean"] == pytest.approx(3.0)
    assert a["se"] == pytest.approx(1 / np.sqrt(3))
    assert 2.0 <= a["ci_low"] < 3.0 < a["ci_high"] <= 4.0
    assert (a["seeds"], a["failed"], a["timeout"], a["few_seeds"]) == (3, 0, 0, False)
    # failed and timed-out runs are shown, and b has only 2 of the 3 seeds the smoke tier asks
    assert (b["seeds"], b["failed"], b["timeout"], b["runs"], b["few_seeds"]) == (2, 1, 1, 4, True)
    assert b["seeds_required"] == card(BANDIT).tier("smoke").seeds
    # pseudo-regret is minimised: a ranks first for sure
    assert a["metric"] == "pseudo_regret" and a["direction"] == "min"
    assert (a["rank"], a["rank_worst"], b["rank"], b["rank_worst"]) == (1, 1, 2, 2)
    assert a["norm"] == pytest.approx(0.97) and a["norm_low"] <= 0.97 <= a["norm_high"]
    assert list(t.index) == ["a", "b"]


def test_scores_and_costs_come_from_stored_episodes(board):
    """A record's own run-level cost is ignored; the table re-sums the episodes."""
    r = make_record("a", 0, [2.0, 4.0], cost=1000.0)
    r.cost = {"env_steps": 1.0}  # a submitter's number that disagrees with its episodes
    board.add(r)
    row = board.table(env=BANDIT).iloc[0]
    assert row["mean"] == pytest.approx(3.0)
    assert row["cost.env_steps"] == pytest.approx(2000.0)


def test_overlapping_entries_share_a_rank_interval(board):
    rng = np.random.default_rng(0)
    for name, centre in (("a", 10.0), ("b", 10.5), ("c", 60.0)):
        board.add([make_record(name, s, [centre + rng.normal(0, 3)]) for s in range(5)])
    t = board.table(env=BANDIT).set_index("entry")
    assert (t.loc["a", "rank"], t.loc["a", "rank_worst"]) == (1, 2)
    assert (t.loc["b", "rank"], t.loc["b", "rank_worst"]) == (1, 2)
    assert (t.loc["c", "rank"], t.loc["c", "rank_worst"]) == (3, 3)


def test_pareto_front_on_score_versus_cost(board):
    board.add([make_record("cheap-bad", s, [40.0 + s], cost=100) for s in range(3)])
    board.add([make_record("dear-good", s, [5.0 + s], cost=1000) for s in range(3)])
    board.add([make_record("dear-bad", s, [45.0 + s], cost=1000) for s in range(3)])
    t = board.table(env=BANDIT).set_index("entry")
    assert t.loc["cheap-bad", "pareto"] and t.loc["dear-good", "pareto"] and not t.loc["dear-bad", "pareto"]
    assert t.loc["dear-bad", "pareto_cost"] == "cost.env_steps"


def test_entry_labels_separate_versions_and_kwargs(board):
    board.add([make_record("a", 0, [1.0], source_hash="1111111111"), make_record("a", 0, [2.0], source_hash="2222222222")])
    board.add(make_record("eg", 0, [3.0], agent_kwargs={"epsilon": 0.1}))
    entries = set(board.table(env=BANDIT)["entry"])
    assert entries == {"a@11111111", "a@22222222", "eg{epsilon:0.1}"}


def test_a_run_with_an_unreported_or_nan_episode_is_not_scored(board):
    partial = make_record("a", 0, [1.0, 2.0])
    del partial.episodes[1].metrics["pseudo_regret"]
    nan = make_record("a", 1, [1.0, float("nan")])
    board.add([partial, nan, make_record("a", 2, [5.0])])
    row = board.table(env=BANDIT).iloc[0]
    assert (row["seeds"], row["missing_metric"], row["mean"]) == (1, 2, pytest.approx(5.0))


def test_missing_metric_and_metric_override(board):
    ok = make_record("a", 0, [1.0, 2.0])
    odd = make_record("a", 1, [1.0], metric="something_else")
    board.add([ok, odd])
    row = board.table(env=BANDIT).iloc[0]
    assert (row["seeds"], row["missing_metric"], row["mean"]) == (1, 1, pytest.approx(1.5))
    other = board.table(env=BANDIT, metric="best_arm_rate", direction="max").iloc[0]
    assert other["metric"] == "best_arm_rate" and other["direction"] == "max"
    assert other["mean"] == pytest.approx(0.5) and np.isnan(other["norm"])
    ret = board.table(env=BANDIT, metric="return").iloc[0]
    assert ret["mean"] == pytest.approx(np.mean([-1.5, -1.0]))


def _suite_runs(board, tasks, scores: dict[str, list[list[float]]]):
    """scores[entry][task] = list of run scores (one episode each)."""
    for entry, per_task in scores.items():
        for (_env_id, kw), vals in zip(tasks, per_task):
            board.add([make_record(entry, s, [v], env_kwargs=kw) for s, v in enumerate(vals)])


def test_suite_aggregates_on_constructed_scores(board):
    tasks = [(BANDIT, {"horizon": h}) for h in (10, 20, 30, 40)]
    refs = {task_label(e, k): (100.0, 0.0) for e, k in tasks}  # norm = 1 - regret / 100
    # entry "good": normalised 0.9 on every run; "mixed": per-task normalised 0.1, 0.2, 0.8, 0.9
    _suite_runs(board, tasks, {"good": [[10.0] * 3] * 4, "mixed": [[90.0] * 3, [80.0] * 3, [20.0] * 3, [10.0] * 3]})
    agg = board.table(suite=tasks, tier="smoke", refs=refs).set_index("entry")
    assert agg.loc["good", "iqm"] == pytest.approx(0.9) and agg.loc["good", "iqm_low"] == pytest.approx(0.9)
    m = agg.loc["mixed"]
    # 12 pooled runs: cut 3 from each end of [.1,.1,.1,.2,.2,.2,.8,.8,.8,.9,.9,.9] -> mean(.2,.2,.2,.8,.8,.8) = .5
    assert m["iqm"] == pytest.approx(0.5)
    assert m["mean"] == pytest.approx(0.5) and m["median"] == pytest.approx(0.5)
    # every task is constant within runs: the stratified bootstrap cannot move the mean
    assert (m["mean_low"], m["mean_high"]) == (pytest.approx(0.5), pytest.approx(0.5))
    assert (agg.loc["good", "rank"], m["rank"], m["rank_worst"]) == (1, 2, 2)
    assert (m["tasks"], m["tasks_missing"], m["runs"]) == (4, 0, 12)


def test_suite_notes_unnormalised_and_incomplete_entries(board):
    tasks = [(BANDIT, {"horizon": h}) for h in (10, 20)]
    refs = {task_label(*tasks[0]): (100.0, 0.0)}  # the second task has no references
    _suite_runs(board, tasks, {"x": [[10.0, 20.0], [5.0]], "y": [[], [7.0]]})
    agg = board.table(suite=tasks, tier="smoke", refs=refs)
    notes = " ".join(agg.attrs["notes"])
    assert "no normalisation references" in notes and task_label(*tasks[1]) in notes
    assert "entries missing some tasks" in notes and "y" in notes
    y = agg.set_index("entry").loc["y"]
    assert y["tasks_missing"] == 1 and np.isnan(y["iqm"]) and np.isnan(y["rank"])
    assert agg.set_index("entry").loc["x", "rank"] == 1


def test_mixed_tiers_need_a_tier_for_a_suite(board):
    board.add([make_record("a", 0, [1.0]), make_record("a", 0, [1.0], tier="standard")])
    with pytest.raises(ValueError, match="tier"):
        board.table(suite=[(BANDIT, {})])
    assert len(board.table(suite=[(BANDIT, {})], tier="smoke")) == 1


def test_compare_on_constructed_scores(board):
    tasks = [(BANDIT, {"horizon": h}) for h in (10, 20)]
    refs = {task_label(e, k): (100.0, 0.0) for e, k in tasks}
    # A has lower regret than B on task 1 for every pair of runs; on task 2 they are identical
    _suite_runs(board, tasks, {"A": [[1.0, 2.0, 3.0], [5.0, 6.0]], "B": [[10.0, 11.0, 12.0], [5.0, 6.0]]})
    c = board.compare("A", "B", suite=tasks, tier="smoke", refs=refs).set_index("task")
    t1, t2 = task_label(*tasks[0]), task_label(*tasks[1])
    assert c.loc[t1, "diff"] == pytest.approx(-9.0) and c.loc[t1, "diff_high"] < 0
    assert c.loc[t1, "p_improve"] == pytest.approx(1.0)
    assert c.loc[t2, "p_improve"] == pytest.approx(0.5) and c.loc[t2, "diff"] == pytest.approx(0.0)
    assert c.loc["ALL", "p_improve"] == pytest.approx(0.75)
    assert c.loc["ALL", "p_low"] <= 0.75 <= c.loc["ALL", "p_high"]
    with pytest.raises(ValueError, match="no entry 'C'"):
        board.compare("A", "C", suite=tasks, tier="smoke")


def test_real_bandit_runs(board, real_records):
    board.add(real_records)
    t = board.table(env=BANDIT).set_index("entry")
    assert set(t.index) == {"ucb1", "random", "bandit-thompson"}
    for name in t.index:
        runs = [r for r in real_records if r.agent_name == name]
        expected = np.mean([np.mean(r.metric("pseudo_regret")) for r in runs])
        assert t.loc[name, "mean"] == pytest.approx(expected)
        assert (t.loc[name, "seeds"], t.loc[name, "failed"], t.loc[name, "few_seeds"]) == (3, 0, False)
    assert t.loc["random", "rank"] == 3  # the random baseline's regret is far above both others
    assert t.loc["random", "norm"] == pytest.approx(0.0, abs=0.15)  # the card's random reference


def test_filter_and_group_by_device(board):
    gpu = {"requested": "cuda", "type": "cuda", "name": "NVIDIA H100"}
    board.add([make_record("a", s, [1.0]) for s in range(2)] + [make_record("a", s, [2.0], device=gpu, run_id=f"g{s}") for s in range(2)])
    assert len(board.table(env=BANDIT)) == 1
    split = board.table(env=BANDIT, by_device=True).set_index("entry")
    assert split.loc["a [cpu: test-cpu]", "mean"] == pytest.approx(1.0)
    assert split.loc["a [cuda: NVIDIA H100]", "mean"] == pytest.approx(2.0)
    assert board.table(env=BANDIT, device="cuda").iloc[0]["mean"] == pytest.approx(2.0)
    assert len(board.runs(device="NVIDIA H100")) == 2


def test_tables_gives_both_levels_in_one_pass(board):
    tasks = [(BANDIT, {"horizon": h}) for h in (10, 20)]
    refs = {task_label(e, k): (100.0, 0.0) for e, k in tasks}
    _suite_runs(board, tasks, {"p": [[10.0, 12.0, 9.0], [20.0, 25.0]], "q": [[50.0, 40.0], [60.0, 61.0, 70.0]]})
    task, agg = board.tables(suite=tasks, tier="smoke", refs=refs)
    pd.testing.assert_frame_equal(task, board.table(suite=tasks, tier="smoke", refs=refs, level="task"))
    pd.testing.assert_frame_equal(agg, board.table(suite=tasks, tier="smoke", refs=refs))
    assert board.tables(env=BANDIT)[1] is None


def test_a_single_run_gets_no_interval_and_no_rank(board):
    board.add([make_record("one", 0, [5.0]), make_record("two", 0, [7.0]), make_record("two", 1, [9.0])])
    t = board.table(env=BANDIT).set_index("entry")
    assert t.loc["one", "mean"] == 5.0 and np.isnan(t.loc["one", "ci_low"]) and np.isnan(t.loc["one", "rank"])
    assert t.loc["two", "ci_low"] <= 8.0 <= t.loc["two", "ci_high"] and t.loc["two", "rank"] == 1
    agg = board.table(suite=[(BANDIT, {})], tier="smoke", refs={BANDIT: (100.0, 0.0)}).set_index("entry")
    assert agg.loc["one", "iqm"] == pytest.approx(0.95) and np.isnan(agg.loc["one", "iqm_low"])
