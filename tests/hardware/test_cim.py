"""CIMRobustTraining-v0: the perturbation models, the energy table, training by sample weights, bad input."""

from __future__ import annotations

import math

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("hardware"), reason="needs the [hardware] extra (torch, scipy)")

ENV_ID = "icmlgym/CIMRobustTraining-v0"


def _make(**kw):
    import icmlgym

    return icmlgym.make(ENV_ID, **{"train_steps": 6, "batch_size": 8, "K": 3, "eval_realisations": 1, **kw}).unwrapped


# ----------------------------------------------------------------------------- perturbation models
def test_mismatch_and_additive_have_the_documented_spread():
    import torch

    from icmlgym.envs.hardware.cim import additive, mismatch

    w = torch.full((200, 200), 0.5)
    gen = torch.Generator().manual_seed(0)
    (m,) = mismatch([w], 0.7, gen)
    assert float((m / w - 1).std()) == pytest.approx(0.7, rel=0.03)
    (a,) = additive([w], 0.1, gen)
    assert float((a - w).std()) == pytest.approx(0.1 * 0.5, rel=0.03)


def test_pcm_drift_decays_conductance_and_compensation_restores_the_scale():
    import torch

    from icmlgym.envs.hardware.cim import SECONDS, pcm_drift

    w = torch.randn(100, 100, generator=torch.Generator().manual_seed(1))
    means = []
    for t in ("1min", "1day", "1year"):
        (wt,), (scale,) = pcm_drift([w], SECONDS[t], torch.Generator().manual_seed(2))
        means.append(float(wt.abs().mean()))
        assert scale >= 1.0
        assert torch.equal(torch.sign(wt[wt != 0]), torch.sign(w[wt != 0]))
    assert means[0] > means[1] > means[2]
    # with nu around 0.05-0.1, a year of drift from t0 = 20 s loses about half the conductance
    assert 0.3 < means[2] / means[0] < 0.8
    (wt,), (scale,) = pcm_drift([w], SECONDS["1year"], torch.Generator().manual_seed(2), compensate=False)
    assert scale == 1.0
    with pytest.raises(ValueError, match="from t0 = 20.0 s after programming, got 1.0 s"):
        pcm_drift([w], 1.0, torch.Generator())


def test_energy_table_counts_macs():
    from icmlgym.envs.hardware.cim import ENERGY_PJ, energy_per_inference

    e = energy_per_inference([64, 64, 10])
    assert e["macs"] == 64 * 64 + 64 * 10
    digital = e["macs"] * (ENERGY_PJ["digital_fp32_mult"] + ENERGY_PJ["digital_fp32_add"] + ENERGY_PJ["digital_sram_read_32bit"]) + 74 * 0.9
    assert e["energy_digital_pj"] == pytest.approx(digital)
    assert 0 < e["energy_saving"] < 1


# ----------------------------------------------------------------------------- the env
def test_observation_statistics_are_consistent():
    env = _make()
    obs, _ = env.reset(seed=0)
    table = obs["samples"].reshape(env.batch_size, -1)
    assert table.shape == (8, 4 + 3)
    assert np.all(table[:, 0] >= 0) and np.all((0 <= table[:, 2]) & (table[:, 2] <= 1))
    assert np.all((0 <= table[:, 3]) & (table[:, 3] <= 1))
    # disagreement 0 and all noisy predictions right imply the clean prediction is right: margin > 0
    sure = (table[:, 2] == 0) & (table[:, 3] == 1)
    assert np.all(table[sure, 1] > 0)


def test_weights_steer_training_and_zero_weights_skip_the_update():
    import torch

    env = _make()
    env.reset(seed=0)
    before = [p.detach().clone() for p in env.params]
    _, r, term, _, info = env.step(np.zeros(env.action_space.shape, np.float32))
    assert not term and r == 0.0 and info["cost"] == {"train_steps": 1.0, "noisy_forwards": 0.0}
    assert all(torch.equal(a, b) for a, b in zip(before, env.params))
    a = np.zeros((env.batch_size, 1 + env.K), np.float32)
    a[:, 2] = 1.0  # the second noise realisation only
    _, _, _, _, info = env.step(a.reshape(-1))
    assert info["cost"]["noisy_forwards"] == 1.0
    assert not all(torch.equal(a_, b) for a_, b in zip(before, env.params))


def test_episode_deploys_on_the_grid_and_is_deterministic():
    def play():
        env = _make()
        env.reset(seed=3)
        a = np.ones(env.action_space.shape, np.float32)
        while True:
            _, r, term, _, info = env.step(a)
            if term:
                return r, info["metrics"]

    r1, m1 = play()
    r2, m2 = play()
    assert m1 == m2 and r1 == m1["robust_accuracy"]
    for k in ("acc_mismatch_70", "acc_additive_10", "acc_drift_1year", "acc_drift_1min", "drift_range", "energy_saving"):
        assert k in m1 and math.isfinite(m1[k])
    assert m1["drift_range"] == pytest.approx(max(m1[f"acc_drift_{t}"] for t in ("1min", "1hour", "1day", "1week", "1month", "1year"))
                                              - min(m1[f"acc_drift_{t}"] for t in ("1min", "1hour", "1day", "1week", "1month", "1year")))


def test_agents_build_the_documented_weights():
    import gymnasium as gym

    from icmlgym.agents.hardware import DWPAgent
    from icmlgym.agents.protocol import AgentSpec
    from icmlgym.baselines.hardware import LossWeightedAgent, NoiseInjectionAgent, StandardTrainingAgent

    env = _make()
    obs, _ = env.reset(seed=0)
    table = obs["samples"].reshape(env.batch_size, -1)
    spec = AgentSpec(env_id=ENV_ID, observation_space=env.observation_space, action_space=env.action_space)
    out = {}
    for name, agent in (("std", StandardTrainingAgent()), ("n1", NoiseInjectionAgent(realisations=1)), ("nk", NoiseInjectionAgent()),
                        ("dwp", DWPAgent()), ("loss", LossWeightedAgent())):
        agent.reset(0, spec)
        act = agent.act(obs, {})
        assert env.action_space.contains(act)
        out[name] = act.reshape(env.batch_size, -1)
    assert np.all(out["std"][:, 0] == 1) and np.all(out["std"][:, 1:] == 0)
    assert np.all(out["n1"][:, 1] == 1) and np.all(out["n1"][:, [0, 2, 3]] == 0)
    assert np.all(out["nk"][:, 1:] == 1) and np.all(out["nk"][:, 0] == 0)
    d = table[:, 2]
    expect = np.ones(len(d)) if d.max() == 0 else 0.5 + 0.5 * d / d.max()
    assert np.allclose(out["dwp"][:, 1], expect, atol=1e-6)
    nl = table[:, 4:].mean(1)
    assert np.allclose(out["loss"][:, 1], 0.5 + 0.5 * nl / nl.max(), atol=1e-6)
    assert isinstance(env.action_space, gym.spaces.Box)


# ----------------------------------------------------------------------------- bad input
@pytest.mark.parametrize(("value", "message"), [
    (float("nan"), "sample weights must be finite: weight 5 is nan"),
    (-0.25, "sample weights must be >= 0: weight 5 is -0.25"),
    (1.5, "sample weights must be <= 1: weight 5 is 1.5"),
])
def test_bad_sample_weights_are_named(value, message):
    env = _make()
    env.reset(seed=0)
    a = np.ones(env.action_space.shape, np.float32)
    a[5] = value
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        env.step(a)
    with pytest.raises(ValueError, match=r"must have shape \(32,\)"):
        env.step(np.ones(3, np.float32))


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"data": "cifar"}, "data must be one of ('digits', 'signals', 'products'), got 'cifar'"),
    ({"K": 0}, "K must be an integer >= 1, got 0"),
    ({"train_noise": -0.1}, "train_noise must be a finite number >= 0, got -0.1"),
    ({"mismatch_levels": (0.5, -1)}, "mismatch_levels must be non-empty and positive, got [0.5, -1]"),
    ({"drift_times": ("1decade",)}, "drift_times must name times of"),
])
def test_bad_constructor_arguments_are_named(kwargs, message):
    import re

    from icmlgym.envs.hardware.cim_env import CIMRobustTrainingEnv

    with pytest.raises(ValueError, match=re.escape(message)):
        CIMRobustTrainingEnv(**kwargs)


@pytest.mark.parametrize("data", ["signals", "products"])
def test_other_data_types_run(data):
    env = _make(data=data)
    obs, _ = env.reset(seed=0)
    assert env.observation_space.contains(obs)
    assert env.sizes[0] == (40 if data == "signals" else 3 * 16 * 16)
    assert env.sizes[-1] == (10 if data == "signals" else 48)
