"""The cognitive task envs batched (``batch_seeds``): the vector env and the random twin equal the single runs bit for bit."""

from __future__ import annotations

import dataclasses

import gymnasium as gym
import numpy as np
import pytest

import icmlgym
from icmlgym.agents.loading import load_agent
from icmlgym.catalog import card
from icmlgym.envs.cognitive import TASK_ENVS
from icmlgym.envs.cognitive.task_env import CognitiveTaskEnv
from icmlgym.envs.cognitive import tasks
from icmlgym.envs.cognitive.tasks import DelayedComparison, make_task
from icmlgym.envs.cognitive.vector import CognitiveTaskVectorEnv, trial_blocks
from icmlgym.runner import batched
from icmlgym.runner.api import make_tasks
from icmlgym.runner.loop import execute
from tests.core.test_batched import comparable

IDS = [f"icmlgym/{name}-v0" for name in TASK_ENVS]
TASKS = [task for task, _ in TASK_ENVS.values()]
SEEDS = [0, 1, 2, 7, 123456]
TWINS = ("random",)  # the agents of these envs with a vector twin (the other two train: see docs/performance.md)


def no_fallback(task):
    raise AssertionError(f"the batch fell back to a single run: {task}")


@pytest.mark.parametrize("agent", TWINS)
@pytest.mark.parametrize("env_id", IDS)
@pytest.mark.parametrize("env_kwargs,episodes", [({}, 1), ({"trials_per_episode": 7}, 2)])
def test_batched_records_equal_single_runs(env_id: str, agent: str, env_kwargs: dict, episodes: int, monkeypatch) -> None:
    tasks = make_tasks(env_id, agent, seeds=SEEDS, tier="smoke", env_kwargs=env_kwargs, episodes=episodes)
    single = [execute(t) for t in tasks]
    monkeypatch.setattr(batched, "execute", no_fallback)  # the records below must come from the vector path
    records = batched.execute_batch(tasks)
    assert all(r.status == "ok" for r in single + records), [r.error for r in single + records]
    for s, b in zip(single, records):
        assert comparable(b) == comparable(s)
    trials = env_kwargs.get("trials_per_episode", 20)
    assert all(e.cost["trials"] == trials and set(e.metrics) == {"accuracy", "abort_rate", "reward_per_trial"}
               for r in records for e in r.episodes)
    assert len({r.episodes[0].metrics["reward_per_trial"] for r in records}) > 1  # the seeds really differ


def test_cli_batch_seeds_runs_the_vector_path(monkeypatch) -> None:
    monkeypatch.setattr(batched, "execute", no_fallback)
    records = icmlgym.run("icmlgym/CogIntervalTiming-v0", "random", seeds=3, tier="smoke", batch_seeds=True)
    assert [r.seed for r in records] == [0, 1, 2] and all(r.status == "ok" for r in records)
    assert len({r.episodes[0].length for r in records}) > 1  # the seeds ended at different steps


def test_batched_on_the_process_executor_equals_single_runs() -> None:
    single = icmlgym.run("icmlgym/CogGoNoGo-v0", "random", seeds=3, tier="smoke")
    records = icmlgym.run("icmlgym/CogGoNoGo-v0", "random", seeds=3, tier="smoke", executor="process", workers=1, batch_seeds=True)
    assert [comparable(r) for r in records] == [comparable(r) for r in single]


def test_batched_isolated_equals_single_isolated_runs() -> None:
    # the evaluator's batch: the card's task kwarg reaches the vector env, the infos (period names) cross the channel
    import dataclasses

    from icmlgym.runner.sandbox import SandboxOptions
    from icmlgym.runner.submission import identify

    iso = identify("random", None, SandboxOptions(mode="auto", call_timeout=30.0, load_timeout=30.0))
    tasks = [dataclasses.replace(t, isolation=iso) for t in make_tasks("icmlgym/CogIntervalTiming-v0", "random", seeds=SEEDS[:3], tier="smoke")]
    records = batched.execute_batch(tasks)
    single = [execute(t) for t in tasks]
    assert all(r.isolation.get("batched") == 3 for r in records), [r.error for r in records]
    for b, s in zip(records, single):
        assert b.status == s.status == "ok", (b.error, s.error)
        assert [(e.ret, e.length, e.metrics, e.cost) for e in b.episodes] == [(e.ret, e.length, e.metrics, e.cost) for e in s.episodes]


@pytest.mark.parametrize("agent", ["cognitive-rnn-policy", "sb3-ppo"])
def test_agents_that_train_run_singly(agent: str) -> None:
    c = card(IDS[0])
    assert "no vectorized twin" in batched.why_not_batched(c, load_agent(agent))


def _policy(kind: str, rng: np.random.Generator, envs: list[CognitiveTaskEnv], n_actions: int) -> np.ndarray:
    """Actions for the step-by-step test: uniform, mostly fixating, or the ground truth of the step."""
    if kind == "uniform":
        return rng.integers(0, n_actions, len(envs))
    if kind == "fixating":
        return np.where(rng.random(len(envs)) < 0.9, 0, rng.integers(0, n_actions, len(envs)))
    out = np.zeros(len(envs), dtype=np.int64)
    for i, e in enumerate(envs):  # the single env's own trial
        out[i] = max(0, int(e._batch.targets[e._trial, e._t]))
    return out


@pytest.mark.parametrize("task", TASKS)
@pytest.mark.parametrize("policy", ["uniform", "fixating", "oracle"])
def test_vector_env_equals_single_envs_step_by_step(task: str, policy: str) -> None:
    kw = {"trials_per_episode": 6}
    if task == "go_nogo":  # a fixation period (aborts) and noisy cues: the branches the default timing never takes
        kw["task_kwargs"] = {"timing": {"fixation": 200}, "sigma": 0.5}
    venv = gym.make_vec(f"icmlgym/{list(TASK_ENVS)[TASKS.index(task)]}-v0", num_envs=len(SEEDS), vectorization_mode="vector_entry_point", **kw)
    assert isinstance(venv, CognitiveTaskVectorEnv) and venv.ragged_ends
    _assert_steps_equal(venv, [CognitiveTaskEnv(task=task, **kw) for _ in SEEDS], policy)


@dataclasses.dataclass
class _OwnRules(DelayedComparison):
    """A task with rules of its own: a wrong answer does not end the trial (it may answer again), a trial that runs
    out rewards the f1 > f2 trials (and scores the others -0.0, which adds as 0.0)."""

    name = "own_rules_test"
    rewards = {"abort": -0.1, "correct": 1.0, "fail": -0.25}

    def response_reward(self, action, target, t, periods, cond):
        return (self.rewards["correct"], True, True) if action == target else (self.rewards["fail"], False, True)

    def end_reward(self, cond):
        return (0.5, True) if int(cond["ground_truth"]) == 1 else (-0.0, False)


@pytest.mark.parametrize("policy", ["uniform", "fixating", "oracle"])
@pytest.mark.parametrize("timing", [{"decision": 300}, {"stimulus1": 0, "delay": 0, "stimulus2": 0, "decision": 0}])  # 2nd: fixation only
def test_vector_env_applies_a_tasks_own_rules_as_the_single_env(policy: str, timing: dict, monkeypatch) -> None:
    monkeypatch.setitem(tasks.TASKS, _OwnRules.name, _OwnRules)
    kw = {"task": _OwnRules.name, "trials_per_episode": 5, "task_kwargs": {"timing": timing}}
    venv = CognitiveTaskVectorEnv(num_envs=len(SEEDS), **kw)
    _assert_steps_equal(venv, [CognitiveTaskEnv(**kw) for _ in SEEDS], policy)
    assert venv._own_rules and venv._lazy_at is not None  # the path taken: the task's methods at the step


def _assert_steps_equal(venv: CognitiveTaskVectorEnv, envs: list[CognitiveTaskEnv], policy: str) -> None:
    """Step ``venv`` and the single ``envs`` (one per seed of SEEDS) with ``policy`` until all end: every output equal."""
    obs, info = venv.reset(seed=SEEDS)
    for i, (o, inf) in enumerate(e.reset(seed=s) for e, s in zip(envs, SEEDS)):
        assert np.array_equal(obs[i], o) and obs.dtype == o.dtype
        assert (inf["trial"], inf["period"], inf["cost"]) == (info["trial"][i], info["period"][i], {k: v[i] for k, v in info["cost"].items()})
    rng = np.random.default_rng(3)
    ended: dict[int, tuple] = {}
    while len(ended) < len(SEEDS):
        a = _policy(policy, rng, envs, venv.single_action_space.n)
        obs, r, term, trunc, info = venv.step(a)
        assert not trunc.any()
        for i, e in enumerate(envs):
            if i in ended:  # the ragged-ends contract: nothing moves after a sub-env's end
                o_end, m_end, c_end = ended[i]
                assert r[i] == 0.0 and term[i] and np.array_equal(obs[i], o_end)
                assert {k: v[i] for k, v in info["metrics"].items()} == m_end and {k: v[i] for k, v in info["cost"].items()} == c_end
                continue
            o, ri, te, tr, inf = e.step(int(a[i]))
            assert np.array_equal(obs[i], o) and r[i] == ri and term[i] == te and trunc[i] == tr
            assert (inf["trial"], inf["period"]) == (info["trial"][i], info["period"][i])
            assert {k: v[i] for k, v in info["cost"].items()} == inf["cost"]
            assert bool(inf.get("new_trial", False)) == info["new_trial"][i]
            assert inf.get("trial_correct", False) == info["trial_correct"][i]
            if te:
                assert {k: float(v[i]) for k, v in info["metrics"].items()} == inf["metrics"]
                ended[i] = (o, inf["metrics"], inf["cost"])
            elif "metrics" in info:
                assert np.isnan(info["metrics"]["accuracy"][i])
        if ended and len(ended) < len(SEEDS):  # an ended sub-env's action is ignored, even one outside the space
            a = _policy(policy, rng, envs, venv.single_action_space.n)
            a[sorted(ended)[0]] = -7
            obs, r, term, trunc, info = venv.step(a)
            for i, e in enumerate(envs):
                if i not in ended:
                    o, ri, te, _, inf = e.step(int(a[i]))
                    assert np.array_equal(obs[i], o) and r[i] == ri and term[i] == te and inf["cost"] == {k: v[i] for k, v in info["cost"].items()}
                    if te:
                        ended[i] = (o, inf["metrics"], inf["cost"])
    with pytest.raises(RuntimeError, match="ended"):
        venv.step(np.zeros(len(SEEDS), dtype=np.int64))
    if policy == "oracle" and not isinstance(venv.task, _OwnRules):  # every trial answered correctly (interval timing: graded)
        assert all(m[1]["accuracy"] == 1.0 for m in ended.values())


@pytest.mark.parametrize("task", TASKS)
def test_trial_blocks_equal_the_tasks_own_batches(task: str) -> None:
    kwargs = {"sigma": 0.3} if task in ("go_nogo", "interval_timing") else {}  # noise on every task that has noisy periods
    t = make_task(task, **kwargs)
    seeds = [5, 0, 123456]
    blocks = trial_blocks(t, 4, [np.random.default_rng(s) for s in seeds])
    for g, s in enumerate(seeds):
        one = t.batch(4, np.random.default_rng(s))
        rows = slice(4 * g, 4 * g + 4)
        steps = one.inputs.shape[1]
        assert np.array_equal(blocks.inputs[rows, :steps], one.inputs) and not blocks.inputs[rows, steps:].any()
        assert np.array_equal(blocks.targets[rows, :steps], one.targets) and (blocks.targets[rows, steps:] == -1).all()
        assert np.array_equal(blocks.response_mask[rows, :steps], one.response_mask)
        assert np.array_equal(blocks.lengths[rows], one.lengths)
        assert all(np.array_equal(blocks.periods[p][rows], v) for p, v in one.periods.items())
        assert all(np.array_equal(blocks.conditions[k][rows], v) for k, v in one.conditions.items())
    with pytest.raises(ValueError, match="at least one generator"):
        trial_blocks(t, 4, [])


def test_vector_env_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="num_envs"):
        CognitiveTaskVectorEnv(num_envs=0)
    with pytest.raises(ValueError, match="unknown cognitive task"):
        CognitiveTaskVectorEnv(num_envs=2, task="perceptual")
    env = CognitiveTaskVectorEnv(num_envs=3, task="delayed_match", trials_per_episode=2)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(3, dtype=np.int64))
    env.reset(seed=4)  # one int: seeds 4, 5, 6 (Gymnasium's rule)
    assert np.array_equal(env.reset(seed=[4, 5, 6])[0], env.reset(seed=4)[0])
    for bad in ([0, 1, 3], [0, 1], np.array([0, -1, 2]), np.array([0, 1, -3], dtype=np.int32), np.array([0.0, 1.0, 2.0]), np.array([True, False, True])):
        with pytest.raises(ValueError, match="action space"):
            env.step(bad)
    env.step(np.array([0, 1, 2], dtype=np.int32))  # other integer dtypes are accepted
    env.step([0, 0, 0])


def test_truncated_exponentials_in_lock_step_equal_each_generators_own():
    from icmlgym.envs.cognitive.tasks import _trunc_exp
    from icmlgym.envs.cognitive.vector import _trunc_exp_many

    for n, spec in ((20, (600, 300, 3000)), (3, (600, 300, 3000)), (9, (100, 250, 260))):  # the last: most draws rejected
        got_rngs, want_rngs = [np.random.default_rng(s) for s in range(12)], [np.random.default_rng(s) for s in range(12)]
        got = _trunc_exp_many(got_rngs, n, *spec)
        for g, rng in enumerate(want_rngs):
            assert np.array_equal(got[g], _trunc_exp(rng, n, *spec))
            assert rng.bit_generator.state == got_rngs[g].bit_generator.state
