"""EarlyExit-v0's behaviour: exits, probes, the paired never-exit reference, traces, bad input."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

import gymnasium as gym  # noqa: E402

import icmlgym  # noqa: E402, F401
from icmlgym.envs.reasoning.early_exit import CONTINUE, EXIT, PROBE, READ_TARGET, EarlyExitEnv  # noqa: E402


@pytest.fixture(scope="module")
def env():
    return EarlyExitEnv()


def _play(env, seed, policy):
    obs, info = env.reset(seed=seed)
    done, steps = False, 0
    while not done:
        obs, r, done, trunc, info = env.step(policy(obs, steps))
        steps += 1
    return info


def test_never_exiting_lets_the_model_write_its_own_answer(env):
    info = _play(env, 0, lambda o, i: CONTINUE)
    m = info["metrics"]
    assert info["text"].splitlines()[-1].startswith("A:")
    assert m["exited"] == 0 and m["length_reduction"] == 0 and m["reference_tokens"] == m["generated_tokens"]
    assert m["probe_forwards"] == 0 and m["accuracy"] == m["reference_accuracy"]
    assert 0 <= m["acceptance_rate"] <= 1 and m["target_forwards"] > 0 and m["draft_forwards"] > 0


def test_exit_writes_the_answer_and_the_reference_continues_the_same_prefix(env):
    info = _play(env, 3, lambda o, i: EXIT if i == 1 else CONTINUE)
    m = info["metrics"]
    lines = info["text"].splitlines()
    assert m["exited"] == 1 and lines[-1].startswith("A:") and len(lines) == 2
    assert m["reference_tokens"] >= m["generated_tokens"] - len(lines[-1]) - 1
    assert m["length_reduction"] == pytest.approx(1 - m["generated_tokens"] / m["reference_tokens"])
    assert m["accuracy_gain"] == m["accuracy"] - m["reference_accuracy"]


def test_a_probe_is_charged_and_leaves_the_decoding_unchanged(env):
    plain = _play(env, 5, lambda o, i: CONTINUE)
    seen = []

    def probe_then_continue(obs, i):
        if obs["trial"][0] == 0:
            return PROBE
        seen.append(obs["trial"].copy())
        return CONTINUE

    probed = _play(env, 5, probe_then_continue)
    assert probed["text"] == plain["text"]
    assert probed["metrics"]["probe_forwards"] > 0 and plain["metrics"]["probe_forwards"] == 0
    assert probed["cost"]["probe_forwards"] == probed["metrics"]["probe_forwards"]
    assert probed["metrics"]["modelled_latency"] > plain["metrics"]["modelled_latency"]
    assert all(0 < t[1] <= 1 and t[2] <= t[1] for t in seen)


def test_reading_the_target_state_fills_it(env):
    obs, _ = env.reset(seed=1)
    assert not obs["target_hidden"].any() and obs["stats"][5] == 0
    obs, *_ = env.step(READ_TARGET)
    assert obs["target_hidden"].any() and obs["stats"][5] == 1


def test_actions_outside_the_space_are_refused(env):
    env.reset(seed=0)
    for bad in (4, -1, 1.5, "exit"):
        with pytest.raises(ValueError, match="action space"):
            env.step(bad)


@pytest.mark.parametrize("kwargs, match", [
    ({"k": 0}, "k \\(draft tokens"),
    ({"temperature": -1}, "temperature"),
    ({"split": "dev"}, "split"),
    ({"domains": ("poetry",)}, "domains"),
    ({"levels": (9,)}, "levels"),
    ({"overthink": 2.0}, "overthink"),
])
def test_bad_arguments_are_clear_errors(kwargs, match):
    with pytest.raises(ValueError, match=match):
        gym.make("icmlgym/EarlyExit-v0", **kwargs)


def test_traces_label_every_boundary_and_refuse_the_test_split(env):
    with pytest.raises(ValueError, match="test split"):
        env.traces(4, "test")
    traces = env.traces(3, "val", seed=7)
    assert len(traces) == 3
    for tr in traces:
        n = len(tr["tokens"])
        assert n >= 1 and tr["draft_hidden"].shape == (n, env.pair.draft.config.n_embd)
        assert set(np.unique(tr["exit_correct"])) <= {0.0, 1.0} and np.all(np.diff(tr["tokens"]) > 0)
        assert tr["target_hidden"].any() and (tr["trial"][:, 0] == 1).all()
    again = env.traces(3, "val", seed=7)  # from the cache: the same arrays
    assert all(np.array_equal(a["draft_hidden"], b["draft_hidden"]) for a, b in zip(traces, again))


def test_the_shipped_traces_are_the_current_codes():
    """The agents' default traces ship with the package (a cold machine skips ~30 s of decoding per
    build); they are keyed by the code and the weights, so an edit of the decoding code needs
    ``ship_traces()`` again, or every cold run rebuilds them."""
    from icmlgym.cache import Cache
    from icmlgym.envs.reasoning.early_exit import DEFAULT_TRACES, SHIPPED_TRACES, traces_key

    env = EarlyExitEnv()
    for n, split, seed in DEFAULT_TRACES:
        key = traces_key(env, n, split, seed)
        shipped = Cache("reasoning", SHIPPED_TRACES).read_arrays(key)
        assert shipped is not None, f"no shipped traces for {(n, split, seed)} under this code: run icmlgym.envs.reasoning.early_exit.ship_traces()"
        assert len(shipped["final_correct"]) == n and shipped["problem"].max() == n - 1
    assert len(list(SHIPPED_TRACES.glob("*.npz"))) == len(DEFAULT_TRACES)
