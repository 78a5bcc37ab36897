"""The joint path of RepeatedGame-v0: the env's array round and the joint FTRL twin give the per-agent path's values."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.agents.games import Exp3Agent, FTRLAgent
from icmlgym.agents.games_joint import JointFTRLAgent
from icmlgym.agents.loading import load_agent
from icmlgym.agents.multi import DictAgent, joint_class, lift
from icmlgym.envs.games.metrics import PlayStatistics
from icmlgym.envs.games.normal_form import random_game
from icmlgym.envs.games.preference_graph import sink_components
from icmlgym.envs.games.repeated_game import RepeatedGameEnv, normalise_mixed
from icmlgym.runner.rollout import default_spec

ENV = "icmlgym/RepeatedGame-v0"
CONFIGS = [
    {},
    {"game": "zero_sum", "n_players": 2, "n_actions": 4, "horizon": 120},
    {"n_players": 3, "n_actions": 6, "horizon": 60},
    {"game": "leaky_hexagon", "horizon": 120},
    {"game": "coordination", "n_players": 4, "n_actions": 2, "horizon": 90},
    {"game": np.arange(12.0).reshape(2, 2, 3).tolist(), "horizon": 50},  # unequal action counts: the per-player round
    {"feedback": "bandit", "horizon": 80, "payoff_noise": 0.1},  # bandit feedback: the per-player agents
]


def _fields(rec) -> dict:
    d = rec.to_dict()
    for k in ("run_id", "timestamp", "wall_time", "train_wall_time"):
        d.pop(k)
    for e in d["episodes"]:
        e.pop("wall_time")
    return d


@pytest.mark.parametrize("kw", CONFIGS, ids=range(len(CONFIGS)))
@pytest.mark.parametrize(
    "agent, agent_kwargs",
    [("games-hedge", {}), ("games-ftrl-euclidean", {}), ("games-hedge", {"schedule": "sqrt", "eta": 0.5}),
     ("games-hedge", {"schedule": "linear", "init": "uniform"})],
)
def test_joint_ftrl_records_equal_the_per_agent_records(kw, agent, agent_kwargs, monkeypatch):
    joint = icmlgym.run(ENV, agent, seeds=[0, 1, 2], env_kwargs=kw, agent_kwargs=agent_kwargs)
    monkeypatch.setattr(FTRLAgent, "joint", None)  # the runner lifts FTRL with one DictAgent member per player
    per_agent = icmlgym.run(ENV, agent, seeds=[0, 1, 2], env_kwargs=kw, agent_kwargs=agent_kwargs)
    for a, b in zip(joint, per_agent):
        assert a.status == "ok", a.error
        assert _fields(a) == _fields(b)


def test_joint_ftrl_records_over_several_episodes_and_on_the_process_executor(monkeypatch):
    kw = {"game": "potential", "horizon": 40}
    joint = icmlgym.run(ENV, "games-hedge", seeds=[3, 4], env_kwargs=kw, episodes=3, executor="process", workers=2)
    monkeypatch.setattr(FTRLAgent, "joint", None)
    per_agent = icmlgym.run(ENV, "games-hedge", seeds=[3, 4], env_kwargs=kw, episodes=3)
    for a, b in zip(joint, per_agent):
        assert a.status == "ok" and len(a.episodes) == 3, a.error
        assert _fields(a) == _fields(b)


def test_the_runner_lifts_ftrl_to_its_joint_twin_and_only_ftrl():
    assert isinstance(lift(load_agent("games-hedge")), JointFTRLAgent)
    assert isinstance(lift(load_agent("games-ftrl-euclidean")), JointFTRLAgent)
    assert lift(load_agent("games-ftrl-euclidean")).kwargs == {"regularizer": "euclidean"}
    assert joint_class(Exp3Agent) is None  # a subclass does not inherit its parent's twin
    assert isinstance(lift(load_agent("games-fictitious-play")), DictAgent)
    with pytest.raises(ValueError, match="eta"):
        JointFTRLAgent(eta=-1.0)


def test_joint_ftrl_takes_the_array_path_and_hands_over_when_a_player_is_missing():
    env = RepeatedGameEnv(n_players=3, n_actions=4, horizon=40)
    specs = default_spec(env)
    joint, members = JointFTRLAgent(), DictAgent(lambda: FTRLAgent())
    joint.reset(5, specs)
    members.reset(5, specs)
    assert joint.joint and joint.scores.shape == (3, 4)
    obs, infos = env.reset(seed=1)
    for t in range(30):
        # from round 20 on player_1 is left out of the observations: the joint agent hands its state over
        seen = obs if t < 20 else {a: o for a, o in obs.items() if a != "player_1"}
        a, b = joint.act(seen, infos), members.act(seen, infos)
        assert list(a) == list(b) and all(np.array_equal(a[k], b[k]) and a[k].dtype == b[k].dtype for k in a)
        full = {**b, **({} if t < 20 else {"player_1": np.full(4, 0.25, np.float32)})}
        nxt, rew, term, trunc, infos = env.step(full)
        joint.update(seen, a, rew, nxt, term, trunc, infos)
        members.update(seen, b, rew, nxt, term, trunc, infos)
        obs = nxt
    assert not joint.joint
    for k in specs:
        assert np.array_equal(joint.members.agents[k].scores, members.agents[k].scores)


def _reference_round(env: RepeatedGameEnv, actions: dict) -> tuple[list, list, np.ndarray]:
    """The per-player round (normalise each action, expected payoffs and joint, ``x @ u``)."""
    xs = [normalise_mixed(actions[a], env.action_space(a), a) for a in env.possible_agents]
    us, joint = env.game.payoffs_and_joint(xs)
    return [u.astype(np.float32) for u in us], [float(x @ u) for x, u in zip(xs, us)], joint


@pytest.mark.parametrize("kw", [{"n_players": 3, "n_actions": 10}, {"n_players": 2, "n_actions": 5}, {"n_players": 4, "n_actions": 3}])
def test_array_round_equals_the_per_player_round_for_sampled_actions(kw):
    env = RepeatedGameEnv(horizon=200, **kw)
    stats = PlayStatistics(env.game, 200, env.sinks)
    env.reset(seed=0)
    for a in env.possible_agents:
        env.action_space(a).seed(7)
    for t in range(200):
        acts = {a: env.action_space(a).sample() for a in env.agents}
        if t % 17 == 3:
            acts["player_1"] = np.zeros_like(acts["player_1"])  # all-zero: uniform, the per-player path
        if t % 23 == 5:
            acts["player_0"] = acts["player_0"].tolist()  # a list is an action too
        us32, pay, joint = _reference_round(env, acts)
        stats.add(dist=joint, payoffs=np.array(pay))
        obs, rew, term, trunc, infos = env.step(acts)
        assert all(np.array_equal(obs[a], u) and obs[a].dtype == np.float32 for a, u in zip(env.possible_agents, us32))
        assert list(rew.values()) == pay and all(type(r) is float for r in rew.values())
        assert list(term.values()) == [False] * len(acts) and list(trunc.values()) == [t == 199] * len(acts)
    assert infos["player_0"]["metrics"] == stats.metrics()
    assert infos["player_0"]["cost"] == {"rounds": 200} and infos["player_0"] is not infos["player_1"]


def test_array_round_is_the_per_player_computation_bit_for_bit():
    for n_players, n_actions in [(2, 1), (2, 3), (3, 2), (3, 10), (4, 3), (5, 2)]:
        g = random_game(n_actions, n_players, seed=n_players * 10 + n_actions)
        rng = np.random.default_rng(n_players)
        for _ in range(50):
            x = rng.dirichlet(np.ones(n_actions), size=n_players)
            us, joint = g.payoffs_and_joint(list(x))
            u, pay, left = g.round_arrays(x)
            assert np.array_equal(u, np.array(us)) and np.array_equal(np.multiply.outer(left, x[-1]).ravel(), joint)
            assert pay.tolist() == [float(a @ b) for a, b in zip(x, us)]


def test_array_round_refuses_what_the_per_player_round_refuses():
    env = RepeatedGameEnv(horizon=5)
    env.reset(seed=0)
    good = {a: np.full(3, 1 / 3, np.float32) for a in env.agents}
    for bad in (np.array([-0.1, 0.5, 0.5], np.float32), np.array([np.nan, 0, 0]), np.ones(4, np.float32), np.array([2.0, 0, 0])):
        with pytest.raises(ValueError, match="action space"):
            env.step({**good, "player_2": bad})


@pytest.mark.parametrize("n_players, n_actions, horizon, n_checkpoints, tail", [
    (3, 10, 300, 50, 0.2), (3, 3, 1000, 7, 0.33), (2, 1, 40, 5, 0.2), (4, 2, 97, 1, 0.5), (2, 5, 600, 2, 0.1), (5, 3, 30, 50, 0.9)])
def test_deferred_products_give_the_per_round_sums(n_players, n_actions, horizon, n_checkpoints, tail):
    g = random_game(n_actions, n_players, seed=3)
    per_round, deferred = (PlayStatistics(g, horizon, sink_components(g), n_checkpoints, tail) for _ in range(2))
    rng = np.random.default_rng(horizon)
    for t in range(horizon):
        x = rng.dirichlet(np.ones(n_actions), size=n_players) ** 3
        pay = rng.random(n_players)
        _, joint = g.payoffs_and_joint(list(x))
        per_round.add(dist=joint, payoffs=pay)
        if t % 11 == 4:
            deferred.add(dist=joint, payoffs=pay)  # a round the env plays player by player
        else:
            deferred.add_product(g.round_arrays(x)[2], x[-1], pay)
    for name in ("total", "tail_total", "payoff_sum"):
        assert np.array_equal(getattr(per_round, name), getattr(deferred, name)), name
    assert np.array_equal(per_round.sink_mass_curve(), deferred.sink_mass_curve()) and per_round.curve_times == deferred.curve_times
