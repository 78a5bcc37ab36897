"""A batch's shared designs and phase queues (FairLin-PE, LinNash, PE twins): the single runs' records, shared or not."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym.agents.fairbandit_vector as vector_agents
from icmlgym.agents.fairbandit import FairLinBanditPE
from icmlgym.agents.linear_bandit import LinearBanditAgent
from icmlgym.baselines.fairbandit import LinNashAgent
from icmlgym.baselines.fairbandit_vector import VectorLinNashAgent
from icmlgym.envs.fairbandit import design
from icmlgym.envs.fairbandit.design import DIRECT, SharedDesigns, g_optimal_design, john_ellipsoid_distribution
from icmlgym.runner.api import make_tasks
from icmlgym.runner.loop import execute
from tests.fairbandit.test_vector import assert_batched_equals_single

SEEDS = list(range(8))


@pytest.fixture
def spies(monkeypatch) -> dict[str, list]:
    """Every SharedDesigns and PhaseQueues the twins build in the test."""
    made: dict[str, list] = {"designs": [], "queues": []}

    class SpyDesigns(SharedDesigns):
        def __init__(self) -> None:
            super().__init__()
            made["designs"].append(self)

    class SpyQueues(vector_agents.PhaseQueues):
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            made["queues"].append(self)

    monkeypatch.setattr(vector_agents, "SharedDesigns", SpyDesigns)
    monkeypatch.setattr(vector_agents, "PhaseQueues", SpyQueues)
    return made


def test_shared_designs_are_the_direct_doubles_and_copies() -> None:
    rng = np.random.default_rng(5)
    X = rng.normal(size=(30, 4))
    shared = SharedDesigns()
    lam = shared.g_optimal(X)
    assert lam.tobytes() == g_optimal_design(X).tobytes()
    lam[:] = -1.0  # a caller's copy: the next caller still gets the answer
    assert shared.g_optimal(X.copy()).tobytes() == g_optimal_design(X).tobytes()
    assert shared.john(X).tobytes() == john_ellipsoid_distribution(X).tobytes()
    assert shared.g_optimal(X, tol=0.001).tobytes() == g_optimal_design(X, tol=0.001).tobytes()
    assert shared.g_optimal(X[:20]).tobytes() == g_optimal_design(X[:20]).tobytes()
    assert (shared.asked, shared.solved) == (5, 4)  # the same arms, tol and function: solved once


@pytest.mark.parametrize(
    ("agent", "env_kwargs", "agent_kwargs", "shares"),
    [
        # all arms survive FairLin's exploration for some seeds: their first PE phase is one problem
        ("fairbandit-fairlin-pe", {"horizon": 400, "n_arms": 40, "dim": 5}, {}, True),
        # a long exploration with a small assumed noise: every seed its own survivors, nothing shared
        ("fairbandit-fairlin-pe", {"horizon": 400, "n_arms": 60, "dim": 5}, {"explore_rounds": 250, "noise_sd": 0.2}, False),
        # narrow Nash widths: the seeds eliminate, some to the same survivors
        ("fairbandit-linnash", {"horizon": 2000, "n_arms": 20, "dim": 3}, {"width": 1.0}, True),
    ],
)
def test_batched_records_equal_single_runs_shared_or_not(agent, env_kwargs, agent_kwargs, shares, spies, monkeypatch) -> None:
    assert_batched_equals_single(monkeypatch, agent, env_kwargs, seeds=SEEDS, agent_kwargs=agent_kwargs)
    (shared,) = spies["designs"]
    assert shared.solved > 2  # problems that differ between seeds
    assert (shared.asked > shared.solved) is shares


@pytest.mark.parametrize("agent", ["fairbandit-fairlin-pe", "fairbandit-pe"])
def test_seeds_left_with_one_arm_play_it_to_the_end(agent, spies, monkeypatch) -> None:
    # a small assumed noise: phased elimination gets down to one arm, whose phases PhaseQueues no longer runs
    env_kwargs = {"horizon": 2000, "n_arms": 10, "dim": 3}
    assert_batched_equals_single(monkeypatch, agent, env_kwargs, seeds=SEEDS, agent_kwargs={"noise_sd": 0.1})
    (queues,) = spies["queues"]
    assert 0 < int(np.count_nonzero(queues.settled >= 0)) < len(SEEDS)


def test_a_batch_memo_does_not_reach_single_runs(monkeypatch) -> None:
    tasks = make_tasks("icmlgym/FairLinearBandit-v0", "fairbandit-linnash", seeds=[0, 1], env_kwargs={"horizon": 400, "n_arms": 40, "dim": 5})
    assert_batched_equals_single(monkeypatch, "fairbandit-linnash", {"horizon": 400, "n_arms": 40, "dim": 5}, seeds=[0, 1])
    assert LinearBanditAgent.designs is DIRECT and LinNashAgent().designs is DIRECT and FairLinBanditPE().designs is DIRECT
    assert VectorLinNashAgent().designs is not VectorLinNashAgent().designs  # one per twin (per batch)
    solved = []
    real = design.g_optimal_design
    monkeypatch.setattr(design, "g_optimal_design", lambda X, *a: solved.append(len(X)) or real(X, *a))
    execute(tasks[0])  # after the batch, in the same process: the single run solves its own designs
    assert solved and solved[0] == 40


def test_prefetched_designs_are_the_direct_doubles_and_not_asked() -> None:
    rng = np.random.default_rng(9)
    X = rng.normal(size=(40, 4))
    subsets = [X[np.sort(rng.choice(40, size=int(rng.integers(5, 40)), replace=False))] for _ in range(8)]
    shared = SharedDesigns()
    shared.prefetch(subsets + subsets[:2] + [X[:1]])
    assert (shared.asked, shared.solved) == (0, 9)  # the repeats solved once; nothing asked yet
    assert [shared.g_optimal(S).tobytes() for S in subsets] == [g_optimal_design(S).tobytes() for S in subsets]
    assert (shared.asked, shared.solved) == (8, 9)


def test_a_batch_solves_its_seeds_designs_in_lock_step(spies, monkeypatch) -> None:
    groups = []
    real = design._d_optimal_weights_many
    monkeypatch.setattr(design, "_d_optimal_weights_many", lambda Qs, *a: groups.append(len(Qs)) or real(Qs, *a))
    assert_batched_equals_single(monkeypatch, "fairbandit-fairlin-pe", {"horizon": 400, "n_arms": 40, "dim": 5}, seeds=list(range(16)))
    assert max(groups) >= design._LOCK_STEP_FROM  # some phase end had that many distinct problems of one shape
