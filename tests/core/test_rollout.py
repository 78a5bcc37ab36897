"""The one episode loop: the runner's episodes are rollouts, seeded the same way everywhere."""

from __future__ import annotations

import pytest

import icmlgym
from icmlgym.agents import load_agent
from icmlgym.runner import rollout, run

BANDIT = "icmlgym/Bandit-v0"


def test_a_rollout_is_the_runners_episode():
    kwargs = icmlgym.card(BANDIT).tier("smoke").env_kwargs
    env = icmlgym.make(BANDIT, **kwargs)
    agent = load_agent("ucb1")()
    eps = [rollout(env, agent, seed=3, episode=e) for e in range(2)]
    (record,) = run(BANDIT, "ucb1", seeds=[3], tier="smoke", episodes=2, executor="inprocess")
    assert [e.metrics for e in eps] == [e.metrics for e in record.episodes]
    assert [e.ret for e in eps] == [e.ret for e in record.episodes]
    assert eps[0].cost["env_steps"] == eps[0].length > 0


def test_max_steps_truncates_and_the_hook_sees_every_step():
    env = icmlgym.make(BANDIT, **icmlgym.card(BANDIT).tier("smoke").env_kwargs)
    seen = []
    ep = rollout(env, load_agent("random")(), seed=0, max_steps=5, on_step=lambda *step: seen.append(step))
    assert ep.length == 5 == len(seen)
    assert seen[-1][4] is True  # truncated at max_steps
    with pytest.raises(ValueError, match="max_steps"):
        rollout(env, load_agent("random")(), seed=0, max_steps=0)
