"""The rank-one Frank-Wolfe design against the plain one (a fresh inverse and variances every iteration)."""

import numpy as np
import pytest

from icmlgym.envs.fairbandit import design
from icmlgym.envs.fairbandit.design import _d_optimal_weights, _span_coordinates


def plain_d_optimal_weights(Q: np.ndarray, tol: float, max_iter: int) -> np.ndarray:
    """The same Frank-Wolfe iterations with M^{-1} and every variance recomputed each time."""
    k, m = Q.shape
    u = np.full(k, 1.0 / k)
    for _ in range(max_iter):
        g = np.einsum("ij,jk,ik->i", Q, np.linalg.inv((Q * u[:, None]).T @ Q), Q)
        j = int(np.argmax(g))
        if g[j] <= (1.0 + tol) * m:
            break
        support = np.flatnonzero(u > 0)
        i = int(support[np.argmin(g[support])])
        if g[j] - m >= m - g[i] or g[i] <= 1.0:
            step = (g[j] - m) / (m * (g[j] - 1.0))
            u *= 1.0 - step
            u[j] += step
        else:
            step = min((m - g[i]) / (m * (g[i] - 1.0)), u[i] / (1.0 - u[i]))
            u *= 1.0 + step
            u[i] -= step
            u[i] = max(u[i], 0.0)
        u /= u.sum()
    return u


@pytest.mark.parametrize("k,d,seed", [(30, 3, 0), (200, 6, 1), (1000, 10, 2), (400, 11, 3)])
def test_rank_one_design_follows_the_plain_iterations(k, d, seed):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(k, d))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    Q = _span_coordinates(X)
    fast = _d_optimal_weights(Q, 0.01, 10_000)
    plain = plain_d_optimal_weights(Q, 0.01, 10_000)
    # the same iterations up to rounding: weights equal to ~1e-12 of the largest
    assert np.abs(fast - plain).max() <= 1e-10 * plain.max()
    g = np.einsum("ij,jk,ik->i", Q, np.linalg.inv((Q * fast[:, None]).T @ Q), Q)
    assert g.max() <= 1.01 * d + 1e-9


def test_the_variances_are_refreshed_on_schedule(monkeypatch):
    """With a refresh every iteration the result is the plain algorithm's to the last bits of rounding."""
    monkeypatch.setattr(design, "_REFRESH_EVERY", 1)
    rng = np.random.default_rng(5)
    Q = _span_coordinates(rng.normal(size=(300, 5)))
    fast = _d_optimal_weights(Q, 0.01, 10_000)
    assert np.allclose(fast, plain_d_optimal_weights(Q, 0.01, 10_000), rtol=0, atol=1e-12)
