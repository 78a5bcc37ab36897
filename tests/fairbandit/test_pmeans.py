"""p-means regret: hand-computed values, scipy's gmean/pmean, the edge cases, the wrapper."""

import math

import numpy as np
import pytest
import scipy.stats as st
from hypothesis import given, settings
from hypothesis import strategies as hs

import icmlgym
from icmlgym.envs.fairbandit.pmeans import (
    PAPER_P_GRID,
    PMeansRegretWrapper,
    ex_ante_pmeans_regret,
    log_checkpoints,
    metric_name,
    nash_regret,
    p_mean,
    pmeans_metrics,
    pmeans_regret,
    pmeans_regret_prefixes,
)


def test_hand_computed_values():
    r = [1.0, 4.0]
    assert p_mean(r, 1) == pytest.approx(2.5)
    assert p_mean(r, 0) == pytest.approx(2.0)  # sqrt(1 * 4)
    assert p_mean(r, -1) == pytest.approx(1.6)  # harmonic: 2 / (1 + 1/4)
    assert p_mean(r, 0.5) == pytest.approx(2.25)  # ((1 + 2) / 2) ** 2
    assert p_mean(r, 2) == pytest.approx(math.sqrt(8.5))
    assert p_mean(r, -2) == pytest.approx((0.5 * (1 + 1 / 16)) ** -0.5)
    assert p_mean(r, -math.inf) == 1.0
    assert p_mean(r, math.inf) == 4.0
    assert pmeans_regret([0.5, 0.5, 0.5], 1.0, -5) == pytest.approx(0.5)
    assert nash_regret([0.25, 1.0], optimum=1.0) == pytest.approx(0.5)


@pytest.mark.parametrize("p", [1.0, 0.5, -0.5, -1.0, -1.5, -2.0, -5.0, 2.0, 3.0])
def test_matches_scipy_pmean(p):
    r = np.random.default_rng(1).uniform(0.01, 1.0, 500)
    assert p_mean(r, p) == pytest.approx(st.pmean(r, p), rel=1e-12)


def test_p_zero_matches_scipy_gmean():
    r = np.random.default_rng(2).uniform(0.01, 1.0, 500)
    assert p_mean(r, 0) == pytest.approx(st.gmean(r), rel=1e-12)


@settings(max_examples=60, deadline=None)
@given(
    hs.lists(hs.floats(1e-6, 1e3), min_size=1, max_size=40),
    hs.sampled_from([1.0, 0.5, 0.0, -0.5, -1.0, -1.5, -2.0, -5.0]),
)
def test_agrees_with_scipy_on_random_inputs(values, p):
    r = np.asarray(values)
    ref = st.gmean(r) if p == 0 else st.pmean(r, p)
    assert p_mean(r, p) == pytest.approx(ref, rel=1e-9)


def test_zero_reward_edge_cases():
    r = [0.0, 1.0, 1.0, 1.0]
    # p <= 0: a single zero reward drives the mean to 0 (its limit), matching scipy
    for p in (0.0, -0.5, -1.0, -5.0, -math.inf):
        assert p_mean(r, p) == 0.0
        assert pmeans_regret(r, 1.0, p) == 1.0
    assert st.pmean(r, -1.0) == 0.0 and st.gmean(r) == 0.0
    # p > 0: zeros simply count as zero
    assert p_mean(r, 0.5) == pytest.approx((0.75) ** 2)
    assert p_mean(r, 0.5) == pytest.approx(st.pmean(r, 0.5))
    assert p_mean([0.0, 0.0], 2.0) == 0.0


def test_minus_infinity_is_the_limit_of_very_negative_p():
    r = np.random.default_rng(3).uniform(0.2, 1.0, 50)
    assert p_mean(r, -math.inf) == r.min()
    assert p_mean(r, -400) == pytest.approx(r.min(), rel=0.02)
    assert p_mean(r, -400) >= r.min()


def test_no_overflow_for_tiny_rewards_and_negative_p():
    r = np.full(10_000, 1e-3)
    for p in PAPER_P_GRID:
        assert p_mean(r, p) == pytest.approx(1e-3)


def test_mean_is_non_decreasing_in_p():
    r = np.random.default_rng(4).uniform(0.05, 1.0, 300)
    ps = sorted(PAPER_P_GRID) + [math.inf]
    means = [p_mean(r, p) for p in [-math.inf] + ps]
    assert all(a <= b + 1e-12 for a, b in zip(means, means[1:]))


def test_bad_input_is_rejected_with_a_reason():
    with pytest.raises(ValueError, match="non-negative"):
        p_mean([-0.1, 1.0], 0.0)
    assert p_mean([-1.0, 3.0], 1.0) == 1.0  # p = 1 accepts negative values
    with pytest.raises(ValueError, match="empty"):
        p_mean([], 1.0)
    with pytest.raises(ValueError, match="finite"):
        p_mean([np.nan, 1.0], 1.0)
    with pytest.raises(ValueError, match="1-d"):
        p_mean([[1.0, 2.0]], 1.0)
    with pytest.raises(ValueError, match="NaN"):
        p_mean([1.0], float("nan"))
    with pytest.raises(ValueError, match="optimum"):
        pmeans_regret([1.0], float("inf"), 0.0)


@pytest.mark.parametrize("p", [1.0, 0.5, 0.0, -1.0, -5.0, -math.inf])
def test_prefix_curve_equals_direct_computation(p):
    r = np.random.default_rng(5).uniform(0.05, 1.0, 1000)
    r[700] = 0.0 if p != 1.0 else r[700]
    cps = log_checkpoints(1000)
    curve = pmeans_regret_prefixes(r, 1.0, p, cps)
    direct = [pmeans_regret(r[:t], 1.0, p) for t in cps]
    np.testing.assert_allclose(curve, direct, rtol=1e-9, atol=1e-12)


def test_log_checkpoints():
    cps = log_checkpoints(10_000)
    assert cps[0] == 1 and cps[-1] == 10_000 and np.all(np.diff(cps) > 0)
    assert log_checkpoints(1).tolist() == [1]
    with pytest.raises(ValueError):
        log_checkpoints(0)


def test_metrics_names_and_aliases():
    r = np.array([0.5, 1.0])
    m = pmeans_metrics(r, 1.0)
    assert m["nash_regret"] == m[metric_name(0.0)] == pytest.approx(1 - math.sqrt(0.5))
    assert m["average_regret"] == m["pmeans_regret[p=1]"] == pytest.approx(0.25)
    assert m["egalitarian_regret"] == pytest.approx(0.5)
    assert set(metric_name(p) for p in PAPER_P_GRID) <= set(m)
    assert metric_name(-0.5) == "pmeans_regret[p=-0.5]"


def test_ex_ante_regret_is_at_most_the_mean_per_run_regret():
    rng = np.random.default_rng(6)
    R = rng.uniform(0.05, 1.0, (8, 200))
    per_run = np.mean([nash_regret(row, 1.0) for row in R])
    assert ex_ante_pmeans_regret(R, 1.0, 0.0) <= per_run
    assert ex_ante_pmeans_regret(R, 1.0, 0.0) == pytest.approx(nash_regret(R.mean(axis=0), 1.0))
    with pytest.raises(ValueError, match="n_runs"):
        ex_ante_pmeans_regret(R[0], 1.0, 0.0)


def test_wrapper_adds_pmeans_metrics_to_bandit_v0():
    env = PMeansRegretWrapper(icmlgym.make("icmlgym/Bandit-v0", horizon=300))
    means = env.unwrapped.means
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    actions = rng.integers(0, len(means), 300)
    for a in actions:
        _, _, term, trunc, info = env.step(int(a))
    assert trunc
    m = info["metrics"]
    assert m["pseudo_regret"] == pytest.approx(300 * m["average_regret"])  # the env's own metric is kept
    assert m["nash_regret"] == pytest.approx(means.max() - st.gmean(means[actions]))
    assert info["pmeans_curve"]["t"][-1] == 300
    with pytest.raises(ValueError, match="means"):
        PMeansRegretWrapper(icmlgym.make("icmlgym/Bandit-v0"), means=[0.5, 0.5])


def test_row_metrics_are_the_single_metrics_row_by_row() -> None:
    from icmlgym.envs.fairbandit.pmeans import block_metrics, block_metrics_rows, pmeans_metrics, pmeans_metrics_rows

    rng = np.random.default_rng(4)
    R = rng.random((9, 777)) * 0.9 + 0.01
    R[3, 5] = 0.0  # a zero reward: that row takes p_mean itself (M_p = 0 for p <= 0)
    R[6] = 0.25  # a constant row
    ps = (1.0, 0.5, 0.0, -0.5, -2.0, -5.0, 3.0, math.inf)
    rows, blocks = pmeans_metrics_rows(R, 0.95, ps), block_metrics_rows(R)
    for i in range(len(R)):
        single = pmeans_metrics(R[i], 0.95, ps)
        assert list(rows) == list(single) and all(rows[k][i].tobytes() == np.float64(v).tobytes() for k, v in single.items())
        assert all(blocks[k][i].tobytes() == np.float64(v).tobytes() for k, v in block_metrics(R[i]).items())
    assert rows["nash_regret"][3] == 0.95
    R[2, 0] = -0.1
    with pytest.raises(ValueError, match="non-negative"):
        pmeans_metrics_rows(R, 0.95, ps)
