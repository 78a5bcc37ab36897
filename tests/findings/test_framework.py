"""The findings framework: paired statistics, verdicts, declarations, evaluation through the runner, the command."""

from __future__ import annotations

import math

import numpy as np
import pytest
from typer.testing import CliRunner

from icmlgym.findings import (
    DOES_NOT_HOLD,
    HOLDS,
    NOT_AT_SCALE,
    Arm,
    Finding,
    Mean,
    Share,
    all_findings,
    evaluate,
    families,
    family_findings,
    paired_effect,
    verdict,
)
from icmlgym.leaderboard import Leaderboard

B = "icmlgym/Bandit-v0"
UNITS = list(range(10))


def test_sign_flip_p_value_is_exact():
    # all 10 differences positive: only the all-plus pattern reaches the observed mean: p = 1/1024
    e = paired_effect(np.arange(1, 11, dtype=float), "greater")
    assert e.p_value == pytest.approx(1 / 1024)
    assert e.mean == pytest.approx(5.5) and e.low < 5.5 < e.high and e.n == 10
    # against the other direction the same data is no evidence at all
    assert paired_effect(np.arange(1, 11, dtype=float), "less").p_value == pytest.approx(1.0)
    # one negative unit of size 1: the patterns whose mean is >= the observed one are those
    # flipping only unit 1 or none -> 2/1024
    d = np.arange(1, 11, dtype=float)
    d[0] = -1
    assert paired_effect(d, "greater").p_value == pytest.approx(2 / 1024)


def test_bootstrap_interval_covers_the_mean_and_nans_are_dropped():
    rng = np.random.default_rng(1)
    d = rng.normal(0.3, 1.0, size=40)
    e = paired_effect(np.append(d, np.nan), "greater")
    assert e.n == 40
    se = d.std(ddof=1) / math.sqrt(40)
    assert e.low == pytest.approx(d.mean() - 1.96 * se, abs=0.6 * se)
    assert e.high == pytest.approx(d.mean() + 1.96 * se, abs=0.6 * se)


@pytest.mark.parametrize(
    "diff,direction,min_effect,want",
    [
        (np.full(10, 1.0) + np.linspace(0, 0.1, 10), "greater", 0.0, HOLDS),
        (np.full(10, 1.0) + np.linspace(0, 0.1, 10), "greater", 2.0, NOT_AT_SCALE),  # too small an effect
        (np.full(10, 1.0) + np.linspace(0, 0.1, 10), "less", 0.0, DOES_NOT_HOLD),  # significant, wrong way
        (np.linspace(-1, 1, 10), "greater", 0.0, NOT_AT_SCALE),  # interval includes 0
        (-np.full(10, 1.0) - np.linspace(0, 0.1, 10), "less", 0.5, HOLDS),
    ],
)
def test_verdicts(diff, direction, min_effect, want):
    assert verdict(paired_effect(diff, direction), direction, min_effect) == want


def test_a_finding_needs_ten_units_and_a_valid_direction():
    arm = Arm("x", B, "ucb1")
    with pytest.raises(ValueError, match=">= 10"):
        Finding("f", "bandit", "c", "s", arm, 0.0, Mean("pseudo_regret"), "less", "seed", test_units=range(5))
    with pytest.raises(ValueError, match="direction"):
        Finding("f", "bandit", "c", "s", arm, 0.0, Mean("pseudo_regret"), "lower", "seed")
    with pytest.raises(ValueError, match="expected"):
        Finding("f", "bandit", "c", "s", arm, 0.0, Mean("pseudo_regret"), "less", "seed", expected="maybe")


def test_tier_twins_split_a_claim_by_tier():
    """A claim whose verdict differs by tier: the original at the base tier only, a twin at the other."""
    from icmlgym.findings.claims import tier_twins

    arm = Arm("x", B, "ucb1")
    a = Finding("a", "bandit", "c", "s", arm, 0.0, Mean("pseudo_regret"), "less", "seed")
    b = Finding("b", "bandit", "c", "s", arm, 0.0, Mean("pseudo_regret"), "less", "seed", expected=NOT_AT_SCALE)
    out = tier_twins([a, b], {"b": (DOES_NOT_HOLD, "at standard")})
    assert [(f.id, f.expected, tuple(f.tiers)) for f in out] == [
        ("a", HOLDS, ("smoke", "standard", "full")), ("b", NOT_AT_SCALE, ("smoke",)), ("b-standard", DOES_NOT_HOLD, ("standard",))]
    assert out[2].note == "at standard" and out[2].treatment == b.treatment
    with pytest.raises(ValueError, match=r"no finding with the ids \['c'\]"):
        tier_twins([a, b], {"c": (HOLDS, "")})


def test_every_family_declares_findings_with_unique_ids():
    fams = families()
    assert {"arena", "craft", "fairbandit", "games", "screening", "sketch"} <= set(fams)
    ids = [f.id for f in all_findings()]
    assert len(ids) == len(set(ids))
    for fam in fams:
        for f in family_findings(fam):
            assert f.claim and f.source and len(f.test_units) >= 10
    with pytest.raises(ValueError, match="no findings declared for family 'nope'"):
        family_findings("nope")


@pytest.fixture(scope="module")
def bandit_results(tmp_path_factory):
    store = tmp_path_factory.mktemp("lb") / "lb.db"
    ucb_vs_random = Finding(
        "bandit-ucb-beats-random", "bandit", "UCB1 has lower pseudo-regret than uniform random play.", "textbook",
        Arm("UCB1", B, "ucb1", episodes=1), Arm("random", B, "random", episodes=1), Mean("pseudo_regret"), "less", "seed",
        min_effect=1.0,
    )
    same = Finding(
        "bandit-random-vs-random", "bandit", "Random play against itself (a null claim).", "test",
        Arm("random", B, "random", episodes=1), Arm("random again", B, "random", env_kwargs={}, episodes=1), Mean("pseudo_regret"),
        "less", "seed", expected=NOT_AT_SCALE,
    )
    share = Finding(
        "bandit-share", "bandit", "UCB1's regret is below 1000 on most seeds (a one-sample share).", "test",
        Arm("UCB1", B, "ucb1", episodes=1), 0.5, Share("pseudo_regret", 1000.0), "greater", "seed",
    )
    with Leaderboard(store) as board:
        results = evaluate([ucb_vs_random, same, share], units=UNITS, on_record=board.add)
        stored = len(board)
    return results, stored


def test_evaluation_runs_through_the_runner_and_stores_each_run_once(bandit_results):
    results, stored = bandit_results
    # UCB1 and random on 10 seeds: the runs the three findings share happen (and are stored) once
    assert stored == 20
    ucb, same, share = results
    assert not ucb.failed_runs and ucb.verdict == HOLDS and ucb.matches_declaration
    assert same.effect.mean == 0.0 and same.verdict == NOT_AT_SCALE
    assert share.verdict == HOLDS and np.all(share.control == 0.5)
    row = ucb.row()
    assert row["unit"] == "seed x10" and row["ci_low"] <= row["effect"] <= row["ci_high"] and row["p_value"] == pytest.approx(1 / 1024)


def test_evaluation_refuses_fewer_than_ten_units():
    with pytest.raises(ValueError, match="at least 10 independent units"):
        evaluate(family_findings("screening")[0], units=[0, 1, 2])
    with pytest.raises(ValueError, match="distinct"):
        evaluate(family_findings("screening")[0], units=[0] * 10)


def test_the_command_validates_its_input(tmp_path):
    from icmlgym.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["findings", "nope"])
    assert r.exit_code == 2 and "no findings declared for family 'nope'" in r.output
    r = runner.invoke(app, ["findings", "screening", "--seed-list", "1,2,3"])
    assert r.exit_code == 2 and "at least 10" in r.output
    r = runner.invoke(app, ["findings", "screening", "--seeds", "10", "--seed-list", "1,2"])
    assert r.exit_code == 2 and "not both" in r.output
    r = runner.invoke(app, ["findings", "--list"])
    assert r.exit_code == 0 and "screening-ucb-beats-uniform" in r.output
