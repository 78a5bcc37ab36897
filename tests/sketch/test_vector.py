"""SketchAttack-v0 batched (``--batch-seeds``): the vector env against single envs, and every twin's
records against the single runs' (episodes that end at different steps per seed)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import icmlgym
from icmlgym.agents.vector import vector_class
from icmlgym.envs.sketch import ATTACKERS, ENV_ID
from icmlgym.envs.sketch.attack_env import SketchAttackEnv
from icmlgym.envs.sketch.vector import SketchAttackVectorEnv
from icmlgym.runner import batched
from icmlgym.runner.api import make_tasks
from icmlgym.agents.loading import load_agent
from tests.core.test_batched import comparable

SEEDS = [0, 1, 2, 7, 123456]
SMALL = {"n_keys": 200, "space": 120, "update_budget": 150, "query_budget": 150, "min_scale": 20}
CONFIGS = {
    "default": {},  # bernoulli, cardinality, 3000 keys and budgets: the smoke tier
    "sample-hold, short budgets": {"defender": "sample-hold", "update_budget": 800, "query_budget": 600},
    # per-seed DP trees; lp; the probe attackers re-add kept keys (their generators draw) and drop detected ones
    "dp-tree, lp": {"defender": "dp-tree", "statistic": "lp", "q": 0.5, "n_keys": 400, "space": 200, "update_budget": 500, "query_budget": 500},
}
ENV_CASES = [{"defender": d} for d in ("bernoulli", "exact", "bottomk", "sample-hold", "switching", "dp-median", "dp-tree", "theta")] + [
    {"defender": "linear", "statistic": "sum"},
    {"defender": "bernoulli", "statistic": "lp", "q": 0.3},
    {"defender": "bernoulli", "statistic": "sum"},
    {"defender": "exact", "statistic": "lp"},
    {"defender": "bernoulli", "defender_kwargs": {"rounding": 0.05}},
    {"defender": "bernoulli", "epsilon": 0.2, "min_scale": 2},  # most seeds succeed within a few steps
]


def no_fallback(monkeypatch) -> None:
    monkeypatch.setattr(batched, "execute", lambda task: pytest.fail(f"the batch fell back to a single run: {task}"))


@pytest.mark.parametrize("kwargs", ENV_CASES, ids=lambda kw: "-".join(str(v) for v in kw.values()))
def test_vector_env_steps_as_single_envs(kwargs) -> None:
    if kwargs["defender"] == "theta":
        pytest.importorskip("datasketches", reason="the theta defender needs the [sketch] extra")
    kw = {**SMALL, **kwargs}
    singles = [SketchAttackEnv(**kw) for _ in SEEDS]
    venv = SketchAttackVectorEnv(len(SEEDS), **kw)
    obs, info = venv.reset(seed=SEEDS)
    first = [e.reset(seed=s) for e, s in zip(singles, SEEDS)]
    np.testing.assert_array_equal(obs, np.stack([o for o, _ in first]))
    rng = np.random.default_rng(5)
    ended = [False] * len(SEEDS)
    lengths = [0] * len(SEEDS)
    for _ in range(400):
        actions = np.stack([[rng.choice(3, p=[0.5, 0.2, 0.3]), rng.integers(kw["n_keys"] // 4), rng.integers(4)] for _ in SEEDS])
        obs, rewards, term, trunc, info = venv.step(actions)
        for i, env in enumerate(singles):
            if ended[i]:  # an ended sub-env: reward 0, flags, observation, cost and metrics as at its end
                assert rewards[i] == 0.0 and (term[i] or trunc[i]) and info["metrics"]["success"][i] == float(term[i])
                continue
            o, r, te, tr, inf = env.step(actions[i])
            lengths[i] += 1
            assert np.array_equal(o, obs[i]) and r == rewards[i] and te == term[i] and tr == trunc[i]
            assert {k: float(v) for k, v in inf["cost"].items()} == {k: float(v[i]) for k, v in info["cost"].items()}
            if te or tr:
                ended[i] = True
                assert inf["metrics"] == {k: float(v[i]) for k, v in info["metrics"].items()}
        if all(ended):
            break
    assert all(ended)


@pytest.mark.parametrize("agent", ATTACKERS)
@pytest.mark.parametrize("config", list(CONFIGS))
def test_batched_records_equal_single_runs(agent: str, config: str, monkeypatch) -> None:
    tasks = make_tasks(ENV_ID, agent, seeds=SEEDS, env_kwargs=CONFIGS[config], episodes=2)
    single = [batched.execute(t) for t in tasks]
    no_fallback(monkeypatch)
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in single + records), [r.error for r in single + records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]
    # the seeds really differ (and, for most entries, end apart)
    assert len({(e.length, e.metrics["published"], e.metrics["prefix_max_error"]) for r in records for e in r.episodes[:1]}) > 1


# the stacked defenders' integer (cardinality, sum) and double (lp) totals; seeds that run out of
# fresh keys and only watch from then on (cardinality: 40 keys, exact keeps every probe), with
# readings of one and of several queries and the refresh attacker's dummy resets in between
IDLE = {"n_keys": 40, "space": 30, "update_budget": 200, "query_budget": 300, "min_scale": 1000.0}
STACKED_AND_IDLE = [
    ("sketch-probe-reset", {}, {"statistic": "sum", "n_keys": 300, "space": 150, "update_budget": 400, "query_budget": 400}),
    ("sketch-oblivious-random", {}, {"statistic": "lp", "q": 0.3, "n_keys": 300, "space": 150, "update_budget": 400, "query_budget": 400}),
    ("sketch-probe-reset", {}, {**IDLE, "defender": "exact"}),
    ("sketch-probe-reset", {}, IDLE),
    ("sketch-probe-average", {"repeats": 3}, {**IDLE, "defender": "exact"}),
    ("sketch-probe-refresh", {"refresh": 2}, {**IDLE, "defender": "exact"}),
    ("sketch-probe-reset", {"repeats": 2}, {**IDLE, "defender": "exact", "statistic": "sum", "n_keys": 12}),
]


@pytest.mark.parametrize(
    ("agent", "agent_kwargs", "env_kwargs"),
    [
        # warmup inserts, a larger step, near-certain pumping of kept keys; bottom-k's per-seed objects
        ("sketch-probe-reset", {"pump": 0.9, "warmup": 7, "amount": 2},
         {"defender": "bottomk", "statistic": "sum", "n_keys": 400, "space": 200, "update_budget": 500, "query_budget": 500, "epsilon": 2.0}),
        ("sketch-probe-refresh", {"refresh": 3}, {"defender": "switching", "statistic": "sum", "n_keys": 400, "space": 200, "update_budget": 500, "query_budget": 500}),
        ("sketch-probe-average", {"repeats": 9}, {"defender": "exact", "statistic": "lp", "q": 0.3, "n_keys": 300, "update_budget": 400, "query_budget": 300}),
        ("sketch-oblivious-worst", {"window": 20, "heavy_every": 2}, {"defender": "linear", "statistic": "sum", "n_keys": 300, "space": 64, "update_budget": 400, "query_budget": 300}),
    ] + STACKED_AND_IDLE,
)
def test_batched_records_with_agent_kwargs_equal_single_runs(agent, agent_kwargs, env_kwargs, monkeypatch) -> None:
    tasks = make_tasks(ENV_ID, agent, seeds=SEEDS, env_kwargs=env_kwargs, agent_kwargs=agent_kwargs, episodes=2)
    single = [batched.execute(t) for t in tasks]
    no_fallback(monkeypatch)
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in records), [r.error for r in records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]


def test_batched_on_the_process_executor_equals_single_runs() -> None:
    kw = CONFIGS["dp-tree, lp"]
    single = icmlgym.run(ENV_ID, "sketch-probe-reset", seeds=SEEDS, env_kwargs=kw, episodes=2)
    records = icmlgym.run(ENV_ID, "sketch-probe-reset", seeds=SEEDS, env_kwargs=kw, episodes=2, executor="process", workers=1, batch_seeds=True)
    assert all(r.status == "ok" for r in records), [r.error for r in records]
    assert [comparable(r) for r in records] == [comparable(r) for r in single]
    assert len({e.length for r in records for e in r.episodes}) > 3  # ragged ends


def test_every_attacker_declares_a_twin_and_the_twins_check_arguments_as_the_single_agents() -> None:
    for name in ATTACKERS:
        assert vector_class(load_agent(name).cls) is not None, name
    twin = vector_class(load_agent("sketch-probe-reset").cls)
    with pytest.raises(ValueError, match="repeats must be a positive integer"):
        twin(repeats=0)
    with pytest.raises(ValueError, match="window must be a positive integer"):
        vector_class(load_agent("sketch-oblivious-worst").cls)(window=0)


def test_vector_env_rejects_bad_actions_and_ignores_ended_rows() -> None:
    env = SketchAttackVectorEnv(num_envs=3, **SMALL)
    with pytest.raises(RuntimeError, match="before reset"):
        env.step(np.zeros((3, 3), dtype=np.int64))
    env.reset(seed=[1, 2, 3])
    for bad in ([[3, 0, 0]] * 3, [[0, 200, 0]] * 3, [[0, 0, 4]] * 3, [[-1, 0, 0]] * 3, [[0, 0, 0]] * 2, np.zeros((3, 3)) + 0.5):
        with pytest.raises(ValueError, match="action space"):
            env.step(np.asarray(bad))
    # sub-env 0 only queries (its query budget ends it at step 150); 1 and 2 alternate increments and queries
    for t in range(400):
        other = [0, t % 50, 0] if t % 2 == 0 else [2, 0, 0]
        _, _, term, trunc, info = env.step(np.array([[2, 0, 0], other, other]))
        if (term | trunc).any():
            break
    assert t == 149 and trunc[0] and not (term[1:] | trunc[1:]).any()
    done = np.flatnonzero(term | trunc)
    assert list(done) == [0] and info["metrics"]["queries"][0] == 150 and info["metrics"]["updates"][0] == 0
    actions = np.array([[9, -5, 99], [0, 3, 0], [2, 0, 0]])  # row 0 is ignored, however invalid
    obs, rewards, term2, trunc2, info2 = env.step(actions)
    assert rewards[0] == 0.0 and trunc2[0] and not term2[0] and obs[0, 2] == 0.0
    assert info2["metrics"]["queries"][0] == 150 and info2["cost"]["queries"][0] == 150 and info2["cost"]["updates"][1] == 76


def test_make_vec_builds_the_vector_env() -> None:
    icmlgym.envs.register_all()
    venv = gym.make_vec(ENV_ID, num_envs=4, vectorization_mode="vector_entry_point", **SMALL)
    obs, _ = venv.reset(seed=3)
    assert isinstance(venv.unwrapped, SketchAttackVectorEnv) and obs.shape == (4, 3)
    single = SketchAttackEnv(**SMALL)
    np.testing.assert_array_equal(obs[2], single.reset(seed=5)[0])  # an int seed: seed + i for sub-env i


# the array path (blocks); Lemire's rejection loop entered about half the time; no amount draw; the
# per-seed path; small raw buffers and blocks: many refills, block ends and blocks cut short
@pytest.mark.parametrize(("n_keys", "max_inc", "small"), [(3000, 3, False), (2**31 + 1, 3, False), (50, 1, False), (2**32 + 3, 3, False),
                                                         (3000, 3, True), (2**31 + 1, 3, True)])
def test_random_stream_twin_draws_as_the_single_agents(n_keys: int, max_inc: int, small: bool, monkeypatch) -> None:
    from gymnasium import spaces

    from icmlgym.agents.protocol import AgentSpec
    from icmlgym.baselines import sketch_vector
    from icmlgym.baselines.sketch import ObliviousRandomStream
    from icmlgym.baselines.sketch_vector import VectorObliviousRandomStream

    if small:
        monkeypatch.setattr(sketch_vector, "_RAW", 64)
        monkeypatch.setattr(sketch_vector, "_BLOCK", 7)

    space = spaces.MultiDiscrete([3, n_keys, max_inc])
    spec = AgentSpec(ENV_ID, spaces.Box(0.0, np.inf, (3,)), space, None, {"update_budget": 40, "query_budget": 30})
    singles = [ObliviousRandomStream(reset_prob=0.3) for _ in SEEDS]
    for a, s in zip(singles, SEEDS):
        a.reset(s, spec)
    twin = VectorObliviousRandomStream(reset_prob=0.3)
    twin.reset(SEEDS, spec)
    obs = np.zeros((len(SEEDS), 3))
    flags = np.zeros(len(SEEDS), dtype=bool)
    for _ in range(1200):  # past a refill of the raw outputs
        got = twin.act(obs, {})
        np.testing.assert_array_equal(got, np.stack([a.act(obs[i], {}) for i, a in enumerate(singles)]))
        twin.update(obs, got, np.zeros(len(SEEDS)), obs, flags, flags, {})
