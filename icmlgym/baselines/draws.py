"""Random draws in per-seed blocks, shared by the Discrete baselines and their vector twins.

A batched run (:mod:`icmlgym.agents.vector`) must consume each seed's generator exactly
as that seed's single run does. When a single agent makes one generator call per step
(a tie-break, a vector of Beta samples), its twin has to loop over the seeds every step,
and the loop costs more than the arithmetic it feeds. So both draw their randomness in
blocks, per seed, at the same steps: a block of uniforms (tie-breaks) or of normals and
uniforms (Beta samples) every few hundred steps, and turn them into the draws they need
with array arithmetic that is the same elementwise for one seed and for N. Single agent
and twin share the classes below (the single agent is a batch of one), so their records
are bit for bit equal (``tests/core/test_batched.py``).

- :class:`UniformBlocks`: uniforms in [0, 1) for tie-breaks, one per argmax decision (tie or
  not, so that a batch in lock step takes one column of its block per step). A uniform
  choice among ``n`` maxima is ``int(u * n)``; its probabilities differ from ``1/n`` by less
  than ``n / 2**53``.
- :class:`BetaBlocks`: Beta(a, b) vectors as ``G_a / (G_a + G_b)``, each Gamma variate by
  Marsaglia & Tsang's (2000) rejection method from a block of normals and uniforms
  (per generator, one ``standard_normal`` then one ``random`` call of shape
  ``(steps, 2 * n_arms, 2)``; the ``a`` variates first, then the ``b``):
  two candidates (a normal and a uniform each) per variate per step, and a scalar
  continuation from the seed's generator for a variate whose candidates are both
  rejected (about 2e-3 of them at shape 1, fewer at larger shapes).
  Shapes below 1 use ``G(s) = G(s + 1) * U**(1/s)``, with uniforms drawn at that step. Every variate is
  an exact Gamma draw (rejection from i.i.d. candidates, whatever their number).
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

TIE_BLOCK = 256  # uniforms per refill of a tie-break block
ATTEMPTS = 2  # Marsaglia-Tsang candidates per Gamma variate per step (both rejected: ~2e-3 at shape 1, less above)
_BETA_BLOCK_NUMBERS = 1 << 12  # normals per refill of a Beta block, over all arms and steps of the block
_SQUEEZE = 0.0331
_THIRD = 1.0 / 3.0
_WHOLE_STEP = 256  # candidates per step up to which the log test runs on all of them (BetaBlocks.sample)


_LOGS: list[float] = []


def log_of(t: int) -> float:
    """``np.log(t)`` for a non-negative integer ``t``, as a Python float, from a table.

    ``np.log`` on a Python int converts it to an array first (about 1 us, more than the
    rest of a UCB bonus on ten arms); the table holds the same ufunc's values, computed
    over an ``arange`` (elementwise the same doubles; ``tests/core/test_draws.py``)."""
    if t >= len(_LOGS):
        n = max(1 << 12, 1 << int(t).bit_length())
        with np.errstate(divide="ignore"):
            _LOGS[:] = np.log(np.arange(n)).tolist()
    return _LOGS[t]


class UniformBlocks:
    """One block of uniforms per generator; ``take(i)`` / ``take_rows(rows)`` consume them in order."""

    def __init__(self, rngs: Sequence[np.random.Generator], block: int = TIE_BLOCK) -> None:
        self.rngs = list(rngs)
        self.block = int(block)
        self.buf = np.empty((len(self.rngs), self.block))
        self.pos = np.full(len(self.rngs), self.block, dtype=np.int64)  # empty: refilled on first use
        self._lockstep = True  # every generator at the same position (until take / take_rows consume a few)

    def _refill(self, i: int) -> None:
        self.buf[i] = self.rngs[i].random(self.block)
        self.pos[i] = 0

    def take(self, i: int = 0) -> float:
        """The next uniform of generator ``i`` (a block drawn from it when the last one is used up)."""
        if self.pos[i] >= self.block:
            self._refill(i)
        u = float(self.buf[i, self.pos[i]])
        self.pos[i] += 1
        self._lockstep = self._lockstep and len(self.rngs) == 1
        return u

    def _advance_all(self) -> int | None:
        """Move every generator one uniform on, refilling as :meth:`take_all` does; the column taken, None out of lock step."""
        if not self._lockstep:
            p = int(self.pos[0])
            if not (self.pos == p).all():
                return None
            self._lockstep = True
        p = int(self.pos[0])
        if p >= self.block:
            for i in range(len(self.rngs)):
                self._refill(i)
            p = 0
        self.pos += 1
        return p

    def take_all(self) -> np.ndarray:
        """The next uniform of every generator, when all are at the same position (a batch in lock step)."""
        p = self._advance_all()
        if p is None:
            return self.take_rows(np.arange(len(self.rngs)))
        return self.buf[:, p].copy()

    def skip_all(self) -> None:
        """Consume every generator's next uniform unread (a decision without ties): the same draws as :meth:`take_all`."""
        if self._advance_all() is None:
            self.take_rows(np.arange(len(self.rngs)))

    def take_rows(self, rows: np.ndarray) -> np.ndarray:
        """The next uniform of each generator in ``rows`` (distinct indices), as one array."""
        self._lockstep = False
        for i in rows[self.pos[rows] >= self.block].tolist():
            self._refill(i)
        u = self.buf[rows, self.pos[rows]]
        self.pos[rows] += 1
        return u


def pick_ties(eq: np.ndarray, u: np.ndarray, n: np.ndarray | None = None) -> np.ndarray:
    """Row-wise: the ``int(u * n)``-th True of each row of ``eq`` (``n`` its Trues, counted when not given), as column indices (0 without any).

    The running count of Trues first equals ``r`` at the ``r``-th True, so the first position where it does is the pick."""
    if n is None:
        n = eq.sum(axis=1)
    r = (u * n).astype(np.int64)
    r += 1
    return (eq.cumsum(axis=1) == r[:, None]).argmax(axis=1)


def argmax_ties(values: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Row-wise argmax, a row with tied maxima picking the ``int(u * n)``-th of its ``n`` maxima."""
    eq = values == values.max(axis=1, keepdims=True)
    n = eq.sum(axis=1)
    best = pick_ties(eq, u, n)
    nan = n == 0  # NaN rows have no maximum equal to itself: argmax's first NaN, as the single agent
    if nan.any():
        best[nan] = values[nan].argmax(axis=1)
    return best


def argmax_ties_lockstep(values: np.ndarray, ties: UniformBlocks, index: np.ndarray | None = None) -> np.ndarray:
    """:func:`argmax_ties` with every row's next uniform from ``ties`` (one column, consumed whether or not a row ties).

    The same picks for fewer numpy calls (a reduction along rows of ten costs several times an
    ``argmax``): the maxima come from ``argmax``, and only when some row has two are the
    uniforms read and every row's pick taken from the list of maxima. ``index``: ``np.arange(len(values))``, when the caller keeps one."""
    best = values.argmax(axis=1)
    rows = len(best)
    top = values[np.arange(rows) if index is None else index, best]
    eq = values == top[:, None]
    if np.count_nonzero(eq) == rows and np.count_nonzero(top == top) == rows:  # one maximum per row, no NaN
        ties.skip_all()
        return best
    p = ties._advance_all()
    u = ties.buf[:, p] if p is not None else ties.take_rows(np.arange(rows))  # a view: read before the next draw
    r, c = np.nonzero(eq)  # the maxima, row by row
    n = np.bincount(r, minlength=rows)
    k = (u * n).astype(np.int64)  # the int(u * n)-th maximum of each row ...
    if np.count_nonzero(n) == rows:
        k += np.cumsum(n)  # ... at this position of c
        k -= n
        return c[k]
    has = n > 0  # a NaN row keeps argmax's first NaN, as the single agent
    best[has] = c[(np.cumsum(n) - n)[has] + k[has]]
    return best


def beta_block_steps(n_arms: int) -> int:
    """Steps per Beta block for ``n_arms`` arms (the same for a single run and a batch)."""
    return max(1, _BETA_BLOCK_NUMBERS // (2 * ATTEMPTS * int(n_arms)))


def _shape_constants(s: float) -> tuple[float, float]:
    """Marsaglia-Tsang's ``d`` and ``c`` for shape ``s`` (shapes below 1 are boosted by one)."""
    d = (s + 1.0 if s < 1.0 else s) - _THIRD
    return d, 1.0 / math.sqrt(9.0 * d)


def _gamma_scalar(rng: np.random.Generator, d: float, c: float) -> float:
    """Marsaglia-Tsang continued from ``rng`` one candidate at a time (the rare all-rejected variate)."""
    while True:
        x = float(rng.standard_normal())
        t = 1.0 + c * x
        if t <= 0.0:
            continue
        v = t * t * t
        u = float(rng.random())
        x2 = x * x
        if u < 1.0 - _SQUEEZE * (x2 * x2) or math.log(u) < 0.5 * x2 + d * (1.0 - v + math.log(v)):
            return d * v


class BetaBlocks:
    """Beta(a, b) vectors for N generators at once, from per-generator blocks (see the module docstring).

    Set the shapes with :meth:`set_shapes` (all) or :meth:`set_arm` (one generator's arm,
    after a pull), then :meth:`sample` draws one Beta vector per generator. ``whole``: test
    every candidate of a step (the default for few generators) or only the first ones, both
    where the squeeze fails (the default for many); the draws are the same either way."""

    def __init__(self, rngs: Sequence[np.random.Generator], n_arms: int, whole: bool | None = None) -> None:
        self.rngs = list(rngs)
        self.k = int(n_arms)
        self.steps = beta_block_steps(self.k)
        n, m = len(self.rngs), 2 * int(n_arms)
        # generators first: each generator's block is contiguous, so it is drawn in place (``out=``)
        self.normals = np.empty((n, self.steps, m, ATTEMPTS))
        self.uniforms = np.empty((n, self.steps, m, ATTEMPTS))
        self.pos = self.steps
        self.shapes = np.ones((n, m))  # columns: the k "a" shapes, then the k "b" shapes
        self.d = np.empty((n, m))
        self.c = np.empty((n, m))
        self._d3, self._c3 = self.d[..., None], self.c[..., None]
        # few generators (a single run): the log test on every candidate of a step, with no gathers, is cheaper
        # than on the few that need it; the accepted set is the same (the test is elementwise)
        self._whole = n * m * ATTEMPTS <= _WHOLE_STEP if whole is None else bool(whole)
        self._row_starts = np.arange(0, n * m, m)  # flat index of each generator's first shape
        if self._whole:
            self.squeeze = np.empty((n, self.steps, m, ATTEMPTS), dtype=bool)
        else:  # many generators: the squeeze of the first candidates only; the rest are tested where reached
            self.squeeze = np.empty((n, self.steps, m), dtype=bool)
            # the blocks as rows of candidates, (n * steps * m, ATTEMPTS), and each variate's row at step 0
            self._normal_rows = self.normals.reshape(-1, ATTEMPTS)
            self._uniform_rows = self.uniforms.reshape(-1, ATTEMPTS)
            self._first = (np.arange(n)[:, None] * (self.steps * m) + np.arange(m)).ravel()
        self._any_small = False

    def set_shapes(self, a: np.ndarray, b: np.ndarray) -> None:
        """All shapes: ``a``, ``b`` of shape ``(N, n_arms)``."""
        s = np.concatenate([a, b], axis=1).astype(np.float64)
        if not (s > 0).all():
            raise ValueError(f"Beta shapes must be positive, got a={np.asarray(a).tolist()}, b={np.asarray(b).tolist()}")
        small = s < 1.0
        self._any_small = self._any_small or bool(small.any())
        self.shapes[:] = s
        self.d[:] = np.where(small, s + 1.0, s) - _THIRD
        self.c[:] = 1.0 / np.sqrt(9.0 * self.d)

    def set_arm(self, i: int, j: int, a: float, b: float) -> None:
        """Generator ``i``'s shapes of arm ``j`` (the values :meth:`set_shapes` would give them)."""
        for col, s in ((j, float(a)), (j + self.k, float(b))):
            if not s > 0:
                raise ValueError(f"Beta shapes must be positive, got {s} for arm {j}")
            self._any_small = self._any_small or s < 1.0
            self.shapes[i, col] = s
            self.d[i, col], self.c[i, col] = _shape_constants(s)

    def set_arms(self, arms: np.ndarray, a: np.ndarray, b: np.ndarray) -> None:
        """Every generator's shapes of one arm each: generator ``i``'s arm ``arms[i]`` gets ``a[i]``, ``b[i]``."""
        s = np.concatenate([a, b]).astype(np.float64, copy=False)
        if not (s > 0).all():
            raise ValueError(f"Beta shapes must be positive, got {s.tolist()}")
        flat = self._row_starts + arms
        flat = np.concatenate([flat, flat + self.k])  # the "a" then the "b" column of each generator
        small = s < 1.0
        if small.any():
            self._any_small = True
            d = np.where(small, s + 1.0, s) - _THIRD
        else:
            d = s - _THIRD
        self.shapes.ravel()[flat] = s
        self.d.ravel()[flat] = d
        self.c.ravel()[flat] = 1.0 / np.sqrt(9.0 * d)

    def _refill(self) -> None:
        for i, rng in enumerate(self.rngs):  # per generator: normals, then uniforms (the stream of one call each)
            rng.standard_normal(out=self.normals[i])
            rng.random(out=self.uniforms[i])
        if self._whole:  # the terms that do not depend on the shapes, for the whole block
            x2 = self.normals * self.normals
            np.less(self.uniforms, 1.0 - _SQUEEZE * (x2 * x2), out=self.squeeze)  # u < 1 - 0.0331 x^4: accepted
            self.log_u = np.log(self.uniforms)
            self.half_x2 = 0.5 * x2
        else:
            x = self.normals[..., 0]
            x2 = x * x
            np.less(self.uniforms[..., 0], 1.0 - _SQUEEZE * (x2 * x2), out=self.squeeze)
        self.pos = 0

    def sample(self) -> np.ndarray:
        """One Beta(a[i, j], b[i, j]) draw per generator ``i`` and arm ``j``, as an ``(N, n_arms)`` array."""
        if self.pos >= self.steps:
            self._refill()
        p = self.pos
        self.pos += 1
        g = self._sample_whole(p) if self._whole else self._sample_first(p)
        if self._any_small:  # G(s) = G(s + 1) * U**(1/s), one uniform per small shape, generator by generator
            small = self.shapes < 1.0
            for i in np.flatnonzero(small.any(axis=1)).tolist():
                cols = np.flatnonzero(small[i])
                g[i, cols] *= np.power(self.rngs[i].random(len(cols)), 1.0 / self.shapes[i, cols])
        ga = g[:, : self.k]
        return ga / (ga + g[:, self.k :])

    def _sample_whole(self, p: int) -> np.ndarray:
        """The Gamma variates of step ``p``, every candidate tested (few generators)."""
        x = self.normals[:, p]
        t = self._c3 * x
        t += 1.0
        v = t * t
        v *= t
        # accepted: t > 0 and (squeeze or log u < x^2/2 + d (1 - v + log v)); log |v| keeps the masked
        # candidates (t <= 0) finite, and every other candidate gets the doubles of the gathered test
        w = 1.0 - v
        w += np.log(np.abs(v))
        w *= self._d3
        w += self.half_x2[:, p]
        ok = np.less(self.log_u[:, p], w)
        ok |= self.squeeze[:, p]
        ok &= t > 0.0
        first = ok[..., 0]
        g = np.where(first, v[..., 0], v[..., 1])  # the first accepted of the ATTEMPTS = 2 candidates
        g *= self.d
        found = first | ok[..., 1]
        if not found.all():
            self._continue(g, np.flatnonzero(~found))
        return g

    def _sample_first(self, p: int) -> np.ndarray:
        """The Gamma variates of step ``p`` from their first candidates, both tested in full only where the squeeze failed (many generators).

        Every candidate gets the doubles :meth:`_sample_whole` gives it, so the accepted one is the same."""
        t = self.c * self.normals[:, p, :, 0]
        t += 1.0
        v = t * t
        v *= t
        g = v * self.d
        ok = t > 0.0
        ok &= self.squeeze[:, p]
        rest = np.flatnonzero(~ok)  # about 8% at shape 1
        if not len(rest):
            return g
        at = self._first[rest]
        at += p * self.shapes.shape[1]  # their rows of candidates at step p
        x, u = self._normal_rows[at], self._uniform_rows[at]
        dr = self.d.ravel()[rest]
        t = self.c.ravel()[rest][:, None] * x
        t += 1.0
        v = t * t
        v *= t
        x2 = x * x
        w = 1.0 - v
        w += np.log(np.abs(v))
        w *= dr[:, None]
        w += 0.5 * x2
        ok = np.less(np.log(u), w)
        x2 *= x2
        ok |= np.less(u, 1.0 - _SQUEEZE * x2)
        ok &= t > 0.0
        first = ok[:, 0]
        pick = np.where(first, v[:, 0], v[:, 1])
        pick *= dr
        g.ravel()[rest] = pick
        found = first | ok[:, 1]
        if not found.all():
            self._continue(g, rest[~found])
        return g

    def _continue(self, g: np.ndarray, flat: np.ndarray) -> None:
        """The variates at ``flat`` (row-major indices into ``g``, ascending) continued from their generators, one by one."""
        m = g.shape[1]
        for f in flat.tolist():
            i, j = divmod(f, m)
            g[i, j] = _gamma_scalar(self.rngs[i], float(self.d[i, j]), float(self.c[i, j]))


__all__ = ["ATTEMPTS", "BetaBlocks", "TIE_BLOCK", "UniformBlocks", "argmax_ties", "argmax_ties_lockstep", "beta_block_steps", "log_of", "pick_ties"]
