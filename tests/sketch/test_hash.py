"""The sketches' secret hash: the vectorised paths equal the scalar one, and the priorities behave as
independent uniforms (what Bernoulli and threshold sampling assume), on adversarially simple keys too."""

from __future__ import annotations

import numpy as np
from scipy import stats

from icmlgym.envs.sketch.sketches import hash_below, hash_unit, hash_unit_array

N = 200_000


def test_vectorised_hash_equals_the_scalar_hash_across_chunks() -> None:
    rng = np.random.default_rng(0)
    keys = np.concatenate([rng.integers(-(2**62), 2**62, 70_000, dtype=np.int64), np.arange(-5, 5)])
    u = hash_unit_array(keys, 12345)
    idx = rng.choice(len(keys), 300, replace=False)
    assert all(u[i] == hash_unit(int(keys[i]), 12345) for i in idx)
    for p in (0.0, 1e-6, 0.01, 0.3, 0.999999, 1.0):
        assert np.array_equal(hash_below(keys, 12345, p), u < p)
    assert np.array_equal(hash_unit_array(keys.astype(np.int32), 3), hash_unit_array(keys.astype(np.int32).astype(np.int64), 3))


def test_priorities_of_sequential_keys_are_uniform() -> None:
    # consecutive integers are the easiest keys to get wrong (a weak multiplicative hash stripes them)
    u = hash_unit_array(np.arange(N), salt=7)
    assert stats.kstest(u, "uniform").pvalue > 1e-3
    counts = np.bincount((u * 256).astype(int), minlength=256)
    assert stats.chisquare(counts).pvalue > 1e-3
    # low bits and high bits alike: the sampling decision at small rates is as often right as expected
    for p in (0.001, 0.01, 0.1):
        rate = hash_below(np.arange(N), 7, p).mean()
        assert abs(rate - p) < 5 * np.sqrt(p * (1 - p) / N), (p, rate)


def test_neighbouring_keys_and_salts_are_uncorrelated() -> None:
    keys = np.arange(N)
    u = hash_unit_array(keys, 7)
    lag1 = stats.pearsonr(u[:-1], u[1:])
    assert abs(lag1.statistic) < 5 / np.sqrt(N)
    v = hash_unit_array(keys, 8)  # another salt: an independent sample
    assert abs(stats.pearsonr(u, v).statistic) < 5 / np.sqrt(N)
    both = np.mean((u < 0.1) & (v < 0.1))
    assert abs(both - 0.01) < 5 * np.sqrt(0.01 * 0.99 / N)


def test_keys_differing_in_one_bit_get_unrelated_priorities() -> None:
    # avalanche: flipping any single input bit flips about half of the 53 output bits
    keys = np.random.default_rng(1).integers(0, 2**62, 2000, dtype=np.int64)
    base = (hash_unit_array(keys, 3) * 2.0**53).astype(np.uint64)
    for bit in (0, 1, 17, 40, 62):
        flipped = (hash_unit_array(keys ^ np.int64(1 << bit), 3) * 2.0**53).astype(np.uint64)
        changed = np.array([bin(int(x)).count("1") for x in base ^ flipped])
        assert 24 < changed.mean() < 29, (bit, changed.mean())
