"""icmlgym/CognitiveRNN-v0: the analyses, bad networks, and the agents through the runner (conformance: tests/core/test_all_envs.py)."""

from __future__ import annotations

import numpy as np
import pytest

import icmlgym
from icmlgym.catalog import card, extra_installed
from icmlgym.envs.cognitive import network as netlib

ID = "icmlgym/CognitiveRNN-v0"
SMALL = {"n_hidden": 8, "n_train_trials": 8, "n_eval_trials": 16}
needs_cognitive = pytest.mark.skipif(not extra_installed("cognitive"), reason="needs the [cognitive] extra (torch, POT)")


def test_random_networks_are_scored():
    env = icmlgym.make(ID, **SMALL)
    env.action_space.seed(0)
    obs, info = env.reset(seed=0)
    assert info["train_trials"]["inputs"].shape[0] == 8 and info["network"]["n_hidden"] == 8
    _, r, term, trunc, info = env.step(env.action_space.sample())
    assert term and not trunc and r == info["metrics"]["test_accuracy"]
    m = info["metrics"]
    assert set(m) == {"test_accuracy", "heldout_accuracy", "generalisation_gap", "effective_rank", "participation_ratio", "readout_error", "tail_index"}
    assert all(isinstance(v, float) and np.isfinite(v) for v in m.values())
    assert info["cost"]["eval_trials"] == 32 and info["cost"]["forward_flops"] > 0


def _zero_net(env):
    return {k: np.zeros(s, dtype=np.float32) for k, s in env.unwrapped.shapes.items()}


def test_bad_networks_are_refused_with_clear_errors():
    env = icmlgym.make(ID, task="context_integration", **SMALL)
    env.reset(seed=0)
    net = _zero_net(env)
    wrong_in = {**net, "w_in": np.zeros((8, 3), np.float32)}
    with pytest.raises(ValueError, match=r"w_in has shape \(8, 3\), expected \(8, 7\).*n_input=7 \(context_integration\)"):
        env.step(wrong_in)
    wrong_out = {**net, "w_out": np.zeros((2, 8), np.float32), "b_out": np.zeros(2, np.float32)}
    with pytest.raises(ValueError, match=r"w_out has shape \(2, 8\), expected \(3, 8\).*n_output=3"):
        env.step(wrong_out)
    nan = {**net, "w_rec": np.full((8, 8), np.nan, np.float32)}
    with pytest.raises(ValueError, match="w_rec has 64 non-finite"):
        env.step(nan)
    with pytest.raises(ValueError, match="missing \\['b_out'\\]"):
        env.step({k: v for k, v in net.items() if k != "b_out"})
    with pytest.raises(ValueError, match="not in the action space"):
        env.step("not-a-network")
    with pytest.raises(ValueError, match="unknown cognitive task 'context'"):
        icmlgym.make(ID, task="context")
    with pytest.raises(ValueError, match="n_hidden must be >= 1"):
        icmlgym.make(ID, n_hidden=0)


def test_the_analyses_on_known_cases():
    rng = np.random.default_rng(0)
    u, v = rng.normal(size=(40, 1)), rng.normal(size=(1, 40))
    assert netlib.effective_rank(u @ v) == pytest.approx(1.0, abs=1e-3)
    assert netlib.effective_rank(np.eye(40)) == pytest.approx(40.0)
    x = rng.normal(size=(2000, 1)) @ rng.normal(size=(1, 10)) + 0.01 * rng.normal(size=(2000, 10))
    assert netlib.participation_ratio(x) < 1.1 and netlib.participation_ratio(rng.normal(size=(5000, 10))) > 9
    states = rng.normal(size=(400, 5))
    assert netlib.readout_error(states, {"lin": states @ np.arange(5.0)}) < 1e-3
    assert netlib.readout_error(states, {"noise": rng.normal(size=400)}) > 0.9
    pareto = rng.pareto(1.5, size=20000) + 1  # tail index 1.5
    assert netlib.hill_tail_index(pareto) == pytest.approx(1.5, rel=0.1)
    assert netlib.hill_tail_index(np.abs(rng.normal(size=20000))) > 2 * netlib.hill_tail_index(pareto)


def test_a_network_that_knows_the_answer_scores_on_test_and_heldout():
    """A hand-built integrator for perceptual decisions: two units sum the two stimulus channels;
    the readout compares them once the fixation cue is off. Held-out coherences are weaker, so it
    scores less there."""
    env = icmlgym.make(ID, n_hidden=4, n_eval_trials=200)
    env.reset(seed=0)
    net = _zero_net(env)
    net["w_in"][0, 1] = net["w_in"][1, 2] = 1.0  # unit 0 <- stimulus 1, unit 1 <- stimulus 2
    net["w_rec"][0, 0] = net["w_rec"][1, 1] = 1.0  # perfect integrators (alpha * (r + x) + (1 - alpha) h)
    net["w_in"][2, 0] = 1.0  # unit 2 follows the fixation cue
    net["w_out"][1, 0], net["w_out"][1, 1] = 1.0, -1.0
    net["w_out"][2, 0], net["w_out"][2, 1] = -1.0, 1.0
    # fixate while unit 2 is near 1 (the cue on for ~20 steps); once the cue is off it decays below 0.9
    net["w_out"][0, 2], net["b_out"][0] = 1e3, -900.0
    _, r, _, _, info = env.step(net)
    m = info["metrics"]
    assert m["test_accuracy"] > 0.95 and 0.6 < m["heldout_accuracy"] < m["test_accuracy"]


@needs_cognitive
def test_reference_and_baselines_run_through_the_runner():
    c = card(ID)
    for agent in c.agents:
        (rec,) = icmlgym.run(ID, agent, seeds=[0], tier="smoke", env_kwargs={"n_hidden": 12, "n_train_trials": 16, "n_eval_trials": 32})
        assert rec.status == "ok", (agent, rec.error)
        assert 0.0 <= rec.metric("heldout_accuracy")[0] <= 1.0


@needs_cognitive
def test_reference_learns_and_keeps_its_distribution():
    (rec,) = icmlgym.run(ID, "cognitive-dale-lognormal", seeds=[1], tier="smoke")
    assert rec.status == "ok", rec.error
    assert rec.metric("test_accuracy")[0] > 0.8  # chance is 0.5


@needs_cognitive
def test_wrong_sized_network_from_train_fails_the_run_with_the_reason():
    from icmlgym.agents.cognitive import HeavyTailedDaleAgent

    class TooWide(HeavyTailedDaleAgent):
        name = "too-wide"

        def act(self, obs, info):
            w = super().act(obs, info)
            return {**w, "w_in": np.zeros((w["w_in"].shape[0], w["w_in"].shape[1] + 1), np.float32)}

    (rec,) = icmlgym.run(ID, TooWide, seeds=[0], tier="smoke", env_kwargs={"n_hidden": 8, "n_train_trials": 8, "n_eval_trials": 16})
    assert rec.status == "failed" and "w_in has shape (8, 4), expected (8, 3)" in rec.error


@needs_cognitive
def test_rnn_policy_agent_plays_a_task_env():
    (rec,) = icmlgym.run("icmlgym/CogPerceptualDecision-v0", "cognitive-rnn-policy", seeds=[0], tier="smoke")
    assert rec.status == "ok", rec.error
    assert rec.metric("accuracy")[0] > 0.6 and rec.metric("abort_rate")[0] < 0.2
