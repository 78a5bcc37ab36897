"""The fast action checks answer exactly what the spaces' own ``contains`` answers."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium import spaces

from icmlgym.envs.fastspaces import contains_fn

DISCRETE_VALUES = [
    0, 1, 9, 10, 11, -1, 3, True, False, 2**70, -(2**70), 3.0, 3.5, "3", None, [3],
    np.int64(3), np.int32(12), np.uint8(2), np.int64(-1), np.float64(3.0), np.array(3), np.array([3]), np.array(3.0),
]


@pytest.mark.parametrize("start", [0, 2, -3])
def test_discrete_matches_gymnasium(start: int) -> None:
    space = spaces.Discrete(10, start=start)
    fast = contains_fn(space)
    for v in DISCRETE_VALUES:
        try:
            expected = space.contains(v)
        except Exception as err:  # gymnasium raises for some inputs (e.g. ints past int64): so must we
            with pytest.raises(type(err)):
                fast(v)
            continue
        assert fast(v) == expected, (v, start)


def test_small_box_matches_gymnasium() -> None:
    space = spaces.Box(np.array([0.0, -1.0, 0.0]), np.array([1.0, 1.0, 2.0]), dtype=np.float32)
    fast = contains_fn(space)
    rng = np.random.default_rng(0)
    values = [space.sample() for _ in range(50)]
    values += [rng.uniform(-2, 3, size=3).astype(np.float32) for _ in range(50)]
    values += [
        np.array([np.nan, 0, 0], dtype=np.float32), np.array([0.5, 0, 0]), np.array([0.5, 0], dtype=np.float32),
        np.zeros((1, 3), dtype=np.float32), [0.5, 0.0, 1.0], np.array([1, 0, 2], dtype=np.int64), np.float32(0.5),
        np.array([1.0, 1.0, 2.0], dtype=np.float32), np.array([1.0000001, 0, 0], dtype=np.float32),
    ]
    for v in values:
        assert fast(v) == space.contains(v), v


def test_other_spaces_use_their_own_check() -> None:
    big = spaces.Box(0, 1, shape=(100,))
    md = spaces.MultiDiscrete(np.full(100, 3))
    assert contains_fn(big) == big.contains
    assert contains_fn(md) == md.contains


@pytest.mark.parametrize("start", [None, [0, -2, 5]])
def test_small_multidiscrete_matches_gymnasium(start) -> None:
    space = spaces.MultiDiscrete([3, 7, 4], start=start)
    fast = contains_fn(space)
    rng = np.random.default_rng(0)
    lo = np.zeros(3, dtype=np.int64) if start is None else np.array(start)
    values = [space.sample() for _ in range(50)]
    values += [rng.integers(lo - 2, lo + 9, size=3) for _ in range(100)]
    values += [
        np.array([0, 0, 0], dtype=np.int32), np.array([0, 0, 0], dtype=np.uint8), np.array([0.0, 1.0, 2.0]),
        np.array([0, 1]), np.zeros((1, 3), dtype=np.int64), [0, 1, 2], (2, 6, 3), np.array([2**62, 0, 0]),
        np.array([-(2**62), 0, 0]), np.array([np.nan, 0, 0]), np.array(["0", "1", "2"]), 3, None,
    ]
    for v in values:
        assert fast(v) == space.contains(v), (v, start)
