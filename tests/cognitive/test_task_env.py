"""The six task envs: rewards, every action accepted, SB3 PPO unchanged (conformance: tests/core/test_all_envs.py)."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.catalog import card, extra_installed
from icmlgym.envs.cognitive import TASK_ENVS

IDS = [f"icmlgym/{name}-v0" for name in TASK_ENVS]


@pytest.mark.parametrize("env_id", IDS)
def test_every_action_is_accepted_and_episode_ends_with_metrics(env_id):
    env = icmlgym.make(env_id, trials_per_episode=5)
    env.action_space.seed(1)
    obs, info = env.reset(seed=1)
    steps, trials = 0, 0
    while True:
        obs, r, term, trunc, info = env.step(env.action_space.sample())
        steps += 1
        trials += bool(info.get("new_trial"))
        assert env.observation_space.contains(obs) and np.isfinite(r)
        if term:
            break
    assert trials == 5 and info["cost"] == {"env_steps": steps, "trials": 5}
    m = info["metrics"]
    assert set(m) == {"accuracy", "abort_rate", "reward_per_trial"} and all(isinstance(v, float) for v in m.values())
    with pytest.raises(ValueError, match="not in the action space"):
        env.unwrapped.step(env.action_space.n)


def _play(env_id, policy, n_trials=40, seed=0):
    """Play with ``policy(task, batch, trial, t) -> action`` that may read the hidden trial (a test oracle)."""
    env = icmlgym.make(env_id, trials_per_episode=n_trials)
    obs, info = env.reset(seed=seed)
    u = env.unwrapped
    total = 0.0
    while True:
        a = policy(u.task, u._batch, u._trial, u._t)
        obs, r, term, _, info = env.step(a)
        total += r
        if term:
            return info["metrics"], total


@pytest.mark.parametrize("env_id", IDS)
def test_oracle_scores_one_and_fixating_scores_as_neurogym(env_id):
    m, total = _play(env_id, lambda task, b, i, t: max(0, int(b.targets[i, t])))
    assert m["accuracy"] == 1.0 and m["abort_rate"] == 0.0
    m, total = _play(env_id, lambda task, b, i, t: 0)
    if env_id.endswith("GoNoGo-v0"):
        # fixating is right on no-go trials; a missed go costs -0.5 (NeuroGym's rewards)
        assert 0.2 < m["accuracy"] < 0.8 and total == pytest.approx(-0.5 * round((1 - m["accuracy"]) * 40))
    else:
        assert m["accuracy"] == 0.0 and total == 0.0


def test_abort_penalty_and_choice_ends_the_trial():
    env = icmlgym.make("icmlgym/CogPerceptualDecision-v0", trials_per_episode=2)
    env.reset(seed=0)
    _, r, _, _, info = env.step(1)  # a choice during fixation
    assert r == pytest.approx(-0.1) and info["period"] == "stimulus"
    for _ in range(20):
        _, r, _, _, info = env.step(0)
    assert info["period"] == "decision"
    gt = env.unwrapped._batch.targets[0, 21]
    _, r, term, _, info = env.step(int(gt))
    assert r == 1.0 and info["new_trial"] and info["trial_correct"] and not term and info["trial"] == 1


def test_cards_and_task_kwargs():
    for name, (task, _) in TASK_ENVS.items():
        c = card(f"icmlgym/{name}-v0")
        assert c.family == "cognitive" and c.default_kwargs == {"task": task} and c.primary_metric == "accuracy"
    env = icmlgym.make("icmlgym/CogPerceptualDecision-v0", task_kwargs={"cohs": (51.2,), "sigma": 0.0})
    obs, _ = env.reset(seed=0)
    assert env.unwrapped.task.cohs == (51.2,)
    with pytest.raises(ValueError, match="unknown cognitive task"):
        icmlgym.make("icmlgym/CogPerceptualDecision-v0", task="nope")


@pytest.mark.skipif(not extra_installed("rl"), reason="needs the [rl] extra (stable-baselines3, torch)")
def test_sb3_ppo_runs_unchanged(tmp_path, monkeypatch):
    import tempfile

    from stable_baselines3 import PPO

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # plain SB3's logger makes a SB3-<time> folder there

    env = icmlgym.make("icmlgym/CogPerceptualDecision-v0", trials_per_episode=5)
    model = PPO("MlpPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(total_timesteps=128)
    (rec,) = icmlgym.run("icmlgym/CogDelayedMatch-v0", "sb3-ppo", seeds=[0], tier="smoke", agent_kwargs={"algo_kwargs": {"n_steps": 128, "batch_size": 64, "n_epochs": 1}})
    assert rec.status == "ok", rec.error
    assert 0.0 <= rec.metric("accuracy")[0] <= 1.0
