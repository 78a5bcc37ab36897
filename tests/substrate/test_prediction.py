"""Prediction-task envs: the base, DigitsOOD-v0, their metrics, and runs through the runner's executors."""

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from sklearn.metrics import average_precision_score, roc_auc_score

import icmlgym
from icmlgym.catalog import Resources, TaskCard, Tier
from icmlgym.envs.prediction.metrics import aupr, auroc, f1, fpr_at_tpr
from icmlgym.runner import make_tasks, run_tasks

ENV = "icmlgym/DigitsOOD-v0"


def test_metrics_agree_with_scikit_learn():
    rng = np.random.default_rng(0)
    y = rng.integers(0, 2, 300)
    s = y * 0.5 + rng.random(300)
    s[:20] = 0.5  # ties
    assert auroc(y, s) == pytest.approx(roc_auc_score(y, s))
    assert aupr(y, s) == pytest.approx(average_precision_score(y, s), abs=0.02)
    assert 0 <= fpr_at_tpr(y, s) <= 1 and f1(y, s > 0.75) > 0.5
    assert np.isnan(auroc(np.zeros(5), np.arange(5)))
    with pytest.raises(ValueError, match="differ in length"):
        auroc([0, 1], [0.5])


def test_env_passes_the_checker_and_is_deterministic():
    env = icmlgym.make(ENV, batch_size=16, n_batches=3)
    check_env(env.unwrapped, skip_render_check=True)
    a, _ = env.reset(seed=4)
    b, _ = env.reset(seed=4)
    assert np.array_equal(a["inputs"], b["inputs"])


def test_episode_returns_auroc_and_sampled_actions_are_accepted():
    env = icmlgym.make(ENV, batch_size=16, n_batches=3)
    obs, info = env.reset(seed=0)
    env.action_space.seed(0)
    rewards = []
    for t in range(3):
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        rewards.append(r)
        assert term == (t == 2)
    assert rewards[:2] == [0.0, 0.0] and rewards[2] == info["metrics"]["auroc"]
    assert set(info["metrics"]) == {"auroc", "aupr", "fpr95"} and info["cost"]["predictions"] == 48


@pytest.mark.parametrize("bad", [np.full(16, 2.0), np.zeros(15), np.full(16, np.nan)])
def test_bad_predictions_are_refused_with_the_space(bad):
    env = icmlgym.make(ENV, batch_size=16, n_batches=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not in the action space Box"):
        env.unwrapped.step(bad)


def test_bad_arguments():
    with pytest.raises(ValueError, match="ood_fraction"):
        icmlgym.make(ENV, ood_fraction=1.0)
    with pytest.raises(ValueError, match="an episode needs"):
        icmlgym.make(ENV, batch_size=400, n_batches=4)
    with pytest.raises(ValueError, match="proper subset"):
        icmlgym.make(ENV, in_classes=range(10))


def test_detectors_beat_random_scores():
    by_agent = {a: np.mean([r.metric("auroc") for r in icmlgym.run(ENV, a, seeds=2)]) for a in ("ood-knn", "ood-mahalanobis", "random")}
    assert by_agent["ood-knn"] > 0.9 and by_agent["ood-mahalanobis"] > 0.85
    assert abs(by_agent["random"] - 0.5) < 0.15


@pytest.mark.slow  # starts Ray and two torch workers: ~30 s on quiet cores, minutes on busy ones (CI runs it)
def test_torch_run_is_bit_identical_under_the_process_pool_and_ray():
    pytest.importorskip("ray")
    tasks = make_tasks(ENV, "ood-autoencoder", [0], agent_kwargs={"batch_size": 16})
    recs = {ex: run_tasks(tasks, executor=ex, workers=1, timeout=300)[0] for ex in ("process", "ray")}
    for ex, rec in recs.items():
        assert rec.status == "ok", (ex, rec.error)
        assert rec.device["determinism"] == {"mode": "bitwise", "threads": 1}
        assert rec.cost["gradient_steps"] == 300 and rec.cost["train_examples"] == 300 * 16
        assert rec.cost["forward_flops"] > 0 and rec.cost["backward_flops"] > 0
    assert recs["process"].metric("auroc") == recs["ray"].metric("auroc")  # exact equality, not approx
    assert recs["process"].cost == recs["ray"].cost


class DeviceEcho:
    """A tiny env that records the device the runner handed it."""

    def __new__(cls, device: str = "unset"):
        from icmlgym.envs.bandit.bernoulli_bandit import BernoulliBanditEnv

        env = BernoulliBanditEnv(horizon=5)
        env.received_device = device
        DeviceEcho.seen.append(device)
        return env

    seen: list = []


def test_envs_that_declare_a_device_receive_the_runs_device():
    card = TaskCard(
        id="icmlgym/DeviceEcho-v0", family="substrate-test", paper="test", entry_point=f"{__name__}:DeviceEcho",
        tiers={t: Tier() for t in ("smoke", "standard", "full")}, resources=Resources(device=True),
    )
    with icmlgym.registry.registered(card):
        DeviceEcho.seen.clear()
        rec = icmlgym.run(card.id, "random", seeds=1, device="cpu")[0]
        assert rec.status == "ok", rec.error
        assert DeviceEcho.seen and set(DeviceEcho.seen) == {"cpu"}
        assert rec.env_spec["kwargs"]["device"] == "cpu"
    DeviceEcho.seen.clear()
    assert icmlgym.run("icmlgym/Bandit-v0", "random", seeds=1)[0].env_spec["kwargs"].get("device") is None
