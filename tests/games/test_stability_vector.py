"""StabilityPrediction-v0's vector form: batched seeds give the single runs' records bit for bit."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("networkx", reason="the games family needs the [games] extra: pip install 'icmlgym[games]'")

from icmlgym.envs.games.basins import predict_sinks, predict_sinks_many, predict_strict_nash, predict_strict_nash_many  # noqa: E402
from icmlgym.envs.games.dynamics import random_strategies, run_ftrl  # noqa: E402
from icmlgym.envs.games.generators import make_game  # noqa: E402
from icmlgym.envs.games.normal_form import rock_paper_scissors  # noqa: E402
from icmlgym.envs.games.preference_graph import adjacency_matrix  # noqa: E402
from icmlgym.envs.games.stability_vector import StabilityPredictionVectorEnv, stacked_tail_joint  # noqa: E402
from icmlgym.runner.api import make_tasks  # noqa: E402
from tests.core.test_batched import comparable  # noqa: E402

ENV = "icmlgym/StabilityPrediction-v0"
SEEDS = [0, 1, 2, 7, 123456]
SMALL = {"n_games": 3, "n_inits": 8, "rounds": 300}


@pytest.mark.parametrize("agent", ["games-sink-predictor", "games-nash-predictor", "random"])
@pytest.mark.parametrize(
    "env_kwargs",
    [
        SMALL,  # the default game class: random 2 x 3
        {**SMALL, "n_players": 3, "n_actions": 2, "game": "covariant", "rho": -0.5},
        {**SMALL, "game": "zero_sum", "n_actions": 4, "regularizer": "euclidean", "n_inits": 5},
    ],
)
def test_batched_records_equal_single_runs(agent: str, env_kwargs: dict, monkeypatch) -> None:
    from icmlgym.runner import batched

    tasks = make_tasks(ENV, agent, seeds=SEEDS, env_kwargs=env_kwargs, episodes=2)
    single = [batched.execute(t) for t in tasks]
    monkeypatch.setattr(batched, "execute", lambda task: pytest.fail(f"the batch fell back to a single run: {task}"))
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in single + records), [r.error for r in single + records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]
    assert len({r.episodes[0].metrics["prediction_accuracy"] for r in records}) > 1  # the seeds differ


def test_smoke_tier_batched_equals_single_runs(monkeypatch) -> None:
    from icmlgym.runner import batched

    tasks = make_tasks(ENV, "games-sink-predictor", seeds=[0, 1], tier="smoke")
    single = [batched.execute(t) for t in tasks]
    monkeypatch.setattr(batched, "execute", lambda task: pytest.fail(f"fell back to a single run: {task}"))
    assert [comparable(r) for r in batched.execute_batch(tasks)] == [comparable(r) for r in single]


@pytest.mark.parametrize("players, actions, m, reg", [(2, 3, 24, "entropic"), (3, 2, 5, "entropic"), (4, 2, 3, "entropic"),
                                                      (2, 5, 7, "euclidean"), (2, 3, 1, "entropic")])
def test_stacked_tail_joint_is_run_ftrls(players: int, actions: int, m: int, reg: str) -> None:
    games = [make_game("random", n_players=players, n_actions=actions, seed=s) for s in range(6)]
    inits = [random_strategies(g, m, np.random.default_rng(s)) for s, g in enumerate(games)]
    stacked = stacked_tail_joint(games, inits, 250, 0.5, reg, tail=0.3)  # type: ignore[arg-type]
    assert stacked.shape == (6, m, actions**players)
    for g, x, got in zip(games, inits, stacked):
        want = run_ftrl(g, 250, eta=0.5, regularizer=reg, init_strategies=x, tail=0.3).tail_joint  # type: ignore[arg-type]
        assert np.array_equal(got, want)


def test_stacked_tail_joint_refuses_mixed_games() -> None:
    games = [make_game("random", n_actions=3, seed=0), make_game("random", n_actions=2, seed=1)]
    inits = [random_strategies(g, 2, np.random.default_rng(0)) for g in games]
    with pytest.raises(ValueError, match="action counts"):
        stacked_tail_joint(games, inits, 10, 0.5)
    with pytest.raises(ValueError, match="rounds"):
        stacked_tail_joint(games[:1], inits[:1], 0, 0.5)


def test_predictors_many_equal_the_single_predictors() -> None:
    rng = np.random.default_rng(5)
    adjs = [adjacency_matrix(make_game(kind, n_players=p, n_actions=a, seed=s))
            for kind in ("random", "coordination", "zero_sum") for p, a in ((2, 3), (3, 2)) for s in range(5)
            if not (kind == "coordination" and p == 3)]
    adjs.append(adjacency_matrix(rock_paper_scissors()))  # ties: one component of all 9 profiles
    adjs += [rng.random((9, 9)) < q for q in (0.05, 0.15, 0.4)]  # graphs no game gives: cycles, isolated nodes
    for n in sorted({a.shape[0] for a in adjs}):
        stack = np.stack([a for a in adjs if a.shape[0] == n])
        assert np.array_equal(predict_sinks_many(stack), np.stack([predict_sinks(a) for a in stack]))
        assert np.array_equal(predict_strict_nash_many(stack), np.stack([predict_strict_nash(a) for a in stack]))
    assert predict_sinks_many(adjacency_matrix(rock_paper_scissors())[None]).all()
    with pytest.raises(ValueError, match="square"):
        predict_sinks_many(np.zeros((2, 3, 4)))


def test_vector_env_through_make_vec_and_bad_actions() -> None:
    venv = gym.make_vec(ENV, num_envs=3, vectorization_mode="vector_entry_point", **SMALL)
    assert isinstance(venv.unwrapped, StabilityPredictionVectorEnv)
    obs, info = venv.reset(seed=[4, 5, 6])
    assert obs.shape == (3, 81) and info["cost"]["games"].tolist() == [0, 0, 0]
    for bad in (np.zeros((2, 9), dtype=np.int8), np.full((3, 9), 2, dtype=np.int8), np.zeros((3, 8), dtype=np.int8)):
        with pytest.raises(ValueError, match="action space"):
            venv.step(bad)
    for _ in range(SMALL["n_games"]):
        obs, rewards, terminated, truncated, info = venv.step(np.zeros((3, 9), dtype=np.int8))
    assert truncated.all() and not terminated.any() and info["metrics"]["prediction_accuracy"].shape == (3,)
    assert info["cost"]["dynamics_rounds"].tolist() == [3 * 8 * 300] * 3
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(np.zeros((3, 9), dtype=np.int8))
    with pytest.raises(ValueError, match="num_envs"):
        StabilityPredictionVectorEnv(num_envs=0)


def test_deviation_edges_many_equal_deviation_edges() -> None:
    from icmlgym.envs.games.normal_form import NormalFormGame, random_game
    from icmlgym.envs.games.preference_graph import deviation_edges, deviation_edges_many

    cases = [[make_game(kind, n_players=p, n_actions=a, seed=s, **kw) for s in range(8)]
             for kind, p, a, kw in (("random", 2, 3, {}), ("covariant", 3, 2, {"rho": -0.5}), ("zero_sum", 2, 4, {}),
                                    ("coordination", 2, 3, {}))]
    cases.append([random_game((2, 3, 4), seed=s) for s in range(4)])  # unequal action counts
    cases.append([rock_paper_scissors(), NormalFormGame(np.zeros((2, 3, 3)))])  # ties; a game without arrows
    for games in cases:
        for tol in (0.0, 0.1):
            many = deviation_edges_many(np.stack([g.payoffs for g in games]), tol)
            for got, g in zip(many, games, strict=True):
                want = deviation_edges(g, tol)
                assert got.dtype == want.dtype and got.shape == want.shape and np.array_equal(got, want)
    assert deviation_edges_many(np.zeros((2, 2, 2, 3)))[1].shape == (0, 4)
    with pytest.raises(ValueError, match="tol"):
        deviation_edges_many(np.zeros((1, 2, 2, 2)), -1.0)


def test_tally_basins_many_equals_tally_basins() -> None:
    from icmlgym.envs.games.basins import tally_basins, tally_basins_many
    from icmlgym.envs.games.preference_graph import sink_components

    for kind, p, a in (("random", 2, 3), ("coordination", 2, 3), ("random", 3, 2)):
        games = [make_game(kind, n_players=p, n_actions=a, seed=s) for s in range(12)]
        sinks = [sink_components(g) for g in games]
        inits = [random_strategies(g, 10, np.random.default_rng(s)) for s, g in enumerate(games)]
        tails = stacked_tail_joint(games, inits, 120, 0.5)
        for threshold, tol in ((0.9, 1e-2), (0.5, 0.2)):
            for got, g, sk, tj in zip(tally_basins_many(games, sinks, tails, 120, threshold, tol), games, sinks, tails, strict=True):
                want = tally_basins(g, sk, tj, 120, threshold, tol)
                assert got.sinks == want.sinks and got.unabsorbed == want.unabsorbed and got.rounds == want.rounds
                for f in ("fractions", "tail_joint", "observed"):
                    assert getattr(got, f).dtype == getattr(want, f).dtype and np.array_equal(getattr(got, f), getattr(want, f)), f
