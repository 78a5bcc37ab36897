"""SpeculativeReasoning-v0's behaviour: accept keeps the draft's step, reject lets the target write it
(losslessly: rejecting everything at temperature 0 is the target's greedy decoding), token-level
verification (lossless too), the sequential and FPSR cost models (early stopping included), the
verifiers' rules, bad input."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import gymnasium as gym  # noqa: E402

import icmlgym  # noqa: E402, F401
from icmlgym.agents.reasoning import TBVMAgent  # noqa: E402
from icmlgym.baselines.reasoning import SpecReasonAgent  # noqa: E402
from icmlgym.baselines.reasoning import TokenSpeculativeAgent  # noqa: E402
from icmlgym.envs.reasoning.spec_reasoning import ACCEPT, MAX_LINE, REJECT, TOKEN, SpeculativeReasoningEnv  # noqa: E402


@pytest.fixture(autouse=True)
def one_thread():
    from icmlgym.nn.runtime import fixed_threads

    with fixed_threads(1):
        yield


@pytest.fixture(scope="module")
def env():
    return SpeculativeReasoningEnv()


def _play(env, seed, action):
    """One episode; ``action`` is an action or a function of the step index. Returns the drafted lines and the last info."""
    obs, info = env.reset(seed=seed)
    lines, done, i = [], False, 0
    costs = []
    while not done:
        lines.append(info["draft_line"])
        obs, r, done, trunc, info = env.step(action(i) if callable(action) else action)
        costs.append(info["step_cost"])
        i += 1
    info["costs"] = costs
    return lines, info


def test_accepting_everything_keeps_the_drafts_lines(env):
    drafted, info = _play(env, 2, ACCEPT)
    m = info["metrics"]
    assert info["text"] == "".join(drafted)
    assert m["acceptance_rate"] == 1 and m["target_tokens_saved"] == m["generated_tokens"]
    assert m["target_forwards"] == 1 + m["steps"]  # the prompt, then one verification pass per step


def test_rejecting_everything_at_temperature_zero_is_the_targets_greedy_decoding():
    env = SpeculativeReasoningEnv(temperature=0.0)
    for seed in range(3):
        _, info = _play(env, seed, REJECT)
        prompt = env.tok.encode(env.problem.prompt, bos=True)
        greedy = env.tok.decode(env.pair.target.generate(prompt, 64 - len(prompt), 0.0, stop=env.tok.eos_id))
        assert greedy.startswith(info["text"]) and info["text"].splitlines()[-1].startswith("A:")
        m = info["metrics"]
        assert m["acceptance_rate"] == 0 and m["target_tokens_saved"] == 0 and m["accuracy"] == m["reference_accuracy"]


def test_token_level_verification_at_temperature_zero_is_the_targets_greedy_decoding():
    env = SpeculativeReasoningEnv(temperature=0.0)
    agent = TokenSpeculativeAgent()
    saved = 0
    for seed in range(3):
        _, info = _play(env, seed, lambda i: agent.act({}, {}))
        prompt = env.tok.encode(env.problem.prompt, bos=True)
        greedy = env.tok.decode(env.pair.target.generate(prompt, 64 - len(prompt), 0.0, stop=env.tok.eos_id))
        assert greedy.startswith(info["text"]) and info["text"].splitlines()[-1].startswith("A:")
        m = info["metrics"]
        assert m["accuracy"] == m["reference_accuracy"]
        assert 0 < m["token_acceptance_rate"] <= 1 and m["target_tokens_saved"] == sum(c["kept_draft_tokens"] for c in info["costs"])
        saved += m["target_tokens_saved"]
    assert saved > 0  # the draft agrees with the target on some tokens: token-level verification keeps them


def _expected(c, parallel, early_stop, action, prefetched):
    """A step's cost from its parts, as docs/reasoning.md states the cost model."""
    if not parallel:
        return c["draft"] + 1 + c["target"] + c["token_level"]
    wait = max(0.0, c["draft"] - 1) if prefetched else c["draft"]
    if action == REJECT and early_stop:
        return max(wait + 1, c["target"])
    return wait + 1 + c["target"] + c["token_level"]


@pytest.mark.parametrize("parallel, early_stop", [(False, True), (True, False), (True, True)])
def test_every_steps_cost_follows_the_documented_model(parallel, early_stop):
    env = SpeculativeReasoningEnv(parallel=parallel, early_stop=early_stop, cost_weight=1.0, reference=False)
    pattern = [TOKEN, REJECT, ACCEPT, TOKEN, ACCEPT, REJECT, REJECT, ACCEPT]
    for seed in range(3):
        lines, info = _play(env, seed, lambda i: pattern[(i + seed) % len(pattern)])
        for i, c in enumerate(info["costs"]):
            a = pattern[(i + seed) % len(pattern)]
            # the draft wrote this line during the last verification only when that step kept the draft's line
            assert c["prefetched"] == (i > 0 and info["costs"][i - 1]["kept_draft_line"])
            assert c["kept_draft_line"] == (a == ACCEPT or (a == TOKEN and c["kept_draft_tokens"] == len(env.tok.encode(lines[i]))))
            assert c["cost"] == pytest.approx(_expected(c, parallel, early_stop, a, c["prefetched"]))
            assert (c["target"], c["token_level"]) == (0, 0) if a == ACCEPT else (c["token_level"] == 0 if a == REJECT else c["target"] == 0)
        assert info["metrics"]["modelled_latency"] == pytest.approx(sum(c["cost"] for c in info["costs"]))


def test_the_parallel_cost_model_never_costs_more_on_the_same_trajectory():
    seq, par = SpeculativeReasoningEnv(reference=False), SpeculativeReasoningEnv(parallel=True, reference=False)
    late = SpeculativeReasoningEnv(parallel=True, early_stop=False, reference=False)
    for seed in range(2):
        for action in (ACCEPT, REJECT, TOKEN):
            _, a = _play(seq, seed, action)
            _, b = _play(par, seed, action)
            _, c = _play(late, seed, action)
            assert a["text"] == b["text"] == c["text"]
            assert b["metrics"]["modelled_latency"] <= c["metrics"]["modelled_latency"] <= a["metrics"]["modelled_latency"]
            if action == REJECT:  # early stopping hides the verification pass behind the target's own step
                assert b["metrics"]["modelled_latency"] < c["metrics"]["modelled_latency"]


def _obs(p, runner):
    n = len(p)
    pad = lambda a: np.concatenate([np.asarray(a, np.float32), np.zeros(MAX_LINE - n, np.float32)])  # noqa: E731
    return {"target_probs": pad(p), "target_runner_up": pad(runner), "draft_probs": pad(p), "mask": pad(np.ones(n)),
            "stats": np.zeros(5, np.float32)}


def test_tbvm_rejects_a_step_with_one_doubtful_token_that_a_score_threshold_accepts():
    agent, score = TBVMAgent(ratio=2.0), SpecReasonAgent(threshold=0.7)
    confident = _obs([0.9, 0.95, 0.9, 0.97], [0.05, 0.03, 0.05, 0.02])
    one_doubt = _obs([0.99, 0.99, 0.99, 0.99, 0.99, 0.55, 0.99], [0.005, 0.005, 0.005, 0.005, 0.005, 0.4, 0.005])
    assert agent.act(confident, {}) == ACCEPT and score.act(confident, {}) == ACCEPT
    assert agent.act(one_doubt, {}) == REJECT and score.act(one_doubt, {}) == ACCEPT


def test_actions_outside_the_space_are_refused(env):
    env.reset(seed=0)
    for bad in (3, -1, 0.5, None):
        with pytest.raises(ValueError, match="action space"):
            env.step(bad)


@pytest.mark.parametrize("kwargs, match", [({"temperature": -0.5}, "temperature"), ({"cost_weight": -1}, "cost_weight"),
                                           ({"split": "holdout"}, "split"), ({"levels": ()}, "levels"),
                                           ({"draft": "tiny"}, "draft must be one of"),
                                           ({"sapo_budget": "huge"}, "sapo_budget must be one of")])
def test_bad_arguments_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("icmlgym/SpeculativeReasoning-v0", **kwargs)


def test_the_sapo_draft_plugs_in_and_changes_only_the_draft():
    base, sapo = SpeculativeReasoningEnv(), SpeculativeReasoningEnv(draft="sapo")
    assert sapo.pair.target is not None and sapo.pair.key.split("+")[0] == base.pair.key.split("+")[0]
    assert sapo.pair.key != base.pair.key
    _, info = _play(sapo, 0, REJECT)
    assert info["metrics"]["steps"] >= 1
