import gymnasium as gym
import numpy as np
import pytest

from icmlgym.envs.bandit.bernoulli_bandit import BernoulliBanditEnv


def test_invalid_action_names_space_and_value():
    env = BernoulliBanditEnv(n_arms=3)
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action 7 is not in the action space Discrete\(3\)"):
        env.step(7)


def test_pseudo_regret_is_exact_sum_of_gaps():
    env = BernoulliBanditEnv(means=[0.2, 0.5, 0.9], horizon=10)
    env.reset(seed=1)
    actions = [0, 1, 2, 2, 0, 1, 1, 2, 0, 2]
    for a in actions:
        _, _, term, trunc, info = env.step(a)
    assert not term and trunc
    gaps = {0: 0.7, 1: 0.4, 2: 0.0}
    assert info["metrics"]["pseudo_regret"] == pytest.approx(sum(gaps[a] for a in actions))
    assert info["metrics"]["optimal_arm_fraction"] == pytest.approx(4 / 10)
    assert info["cost"]["env_steps"] == 10


def test_same_seed_same_rewards_different_seed_differs():
    def rewards(seed):
        env = gym.make("icmlgym/Bandit-v0", horizon=200)
        env.reset(seed=seed)
        return [env.step(i % 10)[1] for i in range(200)]

    assert rewards(3) == rewards(3)
    assert rewards(3) != rewards(4)


@pytest.mark.parametrize("kwargs, match", [
    ({"means": [0.5]}, "at least 2"),
    ({"means": [0.5, 1.5]}, "probabilities"),
    ({"n_arms": 1}, "n_arms"),
    ({"horizon": 0}, "horizon"),
])
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        BernoulliBanditEnv(**kwargs)


def test_bandit_baselines_order_random_worst_thompson_best():
    """Sanity of the worked example: over 5 seeds, Thompson and UCB1 have far lower
    pseudo-regret than random (at least 3x lower at horizon 1000)."""
    import icmlgym

    def mean_regret(agent):
        recs = icmlgym.run("icmlgym/Bandit-v0", agent, seeds=5)
        assert all(r.status == "ok" for r in recs)
        return np.mean([np.mean(r.metric("pseudo_regret")) for r in recs])

    rnd, ucb, ts = mean_regret("random"), mean_regret("ucb1"), mean_regret("bandit-thompson")
    assert ts * 3 < rnd and ucb * 2 < rnd
    assert ts < ucb
