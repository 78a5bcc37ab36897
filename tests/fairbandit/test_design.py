"""Optimal designs: the Kiefer–Wolfowitz condition and the John-ellipsoid centre guarantee."""

import numpy as np
import pytest

from icmlgym.envs.fairbandit.design import design_allocation, g_optimal_design, john_ellipsoid_distribution
from icmlgym.envs.fairbandit.instances import positive_normalise


def _max_variance(X, lam):
    V = (X * lam[:, None]).T @ X
    return np.einsum("ij,jk,ik->i", X, np.linalg.pinv(V), X).max()


@pytest.mark.parametrize("k,d", [(50, 3), (400, 10), (12, 12)])
def test_g_optimal_design_meets_the_kiefer_wolfowitz_bound(k, d):
    X = np.random.default_rng(k).normal(size=(k, d))
    lam = g_optimal_design(X, tol=0.01)
    assert lam.min() >= 0 and lam.sum() == pytest.approx(1.0)
    g = _max_variance(X, lam)
    # Kiefer–Wolfowitz: the optimum of max_x ||x||^2_{V^{-1}} is exactly d; we stop within 1%
    assert d - 1e-6 <= g <= 1.01 * d + 1e-9


def test_g_optimal_design_of_an_orthonormal_basis_is_uniform():
    X = np.vstack([np.eye(4), 0.5 * np.eye(4)])  # the shorter copies are dominated
    lam = g_optimal_design(X, tol=1e-6)
    np.testing.assert_allclose(lam[:4], 0.25, atol=1e-4)
    assert lam[4:].sum() < 1e-3


def test_design_on_rank_deficient_arms_uses_their_span():
    rng = np.random.default_rng(0)
    basis = rng.normal(size=(2, 6))
    X = rng.normal(size=(30, 2)) @ basis  # 30 arms on a plane in R^6
    lam = g_optimal_design(X)
    assert _max_variance(X, lam) <= 1.01 * 2 + 1e-9
    assert g_optimal_design(X[:1]).tolist() == [1.0]


def test_design_allocation_sums_to_n():
    lam = np.array([0.5, 0.3, 0.2])
    counts = design_allocation(lam, 11)
    assert counts.sum() == 11 and counts.tolist() == [6, 3, 2]
    with pytest.raises(ValueError):
        design_allocation(lam, -1)


def test_john_centre_of_a_symmetric_set_is_its_centre():
    X = np.vstack([np.eye(3), -np.eye(3)]) + np.array([2.0, 1.0, 0.5])
    u = john_ellipsoid_distribution(X, tol=1e-6)
    np.testing.assert_allclose(u @ X, [2.0, 1.0, 0.5], atol=1e-3)


@pytest.mark.parametrize("seed", range(5))
def test_john_centre_earns_a_d_plus_one_fraction_of_the_optimum(seed):
    rng = np.random.default_rng(seed)
    d = 6
    X = rng.normal(size=(300, d))
    theta = rng.normal(size=d)
    theta /= np.linalg.norm(theta)
    X = positive_normalise(X, theta, min_reward=0.01)
    u = john_ellipsoid_distribution(X)
    centre_reward = (u @ X) @ theta
    # the LinNash guarantee (exact John ellipsoid: >= mu*/(d+1)); 2% slack for the 1% stopping rule
    assert centre_reward >= 0.98 * (X @ theta).max() / (d + 1)


def test_bad_arms_are_rejected():
    with pytest.raises(ValueError, match="arms"):
        g_optimal_design(np.zeros(5))
    with pytest.raises(ValueError, match="zero"):
        g_optimal_design(np.zeros((4, 3)))
    with pytest.raises(ValueError, match="finite"):
        john_ellipsoid_distribution(np.array([[np.nan, 1.0], [1.0, 2.0]]))
