"""Sketches for resettable streams behind one interface, and the Binary Tree Mechanism.

A resettable stream over integer keys applies two operations to a nonnegative
vector ``v``: ``update(key, delta)`` (``v[key] += delta``, ``delta >= 1`` an
integer) and ``reset(key)`` (``v[key] = 0``). A sketch estimates
``F = sum_x f(v[x])`` for one of three statistics:

- ``"cardinality"``: ``f(v) = 1[v > 0]`` (number of nonzero keys, L_0),
- ``"sum"``: ``f(v) = v`` (L_1),
- ``"lp"``: ``f(v) = v**q`` for ``q`` in (0, 1) (the L_q moment).

Every sketch has ``update``, ``reset``, ``estimate``, ``space_words`` and a
batched numpy path ``update_many(keys, deltas)``. ``space_words`` counts
machine words of state that grows with the input (a held key with its counter
is 2 words, a tree node 2 words, a linear-sketch row 1 word); constant-size
parameters are not counted.

Defenders (see ``DEFENDERS``):

- ``exact``: the reference, a dict of all nonzero keys (unbounded space).
- ``bernoulli``: key sampling at rate ``p`` with a secret hash (fixed randomness).
- ``bottomk``: threshold sampling that keeps the ``k`` smallest hash priorities
  (the Theta/KMV rule, with the threshold never rising after resets).
- ``sample-hold``: sample-and-hold with fresh randomness per unit of increment
  (memoryless, so a reset key's next incarnation is sampled afresh), unbiased
  for any ``f`` with the estimator ``g(c) = f(c) + (1-p)/p * (f(c) - f(c-1))``.
- ``switching``: sketch switching (Ben-Eliezer et al. 2020) over ``r`` Bernoulli copies.
- ``dp-median``: a differentially private median of ``r`` Bernoulli copies
  (Hassidim et al. 2020), exponential mechanism on a geometric grid, fresh per query.
- ``dp-tree``: the paper's construction as we implement it: the sample-and-hold
  sampler whose estimate is only ever published through the Binary Tree
  Mechanism for continual observation (Dwork et al. 2010; Chan et al. 2011).
- ``linear``: a linear (CountSketch-style) stable-projection sketch (Indyk 2006)
  with the median estimator, for ``sum`` and ``lp``; resets are applied as
  ``-v[key]``, the value being supplied by the system that resets.
- ``theta``: Apache DataSketches' Theta sketch (insert-only cardinality); it has
  no per-key reset, so resets are counted and ignored.
"""

from __future__ import annotations

import functools
import math
from abc import ABC, abstractmethod
from typing import Any, Callable

import numpy as np

STATISTICS: tuple[str, ...] = ("cardinality", "sum", "lp")

_MASK = (1 << 64) - 1
_U64 = np.uint64


def check_statistic(statistic: str, q: float) -> None:
    """Raise ``ValueError`` for an unknown statistic or a ``q`` outside (0, 1)."""
    if statistic not in STATISTICS:
        raise ValueError(f"statistic must be one of {STATISTICS}, got {statistic!r}")
    if statistic == "lp" and not (0.0 < float(q) < 1.0):
        raise ValueError(f"lp needs q in (0, 1), got q={q!r}")


def stat_fn(statistic: str, q: float = 0.5) -> Callable[[np.ndarray | float], Any]:
    """The per-key function ``f`` of a statistic (vectorised over numpy arrays)."""
    check_statistic(statistic, q)
    if statistic == "cardinality":
        return lambda v: (np.asarray(v) > 0).astype(np.float64) if np.ndim(v) else float(v > 0)
    if statistic == "sum":
        return lambda v: np.asarray(v, dtype=np.float64) if np.ndim(v) else float(v)
    qq = float(q)
    return lambda v: np.power(np.asarray(v, dtype=np.float64), qq) if np.ndim(v) else float(v) ** qq


# ---------------------------------------------------------------- hashing


def _splitmix64(x: int) -> int:
    x = (x + 0x9E3779B97F4A7C15) & _MASK
    x = ((x ^ (x >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    x = ((x ^ (x >> 27)) * 0x94D049BB133111EB) & _MASK
    return x ^ (x >> 31)


def hash_unit(key: int, salt: int) -> float:
    """A secret uniform in [0, 1) for ``key``: splitmix64 of ``key`` xor a salted seed."""
    return (_splitmix64((int(key) & _MASK) ^ _splitmix64(salt)) >> 11) * (1.0 / (1 << 53))


_CHUNK = 1 << 15  # keys hashed per pass: the temporaries stay in cache, which halves the time of a large batch


def _splitmix64_bits(keys: np.ndarray, salt: int) -> np.ndarray:
    """``splitmix64(key ^ splitmix64(salt)) >> 11`` (53 bits) of a chunk of int64 keys, computed in place."""
    x = keys.view(np.uint64) ^ _U64(_splitmix64(salt))  # the one new array; every later step writes into it
    t = np.empty_like(x)
    with np.errstate(over="ignore"):
        x += _U64(0x9E3779B97F4A7C15)
        np.right_shift(x, _U64(30), out=t)
        x ^= t
        x *= _U64(0xBF58476D1CE4E5B9)
        np.right_shift(x, _U64(27), out=t)
        x ^= t
        x *= _U64(0x94D049BB133111EB)
        np.right_shift(x, _U64(31), out=t)
        x ^= t
    x >>= _U64(11)
    return x


def _as_int64(keys: Any) -> np.ndarray:
    return np.ascontiguousarray(np.asarray(keys).astype(np.int64, copy=False))


def hash_unit_array(keys: np.ndarray, salt: int) -> np.ndarray:
    """Vectorised :func:`hash_unit` (identical values), in cache-sized chunks."""
    k = _as_int64(keys)
    out = np.empty(k.shape, dtype=np.float64)
    flat_k, flat_out = k.reshape(-1), out.reshape(-1)
    for s in range(0, len(flat_k), _CHUNK):
        np.multiply(_splitmix64_bits(flat_k[s : s + _CHUNK], salt), 1.0 / (1 << 53), out=flat_out[s : s + _CHUNK])
    return out


def hash_below(keys: np.ndarray, salt: int, p: float) -> np.ndarray:
    """``hash_unit_array(keys, salt) < p`` without the float array: ``u = m / 2^53 < p`` iff ``m < p * 2^53``
    (both sides exact in float64, since ``m < 2^53`` and ``p * 2^53`` only shifts ``p``'s exponent)."""
    k = _as_int64(keys).reshape(-1)
    out = np.empty(len(k), dtype=bool)
    bound = float(p) * float(1 << 53)
    for s in range(0, len(k), _CHUNK):
        np.less(_splitmix64_bits(k[s : s + _CHUNK], salt), bound, out=out[s : s + _CHUNK])
    return out


def _check_delta(delta: Any) -> int:
    d = int(delta)
    if d != delta or d < 1:
        raise ValueError(f"delta must be a positive integer (values only grow between resets), got {delta!r}")
    return d


def _check_batch(keys: Any, deltas: Any, unit_ok: bool = False) -> tuple[np.ndarray, np.ndarray | None]:
    """Validated ``(keys, deltas)`` as int64 arrays (no copy when they already are); with ``unit_ok``
    and no ``deltas``, deltas come back as None (all ones) instead of an allocated array."""
    k = np.asarray(keys)
    if k.ndim != 1 or not np.issubdtype(k.dtype, np.integer):
        raise ValueError(f"keys must be a 1-d integer array, got dtype {k.dtype} and shape {k.shape}")
    if deltas is None and unit_ok:
        return k.astype(np.int64, copy=False), None
    d = np.ones(len(k), dtype=np.int64) if deltas is None else np.asarray(deltas)
    if d.shape != k.shape:
        raise ValueError(f"deltas must have the shape of keys {k.shape}, got {d.shape}")
    if len(d) and (not np.issubdtype(d.dtype, np.integer) or d.min() < 1):
        raise ValueError("deltas must be positive integers")
    return k.astype(np.int64, copy=False), d.astype(np.int64, copy=False)


# ---------------------------------------------------------------- interface


class ResettableSketch(ABC):
    """The interface of every sketch of a resettable stream.

    Args:
        statistic: ``"cardinality"``, ``"sum"`` or ``"lp"``.
        q: the exponent of ``lp`` (ignored otherwise).
    """

    name: str = ""
    supports_reset: bool = True

    def __init__(self, statistic: str = "cardinality", q: float = 0.5) -> None:
        check_statistic(statistic, q)
        self.statistic = statistic
        self.q = float(q)
        self.f = stat_fn(statistic, q)

    @abstractmethod
    def update(self, key: int, delta: int = 1) -> None:
        """Add ``delta`` (a positive integer) to the value of ``key``."""

    @abstractmethod
    def reset(self, key: int, value: float | None = None) -> None:
        """Set the value of ``key`` to zero. ``value`` (its value before the reset) is needed
        only by linear sketches, which must subtract it."""

    @abstractmethod
    def estimate(self) -> float:
        """The published estimate of ``F``."""

    @abstractmethod
    def space_words(self) -> int:
        """Words of input-dependent state held now."""

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        """Apply ``update(keys[i], deltas[i])`` in order (subclasses vectorise)."""
        k, d = _check_batch(keys, deltas)
        for key, delta in zip(k.tolist(), d.tolist()):
            self.update(key, delta)

    def params(self) -> dict[str, Any]:
        """The space and privacy parameters of this instance (for records and docs)."""
        return {"statistic": self.statistic, "q": self.q}

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.params().items())
        return f"{type(self).__name__}({inner})"


class ExactSketch(ResettableSketch):
    """The exact vector of nonzero keys: the reference, with unbounded space."""

    name = "exact"

    def __init__(self, statistic: str = "cardinality", q: float = 0.5) -> None:
        super().__init__(statistic, q)
        self.values: dict[int, int] = {}
        self._total = 0.0

    def update(self, key: int, delta: int = 1) -> None:
        d = _check_delta(delta)
        old = self.values.get(key, 0)
        new = old + d
        self.values[key] = new
        self._total += self.f(new) - self.f(old)

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        k, d = _check_batch(keys, deltas)
        if not len(k):
            return
        uk, inv = np.unique(k, return_inverse=True)
        sums = np.bincount(inv, weights=d).astype(np.int64)
        values = self.values
        old = np.fromiter((values.get(x, 0) for x in uk.tolist()), dtype=np.int64, count=len(uk))
        new = old + sums
        values.update(zip(uk.tolist(), new.tolist()))
        self._total += float(np.sum(self.f(new) - self.f(old)))

    def reset(self, key: int, value: float | None = None) -> None:
        old = self.values.pop(key, 0)
        self._total -= self.f(old)

    def value(self, key: int) -> int:
        return self.values.get(key, 0)

    def estimate(self) -> float:
        return float(self._total)

    def exact_total(self) -> float:
        if not self.values:
            return 0.0
        return float(np.sum(self.f(np.fromiter(self.values.values(), dtype=np.float64))))

    def space_words(self) -> int:
        return 2 * len(self.values)


class BernoulliSketch(ResettableSketch):
    """Bernoulli key sampling with fixed (hashed) randomness.

    A key is held, with its exact value, iff its secret priority ``u(key) < p``;
    the estimate ``sum_{held} f(v)/p`` is unbiased on any oblivious stream, and a
    reset removes the key exactly. The priorities are fixed for the sketch's
    life, which is what an adaptive adversary learns and exploits.

    Args:
        p: sampling rate in (0, 1].
        seed: the secret salt of the hash.
    """

    name = "bernoulli"

    def __init__(self, statistic: str = "cardinality", q: float = 0.5, p: float = 0.1, seed: int = 0) -> None:
        super().__init__(statistic, q)
        if not (0.0 < float(p) <= 1.0):
            raise ValueError(f"sampling rate p must be in (0, 1], got {p!r}")
        self.p = float(p)
        self.salt = int(seed)
        self.held: dict[int, int] = {}
        self._total = 0.0  # sum over held keys of f(v)

    def is_sampled(self, key: int) -> bool:
        return hash_unit(key, self.salt) < self.p

    def update(self, key: int, delta: int = 1) -> None:
        d = _check_delta(delta)
        old = self.held.get(key)
        if old is None:
            if hash_unit(key, self.salt) >= self.p:
                return
            old = 0
        self.held[key] = old + d
        self._total += self.f(old + d) - self.f(old)

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        k, d = _check_batch(keys, deltas, unit_ok=True)
        mask = hash_below(k, self.salt, self.p)
        if not mask.any():
            return
        if d is None:  # unit increments: a key's sum is its count
            uk, sums = np.unique(k[mask], return_counts=True)
            sums = sums.astype(np.int64, copy=False)
        else:
            uk, inv = np.unique(k[mask], return_inverse=True)
            sums = np.bincount(inv, weights=d[mask]).astype(np.int64)
        held, f = self.held, self.f
        old = np.fromiter((held.get(x, 0) for x in uk.tolist()), dtype=np.int64, count=len(uk))
        new = old + sums
        held.update(zip(uk.tolist(), new.tolist()))
        self._total += float(np.sum(f(new) - f(old)))

    def reset(self, key: int, value: float | None = None) -> None:
        old = self.held.pop(key, None)
        if old is not None:
            self._total -= self.f(old)

    def estimate(self) -> float:
        return self._total / self.p

    def space_words(self) -> int:
        return 2 * len(self.held)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "p": self.p}


class BottomKSketch(ResettableSketch):
    """Bottom-k (Theta/KMV-style) threshold sampling with fixed hashed priorities.

    Holds the keys with priority below a threshold ``theta``; when more than
    ``2k`` are held, ``theta`` drops to the ``(k+1)``-th smallest priority and
    the keys at or above it are evicted (the rebuild amortisation of Theta
    sketches: between rebuilds the sample is still every key below ``theta``). ``theta`` never rises: a reset frees a
    slot that only a later key below ``theta`` can fill (keys evicted earlier
    cannot be recovered). Estimate: ``sum_{held} f(v) / theta``.

    Args:
        k: the nominal sample size (at most ``2k`` keys are held).
        seed: the secret salt of the hash.
    """

    name = "bottomk"

    def __init__(self, statistic: str = "cardinality", q: float = 0.5, k: int = 64, seed: int = 0) -> None:
        super().__init__(statistic, q)
        if int(k) < 1:
            raise ValueError(f"k must be a positive integer, got {k!r}")
        self.k = int(k)
        self.salt = int(seed)
        self.theta = 1.0
        self.held: dict[int, list] = {}  # key -> [priority, value]
        self._total = 0.0

    def update(self, key: int, delta: int = 1) -> None:
        self._update(key, _check_delta(delta), None)

    def _update(self, key: int, d: int, u: float | None) -> None:
        entry = self.held.get(key)
        if entry is None:
            if u is None:
                u = hash_unit(key, self.salt)
            if u >= self.theta:
                return
            entry = self.held[key] = [u, 0]
        old = entry[1]
        entry[1] = old + d
        self._total += self.f(old + d) - self.f(old)
        if len(self.held) > 2 * self.k:
            self._shrink()

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        # theta only falls, so a key at or above the current theta can never enter during the batch
        k, d = _check_batch(keys, deltas)
        u = hash_unit_array(k, self.salt)
        cand = np.flatnonzero(u < self.theta)
        for key, delta, ui in zip(k[cand].tolist(), d[cand].tolist(), u[cand].tolist()):
            self._update(key, delta, ui)

    def _shrink(self) -> None:
        pr = sorted(e[0] for e in self.held.values())
        self.theta = pr[self.k]
        for key in [x for x, e in self.held.items() if e[0] >= self.theta]:
            self._total -= self.f(self.held.pop(key)[1])

    def reset(self, key: int, value: float | None = None) -> None:
        entry = self.held.pop(key, None)
        if entry is not None:
            self._total -= self.f(entry[1])

    def estimate(self) -> float:
        return self._total / self.theta

    def space_words(self) -> int:
        return 3 * len(self.held) + 1  # key, priority, value per entry; theta

    def params(self) -> dict[str, Any]:
        return {**super().params(), "k": self.k}


class SampleHoldSketch(ResettableSketch):
    """Sample-and-hold with fresh randomness per unit of increment.

    Each unit added to a key that is not held starts holding it with
    probability ``p``; a held key counts every later unit exactly (``c``). The
    estimate ``sum_{held} g(c)``, ``g(c) = f(c) + (1-p)/p * (f(c) - f(c-1))``, is
    unbiased for any ``f`` with ``f(0) = 0`` (proof: condition on the unit at
    which the key was first held; the geometric law telescopes). Because the
    holding law is memoryless, a reset that drops a held key (and forgets
    nothing for a key not held) leaves the next incarnation of the key sampled
    afresh, independently of everything published before: the property the DP
    protection of :class:`DPTreeSketch` relies on.

    Args:
        p: the per-unit holding probability in (0, 1].
        seed: seeds the sketch's private random generator.
    """

    name = "sample-hold"

    def __init__(self, statistic: str = "cardinality", q: float = 0.5, p: float = 0.1, seed: int = 0) -> None:
        super().__init__(statistic, q)
        if not (0.0 < float(p) <= 1.0):
            raise ValueError(f"sampling rate p must be in (0, 1], got {p!r}")
        self.p = float(p)
        self.rng = np.random.default_rng(seed)
        self.held: dict[int, int] = {}
        self._total = 0.0
        self._corr = (1.0 - self.p) / self.p

    def g(self, c: Any) -> Any:
        """The unbiased per-key estimator of ``f(v)`` from the held count ``c >= 1``."""
        f = self.f
        if np.ndim(c):
            c = np.asarray(c, dtype=np.float64)
            return f(c) + self._corr * (f(c) - f(c - 1))
        return f(c) + self._corr * (f(c) - f(c - 1))

    def _change(self, key: int, d: int) -> float:
        """Apply an update and return the change of the estimate."""
        c = self.held.get(key)
        if c is None:
            j = int(self.rng.geometric(self.p))  # the unit (1-based) at which holding starts
            if j > d:
                return 0.0
            new = d - j + 1
            self.held[key] = new
            x = self.g(new)
        else:
            self.held[key] = c + d
            x = self.g(c + d) - self.g(c)
        self._total += x
        return x

    def update(self, key: int, delta: int = 1) -> None:
        self._change(key, _check_delta(delta))

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        # Per key, the batch's units arrive consecutively as far as this key is concerned, and
        # holding is memoryless, so one geometric draw per key not yet held has the sequential law.
        k, d = _check_batch(keys, deltas)
        if not len(k):
            return
        uk, inv = np.unique(k, return_inverse=True)
        sums = np.bincount(inv, weights=d).astype(np.int64)
        held = self.held
        old = np.fromiter((held.get(x, 0) for x in uk.tolist()), dtype=np.int64, count=len(uk))
        was = old > 0
        new = old + sums
        fresh = ~was
        j = self.rng.geometric(self.p, size=int(fresh.sum()))
        start = sums[fresh] - j + 1
        new_fresh = np.where(start >= 1, start, 0)
        new[fresh] = new_fresh
        keep = new > 0
        held.update(zip(uk[keep].tolist(), new[keep].tolist()))
        gain = np.zeros(len(uk))
        if was.any():
            gain[was] = self.g(new[was]) - self.g(old[was])
        nf = new[fresh]
        if len(nf):
            gf = np.zeros(len(nf))
            pos = nf > 0
            if pos.any():
                gf[pos] = self.g(nf[pos])
            gain[fresh] = gf
        self._total += float(gain.sum())

    def _changes_many(self, k: np.ndarray, d: np.ndarray) -> np.ndarray:
        """Apply a batch of updates and return the change of the estimate at each one, in order.

        A key not held at the start of the batch draws one geometric holding unit over all its
        units in the batch (memoryless, so this is the sequential law)."""
        n = len(k)
        if n == 0:
            return np.zeros(0)
        order = np.argsort(k, kind="stable")
        ks, ds = k[order], d[order]
        first = np.ones(n, dtype=bool)
        first[1:] = ks[1:] != ks[:-1]
        gid = np.cumsum(first) - 1
        uk = ks[first]
        csum = np.cumsum(ds)
        base = (csum - ds)[first]  # units before each group
        cum = csum - base[gid]  # units of this key up to and including each update
        held = self.held
        c0 = np.fromiter((held.get(x, 0) for x in uk.tolist()), dtype=np.int64, count=len(uk))
        fresh = c0 == 0
        j = np.empty(len(uk), dtype=np.int64)
        j[~fresh] = 1 - c0[~fresh]  # already held: count from c0
        j[fresh] = self.rng.geometric(self.p, size=int(fresh.sum()))
        after = np.maximum(cum - j[gid] + 1, 0)
        before = np.maximum(cum - ds - j[gid] + 1, 0)

        def G(c: np.ndarray) -> np.ndarray:
            out = np.zeros(len(c))
            pos = c > 0
            if pos.any():
                out[pos] = self.g(c[pos])
            return out

        change_sorted = G(after) - G(before)
        last = np.ones(n, dtype=bool)
        last[:-1] = ks[1:] != ks[:-1]
        final = after[last]
        keep = final > 0
        held.update(zip(uk[keep].tolist(), final[keep].tolist()))
        changes = np.empty(n)
        changes[order] = change_sorted
        self._total += float(change_sorted.sum())
        return changes

    def _reset_change(self, key: int) -> float:
        c = self.held.pop(key, None)
        x = 0.0 if c is None else -self.g(c)
        self._total += x
        return x

    def reset(self, key: int, value: float | None = None) -> None:
        self._reset_change(key)

    def estimate(self) -> float:
        return float(self._total)

    def space_words(self) -> int:
        return 2 * len(self.held)

    def params(self) -> dict[str, Any]:
        return {**super().params(), "p": self.p}


class BinaryTreeMechanism:
    """Continual counting with the Binary Tree Mechanism (Dwork et al. 2010; Chan et al. 2011).

    Feeds a stream ``x_1, x_2, ...`` and releases every prefix sum. Each dyadic
    node ``[j 2^i + 1, (j+1) 2^i]`` gets Laplace noise of scale ``b`` once, when it
    closes; the prefix at ``t`` is the sum of at most ``levels`` noisy nodes (the
    binary digits of ``t``). With ``b = sensitivity * levels / epsilon``, where
    ``levels = ceil(log2(horizon + 1))``, the released sequence is
    ``epsilon``-differentially private with respect to a change of total L1 size
    ``sensitivity`` anywhere in the first ``horizon`` inputs, and each prefix has
    error ``O(sensitivity * levels**1.5 / epsilon)``. Space: two words per level.

    Args:
        horizon: the stream length the privacy is calibrated for.
        epsilon: the privacy parameter.
        sensitivity: the L1 influence of one protected secret on the stream.
        rng: the generator of the noise.
    """

    def __init__(self, horizon: int, epsilon: float, sensitivity: float, rng: np.random.Generator) -> None:
        if int(horizon) < 1:
            raise ValueError(f"horizon must be a positive integer, got {horizon!r}")
        if not (float(epsilon) > 0 and math.isfinite(float(epsilon))):
            raise ValueError(f"epsilon must be positive and finite, got {epsilon!r}")
        if not float(sensitivity) > 0:
            raise ValueError(f"sensitivity must be positive, got {sensitivity!r}")
        self.horizon = int(horizon)
        self.epsilon = float(epsilon)
        self.sensitivity = float(sensitivity)
        self.levels = max(1, math.ceil(math.log2(self.horizon + 1)))
        self.scale = self.sensitivity * self.levels / self.epsilon
        self.rng = rng
        self.t = 0
        self.alpha = [0.0] * (self.levels + 1)  # exact partial sums of open / closed nodes per level
        self.noisy = [0.0] * (self.levels + 1)
        self._prefix = 0.0

    def add(self, x: float) -> float:
        """Feed one input and return the noisy prefix sum after it."""
        self.t += 1
        t = self.t
        i = (t & -t).bit_length() - 1  # the node that closes at t sits at the level of t's lowest set bit
        if i >= len(self.alpha):
            self.alpha.extend([0.0] * (i + 1 - len(self.alpha)))
            self.noisy.extend([0.0] * (i + 1 - len(self.noisy)))
        self.alpha[i] = sum(self.alpha[:i]) + float(x)
        for j in range(i):
            self.alpha[j] = 0.0
            self.noisy[j] = 0.0
        self.noisy[i] = self.alpha[i] + float(self.rng.laplace(0.0, self.scale))
        self._prefix = sum(self.noisy[j] for j in range(len(self.noisy)) if (t >> j) & 1)
        return self._prefix

    def add_many(self, xs: np.ndarray) -> float:
        """Feed a batch of inputs (as many :meth:`add` calls, same noise draws) and return the
        noisy prefix sum after the last one. Vectorised: the node closing at each time ``t`` of
        the batch is a difference of exact prefix sums, or, when it starts before the batch,
        the batch's part plus the closed nodes of the current time below its level."""
        xs = np.asarray(xs, dtype=np.float64)
        n = len(xs)
        if n == 0:
            return self._prefix
        t0 = self.t
        t = np.arange(t0 + 1, t0 + n + 1, dtype=np.int64)
        level = np.zeros(n, dtype=np.int64)
        low = t & -t
        level = np.log2(low).astype(np.int64)  # exact: low is a power of two
        top = int(level.max())
        if top >= len(self.alpha):
            self.alpha.extend([0.0] * (top + 1 - len(self.alpha)))
            self.noisy.extend([0.0] * (top + 1 - len(self.noisy)))
        cum = np.concatenate([[0.0], np.cumsum(xs)])  # exact sums of the batch: cum[t - t0]
        start = t - low  # the node closing at t covers (start, t]
        inside = start >= t0
        node = np.empty(n)
        node[inside] = cum[(t - t0)[inside]] - cum[(start - t0)[inside]]
        if (~inside).any():
            # (start, t0] is the union of t0's closed nodes at the levels below the node's level
            below = np.zeros(top + 2)
            acc = 0.0
            for j in range(top + 1):
                below[j] = acc
                if j < len(self.alpha) and (t0 >> j) & 1:
                    acc += self.alpha[j]
            below[top + 1] = acc
            node[~inside] = cum[(t - t0)[~inside]] + below[level[~inside]]
        noisy = node + self.rng.laplace(0.0, self.scale, size=n)
        t1 = t0 + n
        # the nodes of t1's decomposition: level j (bit j of t1 set) closes at (t1 >> j << j)
        for j in range(len(self.alpha)):
            if (t1 >> j) & 1:
                e = (t1 >> j) << j
                if e > t0:
                    self.alpha[j] = float(node[e - t0 - 1])
                    self.noisy[j] = float(noisy[e - t0 - 1])
            else:
                self.alpha[j] = 0.0
                self.noisy[j] = 0.0
        self.t = t1
        self._prefix = sum(self.noisy[j] for j in range(len(self.noisy)) if (t1 >> j) & 1)
        return self._prefix

    @property
    def value(self) -> float:
        return self._prefix

    def space_words(self) -> int:
        return 2 * len(self.alpha)

    def error_std(self) -> float:
        """The standard deviation of a prefix's noise in the worst case (all levels set)."""
        return math.sqrt(2.0 * self.levels) * self.scale


class DPTreeSketch(ResettableSketch):
    """The paper's construction as implemented here: a sampling sketch whose internal randomness
    is protected by differential privacy through the Binary Tree Mechanism.

    The sampler is :class:`SampleHoldSketch` (fresh coins per unit, so each coin
    governs a single incarnation of one key). Every update or reset changes the
    sampler's unbiased estimate by some ``x_t``; the stream ``x_1, x_2, ...`` is
    fed to a :class:`BinaryTreeMechanism` and the only thing ever published is
    its noisy prefix sum, i.e. the estimate plus tree noise (clamped at 0, a
    post-processing). A coin's whole influence on that stream is its key's
    contribution from the moment it is held until it is reset, bounded by
    ``sensitivity`` (default: the largest per-update change for cardinality,
    ``2/p``; for sum and lp, ``2 g(max_delta)``); keys whose held value grows
    past that bound get the weaker protection of group privacy. Queries between
    two updates return the same value, so repeating them reveals nothing new.

    Simplifications (see docs/sketch.md): a fixed sampling rate set from the
    space budget instead of the paper's rate that adapts to the prefix maximum,
    and one tree over the estimate instead of separate trees per count.

    Args:
        p: the per-unit sampling rate.
        epsilon_dp: the privacy parameter of the tree.
        horizon: the stream length (updates and resets) the tree is calibrated for.
        max_delta: the largest single increment expected (sets the default sensitivity).
        sensitivity: overrides the default sensitivity.
        seed: seeds the sampler's coins and the tree's noise (separate streams).
    """

    name = "dp-tree"

    def __init__(
        self,
        statistic: str = "cardinality",
        q: float = 0.5,
        p: float = 0.5,
        epsilon_dp: float = 8.0,
        horizon: int = 1024,
        max_delta: int = 1,
        sensitivity: float | None = None,
        seed: int = 0,
    ) -> None:
        super().__init__(statistic, q)
        ss = np.random.SeedSequence(int(seed) & 0xFFFFFFFF)
        coin_seed, noise_seed = ss.spawn(2)
        self.sampler = SampleHoldSketch(statistic, q, p=p, seed=int(coin_seed.generate_state(1)[0]))
        self.p = self.sampler.p
        if int(max_delta) < 1:
            raise ValueError(f"max_delta must be a positive integer, got {max_delta!r}")
        self.max_delta = int(max_delta)
        if sensitivity is None:
            sensitivity = 2.0 * float(self.sampler.g(self.max_delta)) if statistic != "cardinality" else 2.0 / self.p
        self.tree = BinaryTreeMechanism(horizon, epsilon_dp, sensitivity, np.random.default_rng(noise_seed))
        self.epsilon_dp = float(epsilon_dp)

    def update(self, key: int, delta: int = 1) -> None:
        self.tree.add(self.sampler._change(key, _check_delta(delta)))

    def reset(self, key: int, value: float | None = None) -> None:
        self.tree.add(self.sampler._reset_change(key))

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        # the same released stream as update() in a loop, without the intermediate answers
        k, d = _check_batch(keys, deltas)
        self.tree.add_many(self.sampler._changes_many(k, d))

    def estimate(self) -> float:
        return max(0.0, self.tree.value)

    def space_words(self) -> int:
        return self.sampler.space_words() + self.tree.space_words()

    def params(self) -> dict[str, Any]:
        return {
            **super().params(),
            "p": self.p,
            "epsilon_dp": self.epsilon_dp,
            "horizon": self.tree.horizon,
            "sensitivity": self.tree.sensitivity,
            "noise_scale": self.tree.scale,
        }


class _CopiesSketch(ResettableSketch):
    """A defender built from independent copies in ``self.copies``: every update and reset goes
    to each copy, and the space is theirs added up; subclasses decide how to answer."""

    copies: list[ResettableSketch]

    def _make_copies(self, r: int, p: float, seed: int, salt: int) -> None:
        """``r`` Bernoulli copies at rate ``p``, each seeded from ``seed`` and its index."""
        if int(r) < 1:
            raise ValueError(f"r must be a positive integer, got {r!r}")
        self.r = int(r)
        self.p = float(p)
        self.copies = [
            BernoulliSketch(self.statistic, self.q, p=p, seed=_splitmix64(int(seed) * salt + i)) for i in range(self.r)
        ]

    def update(self, key: int, delta: int = 1) -> None:
        for c in self.copies:
            c.update(key, delta)

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        for c in self.copies:
            c.update_many(keys, deltas)

    def reset(self, key: int, value: float | None = None) -> None:
        for c in self.copies:
            c.reset(key)

    def space_words(self) -> int:
        return sum(c.space_words() for c in self.copies)


class SwitchingSketch(_CopiesSketch):
    """Sketch switching (Ben-Eliezer, Jayaram, Woodruff & Yogev 2020) over ``r`` Bernoulli copies.

    The published value changes only when the active copy's estimate leaves
    the band ``published * (1 +- alpha)`` (or moves by more than ``floor *
    alpha`` near zero); then the new value is published and the next copy
    becomes active, so each copy's randomness is exposed by at most one change
    of the output. The flip-number argument bounds the changes on insert-only
    streams; a resettable stream can force a change at every step, so after
    ``r`` switches the copies are reused and the protection is gone (which is
    the paper's point about standard robustification).

    Args:
        r: number of copies; p: sampling rate of each; alpha: relative band;
        floor: the scale below which the band is absolute; seed: salts the copies.
    """

    name = "switching"

    def __init__(
        self,
        statistic: str = "cardinality",
        q: float = 0.5,
        r: int = 4,
        p: float = 0.1,
        alpha: float = 0.1,
        floor: float = 10.0,
        seed: int = 0,
    ) -> None:
        super().__init__(statistic, q)
        if not alpha > 0:
            raise ValueError(f"alpha must be positive, got {alpha!r}")
        self._make_copies(r, p, seed, salt=1000003)
        self.alpha = float(alpha)
        self.floor = float(floor)
        self.active = 0
        self.switches = 0
        self.published = 0.0

    def estimate(self) -> float:
        e = self.copies[self.active].estimate()
        if abs(e - self.published) > self.alpha * max(self.published, self.floor):
            self.published = e
            self.switches += 1
            self.active = (self.active + 1) % self.r
        return self.published

    def params(self) -> dict[str, Any]:
        return {**super().params(), "r": self.r, "p": self.p, "alpha": self.alpha}


class DPMedianSketch(_CopiesSketch):
    """A differentially private median of ``r`` independent Bernoulli copies (Hassidim et al. 2020).

    Each query answers with the exponential mechanism over a geometric grid
    ``{0} U {(1+gamma)^i}`` up to ``value_bound``, utility ``-|#{copies < c} -
    #{copies > c}| / 2`` (sensitivity 1 in one copy's estimate), with privacy ``epsilon_dp`` per
    query and fresh noise each time. The privacy loss composes over queries;
    that is not capped here (the attacker that repeats queries exploits it).

    Args:
        r: number of copies; p: sampling rate of each; epsilon_dp: per-query privacy;
        gamma: grid ratio; value_bound: the largest reportable value; seed: seeds copies and noise.
    """

    name = "dp-median"

    def __init__(
        self,
        statistic: str = "cardinality",
        q: float = 0.5,
        r: int = 15,
        p: float = 0.1,
        epsilon_dp: float = 6.0,
        gamma: float = 0.05,
        value_bound: float = 1e7,
        seed: int = 0,
    ) -> None:
        super().__init__(statistic, q)
        if not epsilon_dp > 0:
            raise ValueError(f"epsilon_dp must be positive, got {epsilon_dp!r}")
        if not gamma > 0:
            raise ValueError(f"gamma must be positive, got {gamma!r}")
        self._make_copies(r, p, seed, salt=1000033)
        self.epsilon_dp = float(epsilon_dp)
        self.gamma = float(gamma)
        n_grid = int(math.ceil(math.log(max(value_bound, 2.0)) / math.log1p(self.gamma))) + 1
        self.grid = np.concatenate([[0.0], np.power(1.0 + self.gamma, np.arange(n_grid))])
        self.rng = np.random.default_rng(_splitmix64(int(seed) + 77))

    def estimate(self) -> float:
        ests = np.sort([c.estimate() for c in self.copies])
        below = np.searchsorted(ests, self.grid, side="left")
        above = self.r - np.searchsorted(ests, self.grid, side="right")
        # utility -|#below - #above| / 2 changes by at most 1 when one copy's estimate changes
        score = -np.abs(below - above) / 2.0 * (self.epsilon_dp / 2.0)
        w = np.exp(score - score.max())
        return float(self.rng.choice(self.grid, p=w / w.sum()))

    def params(self) -> dict[str, Any]:
        return {**super().params(), "r": self.r, "p": self.p, "epsilon_dp": self.epsilon_dp}


def _stable(alpha: float, u: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Chambers-Mallows-Stuck symmetric alpha-stable variates from uniforms ``u`` in (0,1) and
    exponentials ``w``."""
    theta = math.pi * (u - 0.5)
    if alpha == 1.0:
        return np.tan(theta)
    return (np.sin(alpha * theta) / np.cos(theta) ** (1.0 / alpha)) * (np.cos((1.0 - alpha) * theta) / w) ** ((1.0 - alpha) / alpha)


@functools.lru_cache(maxsize=None)
def _stable_abs_median(alpha: float) -> float:
    """The median of |S| for a standard symmetric alpha-stable S (1 for Cauchy), by Monte Carlo
    with a fixed seed: a constant of the estimator, computed once per alpha."""
    if alpha == 1.0:
        return 1.0
    rng = np.random.default_rng(12345)
    return float(np.median(np.abs(_stable(alpha, rng.random(400_000), rng.exponential(size=400_000)))))


class LinearStableSketch(ResettableSketch):
    """A linear stable-projection sketch (Indyk 2006) with the median estimator: CountSketch-style.

    ``y = A v`` with ``A[i, x]`` i.i.d. symmetric q-stable (Cauchy for ``sum``),
    generated from a secret hash of ``(x, i)``; ``sum_x v[x]^q`` is estimated as
    ``(median_i |y_i| / median|S_q|)^q``. A reset subtracts the key's value, which
    the resetting system must supply: a linear sketch cannot forget a key it
    does not store. Not defined for cardinality.

    Args:
        m: number of rows (words); seed: the secret salt.
    """

    name = "linear"

    def __init__(self, statistic: str = "sum", q: float = 0.5, m: int = 64, seed: int = 0) -> None:
        super().__init__(statistic, q)
        if statistic == "cardinality":
            raise ValueError("the linear (stable-projection) sketch estimates sum or lp, not cardinality")
        if int(m) < 1:
            raise ValueError(f"m must be a positive integer, got {m!r}")
        self.m = int(m)
        self.alpha = 1.0 if statistic == "sum" else self.q
        self.salt = int(seed)
        self.y = np.zeros(self.m)
        self.scale = _stable_abs_median(self.alpha)
        self._rows = np.arange(self.m, dtype=np.int64)

    def column(self, key: int) -> np.ndarray:
        ids = (int(key) * self.m + self._rows) & ((1 << 62) - 1)
        u = hash_unit_array(ids, self.salt)
        w = -np.log1p(-hash_unit_array(ids, self.salt ^ 0x5DEECE66D))
        return _stable(self.alpha, np.clip(u, 1e-12, 1 - 1e-12), np.maximum(w, 1e-300))

    def update(self, key: int, delta: int = 1) -> None:
        self.y += _check_delta(delta) * self.column(key)

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        k, d = _check_batch(keys, deltas)
        uk, inv = np.unique(k, return_inverse=True)
        sums = np.bincount(inv, weights=d)
        for start in range(0, len(uk), 4096):
            kk = uk[start : start + 4096]
            ids = ((kk[:, None] * self.m + self._rows[None, :]) & ((1 << 62) - 1)).ravel()
            u = np.clip(hash_unit_array(ids, self.salt), 1e-12, 1 - 1e-12)
            w = np.maximum(-np.log1p(-hash_unit_array(ids, self.salt ^ 0x5DEECE66D)), 1e-300)
            cols = _stable(self.alpha, u, w).reshape(len(kk), self.m)
            self.y += sums[start : start + 4096] @ cols

    def reset(self, key: int, value: float | None = None) -> None:
        if value is None:
            raise ValueError("LinearStableSketch.reset needs the key's value before the reset (value=...)")
        if value:
            self.y -= float(value) * self.column(key)

    def estimate(self) -> float:
        return float((np.median(np.abs(self.y)) / self.scale) ** self.alpha)

    def space_words(self) -> int:
        return self.m

    def params(self) -> dict[str, Any]:
        return {**super().params(), "m": self.m}


class ThetaReference(ResettableSketch):
    """Apache DataSketches' Theta sketch (``update_theta_sketch``): insert-only cardinality.

    The production anchor. DataSketches has no per-key reset, so ``reset`` is
    counted (``ignored_resets``) and has no effect: under resets this defender
    keeps counting keys that are gone, which is what using it in a resettable
    stream would do.

    Args:
        lg_k: log2 of the nominal number of entries; seed: the hash seed.
    """

    name = "theta"
    supports_reset = False

    def __init__(self, statistic: str = "cardinality", q: float = 0.5, lg_k: int = 9, seed: int = 9001) -> None:
        super().__init__(statistic, q)
        if statistic != "cardinality":
            raise ValueError("datasketches' Theta sketch estimates cardinality only")
        from icmlgym.catalog import require_extra

        require_extra("sketch", what="the theta defender")
        from datasketches import update_theta_sketch

        if not (4 <= int(lg_k) <= 26):
            raise ValueError(f"lg_k must be in [4, 26], got {lg_k!r}")
        self.lg_k = int(lg_k)
        self.sk = update_theta_sketch(self.lg_k, 1.0, int(seed) % (1 << 16) or 9001)
        self.ignored_resets = 0

    def update(self, key: int, delta: int = 1) -> None:
        _check_delta(delta)
        self.sk.update(int(key))

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        k, _ = _check_batch(keys, deltas)
        up = self.sk.update
        for key in k.tolist():
            up(key)

    def reset(self, key: int, value: float | None = None) -> None:
        self.ignored_resets += 1

    def estimate(self) -> float:
        return float(self.sk.get_estimate())

    def space_words(self) -> int:
        return int(self.sk.num_retained) + 1

    def params(self) -> dict[str, Any]:
        return {**super().params(), "lg_k": self.lg_k}


class RoundedOutput(ResettableSketch):
    """Publishes another sketch's estimate rounded to a geometric grid ``(1 + rounding)^i`` (and 0).

    Output rounding is a cheap defence: a single key rarely moves a rounded
    answer, so an attacker that only keeps the keys that leave the answer
    unmoved learns little. It does not stop an attacker that rides a rounding
    boundary (see :mod:`icmlgym.agents.sketch`).

    Args:
        inner: the sketch whose estimate is rounded; rounding: the relative grid step (> 0).
    """

    name = "rounded"

    def __init__(self, inner: ResettableSketch, rounding: float = 0.05) -> None:
        super().__init__(inner.statistic, inner.q)
        if not float(rounding) > 0:
            raise ValueError(f"rounding must be a positive relative step, got {rounding!r}")
        self.inner = inner
        self.rounding = float(rounding)
        self.supports_reset = inner.supports_reset
        self._log_step = math.log1p(self.rounding)

    def update(self, key: int, delta: int = 1) -> None:
        self.inner.update(key, delta)

    def update_many(self, keys: np.ndarray, deltas: np.ndarray | None = None) -> None:
        self.inner.update_many(keys, deltas)

    def reset(self, key: int, value: float | None = None) -> None:
        self.inner.reset(key, value=value)

    def estimate(self) -> float:
        e = self.inner.estimate()
        if e < 0.5:
            return 0.0
        return float(math.exp(round(math.log(e) / self._log_step) * self._log_step))

    def space_words(self) -> int:
        return self.inner.space_words()

    def params(self) -> dict[str, Any]:
        return {**self.inner.params(), "rounding": self.rounding}


DEFENDERS: dict[str, type[ResettableSketch]] = {
    c.name: c
    for c in (
        ExactSketch,
        BernoulliSketch,
        BottomKSketch,
        SampleHoldSketch,
        SwitchingSketch,
        DPMedianSketch,
        DPTreeSketch,
        LinearStableSketch,
        ThetaReference,
    )
}


def make_defender(
    name: str,
    statistic: str = "cardinality",
    *,
    q: float = 0.5,
    n_keys: int = 1000,
    space: int = 400,
    horizon: int = 1024,
    max_delta: int = 1,
    seed: int = 0,
    **kwargs: Any,
) -> ResettableSketch:
    """Build a defender at a matched space budget.

    ``space`` (words) sets each defender's size parameter so that its expected
    space with all ``n_keys`` keys nonzero is about ``space``: sampling rates
    ``p = space / (2 n_keys)`` (split over copies, less the tree's words),
    ``k = space / 6`` for bottom-k (up to ``2k`` entries of 3 words), ``m = space`` rows for the linear sketch,
    ``lg_k = floor(log2(space / 1.5))`` for Theta. ``kwargs`` override any parameter;
    ``rounding=r`` (a relative step) wraps the defender in :class:`RoundedOutput`.
    """
    if name not in DEFENDERS:
        raise ValueError(f"unknown defender {name!r}; defenders: {sorted(DEFENDERS)}")
    if int(space) < 4:
        raise ValueError(f"space must be at least 4 words, got {space!r}")
    if int(n_keys) < 1:
        raise ValueError(f"n_keys must be positive, got {n_keys!r}")
    rounding = kwargs.pop("rounding", None)
    if rounding:
        return RoundedOutput(
            make_defender(name, statistic, q=q, n_keys=n_keys, space=space, horizon=horizon, max_delta=max_delta, seed=seed, **kwargs),
            rounding=float(rounding),
        )
    cls = DEFENDERS[name]
    space, n = int(space), int(n_keys)

    def rate(words: float) -> float:
        return float(min(1.0, max(words, 1.0) / (2.0 * n)))

    if name == "exact":
        params: dict[str, Any] = {}
    elif name in ("bernoulli", "sample-hold"):
        params = {"p": rate(space), "seed": seed}
    elif name == "bottomk":
        params = {"k": max(1, (space - 1) // 6), "seed": seed}  # up to 2k entries of 3 words
    elif name == "switching":
        r = int(kwargs.get("r", 4))
        params = {"r": r, "p": rate(space / r), "seed": seed}
    elif name == "dp-median":
        r = int(kwargs.get("r", 15))
        # a data-independent range: every key nonzero, at the largest value the horizon allows
        bound = float(n) if statistic == "cardinality" else float(n) * max(1, int(horizon) * int(max_delta)) ** (1.0 if statistic == "sum" else q)
        params = {"r": r, "p": rate(space / r), "value_bound": bound, "seed": seed}
    elif name == "dp-tree":
        tree_words = 2 * (max(1, math.ceil(math.log2(int(horizon) + 1))) + 1)
        params = {"p": rate(space - tree_words), "horizon": int(horizon), "max_delta": int(max_delta), "seed": seed}
    elif name == "linear":
        params = {"m": space, "seed": seed}
    else:  # theta
        # Theta retains up to about 1.5 * 2^lg_k entries between rebuilds
        params = {"lg_k": int(min(26, max(4, math.floor(math.log2(space / 1.5))))), "seed": seed % (1 << 16) or 9001}
    params.update(kwargs)
    return cls(statistic, q, **params)
