"""Finding tests: the paper's qualitative claims at small scale (Cohen, Gribelyuk, Nelson & Stemmer 2026)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

import icmlgym

ENV_ID = "icmlgym/SketchAttack-v0"
SEEDS = [0, 1, 2, 3, 4]
# n = T = 3000 keys and updates, 3000 queries, epsilon = 0.5, errors normalised by max(prefix max F, 500)
FIND = {"n_keys": 3000, "update_budget": 3000, "query_budget": 3000, "min_scale": 500, "epsilon": 0.5}


def _run(agent, **kw):
    recs = icmlgym.run(ENV_ID, agent, seeds=SEEDS, env_kwargs={**FIND, **kw}, episodes=1)
    for r in recs:
        assert r.status == "ok", r.error
    return np.array([r.metric("success")[0] for r in recs]), np.array([r.metric("prefix_max_error")[0] for r in recs])


@pytest.mark.finding
def test_adaptive_attack_breaks_a_non_robust_sampling_sketch_an_oblivious_stream_does_not():
    """Claim: an adaptive adversary breaks a sampling sketch of a resettable stream that an
    oblivious stream of the same budget does not.
    Setup: Bernoulli key sampling (fixed hashed randomness) at 1800 words (p = 0.3), budgets
    3000 updates / 3000 queries, epsilon = 0.5, seeds 0-4.
    Margin: the probe-and-reset attack succeeds on at least 4 of 5 seeds; the two oblivious
    streams succeed on none and stay below 0.6 * epsilon. (Observed: 5/5 vs 0/5, oblivious
    errors about 0.1.)"""
    succ, _ = _run("sketch-probe-reset", defender="bernoulli", space=1800)
    assert succ.sum() >= 4
    for oblivious in ("sketch-oblivious-random", "sketch-oblivious-worst"):
        s, e = _run(oblivious, defender="bernoulli", space=1800)
        assert s.sum() == 0 and e.max() < 0.6 * FIND["epsilon"], (oblivious, e)


@pytest.mark.finding
def test_the_dp_tree_sketch_holds_its_error_under_the_same_attack():
    """Claim: the sampling sketch whose randomness is protected by the Binary Tree Mechanism keeps
    its (prefix-max) error under epsilon against the adaptive attack, at a space where the
    unprotected sketch breaks.
    Setup: dp-tree (sample-and-hold + BTM, epsilon_dp = 8) and Bernoulli at the same 3000-word
    budget, same budgets and epsilon = 0.5, seeds 0-4.
    Margin: dp-tree fails on no seed and its largest error is below 0.8 * epsilon, while
    Bernoulli at the same space falls on at least 4 of 5 seeds. What we also observe (and
    docs/sketch.md reports): the attack raises dp-tree's error a little above its oblivious
    level (mean 0.20, max 0.25, against 0.15-0.18 for the oblivious streams)."""
    succ, err = _run("sketch-probe-reset", defender="dp-tree", space=3000)
    assert succ.sum() == 0 and err.max() < 0.8 * FIND["epsilon"], err
    succ_avg, err_avg = _run("sketch-probe-average", defender="dp-tree", space=3000)
    assert succ_avg.sum() == 0, err_avg
    b_succ, _ = _run("sketch-probe-reset", defender="bernoulli", space=3000)
    assert b_succ.sum() >= 4


@pytest.mark.finding
def test_attacks_on_other_defenders_as_observed_at_our_scale():
    """What standard robustification buys at 1800 words (seeds 0-4, same budgets): sketch
    switching and the DP median of 15 copies do not fall to probe-and-reset here (the paper's
    claim is that they need polynomial space in the long run; our 3000-step streams do not
    exhaust them), while datasketches' Theta sketch, which has no per-key reset, is broken by
    the oblivious sliding-window stream alone.
    Margin: Theta fails on every seed under the oblivious worst-case stream; switching and
    dp-median fail on at most 1 of 5 seeds under probe-and-reset."""
    s, _ = _run("sketch-oblivious-worst", defender="theta", space=1800)
    assert s.sum() == len(SEEDS)
    for d in ("switching", "dp-median"):
        s, e = _run("sketch-probe-reset", defender=d, space=1800)
        assert s.sum() <= 1, (d, e)


@pytest.mark.finding
def test_output_rounding_alone_does_not_stop_the_attack():
    """DESIGN.md: output rounding defeats an attacker that merely keeps the keys that leave the
    answer unmoved, so a robustness claim needs attackers that exploit the answers more finely.
    Ours compares each rise with the true rise and resets over-counted keys, so it rides a
    rounding boundary. Setup: Bernoulli at 1800 words with answers rounded to a 30% geometric
    grid (one sampled key moves the internal estimate by 1/p = 3.3), the attacker first inserts
    300 keys so that the grid step (about 90) hides every single key; seeds 0-4.
    Margin: the attack succeeds on all 5 seeds; the oblivious random stream on none."""
    rounded = {"defender": "bernoulli", "space": 1800, "defender_kwargs": {"rounding": 0.3}}
    recs = icmlgym.run(ENV_ID, "sketch-probe-reset", seeds=SEEDS, env_kwargs={**FIND, **rounded}, agent_kwargs={"warmup": 300}, episodes=1)
    assert all(r.status == "ok" for r in recs), recs[0].error
    assert sum(r.metric("success")[0] for r in recs) == len(SEEDS)
    s, _ = _run("sketch-oblivious-random", **rounded)
    assert s.sum() == 0


@pytest.mark.finding
def test_greedy_descent_breaks_a_linear_median_sketch():
    """Claim (Cohen et al. ICML 2022 for CountSketch; the paper's background): a linear sketch with
    a median estimator falls to an adaptive attack with a number of queries of the order of its
    size, while oblivious streams do not move it.
    Setup: the stable-projection sum sketch with 256 rows, 3000 keys, 6000 updates and 6000
    queries, epsilon = 0.5, seeds 0-4.
    Margin: sketch-linear-descent succeeds on at least 4 of 5 seeds (observed 5/5, after 1700 to
    3700 steps); the oblivious random stream on none (observed errors 0.18 to 0.37)."""
    kw = {"defender": "linear", "statistic": "sum", "space": 256, "update_budget": 6000, "query_budget": 6000}
    succ, _ = _run("sketch-linear-descent", **kw)
    assert succ.sum() >= 4
    s, e = _run("sketch-oblivious-random", **kw)
    assert s.sum() == 0, e


def _space_module():
    path = Path(__file__).resolve().parents[2] / "benchmarks" / "sketch_space.py"
    spec = importlib.util.spec_from_file_location("sketch_space_bench", path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.finding
@pytest.mark.slow
def test_robust_space_grows_slowly_non_robust_space_linearly():
    """Claim: the DP-robust sketch needs space polylogarithmic in the stream length T, while the
    non-robust one needs space polynomial in T to survive the attack.
    Setup: T = 500, 1000, 2000, 4000 (n_keys = updates = queries = T, errors normalised by
    max(prefix max, T/8), epsilon = 0.5), 3 seeds; the smallest space on a geometric grid at
    which probe-and-reset fails on every seed (benchmarks/sketch_space.py).
    Margin: Bernoulli needs every key (fitted exponent of T >= 0.95); dp-tree's fitted exponent
    is below 0.6 and at T = 4000 it holds under a quarter of Bernoulli's words. At this range a
    polylog (fitted (log T)^2.6) cannot be told from a small power (T^0.34 over 500..16000);
    docs/sketch.md says so."""
    bench = _space_module()
    rows_b = [bench.min_space("bernoulli", T, 3) for T in (500, 1000, 2000, 4000)]
    rows_t = [bench.min_space("dp-tree", T, 3) for T in (500, 1000, 2000, 4000)]
    fb, ft = bench.fit(rows_b), bench.fit(rows_t)
    assert fb["poly_exponent"] >= 0.95, rows_b
    assert ft["poly_exponent"] < 0.6, rows_t
    assert rows_t[-1]["space_words"] < 0.25 * rows_b[-1]["space_words"]
