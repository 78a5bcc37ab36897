"""Linear bandit agents: incremental statistics, phase logic, runs through the runner."""

import math

import numpy as np
import pytest

import icmlgym
from icmlgym.runner import rollout
from icmlgym.agents.fairbandit import FairLinBandit, FairLinBanditPE, FairLinBanditUCB
from icmlgym.agents.protocol import AgentSpec
from icmlgym.baselines.fairbandit import (
    LinNashAgent,
    LinUCBAgent,
    PhasedEliminationAgent,
    RidgeStatistics,
)
from icmlgym.envs.fairbandit.fair_linear_bandit import FairLinearBanditEnv

ENV_ID = "icmlgym/FairLinearBandit-v0"
AGENTS = [
    "fairbandit-fairlin-pe",
    "fairbandit-fairlin-ucb",
    "fairbandit-linnash",
    "fairbandit-linucb",
    "fairbandit-lints",
    "fairbandit-pe",
    "fairbandit-etc",
    "random",
]


def test_card_lists_every_agent_and_they_are_registered():
    card = icmlgym.card(ENV_ID)
    assert set(card.agents) == set(AGENTS)
    from icmlgym.catalog import agent_kind

    # the paper's method is the card's reference agent (one fact); FairLinBandit-PE is its variant
    assert agent_kind(card.reference_agent) == "reference"
    assert card.reference_agent in ("fairbandit-fairlin-pe", "fairbandit-fairlin-ucb")


def test_ridge_statistics_rank_one_updates_match_exact_solution():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 5))
    s = RidgeStatistics(X, reg=1.0, refresh_every=10_000)
    pulls = rng.integers(0, 60, 500)
    rewards = rng.normal(size=500)
    for a, r in zip(pulls, rewards):
        s.add(int(a), float(r))
    V = np.eye(5) + X[pulls].T @ X[pulls]
    np.testing.assert_allclose(s.Vinv, np.linalg.inv(V), atol=1e-10)
    np.testing.assert_allclose(s.theta, np.linalg.solve(V, X[pulls].T @ rewards), atol=1e-10)
    np.testing.assert_allclose(s.w, np.einsum("ij,jk,ik->i", X, np.linalg.inv(V), X), atol=1e-10)


def _play(agent, env, seed=0):
    """One episode through the runner's rollout; the actions taken and the last info."""
    steps = []
    rollout(env, agent, seed, AgentSpec(ENV_ID, env.observation_space, env.action_space), on_step=lambda *step: steps.append(step))
    return np.array([s[1] for s in steps]), steps[-1][5]


@pytest.mark.parametrize("cls", [FairLinBanditPE, FairLinBanditUCB, LinNashAgent, LinUCBAgent, PhasedEliminationAgent])
def test_agents_are_deterministic_under_their_seed(cls):
    env = FairLinearBanditEnv(n_arms=30, dim=4, horizon=800)
    a1, _ = _play(cls(), env, seed=5)
    a2, _ = _play(cls(), env, seed=5)
    np.testing.assert_array_equal(a1, a2)


def test_fairlin_explores_for_sqrt_dT_rounds_then_restricts_to_survivors():
    # low noise (and an agent told so) so that exploration is informative enough to eliminate;
    # at the paper's noise (variance 0.5) and these sizes the theoretical radius eliminates nothing
    env = FairLinearBanditEnv(n_arms=50, dim=4, horizon=4000, noise_var=0.01)
    agent = FairLinBanditUCB(noise_sd=0.1)
    actions, _ = _play(agent, env)
    assert agent.t1 == math.ceil(math.sqrt(4 * 4000))
    assert len(agent.active) < 50  # clearly bad arms are eliminated after exploration
    assert set(actions[agent.t1 :]) <= set(agent.active.tolist())
    assert env.unwrapped.means.argmax() in agent.active


def test_linnash_part_one_length_and_john_sampling():
    env = FairLinearBanditEnv(n_arms=50, dim=4, horizon=4000)
    agent = LinNashAgent()
    _play(agent, env)
    assert agent.t1 == math.ceil(3 * math.sqrt(4000 * 4 * 1.0 * math.log(4000 * 50)))


def test_phased_elimination_finds_the_best_arm_of_an_easy_instance():
    arms = np.vstack([np.eye(3), 0.3 * np.eye(3) + 0.1])
    env = FairLinearBanditEnv(arms=arms, theta=[1.0, 0.2, 0.1], horizon=20_000, noise_var=0.05)
    agent = PhasedEliminationAgent()
    actions, info = _play(agent, env)
    assert agent.core.active.tolist() == [0]
    assert np.mean(actions[-2000:] == 0) == 1.0


def test_agent_arguments_are_validated():
    with pytest.raises(ValueError, match="base"):
        FairLinBandit(base="ts")
    with pytest.raises(ValueError, match="uniform_mix"):
        FairLinBandit(uniform_mix=2.0)
    with pytest.raises(TypeError, match="fixes base"):
        FairLinBanditPE(base="ucb")
    with pytest.raises(ValueError, match="noise_sd"):
        LinUCBAgent(noise_sd=0.0)
    with pytest.raises(ValueError, match="delta"):
        LinUCBAgent(delta=2.0)
    with pytest.raises(TypeError, match="arms"):
        agent = LinUCBAgent()
        agent.reset(0, AgentSpec(ENV_ID, None, None))
        agent.act(np.zeros(2), {})


def test_every_agent_runs_through_the_runner_at_smoke_tier():
    for name in AGENTS:
        recs = icmlgym.run(ENV_ID, name, seeds=[0], tier="smoke")
        assert recs[0].status == "ok", recs[0].error
        nash = recs[0].metric("nash_regret")[0]
        avg = recs[0].metric("average_regret")[0]
        assert 0.0 <= avg <= nash <= 1.0  # M_0 <= M_1, both within [0, mu*]
