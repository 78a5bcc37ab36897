"""icmlgym.nn.recurrent: constraints hold through training, OT projections agree, gains match,
and the torch network runs the same dynamics as the env's numpy simulation."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("ot")

from icmlgym.agents.cognitive import fit_network, make_constraint  # noqa: E402
from icmlgym.envs.cognitive.network import simulate  # noqa: E402
from icmlgym.envs.cognitive.tasks import make_task  # noqa: E402
from icmlgym.nn.recurrent import RecurrentNetwork, ot_project, rank_match, target_quantiles  # noqa: E402

CONSTRAINTS = ("dale-lognormal", "dale-halfnormal", "dale", "none")


def test_rank_match_is_the_exact_ot_map_and_pot_agrees():
    rng = np.random.default_rng(0)
    x = rng.normal(size=200)
    y = np.sort(rng.lognormal(size=200))
    ours = rank_match(torch.as_tensor(x), torch.as_tensor(y)).numpy()
    np.testing.assert_allclose(ot_project(x, y), ours, atol=1e-9)
    assert np.array_equal(np.argsort(ours), np.argsort(x)) and np.allclose(np.sort(ours), y)
    # POT's general case: a weighted target of another size; the result keeps the order and the mean
    z = ot_project(x, np.array([0.0, 1.0, 5.0]), np.array([0.5, 0.3, 0.2]))
    assert np.all(np.diff(z[np.argsort(x)]) >= -1e-12) and z.mean() == pytest.approx(0.3 + 1.0)
    with pytest.raises(ValueError, match="use ot_project"):
        rank_match(torch.zeros(3), torch.zeros(4))


def test_target_quantiles_have_the_asked_second_moment_and_tails():
    heavy = target_quantiles("lognormal", 100_000, 0.04, shape=1.0)
    light = target_quantiles("halfnormal", 100_000, 0.04)
    assert np.mean(heavy**2) == pytest.approx(0.04) and np.mean(light**2) == pytest.approx(0.04, rel=0.01)
    assert heavy.max() > 3 * light.max() and np.median(heavy) < np.median(light)
    with pytest.raises(ValueError, match="unknown magnitude target"):
        target_quantiles("cauchy", 10, 1.0)


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_initial_gain_is_matched(name):
    net = RecurrentNetwork(3, 50, 3, make_constraint(name), gain=1.3, seed=0)
    rms = net.w_rec.detach().pow(2).mean().sqrt().item()
    assert rms == pytest.approx(1.3 / np.sqrt(50), rel=0.05 if name == "none" else 1e-3)


@pytest.mark.parametrize("name", ["dale-lognormal", "dale-halfnormal", "dale"])
def test_constraints_hold_after_training(name):
    task = make_task("perceptual_decision")
    b = task.batch(32, 0)
    net = RecurrentNetwork(task.n_input, 20, task.n_actions, make_constraint(name), seed=1)
    before = np.sort(np.abs(net.w_rec.detach().numpy()[:, :16]).ravel())
    counters = fit_network(net, b.inputs, b.targets, b.response_mask, 5, np.random.default_rng(0), batch_size=8, lr=0.05)
    assert counters["gradient_steps"] == 5 and counters["train_examples"] == 40 and counters["forward_flops"] > 0
    w = net.w_rec.detach().numpy()
    assert np.all(w[:, :16] >= 0) and np.all(w[:, 16:] <= 0), "Dale's signs: 16 excitatory, 4 inhibitory columns"
    after = np.sort(np.abs(w[:, :16]).ravel())
    if name.startswith("dale-"):
        np.testing.assert_allclose(after, before, rtol=1e-6)  # the magnitude distribution is exactly the target's
    else:
        assert not np.allclose(after, before)


def test_pot_solver_gives_the_same_projection():
    a = make_constraint("dale-lognormal", solver="rank")
    b = make_constraint("dale-lognormal", solver="pot")
    g = torch.Generator().manual_seed(0)
    raw = a.init(10, 1.0, g)
    b.init(10, 1.0, torch.Generator().manual_seed(0))
    noisy = raw + 0.01 * torch.randn(10, 10, generator=g)
    x, y = noisy.clone(), noisy.clone()
    a.project_(x)
    b.project_(y)
    np.testing.assert_allclose(x.numpy(), y.numpy(), atol=1e-6)


def test_torch_forward_matches_the_envs_numpy_simulation():
    task = make_task("context_integration")
    b = task.batch(6, 0)
    net = RecurrentNetwork(task.n_input, 16, task.n_actions, make_constraint("dale-lognormal"), alpha=0.3, rate_max=5.0, gain=2.5, seed=2)
    logits, rates = net(torch.as_tensor(b.inputs), return_rates=True)
    np_logits, np_rates = simulate(net.to_arrays(), b.inputs, alpha=0.3, rate_max=5.0)
    np.testing.assert_allclose(np_rates, rates.detach().numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(np_logits, logits.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert np_rates.max() <= 5.0


def test_bad_network_arguments():
    with pytest.raises(ValueError, match="n_hidden must be >= 1"):
        RecurrentNetwork(3, 0, 3)
    with pytest.raises(ValueError, match="inputs must be"):
        RecurrentNetwork(3, 4, 3)(torch.zeros(2, 5, 4))
    with pytest.raises(ValueError, match="unknown constraint"):
        make_constraint("dale-cauchy")
    with pytest.raises(ValueError, match="leave a population empty"):
        RecurrentNetwork(3, 2, 3, make_constraint("dale", frac_exc=0.9))
