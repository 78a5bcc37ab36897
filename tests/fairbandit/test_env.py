"""FairLinearBandit-v0: API conformance, determinism, rewards, metrics, errors."""

import warnings

import numpy as np
import pytest
import scipy.stats as st
from gymnasium.utils.env_checker import check_env

import icmlgym
from icmlgym.envs.checking import determinism_single
from icmlgym.envs.fairbandit.fair_linear_bandit import FairLinearBanditEnv
from icmlgym.envs.fairbandit.pmeans import PAPER_P_GRID, metric_name

ENV_ID = "icmlgym/FairLinearBandit-v0"
SMALL = {"n_arms": 20, "dim": 4, "horizon": 300}


@pytest.mark.parametrize("noise", ["gaussian", "bernoulli", "clipped"])
def test_check_env_and_determinism(noise):
    env = icmlgym.make(ENV_ID, noise=noise, **SMALL)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the Gaussian reward box is unbounded by nature
        check_env(env.unwrapped, skip_render_check=True)
    assert determinism_single(ENV_ID, {"noise": noise, **SMALL}, steps=400) == ""


def test_reset_seed_controls_noise_not_instance():
    env = FairLinearBanditEnv(**SMALL)
    o1, info = env.reset(seed=1)
    r1 = [env.step(3)[1] for _ in range(50)]
    o2, _ = env.reset(seed=2)
    r2 = [env.step(3)[1] for _ in range(50)]
    np.testing.assert_array_equal(o1["arms"], o2["arms"])
    assert r1 != r2
    assert info["horizon"] == 300 and info["n_arms"] == 20 and info["dim"] == 4
    # another instance_seed is another problem
    assert not np.array_equal(FairLinearBanditEnv(instance_seed=1, **SMALL).arms, env.arms)


def test_gaussian_rewards_have_the_linear_mean_and_the_paper_variance():
    env = FairLinearBanditEnv(n_arms=5, dim=3, horizon=20_000)
    env.reset(seed=0)
    rewards = np.array([env.step(2)[1] for _ in range(20_000)])
    assert rewards.mean() == pytest.approx(env.means[2], abs=0.02)  # s.e. 0.005
    assert rewards.var() == pytest.approx(0.5, rel=0.05)


def test_bernoulli_and_clipped_rewards_are_non_negative():
    for noise in ("bernoulli", "clipped"):
        env = FairLinearBanditEnv(n_arms=5, dim=3, horizon=5000, noise=noise)
        env.reset(seed=0)
        rewards = np.array([env.step(1)[1] for _ in range(5000)])
        assert rewards.min() >= 0.0
        if noise == "bernoulli":
            assert set(np.unique(rewards)) <= {0.0, 1.0}
            assert rewards.mean() == pytest.approx(env.means[1], abs=0.03)
        else:
            assert rewards.mean() >= env.means[1] - 0.03  # clipping only raises the mean


def test_metrics_at_the_end_are_the_pmeans_regret_of_the_expected_rewards():
    env = FairLinearBanditEnv(**SMALL)
    env.reset(seed=0)
    actions = np.random.default_rng(0).integers(0, 20, 300)
    for t, a in enumerate(actions):
        _, _, term, trunc, info = env.step(int(a))
        assert not term
        assert trunc == (t == 299)
        assert info["cost"]["env_steps"] == t + 1
    m = info["metrics"]
    exp = env.means[actions]
    assert m["nash_regret"] == pytest.approx(env.optimum - st.gmean(exp))
    assert m["average_regret"] == pytest.approx(env.optimum - exp.mean())
    assert m["pmeans_regret[p=-2]"] == pytest.approx(env.optimum - st.pmean(exp, -2))
    assert m["egalitarian_regret"] == pytest.approx(env.optimum - exp.min())
    assert m["pseudo_regret"] == pytest.approx(300 * env.optimum - exp.sum())
    assert all(isinstance(v, float) for v in m.values())
    assert {metric_name(p) for p in PAPER_P_GRID} <= set(m)
    curve = info["regret_curve"]
    assert curve["t"][-1] == 300 and curve[metric_name(0.0)][-1] == pytest.approx(m["nash_regret"])
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)


def test_invalid_actions_raise_value_error_naming_the_space():
    env = FairLinearBanditEnv(**SMALL)
    env.reset(seed=0)
    for bad in (20, -1, 2.5, "a"):
        with pytest.raises(ValueError, match="Discrete"):
            env.step(bad)
    env.step(np.int64(3))  # numpy integers are valid actions


def test_explicit_instance_and_data_instances():
    env = icmlgym.make(ENV_ID, arms=[[1.0, 0.0], [0.0, 1.0], [0.5, 0.5]], theta=[0.9, 0.3], horizon=10)
    assert env.unwrapped.means.tolist() == pytest.approx([0.9, 0.3, 0.6])
    for name in ("diabetes", "wine", "breast_cancer"):
        e = icmlgym.make(ENV_ID, instance=name, dim=5, n_arms=None, horizon=10)
        e.reset(seed=0)
        assert e.unwrapped.n_arms > 100 and e.unwrapped.means.min() > 0


def test_ltr_instance_through_the_env(tmp_path):
    from tests.fairbandit.test_instances import LTR_TEXT

    path = tmp_path / "ltr.txt"
    path.write_text(LTR_TEXT)
    env = icmlgym.make(ENV_ID, instance="ltr", ltr_path=str(path), dim=3, n_arms=None, lasso_alpha=0.001, horizon=20)
    obs, _ = env.reset(seed=0)
    assert obs["arms"].shape == (9, 3)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"noise": "poisson"}, "noise must be one of"),
        ({"noise_var": -1.0}, "noise_var"),
        ({"horizon": 0}, "horizon"),
        ({"instance": "mnist"}, "unknown instance"),
        ({"instance": "ltr"}, "ltr_path"),
        ({"arms": [[1.0, 0.0]]}, "both arms and theta"),
        ({"arms": [[1.0, 0.0], [0.0, 1.0]], "theta": [1.0, -1.0]}, "positive"),
        ({"arms": [[1.0, 0.0], [0.0, 1.0]], "theta": [2.0, 1.0], "noise": "bernoulli"}, r"\(0, 1\]"),
    ],
)
def test_bad_arguments_are_rejected_with_a_reason(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FairLinearBanditEnv(**kwargs)


def test_data_instances_name_the_extra_when_scikit_learn_is_missing(monkeypatch):
    import importlib.util

    from icmlgym.catalog import MissingExtraError

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "sklearn" else real(name, *a))
    with pytest.raises(MissingExtraError, match=r"icmlgym\[fair\]"):
        FairLinearBanditEnv(instance="wine", n_arms=None, dim=3)
    FairLinearBanditEnv(**SMALL)  # the synthetic default needs no extra
