"""FTRL dynamics: agreement with OpenSpiel's egt module, choice maps, discrete FTRL bookkeeping."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.integrate import solve_ivp

from icmlgym.envs.games.dynamics import (
    integrate_ftrl,
    integrate_replicator,
    joint_distribution,
    project_simplex,
    replicator_field,
    run_ftrl,
    softmax,
)
from icmlgym.envs.games.metrics import cce_distance, cce_gap, deviation_gain_matrix, external_regret
from icmlgym.envs.games.normal_form import random_game, rock_paper_scissors, shapley_game

egt_dynamics = pytest.importorskip("open_spiel.python.egt.dynamics", reason="open_spiel is a test-only dependency")

# Tolerances: vector fields are the same formula, so they agree to float rounding (1e-12);
# trajectories are integrated by the same RK45 with rtol 1e-10, so they agree to 1e-7.
FIELD_TOL = 1e-12
TRAJ_TOL = 1e-7


@pytest.mark.parametrize("shape,seed", [((3, 3), 0), ((4, 2), 1), ((2, 3, 2), 2), ((3, 3, 3), 3)])
def test_replicator_field_matches_openspiel_multipopulation(shape, seed):
    game = random_game(shape, seed=seed)
    theirs = egt_dynamics.MultiPopulationDynamics(np.asarray(game.payoffs), egt_dynamics.replicator)
    rng = np.random.default_rng(seed)
    for _ in range(20):
        state = np.concatenate([rng.dirichlet(np.ones(n)) for n in game.n_actions])
        assert np.allclose(replicator_field(game, state), theirs(state), atol=FIELD_TOL, rtol=0)


@pytest.mark.parametrize("game", [rock_paper_scissors(), shapley_game(), random_game((3, 2, 2), seed=5)])
def test_replicator_trajectory_matches_openspiel(game):
    theirs = egt_dynamics.MultiPopulationDynamics(np.asarray(game.payoffs), egt_dynamics.replicator)
    rng = np.random.default_rng(0)
    x0 = [rng.dirichlet(np.ones(n)) for n in game.n_actions]
    t_eval = np.linspace(0, 10, 21)
    ours = integrate_replicator(game, x0, 10.0, t_eval=t_eval, rtol=1e-10, atol=1e-12)
    ref = solve_ivp(lambda t, y: theirs(y, t), (0, 10), np.concatenate(x0), t_eval=t_eval, rtol=1e-10, atol=1e-12)
    assert ours.success and ref.success
    assert np.allclose(np.concatenate(ours.strategies, axis=1), ref.y.T, atol=TRAJ_TOL)


def test_single_population_rps_matches_openspiel():
    # symmetric RPS, one population: x' = x (Ax - x.Ax); our multi-population field with both
    # populations at the same state gives the same component per population
    game = rock_paper_scissors()
    single = egt_dynamics.SinglePopulationDynamics(np.asarray(game.payoffs), egt_dynamics.replicator)
    rng = np.random.default_rng(1)
    for _ in range(10):
        x = rng.dirichlet(np.ones(3))
        ours = replicator_field(game, np.concatenate([x, x]))
        assert np.allclose(ours[:3], single(x), atol=FIELD_TOL, rtol=0)
        assert np.allclose(ours[3:], single(x), atol=FIELD_TOL, rtol=0)


def test_entropic_ftrl_ode_is_the_replicator_and_matches_openspiel():
    game = random_game((3, 3), seed=7)
    theirs = egt_dynamics.MultiPopulationDynamics(np.asarray(game.payoffs), egt_dynamics.replicator)
    rng = np.random.default_rng(3)
    x0 = [rng.dirichlet(np.ones(3)) for _ in range(2)]
    t_eval = np.linspace(0, 5, 11)
    ftrl = integrate_ftrl(game, [np.log(x) for x in x0], 5.0, "entropic", t_eval=t_eval, rtol=1e-10, atol=1e-12)
    ref = solve_ivp(lambda t, y: theirs(y, t), (0, 5), np.concatenate(x0), t_eval=t_eval, rtol=1e-10, atol=1e-12)
    assert np.allclose(np.concatenate(ftrl.strategies, axis=1), ref.y.T, atol=1e-6)


def test_euclidean_ftrl_ode_stays_on_simplex():
    # projected FTRL reaches the boundary in finite time and must stay a distribution there
    game = random_game((2, 2), seed=0)
    traj = integrate_ftrl(game, [np.array([0.6, 0.4]), np.array([0.6, 0.4])], 50.0, "euclidean", t_eval=np.linspace(0, 50, 11))
    for x in traj.strategies:
        assert np.allclose(x.sum(axis=1), 1.0) and (x >= -1e-12).all()


def test_choice_maps():
    z = np.array([[1000.0, 0.0, -1000.0], [0.0, 0.0, 0.0]])
    s = softmax(z)
    assert np.allclose(s.sum(axis=1), 1) and s[0, 0] == pytest.approx(1.0)
    p = project_simplex(np.array([[0.5, 0.5, 0.5], [2.0, 0.0, -1.0], [0.2, 0.3, 0.5]]))
    assert np.allclose(p, [[1 / 3] * 3, [1.0, 0.0, 0.0], [0.2, 0.3, 0.5]])


def test_run_ftrl_regret_matches_metric_and_is_sublinear():
    game = random_game((3, 3, 3), seed=2)
    res = run_ftrl(game, 2000, eta=0.1, n_runs=4, seed=0, record_every=1)
    # the bookkeeping regret equals the regret computed from the time-averaged joint distribution
    hist = res.history
    for m in range(4):
        joint = np.mean([joint_distribution([h[t, m] for h in hist]) for t in range(2000)], axis=0)
        assert np.allclose(external_regret(game, joint, 2000), res.regret[m], atol=1e-8)
    # Hedge's bound with eta: ln(n)/eta + eta T / 8 (payoffs in [0, 1]); plus the random start's log term
    assert (res.regret / 2000 < 0.05).all()


def test_cce_gap_and_distance():
    game = rock_paper_scissors()
    uniform = np.full(9, 1 / 9)
    assert cce_gap(game, uniform) == pytest.approx(0.0, abs=1e-12)
    assert cce_distance(game, uniform) == 0.0
    pure = np.zeros(9)
    pure[0] = 1.0  # (rock, rock): each player gains 1 by switching to paper
    assert cce_gap(game, pure) == pytest.approx(1.0)
    d = cce_distance(game, pure)
    assert 0.0 < d <= 1.0
    G = deviation_gain_matrix(game)
    assert G.shape == (6, 9)


def test_discrete_hedge_tracks_continuous_ftrl_for_small_steps():
    """Hedge with step eta for T rounds follows the replicator ODE up to time eta*T with O(eta) error."""
    game = random_game((3, 2, 2), seed=11)
    rng = np.random.default_rng(0)
    x0 = [rng.dirichlet(np.ones(n)) for n in game.n_actions]
    ode = integrate_ftrl(game, [np.log(x) for x in x0], 5.0, "entropic", t_eval=[5.0])
    errors = []
    for eta in (0.05, 0.005):
        res = run_ftrl(game, int(round(5.0 / eta)), eta=eta, init_strategies=[x[None] for x in x0])
        # run_ftrl's final strategy is the one played at the last round, i.e. at time eta * (T - 1)
        errors.append(max(np.abs(f[0] - s[-1]).max() for f, s in zip(res.final, ode.strategies)))
    assert errors[1] < errors[0] / 3 and errors[1] < 0.01, errors
