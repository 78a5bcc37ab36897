"""Optimal experimental design over a finite arm set, with numpy only.

- :func:`g_optimal_design`: the Kiefer–Wolfowitz / D-optimal design (the two
  coincide by the Kiefer–Wolfowitz theorem), by Frank–Wolfe (Fedorov–Wynn)
  iterations with away steps. A design ``lam`` over arms ``X`` satisfies
  ``max_x ||x||^2_{V(lam)^{-1}} <= (1 + tol) * r`` at return, where ``r`` is the
  rank of ``X`` (the optimum is exactly ``r``).
- :func:`john_ellipsoid_distribution`: a distribution over arms whose mean is
  the centre of the Löwner–John (minimum-volume enclosing) ellipsoid of the
  arms, by Khachiyan's algorithm (a D-optimal design of the lifted points
  ``(x, 1)``). For that centre ``c``, ``c + (E - c)/r`` lies inside the convex
  hull of the arms (John's theorem), so for any ``theta`` with positive mean
  reward on the hull ``<c, theta> >= max_x <x, theta> / (r + 1)``: the
  guarantee LinNash's first phase needs (Sawarni, Pal & Barman 2023, who state
  it for the maximal inscribed ellipsoid; the enclosing one gives the same
  bound and is computable from the points alone, without facets).

Rank-deficient arm sets (fewer arms than dimensions, or arms on a subspace
after elimination) are handled in the span of the arms.

The agents ask for designs through a :class:`Designs` object: :data:`DIRECT` solves every
request (a single run), :class:`SharedDesigns` solves each distinct problem once and hands
every later request a copy (a batch of seeds over one arm matrix, whose seeds often ask for
the same design; both functions are deterministic, so the copy holds the very same doubles).
"""

from __future__ import annotations

import numpy as np

from icmlgym.envs.blas import single_thread_blas


def _span_coordinates(X: np.ndarray, rtol: float = 1e-10) -> np.ndarray:
    """Coordinates of the rows of ``X`` in an orthonormal basis of their span."""
    _, s, vt = np.linalg.svd(X, full_matrices=False)
    rank = int(np.sum(s > rtol * max(s[0], 1e-300))) if s.size else 0
    if rank == 0:
        raise ValueError("the arms span no direction (all arm vectors are zero)")
    return X @ vt[:rank].T


def _check_arms(X: np.ndarray) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] < 1:
        raise ValueError(f"arms must be a (K, d) array with K >= 1, got shape {X.shape}")
    if not np.all(np.isfinite(X)):
        raise ValueError("arms must be finite")
    return X


_REFRESH_EVERY = 64  # Frank-Wolfe iterations between exact recomputations of M^{-1} and the variances


def _variances(Q: np.ndarray, u: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``M(u)^{-1}`` and every row's variance ``g_i = q_i^T M(u)^{-1} q_i``, computed afresh."""
    Minv = np.linalg.inv((Q * u[:, None]).T @ Q)
    return Minv, np.einsum("ij,ij->i", Q @ Minv, Q)


def _d_optimal_weights(Q: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """D-optimal design over the rows of a full-column-rank ``Q`` (k, m).

    Frank–Wolfe with away steps (Todd & Yildirim 2007, "On Khachiyan's
    algorithm for the computation of minimum-volume enclosing ellipsoids"):
    each iteration moves weight toward the row of largest variance
    ``g_i = q_i^T M^{-1} q_i`` or away from the supported row of smallest
    variance, with the exact line-search step. Stops when
    ``max_i g_i <= (1 + tol) * m`` (the optimum has ``max_i g_i = m``).

    Each step changes ``M`` by a rank-one term, so ``M^{-1}`` and the variances
    follow by Sherman–Morrison in O(k m) instead of an inverse and an O(k m^2)
    product; they are recomputed exactly every ``_REFRESH_EVERY`` iterations and
    before the stopping test is trusted, so rounding cannot accumulate.
    """
    k, m = Q.shape
    u = np.full(k, 1.0 / k)
    Minv, g = _variances(Q, u)
    fresh = 0
    bound = (1.0 + tol) * m
    Qv, vv = np.empty(k), np.empty((m, m))  # buffers: each step's arithmetic is written into them
    for _ in range(max_iter):
        j = int(g.argmax())
        gj = g[j]
        if gj <= bound:
            if fresh == 0:
                break
            Minv, g = _variances(Q, u)
            fresh = 0
            j = int(g.argmax())
            gj = g[j]
            if gj <= bound:
                break
        i = int(np.where(u > 0, g, np.inf).argmin())  # the supported row of smallest variance (first of ties)
        gi = g[i]
        if gj - m >= m - gi or gi <= 1.0:
            step = (gj - m) / (m * (gj - 1.0))
            u *= 1.0 - step
            u[j] += step
            a, b, r, gr = 1.0 - step, step, j, gj  # M <- a M + b q_r q_r^T
        else:
            # away step: remove weight from arm i (at most all of it)
            ui = u[i]
            step = min((m - gi) / (m * (gi - 1.0)), ui / (1.0 - ui))
            u *= 1.0 + step
            u[i] -= step
            u[i] = max(u[i], 0.0)
            a, b, r, gr = 1.0 + step, -step, i, gi
        total = np.add.reduce(u)  # u.sum() without its wrappers
        u /= total
        fresh += 1
        if fresh >= _REFRESH_EVERY:
            Minv, g = _variances(Q, u)
            fresh = 0
            continue
        # (a M + b q q^T)^{-1} = (M^{-1} - c v v^T) / a with v = M^{-1} q, c = (b/a) / (1 + (b/a) q^T v);
        # dividing u by its total divides M by it, so M^{-1} and g are multiplied by it
        v = Minv @ Q[r]
        ba = b / a
        c = ba / (1.0 + ba * gr)
        np.matmul(Q, v, out=Qv)
        scale = total / a
        np.multiply(v[:, None], v, out=vv)  # np.outer(v, v)
        vv *= c
        Minv -= vv
        Minv *= scale
        Qv *= Qv
        Qv *= c
        g -= Qv
        g *= scale
    return u


def g_optimal_design(X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
    """Kiefer–Wolfowitz (G-/D-optimal) design over the rows of ``X``.

    Args:
        X: arms, shape (K, d).
        tol: stop when ``max_x ||x||^2_{V^{-1}} <= (1 + tol) * rank``.
        max_iter: cap on Frank–Wolfe iterations.

    Returns:
        ``lam``, shape (K,), a probability vector.
    """
    X = _check_arms(X)
    if X.shape[0] == 1:
        return np.ones(1)
    with single_thread_blas():  # small LAPACK calls: OpenBLAS's threads only wait on a busy machine
        return _d_optimal_weights(_span_coordinates(X), tol, max_iter)


def design_allocation(lam: np.ndarray, n: int) -> np.ndarray:
    """Integer pull counts summing to ``n`` that follow the design ``lam`` (largest remainders)."""
    lam = np.asarray(lam, dtype=np.float64)
    if n < 0:
        raise ValueError(f"n must be non-negative, got {n}")
    raw = lam * n
    counts = np.floor(raw).astype(np.int64)
    rest = n - int(counts.sum())
    if rest > 0:
        order = np.argsort(-(raw - counts), kind="stable")
        counts[order[:rest]] += 1
    return counts


def john_ellipsoid_distribution(X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
    """Weights ``u`` over arms whose mean ``sum_i u_i x_i`` is the Löwner–John ellipsoid centre.

    Khachiyan's algorithm: a D-optimal design over the lifted points ``(z, 1)``
    where ``z`` are the arms in coordinates of their affine span.
    """
    X = _check_arms(X)
    k = X.shape[0]
    if k == 1:
        return np.ones(1)
    centred = X - X.mean(axis=0)
    with single_thread_blas():
        _, s, vt = np.linalg.svd(centred, full_matrices=False)
        rank = int(np.sum(s > 1e-10 * max(s[0], 1e-300))) if s.size else 0
        if rank == 0:  # all arms equal
            return np.full(k, 1.0 / k)
        Q = np.hstack([centred @ vt[:rank].T, np.ones((k, 1))])  # lifted, (k, rank + 1)
        return _d_optimal_weights(Q, tol, max_iter)


class Designs:
    """Where an agent gets its designs: this base solves every request (what a single run uses)."""

    def g_optimal(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        """:func:`g_optimal_design` of ``X``."""
        return g_optimal_design(X, tol, max_iter)

    def john(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        """:func:`john_ellipsoid_distribution` of ``X``."""
        return john_ellipsoid_distribution(X, tol, max_iter)


DIRECT = Designs()


class SharedDesigns(Designs):
    """Solves each distinct design problem once and gives every request a copy of its answer.

    A problem is the function, the arm matrix's shape and bytes (as float64), ``tol`` and
    ``max_iter``. Owned by one vector twin (one batch of seeds), never process-wide: single
    runs keep solving for themselves. ``solved`` counts the problems solved, ``asked`` the
    requests.
    """

    def __init__(self) -> None:
        self._answers: dict[tuple, np.ndarray] = {}
        self.asked = 0

    @property
    def solved(self) -> int:
        return len(self._answers)

    def _answer(self, fn, X: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
        self.asked += 1
        X = np.ascontiguousarray(X, dtype=np.float64)
        key = (fn.__name__, X.shape, X.tobytes(), float(tol), int(max_iter))
        lam = self._answers.get(key)
        if lam is None:
            lam = self._answers[key] = fn(X, tol, max_iter)
        return lam.copy()

    def g_optimal(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        return self._answer(g_optimal_design, X, tol, max_iter)

    def john(self, X: np.ndarray, tol: float = 0.01, max_iter: int = 10_000) -> np.ndarray:
        return self._answer(john_ellipsoid_distribution, X, tol, max_iter)
