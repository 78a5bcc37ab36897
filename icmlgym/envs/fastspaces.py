"""Action-space membership at the cost the check must have, for envs whose step takes microseconds.

``gymnasium.spaces.Discrete.contains`` converts every action to ``np.int64`` and
compares numpy scalars (5-7 us per call, more than a whole Bernoulli bandit
step), and ``Box.contains`` builds arrays for its bound checks. :func:`contains_fn`
returns a function with exactly the space's ``contains`` answer: a fast path
accepts the common valid cases (a Python or numpy integer inside a ``Discrete``'s
range; a small array of the Box's own dtype and shape inside its bounds; an integer
array of a small ``MultiDiscrete``'s dtype and shape inside its ranges) and anything else (out of range, wrong type or shape, NaN, huge integers) goes to the
space's own ``contains``. The fast path only ever answers True where the space
would, so an env's accepted actions and its ``ValueError`` messages are unchanged.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np
from gymnasium import spaces

_SMALL_BOX = 16  # elements; larger arrays are checked faster by numpy itself
_NP_INTS = frozenset(
    {np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.intc, np.uintc, np.longlong, np.ulonglong}
)


def _discrete(space: spaces.Discrete) -> Callable[[Any], bool]:
    lo = int(space.start)
    hi = lo + int(space.n)
    slow = space.contains
    np_ints = _NP_INTS

    def contains(x: Any) -> bool:
        t = type(x)
        if (t is int or t in np_ints) and lo <= x < hi:
            return True
        return slow(x)

    return contains


def _small_array(space: spaces.Box | spaces.MultiDiscrete, low: np.ndarray, high: np.ndarray) -> Callable[[Any], bool]:
    """A small array of the space's own dtype and shape, every element within ``[low, high]``."""
    dtype = space.dtype
    shape = space.shape
    pairs = list(zip(np.broadcast_to(low, shape).ravel().tolist(), np.broadcast_to(high, shape).ravel().tolist()))
    slow = space.contains

    def contains(x: Any) -> bool:
        if type(x) is np.ndarray and x.dtype == dtype and x.shape == shape:
            # Python comparisons are False for NaN, exactly as numpy's are
            if all(lo <= v <= hi for v, (lo, hi) in zip(x.ravel().tolist(), pairs)):
                return True
        return slow(x)

    return contains


def contains_fn(space: spaces.Space) -> Callable[[Any], bool]:
    """A function answering ``space.contains(x)``, with a fast path for ``Discrete``, small ``Box`` and small ``MultiDiscrete`` spaces.

    Build it once (in the env's ``__init__``), call it per step. Other spaces get
    their own ``contains`` back unchanged."""
    if type(space) is spaces.Discrete:
        return _discrete(space)
    if type(space) is spaces.Box and int(np.prod(space.shape)) <= _SMALL_BOX:
        return _small_array(space, space.low, space.high)
    if type(space) is spaces.MultiDiscrete and int(np.prod(space.shape)) <= _SMALL_BOX:
        start = np.broadcast_to(space.start, space.shape)
        return _small_array(space, start, start + (space.nvec - 1))
    return space.contains


__all__ = ["contains_fn"]
