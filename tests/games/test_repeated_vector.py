"""RepeatedGame-v0 across seeds: the multi-agent batched path gives the single runs' records bit for bit."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("networkx", reason="the games family needs the [games] extra: pip install 'icmlgym[games]'")

import icmlgym  # noqa: E402
from icmlgym.agents.loading import load_agent  # noqa: E402
from icmlgym.catalog import card  # noqa: E402
from icmlgym.envs.games.generators import make_game  # noqa: E402
from icmlgym.envs.games.repeated_vector import RepeatedGameVectorEnv, stacked_round_arrays  # noqa: E402
from icmlgym.runner.api import make_tasks  # noqa: E402
from icmlgym.runner.batched import why_not_batched  # noqa: E402
from tests.core.test_batched import comparable  # noqa: E402

ENV = "icmlgym/RepeatedGame-v0"
SEEDS = [0, 1, 2, 7, 123456]


def _no_fallback(monkeypatch) -> None:
    from icmlgym.runner import batched

    monkeypatch.setattr(batched, "execute", lambda task: pytest.fail(f"the batch fell back to a single run: {task}"))


@pytest.mark.parametrize("agent", ["games-hedge", "games-ftrl-euclidean"])
@pytest.mark.parametrize(
    "env_kwargs",
    [
        {},  # the smoke tier's game: random 3 players x 3 actions, 300 rounds
        {"game": "zero_sum", "n_players": 2, "n_actions": 4, "horizon": 250, "n_checkpoints": 7},
        {"n_players": 3, "n_actions": 10, "horizon": 120},
    ],
)
def test_batched_records_equal_single_runs(agent: str, env_kwargs: dict, monkeypatch) -> None:
    from icmlgym.runner import batched

    tasks = make_tasks(ENV, agent, seeds=SEEDS, env_kwargs=env_kwargs, episodes=2)
    single = [batched.execute(t) for t in tasks]
    _no_fallback(monkeypatch)
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in single + records), [r.error for r in single + records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]
    m = records[0].episodes[1].metrics
    assert {"external_regret", "cce_distance", "cce_gap", "absorbed", "tail_support_size", "leak_drift"} <= set(m)
    assert len({r.episodes[0].metrics["external_regret"] for r in records}) > 1  # the seeds differ


def test_batch_seeds_through_run_and_agent_kwargs(monkeypatch) -> None:
    kw = {"horizon": 90}
    ak = {"eta": 0.3, "schedule": "sqrt"}
    single = icmlgym.run(ENV, "games-hedge", seeds=3, env_kwargs=kw, agent_kwargs=ak)
    _no_fallback(monkeypatch)
    batched = icmlgym.run(ENV, "games-hedge", seeds=3, env_kwargs=kw, agent_kwargs=ak, batch_seeds=True)
    assert [comparable(r) for r in batched] == [comparable(r) for r in single]


def test_what_does_not_batch_runs_singly_with_the_same_records() -> None:
    c = card(ENV)
    assert why_not_batched(c, load_agent("games-hedge")) == ""
    assert "joint form" in why_not_batched(c, load_agent("games-optimistic-ftrl"))
    # bandit feedback: the vector env refuses it, and the seeds run singly
    kw = {"feedback": "bandit", "horizon": 60}
    a = icmlgym.run(ENV, "games-hedge", seeds=2, env_kwargs=kw, batch_seeds=True)
    b = icmlgym.run(ENV, "games-hedge", seeds=2, env_kwargs=kw)
    assert [comparable(r) for r in a] == [comparable(r) for r in b]
    with pytest.raises(ValueError, match="full-information"):
        RepeatedGameVectorEnv(num_envs=2, **kw)


@pytest.mark.parametrize("players, actions", [(2, 3), (3, 3), (3, 10), (4, 2)])
def test_stacked_round_arrays_are_round_arrays(players: int, actions: int) -> None:
    game = make_game("random", n_players=players, n_actions=actions, seed=3)
    rng = np.random.default_rng(players * actions)
    x = rng.dirichlet(np.ones(actions), size=(6, players))
    u, pay, left = stacked_round_arrays(game, x)
    for s in range(6):
        u1, pay1, left1 = game.round_arrays(x[s])
        assert np.array_equal(u[s], u1) and np.array_equal(pay[s], pay1) and np.array_equal(left[s], left1)


def test_vector_env_checks_and_normalises_actions() -> None:
    venv = RepeatedGameVectorEnv(num_envs=2, n_players=2, n_actions=3, horizon=2)
    obs, info = venv.reset(seed=[1, 2])
    assert obs.shape == (2, 2, 3) and info["cost"]["rounds"].tolist() == [0, 0]
    for bad in (np.full((2, 2, 3), -0.1), np.full((2, 2, 3), 1.5), np.zeros((2, 3, 3)), np.full((2, 2, 3), np.nan)):
        with pytest.raises(ValueError, match="action space"):
            venv.step(bad)
    x = np.zeros((2, 2, 3))
    x[0] = [[0.2, 0.2, 0.6], [1.0, 0.0, 0.0]]  # seed 1's rows are all zero: uniform, as the single env plays them
    obs, rewards, terminated, truncated, info = venv.step(x)
    u, pay, _ = stacked_round_arrays(venv.game, np.array([[[0.2, 0.2, 0.6], [1.0, 0.0, 0.0]], np.full((2, 3), 1 / 3)]))
    assert np.array_equal(rewards, pay) and np.array_equal(obs, u.astype(np.float32))
    assert not truncated.any() and "metrics" not in info
    obs, rewards, terminated, truncated, info = venv.step(x)
    assert truncated.all() and info["metrics"]["external_regret"].shape == (2,)
    with pytest.raises(RuntimeError, match="reset"):
        venv.step(x)
