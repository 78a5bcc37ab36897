"""The compact per-family tables: fit the width, never cut an id, mark the reference, one number
format per env, and fall back to one line per value when an entry name alone is too wide."""

from __future__ import annotations

import pytest

from icmlgym.leaderboard import Leaderboard
from icmlgym.leaderboard.family import compact_rows, family_tables_text, number_format

from .conftest import BANDIT, make_record

FAIR = "icmlgym/FairLinearBandit-v0"
LONG = "an-agent-with-a-rather-long-name-that-must-never-be-cut"


@pytest.fixture
def table(store_path):
    with Leaderboard(store_path) as b:
        b.add([make_record(a, s, [v + s]) for a, v in (("bandit-thompson", 30.0), ("ucb1", 110.0), (LONG, 200.0)) for s in range(3)])
        b.add([make_record("crashy", s, [], status="failed") for s in range(3)])
        b.add([make_record("tiny", s, [0.0001942 * (1 + s)], env_id=FAIR, metric="nash_regret") for s in range(3)])
        b.add([make_record("tinier", s, [7.6e-05], env_id=FAIR, metric="nash_regret") for s in range(3)])
        yield b.table(level="task")


@pytest.mark.parametrize("width", [60, 80, 120])
def test_tables_fit_the_width_and_keep_ids_whole(table, width):
    text = family_tables_text(table, width)
    assert max(len(line) for line in text.splitlines()) <= width
    for name in (BANDIT, FAIR, LONG, "bandit-thompson", "crashy"):
        assert name in text
    assert "bandit\n======" in text and "fairbandit\n==========" in text


def test_reference_marked_failures_counted_and_one_format_per_env(table):
    text = family_tables_text(table, 120)
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  ") and line.split()[0] != "entry"}
    assert " * " in lines["bandit-thompson"] and " * " not in lines["ucb1"]
    assert lines["crashy"].split()[-2:] == ["0/3", "3"]  # no successful seed of 3; 3 failed
    # the fair-bandit block mixes 0.0001942 and 7.6e-05: both in one scientific format
    assert "3.884e-04" in lines["tiny"] and "7.600e-05" in lines["tinier"]


def test_columns_can_be_chosen(table):
    text = family_tables_text(table, 120, columns=["entry", "mean"])
    header = next(line for line in text.splitlines() if line.strip().startswith("entry"))
    assert header.split() == ["entry", "mean"]
    with pytest.raises(ValueError, match="unknown column"):
        family_tables_text(table, 120, columns=["entry", "avg"])


def test_an_entry_too_long_for_any_table_is_written_as_lines(table):
    text = family_tables_text(table, 40)
    assert LONG in text.splitlines() or f"  {LONG}" in text.splitlines()
    assert any(line.strip().startswith("mean ") for line in text.splitlines())


def test_number_format_is_consistent():
    f = number_format([123.4, 0.5])
    assert (f(123.4), f(0.5)) == ("123.4", "0.5")
    f = number_format([0.12, 0.0])
    assert (f(-0.0), f(0.12), f(float("nan"))) == ("0.0000", "0.1200", "–")  # 4 significant digits of the largest; no "-0"


def test_an_empty_table_has_no_families():
    import pandas as pd

    assert compact_rows(pd.DataFrame()) == {}
