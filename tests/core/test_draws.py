"""Block draws of the Discrete baselines (icmlgym.baselines.draws): exact distributions, one stream per seed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from icmlgym.baselines import draws
from icmlgym.baselines.draws import BetaBlocks, UniformBlocks, pick_ties


def _beta_samples(a: float, b: float, n: int, seed: int = 0) -> np.ndarray:
    """``n`` Beta(a, b) draws through BetaBlocks (one generator, ten arms of the same shapes)."""
    blocks = BetaBlocks([np.random.default_rng(seed)], 10)
    blocks.set_shapes(np.full((1, 10), a), np.full((1, 10), b))
    return np.concatenate([blocks.sample()[0] for _ in range(n // 10)])


@pytest.mark.parametrize("a,b", [(1.0, 1.0), (2.5, 7.0), (300.0, 700.0), (0.3, 0.5), (1.0, 40.0)])
def test_beta_samples_follow_the_beta_distribution(a: float, b: float) -> None:
    x = _beta_samples(a, b, 20_000)
    assert np.isfinite(x).all() and (x >= 0).all() and (x <= 1).all()
    assert stats.kstest(x, stats.beta(a, b).cdf).pvalue > 1e-3
    assert abs(x.mean() - a / (a + b)) < 4 * stats.beta(a, b).std() / np.sqrt(len(x))


def test_all_rejected_variates_continue_from_the_generator(monkeypatch) -> None:
    # shape 1 rejects both block candidates of about 0.2% of variates: the scalar continuation must run,
    # and the samples stay Beta(1, 1)
    calls = []
    scalar = draws._gamma_scalar
    monkeypatch.setattr(draws, "_gamma_scalar", lambda rng, d, c: calls.append(d) or scalar(rng, d, c))
    x = _beta_samples(1.0, 1.0, 20_000, seed=1)
    assert len(calls) > 10
    assert stats.kstest(x, "uniform").pvalue > 1e-3


def test_a_batch_draws_what_each_generator_draws_alone() -> None:
    seeds = list(range(40))
    rng = np.random.default_rng(123)
    a0, b0 = rng.uniform(0.2, 3.0, (40, 6)), rng.uniform(0.2, 3.0, (40, 6))
    batch = BetaBlocks([np.random.default_rng(s) for s in seeds], 6)
    batch.set_shapes(a0, b0)
    alone = []
    for i, s in enumerate(seeds):
        one = BetaBlocks([np.random.default_rng(s)], 6)
        one.set_shapes(a0[i : i + 1], b0[i : i + 1])
        alone.append(one)
    for step in range(300):  # crosses several block refills
        got = batch.sample()
        arms = rng.integers(0, 6, 40)
        a, b = rng.uniform(0.5, 50.0, 40), rng.uniform(0.5, 50.0, 40)
        for i, one in enumerate(alone):
            np.testing.assert_array_equal(got[i], one.sample()[0], err_msg=f"seed {seeds[i]}, step {step}")
            one.set_arm(0, int(arms[i]), a[i], b[i])
        batch.set_arms(arms, a, b)
    # the generators end in the same state: every draw (blocks, continuations, boosts) was the same
    for i, one in enumerate(alone):
        assert one.rngs[0].bit_generator.state == batch.rngs[i].bit_generator.state


def _reference_beta(rng: np.random.Generator, a: np.ndarray, b: np.ndarray, block: list) -> np.ndarray:
    """One Beta vector by the module docstring's recipe, one variate at a time in plain Python.

    ``block`` holds the generator's current block: ``[normals, uniforms, step]``, each block one
    ``standard_normal`` then one ``random`` call of shape ``(steps, 2 * n_arms, 2)``."""
    k = len(a)
    steps = draws.beta_block_steps(k)
    if block[2] >= steps:
        block[:] = [rng.standard_normal((steps, 2 * k, 2)), rng.random((steps, 2 * k, 2)), 0]
    x, u, p = block[0][block[2]], block[1][block[2]], block[2]
    block[2] = p + 1
    g = np.empty(2 * k)
    for j, s in enumerate(np.concatenate([a, b]).tolist()):
        d = (s + 1.0 if s < 1.0 else s) - 1.0 / 3.0
        c = 1.0 / math.sqrt(9.0 * d)
        for cand in range(2):
            xi, ui = float(x[j, cand]), float(u[j, cand])
            t = c * xi + 1.0
            if t <= 0.0:
                continue
            v = t * t * t
            if ui < 1.0 - 0.0331 * ((xi * xi) * (xi * xi)) or math.log(ui) < 0.5 * (xi * xi) + d * (1.0 - v + math.log(v)):
                g[j] = v * d
                break
        else:
            g[j] = draws._gamma_scalar(rng, d, c)
    small = np.flatnonzero(np.concatenate([a, b]) < 1.0)
    if len(small):
        shapes = np.concatenate([a, b])
        g[small] *= np.power(rng.random(len(small)), 1.0 / shapes[small])
    return g[:k] / (g[:k] + g[k:])


@pytest.mark.parametrize("n,k", [(1, 10), (6, 10), (64, 10), (40, 3)])
def test_beta_blocks_draw_the_documented_stream(n: int, k: int) -> None:
    """Single runs and batches (both code paths of ``sample``) against the recipe run variate by variate."""
    rng = np.random.default_rng(7 + n)
    a, b = rng.uniform(0.3, 4.0, (n, k)), rng.uniform(0.3, 4.0, (n, k))
    blocks = BetaBlocks([np.random.default_rng(s) for s in range(n)], k)
    assert blocks._whole == (n * 2 * k * draws.ATTEMPTS <= draws._WHOLE_STEP)
    blocks.set_shapes(a, b)
    ref_rngs = [np.random.default_rng(s) for s in range(n)]
    ref_blocks = [[None, None, draws.beta_block_steps(k)] for _ in range(n)]
    for step in range(2 * draws.beta_block_steps(k) + 5):  # two refills and a few steps
        got = blocks.sample()
        for i in range(n):
            np.testing.assert_array_equal(got[i], _reference_beta(ref_rngs[i], a[i], b[i], ref_blocks[i]), err_msg=f"generator {i}, step {step}")
        arms = rng.integers(0, k, n)
        na, nb = rng.uniform(0.3, 4.0, n), rng.uniform(0.3, 4.0, n)
        a[np.arange(n), arms], b[np.arange(n), arms] = na, nb
        blocks.set_arms(arms, na, nb)
    assert [r.bit_generator.state for r in ref_rngs] == [r.bit_generator.state for r in blocks.rngs]


def test_bad_shapes_are_refused() -> None:
    blocks = BetaBlocks([np.random.default_rng(0)], 2)
    with pytest.raises(ValueError, match="positive"):
        blocks.set_shapes(np.array([[1.0, 0.0]]), np.ones((1, 2)))
    with pytest.raises(ValueError, match="positive"):
        blocks.set_arm(0, 1, 1.0, -2.0)


def test_tie_picks_match_the_single_agents_indexing() -> None:
    rng = np.random.default_rng(5)
    eq = rng.random((500, 7)) < 0.5
    eq[np.arange(500), rng.integers(0, 7, 500)] = True  # every row has a maximum
    u = rng.random(500)
    got = pick_ties(eq, u)
    for row, uu, g in zip(eq, u, got):
        ties = np.flatnonzero(row)
        assert g == ties[int(uu * len(ties))]


def test_uniform_blocks_are_the_generators_stream() -> None:
    blocks = UniformBlocks([np.random.default_rng(s) for s in (3, 4)], block=8)
    first = [blocks.take(0) for _ in range(20)]
    assert first == np.random.default_rng(3).random(24)[:20].tolist()
    rows = np.array([1])
    got = np.concatenate([blocks.take_rows(rows) for _ in range(10)])
    np.testing.assert_array_equal(got, np.random.default_rng(4).random(16)[:10])


def test_argmax_ties_is_the_single_agents_choice() -> None:
    rng = np.random.default_rng(9)
    values = rng.integers(0, 3, (400, 5)).astype(np.float64)  # many ties
    values[7, 2] = np.nan
    values[8] = np.nan
    u = rng.random(400)
    got = draws.argmax_ties(values, u)
    for row, uu, g in zip(values, u, got):
        i = int(row.argmax())
        ties = np.flatnonzero(row == row[i])
        assert g == (i if len(ties) <= 1 else ties[int(uu * len(ties))])


def test_take_all_is_each_generators_stream() -> None:
    blocks = UniformBlocks([np.random.default_rng(s) for s in (3, 4, 5)], block=8)
    got = np.stack([blocks.take_all() for _ in range(20)], axis=1)
    for row, s in zip(got, (3, 4, 5)):
        np.testing.assert_array_equal(row, np.random.default_rng(s).random(24)[:20])


@pytest.mark.parametrize("high", [3, 1000])  # many ties / almost none (the path that leaves the uniforms unread)
def test_argmax_ties_lockstep_equals_argmax_ties_and_consumes_the_same_stream(high: int) -> None:
    rng = np.random.default_rng(11)
    seeds = list(range(30))
    lockstep = UniformBlocks([np.random.default_rng(s) for s in seeds], block=16)
    reference = UniformBlocks([np.random.default_rng(s) for s in seeds], block=16)
    index = np.arange(len(seeds))
    for step in range(60):  # several refills of the blocks
        values = rng.integers(0, high, (len(seeds), 6)).astype(np.float64)
        if step % 7 == 3:
            values[step % len(seeds)] = np.nan
        if step % 11 == 5:
            values[2, 4] = np.nan
        got = draws.argmax_ties_lockstep(values, lockstep, index if step % 2 else None)
        np.testing.assert_array_equal(got, draws.argmax_ties(values, reference.take_all()))
    np.testing.assert_array_equal(lockstep.take_all(), reference.take_all())


def test_log_of_is_numpys_log() -> None:
    ts = list(range(1, 5000)) + np.random.default_rng(2).integers(5000, 3_000_000, 300).tolist()
    assert [draws.log_of(t) for t in ts] == [float(np.log(t)) for t in ts]


def test_whole_step_log_test_draws_what_the_gathered_one_does() -> None:
    """A single run's BetaBlocks runs the log test on every candidate of a step; a batch's on the few that need it."""
    for seed in range(4):
        rng = np.random.default_rng(100 + seed)
        whole, gathered = BetaBlocks([np.random.default_rng(seed)], 7), BetaBlocks([np.random.default_rng(seed)], 7, whole=False)
        assert whole._whole and not gathered._whole
        a, b = rng.uniform(0.2, 30, (1, 7)), rng.uniform(0.2, 30, (1, 7))
        for blocks in (whole, gathered):
            blocks.set_shapes(a, b)
        for step in range(700):  # several refills
            np.testing.assert_array_equal(whole.sample(), gathered.sample())
            j, s1, s2 = step % 7, float(rng.uniform(0.3, 50)), float(rng.uniform(0.3, 50))
            whole.set_arm(0, j, s1, s2)
            gathered.set_arm(0, j, s1, s2)
