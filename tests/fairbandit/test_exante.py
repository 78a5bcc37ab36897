"""Ex-ante p-means and Nash regret computed by the leaderboard, checked against a hand computation.

Two arms with mean rewards 1 and 1/4; four runs whose plays are fixed so that the play
distribution is known exactly: at round t (t = 1..5), runs 0..k_t-1 play the good arm and
the others the bad one, k = (0, 1, 2, 3, 4). Across the runs the expected reward of the arm
played at round t is therefore E_t = 1/4 + (3/4) k_t / 4 = 0.25, 0.4375, 0.625, 0.8125, 1.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import icmlgym
from icmlgym import BaseAgent
from icmlgym.envs.fairbandit.pmeans import block_metrics, round_blocks
from icmlgym.envs.fairbandit.pmeans import ex_ante_pmeans_regret as ex_ante_from_arrays
from icmlgym.leaderboard import Leaderboard
from icmlgym.leaderboard.exante import ex_ante_from_board, ex_ante_pmeans_regret

ENV = "icmlgym/FairLinearBandit-v0"
TWO_ARMS = {"arms": [[1.0], [0.25]], "theta": [1.0], "horizon": 5}
K = (0, 1, 2, 3, 4)


class FixedPlays(BaseAgent):
    """Run ``rank`` plays the good arm (0) at round t iff rank < K[t-1]."""

    name = "fixed-plays"

    def __init__(self, rank: int = 0) -> None:
        super().__init__()
        self.rank = rank

    def reset(self, seed, spec):
        super().reset(seed, spec)
        self.t = 0

    def act(self, obs, info):
        a = 0 if self.rank < K[self.t] else 1
        self.t += 1
        return a


@pytest.fixture(scope="module")
def records():
    recs = []
    for rank in range(4):
        recs += icmlgym.run(ENV, FixedPlays, seeds=[0], env_kwargs=TWO_ARMS, agent_kwargs={"rank": rank})
    assert all(r.status == "ok" for r in recs), [r.error for r in recs]
    return recs


def test_ex_ante_nash_and_pmeans_match_the_hand_computation(records, tmp_path):
    e = [0.25, 0.4375, 0.625, 0.8125, 1.0]
    nash = 1.0 - (0.25 * 0.4375 * 0.625 * 0.8125 * 1.0) ** (1 / 5)  # product 0.0555419921875, its fifth root 0.560950
    harmonic = 1.0 - 5 / sum(1 / x for x in e)  # p = -1
    p_minus5 = 1.0 - (sum(x**-5 for x in e) / 5) ** (-1 / 5)
    average = 1.0 - sum(e) / 5  # p = 1: 0.375
    assert nash == pytest.approx(0.439050, abs=1e-6)
    assert ex_ante_pmeans_regret(records, 0.0) == pytest.approx(nash, rel=1e-12)
    assert ex_ante_pmeans_regret(records, -1.0) == pytest.approx(harmonic, rel=1e-12)
    assert ex_ante_pmeans_regret(records, -5.0) == pytest.approx(p_minus5, rel=1e-12)
    assert ex_ante_pmeans_regret(records, 1.0) == pytest.approx(average, rel=1e-12)
    # through the store: the leaderboard computes the same from what it stored
    with Leaderboard(tmp_path / "lb.db") as board:
        board.add(records)
        assert ex_ante_from_board(board, ENV, "fixed-plays", 0.0) == pytest.approx(nash, rel=1e-12)


def test_per_run_metric_differs_and_is_larger(records):
    """The per-run Nash regret (expectation outside) averages the four runs' own geometric means."""
    per_run = [1.0 - math.prod(1.0 if r < k else 0.25 for k in K) ** (1 / 5) for r in range(4)]
    got = sorted(rec.episodes[0].metrics["nash_regret"] for rec in records)
    assert got == pytest.approx(sorted(per_run), rel=1e-12)
    assert np.mean(per_run) > ex_ante_pmeans_regret(records, 0.0)


def test_block_means_estimate_the_true_ex_ante_regret_on_long_horizons():
    """Past 48 rounds the env stores block means. With a known play probability q_t (a linear
    ramp, as a learner improves) the true ex-ante Nash regret is computable; from 8 runs the
    block estimate lies within 0.005 of it, closer than the per-round estimate from the same
    runs (whose per-round noise the p-mean turns into an upward bias)."""
    from icmlgym.envs.fairbandit.pmeans import pmeans_regret

    rng = np.random.default_rng(0)
    T = 5000
    q = np.linspace(0.2, 0.95, T)
    true = pmeans_regret(q + (1 - q) * 0.25, 1.0, 0.0)
    runs = np.where(rng.random((8, T)) < q, 1.0, 0.25)
    per_round = ex_ante_from_arrays(runs, 1.0, 0.0)
    blocks = round_blocks(T)
    means = np.mean([[block_metrics(r)[f"expected_reward[rounds={a}-{b}]"] for a, b in blocks] for r in runs], axis=0)
    approx = pmeans_regret(np.repeat(means, [b - a + 1 for a, b in blocks]), 1.0, 0.0)
    assert abs(approx - true) < 0.005, (approx, true)
    assert abs(approx - true) <= abs(per_round - true), (approx, per_round, true)


def test_mixing_instances_is_refused(records):
    other = icmlgym.run(ENV, FixedPlays, seeds=[0], env_kwargs={**TWO_ARMS, "arms": [[2.0], [0.25]]})
    with pytest.raises(ValueError, match="one instance"):
        ex_ante_pmeans_regret(records + other, 0.0)
