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


def test_design_on_collinear_arms_is_a_probability_vector_at_the_optimum():
    # rank one: Frank-Wolfe's first step would move all weight and divide by zero (NaN design before)
    x = np.array([0.3, -1.0, 2.0, 0.5, 0.0])
    X = np.arange(1, 5)[:, None] * x
    with np.errstate(all="raise"):
        lam = g_optimal_design(X)
    assert lam.tolist() == [0.0, 0.0, 0.0, 1.0]
    assert _max_variance(X, lam) <= 1.0 + 1e-9
    X[2] = -X[3]  # two rows of largest norm share the weight
    assert g_optimal_design(X).tolist() == [0.0, 0.0, 0.5, 0.5]
    assert g_optimal_design(np.repeat(X[:1], 3, axis=0)).tolist() == [1 / 3] * 3


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


def _problems(rng: np.random.Generator, n: int, m: int, k_max: int) -> list[np.ndarray]:
    out = []
    for _ in range(n):
        Q = rng.normal(size=(int(rng.integers(m + 2, k_max)), m))  # full column rank with the ties below
        if rng.random() < 0.3:  # tied rows: the first of ties must win in the lock step as singly
            Q[-2:] = Q[:2]
        out.append(Q)
    return out


@pytest.mark.parametrize(("m", "k_max", "tol", "max_iter"), [(3, 20, 0.01, 10_000), (10, 130, 0.01, 10_000), (6, 70, 1e-4, 10_000),
                                                            (5, 40, 0.01, 7), (4, 300, 0.1, 10_000)])
def test_lock_step_solves_are_the_single_solves_doubles(m, k_max, tol, max_iter):
    from icmlgym.envs.fairbandit.design import _d_optimal_weights, _d_optimal_weights_many

    rng = np.random.default_rng(m * 1000 + k_max)
    Qs = _problems(rng, 24, m, k_max)
    many = _d_optimal_weights_many(Qs, tol, max_iter)
    for Q, u in zip(Qs, many):
        assert u.shape == (len(Q),)
        assert u.tobytes() == _d_optimal_weights(Q, tol, max_iter).tobytes()


def test_designs_solved_together_are_each_designs_doubles():
    from icmlgym.envs.fairbandit.design import g_optimal_designs

    rng = np.random.default_rng(11)
    Xs = [rng.normal(size=(int(rng.integers(2, 60)), 5)) for _ in range(12)]
    Xs.append(rng.normal(size=(1, 5)))  # one arm
    Xs.append(np.repeat(rng.normal(size=(1, 5)), 4, axis=0) * np.arange(1, 5)[:, None])  # rank one
    Xs.append(rng.normal(size=(3, 5)))  # fewer arms than dimensions
    lams = g_optimal_designs(Xs)
    assert [lam.tobytes() for lam in lams] == [g_optimal_design(X).tobytes() for X in Xs]
    with pytest.raises(ValueError, match="finite"):
        g_optimal_designs([Xs[0], np.full((3, 5), np.inf)])


def test_problems_are_padded_to_a_row_count_of_their_own():
    from icmlgym.envs.fairbandit.design import padded_rows

    assert [padded_rows(k) for k in (1, 2, 8, 9, 55, 64, 65, 100, 1000)] == [8, 8, 8, 16, 64, 64, 128, 128, 1024]
