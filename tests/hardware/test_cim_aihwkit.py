"""CIMRobustTraining-v0 on aihwkit (extra [cim]): its hardware-aware-training weight modifier as the
training noise, its PCM model as the deployment drift model. Skipped where aihwkit is not installed
(it installs only with ``pip install --no-deps aihwkit==1.1.0``); the missing-backend error is tested
everywhere."""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("hardware"), reason="needs the [hardware] extra (torch, scipy)")

ENV_ID = "icmlgym/CIMRobustTraining-v0"
needs_aihwkit = pytest.mark.skipif(not extra_installed("cim"), reason="needs the [cim] extra: pip install --no-deps aihwkit==1.1.0")


def _play(**kw):
    import icmlgym

    env = icmlgym.make(ENV_ID, **{"train_steps": 6, "batch_size": 8, "K": 3, "eval_realisations": 2, **kw}).unwrapped
    obs, _ = env.reset(seed=3)
    first = obs["samples"].copy()
    a = np.ones(env.action_space.shape, np.float32)
    while True:
        _, _, term, _, info = env.step(a)
        if term:
            return env, first, info["metrics"]


@needs_aihwkit
def test_hwa_noise_is_aihwkits_add_normal_modifier():
    """aihwkit's ADD_NORMAL modifier: zero-mean Gaussian noise of std_dev x max|W| per layer,
    reproducible from the seed, fresh across seeds, no gradient."""
    import torch

    from icmlgym.envs.hardware.aihwkit_backend import hwa_noise

    w = [torch.randn(64, 64, generator=torch.Generator().manual_seed(0)) * 0.3, torch.randn(10, 64) * 2.0]
    n = hwa_noise(w, 0.1, seed=5)
    for wi, ni in zip(w, n):
        assert ni.shape == wi.shape and not ni.requires_grad
        assert float(ni.std()) == pytest.approx(0.1 * float(wi.abs().max()), rel=0.1)
        assert abs(float(ni.mean())) < 0.02 * float(wi.abs().max())
    assert all(torch.equal(a, b) for a, b in zip(n, hwa_noise(w, 0.1, seed=5)))
    assert not torch.equal(n[0], hwa_noise(w, 0.1, seed=6)[0])


@needs_aihwkit
def test_aihwkit_pcm_drift_keeps_a_trained_net_close_to_clean_and_is_reproducible():
    """aihwkit's PCMLikeNoiseModel with global drift compensation on a trained digits MLP: a year of
    drift costs a few points at most (compensation), each call with the same seed gives the same
    accuracies, another seed other draws."""
    from icmlgym.envs.hardware.aihwkit_backend import pcm_drift_accuracy
    from icmlgym.envs.hardware.cim import SECONDS

    env, _, m = _play(train_steps=60, batch_size=32, K=1)
    W, B = [w.detach() for w in env.weights], [b.detach() for b in env.biases]
    times = [SECONDS["1min"], SECONDS["1year"]]
    acc = pcm_drift_accuracy(W, B, env.x_test, env.y_test, times, 2, seed=1)
    assert acc == pcm_drift_accuracy(W, B, env.x_test, env.y_test, times, 2, seed=1)
    assert acc != pcm_drift_accuracy(W, B, env.x_test, env.y_test, times, 2, seed=2)
    assert m["accuracy_clean"] > 0.8
    for per_time in acc:
        assert all(a > m["accuracy_clean"] - 0.1 for a in per_time), (acc, m["accuracy_clean"])


@needs_aihwkit
def test_env_trains_on_aihwkit_noise_and_deploys_on_aihwkits_drift():
    _, first_ours, ours = _play()
    _, first_hwa, hwa = _play(train_noise_type="aihwkit", train_noise=0.1)
    # same minibatch and clean statistics, other noisy ones (another noise model)
    k = 4 + 3
    assert np.array_equal(first_ours.reshape(8, k)[:, :2], first_hwa.reshape(8, k)[:, :2])
    assert not np.array_equal(first_ours.reshape(8, k)[:, 4:], first_hwa.reshape(8, k)[:, 4:])
    assert hwa != ours
    _, _, a1 = _play(backend="aihwkit")
    _, _, a2 = _play(backend="aihwkit")
    assert a1 == a2  # deterministic
    # the drift conditions come from aihwkit; mismatch and additive conditions are unchanged
    assert all(a1[k] == ours[k] for k in ours if k.startswith(("acc_mismatch", "acc_additive", "accuracy_clean")))
    assert any(a1[k] != ours[k] for k in ours if k.startswith("acc_drift_"))


def test_missing_aihwkit_and_unknown_backends_are_named(monkeypatch):
    from icmlgym.envs.hardware import aihwkit_backend
    from icmlgym.envs.hardware.cim_env import CIMRobustTrainingEnv

    with pytest.raises(ValueError, match="backend must be 'ours' .* or 'aihwkit' .*, got 'spice'"):
        CIMRobustTrainingEnv(backend="spice")
    with pytest.raises(ValueError, match="train_noise_type must be 'mismatch' .* or 'aihwkit' .*, got 'gauss'"):
        CIMRobustTrainingEnv(train_noise_type="gauss")
    from icmlgym.catalog import MissingExtraError

    monkeypatch.setattr(aihwkit_backend, "available", lambda: False)
    for kw in ({"backend": "aihwkit"}, {"train_noise_type": "aihwkit"}):
        with pytest.raises(MissingExtraError, match=r"needs aihwkit: pip install --no-deps aihwkit==1\.1\.0") as err:
            CIMRobustTrainingEnv(**kw)
        assert err.value.extra == "cim"
