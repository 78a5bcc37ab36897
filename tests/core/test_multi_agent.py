import pytest
from pettingzoo.test import parallel_api_test

import icmlgym
from icmlgym.catalog import TaskCard, Tier
from icmlgym.envs.checking import check, failures, play_multi

ID = "icmlgym/TestPennies-v0"


@pytest.fixture(scope="module", autouse=True)
def _registered():
    with icmlgym.registered(TaskCard(
        id=ID, family="test", paper="-", kind="multi", primary_metric="rounds",
        entry_point="tests.core.tiny_parallel_env:MatchingPennies",
        tiers={t: Tier(episodes=2, env_kwargs={"rounds": 20}) for t in ("smoke", "standard", "full")},
        cost_units=("rounds",),
    )):
        yield


def test_make_gives_a_parallel_env():
    env = icmlgym.make(ID)
    parallel_api_test(env, num_cycles=30)
    with pytest.raises(ValueError, match="single-agent"):
        icmlgym.make_parallel("icmlgym/Bandit-v0")


def test_multi_agent_checks_pass():
    results = check(ID, recorded=play_multi(ID, {"rounds": 20}).rollout_hash)
    assert {r.check for r in results} == {"parallel_api_test", "parallel_seed_test", "card contract", "step after end", "seed determinism", "recorded rollout", "invalid action", "docstrings"}
    assert all(r.passed for r in results), failures(results)


def test_runner_lifts_a_single_agent_class_to_every_player():
    recs = icmlgym.run(ID, "random", seeds=2)
    assert all(r.status == "ok" for r in recs), recs[0].error
    assert recs[0].episodes[0].length == 20
    assert recs[0].episodes[0].metrics == {"rounds": 20.0}
    assert recs[0].cost == {"rounds": 40.0, "env_steps": 40.0}  # the runner always meters env_steps
    again = icmlgym.run(ID, "random", seeds=2, executor="process", timeout=60)
    assert [e.ret for r in recs for e in r.episodes] == [e.ret for r in again for e in r.episodes]


def test_dict_agent_with_explicit_agents():
    from icmlgym import DictAgent
    from icmlgym.baselines.generic import RandomAgent, UCB1Agent

    joint = DictAgent({"player_0": UCB1Agent(), "player_1": RandomAgent()})
    (rec,) = icmlgym.run(ID, joint, seeds=[0])
    assert rec.status == "ok", rec.error
    with pytest.raises(KeyError, match="no agent for PettingZoo agent"):
        DictAgent({"player_0": RandomAgent()})._agent("player_1")
