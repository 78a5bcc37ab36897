"""SkillNeologism-v0: the skill library, the oracle, retention by construction, bad input, the agents."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("skills"), reason="needs the [skills] extra (torch)")

import icmlgym  # noqa: E402
from icmlgym.corpora import skills as sk  # noqa: E402

ENV = "icmlgym/SkillNeologism-v0"
SMALL = {"n_steps": 3, "batch_size": 4, "eval_size": 4, "final_size": 16}


@pytest.fixture(scope="module")
def env():
    return icmlgym.make(ENV, **SMALL).unwrapped


def zero_action(env, **kw):
    a = {
        "embeddings": np.zeros(env.action_space["embeddings"].shape, np.float32),
        "prefix": np.zeros(env.action_space["prefix"].shape, np.float32),
        "weights": np.zeros(env.action_space["weights"].shape, np.float32),
        "demos": 0,
        "gradient": 0,
    }
    a.update(kw)
    return a


def test_skills_do_what_their_names_say():
    x = np.array([[3, 1, 4, 1, 5, 9]])
    assert sk.apply("shift4", x).tolist() == [[7, 5, 8, 5, 9, 3]]
    assert sk.apply("neg", x).tolist() == [[6, 8, 5, 8, 4, 0]]
    assert sk.apply("reverse", x).tolist() == [[9, 5, 1, 4, 1, 3]]
    assert sk.apply("sort", x).tolist() == [[1, 1, 3, 4, 5, 9]]
    assert sk.apply("rot3", x).tolist() == [[1, 5, 9, 3, 1, 4]]
    assert sk.apply("swap", x).tolist() == [[1, 3, 1, 4, 9, 5]]
    assert sk.target("shift1", "reverse", x).tolist() == [[0, 6, 2, 5, 2, 4]]  # map, then permutation
    with pytest.raises(ValueError, match="unknown skill 'dedupe'"):
        sk.apply("dedupe", x)
    # the held-out skills have no token and are never drawn in pre-training
    assert not set(sk.NEW_MAPS + sk.NEW_PERMS) & set(sk.SKILL_TOKENS)
    drawn = sk.sample_combos(np.random.default_rng(0), 2000)
    assert {s for c in drawn for s in c} == set(sk.OLD_MAPS + sk.OLD_PERMS) | {None}
    assert all(m is None or sk.kind(m) == "map" for m, _ in drawn) and all(p is None or sk.kind(p) == "perm" for _, p in drawn)


def test_the_pre_trained_model_knows_its_skills():
    from icmlgym.zoo import skills as zs

    z = zs.load("smoke", build=False)
    q = z.card["quality"]
    assert q["accuracy_single"] > 0.9 and q["accuracy_composed"] > 0.9, q


def test_neologism_rows_leave_every_old_skill_untouched(env):
    """Retention is exact by construction: old prompts never contain a new token."""
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    a = zero_action(env, embeddings=rng.uniform(-2, 2, env.action_space["embeddings"].shape).astype(np.float32))
    for _ in range(SMALL["n_steps"]):
        _, _, term, _, info = env.step(a)
    m = info["metrics"]
    assert m["forgetting"] == 0.0 and m["old_skill_accuracy"] == m["base_old_accuracy"]
    assert m["weights_changed"] == 0.0


def test_a_weight_delta_changes_old_skills(env):
    env.reset(seed=1)
    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.5, env.action_space["weights"].shape).astype(np.float32)
    for _ in range(SMALL["n_steps"]):
        _, _, _, _, info = env.step(zero_action(env, weights=w))
    m = info["metrics"]
    assert m["weights_changed"] == 1.0
    assert m["forgetting"] > 0.2  # random weights break the model


def test_oracle_gradient_matches_finite_differences(env):
    """The oracle's gradient with respect to one embedding coordinate equals a central difference
    of its loss (the oracle's batch is redrawn from the same state)."""
    import torch

    from icmlgym.envs.skills.model import masked_ce, to_tensor

    env.reset(seed=3)
    state = env.np_random.bit_generator.state
    rows = np.random.default_rng(1).normal(0, 0.3, env.action_space["embeddings"].shape).astype(np.float32)
    a = {"embeddings": rows, "prefix": np.zeros_like(rows), "weights": np.zeros(env.model.n_params, np.float32), "demos": 0}

    def loss(r):
        env.np_random.bit_generator.state = state
        p = env._new_prompts(env.batch_size, 0)
        n = env.batch_size
        with torch.no_grad():
            logits = env.model.logits(p, to_tensor(r), None, None)
            from icmlgym.envs.skills.model import Prompts

            return sum(float(masked_ce(logits[i * n:(i + 1) * n], Prompts(p.tokens[i * n:(i + 1) * n], p.mask[i * n:(i + 1) * n], p.involves[i * n:(i + 1) * n])))
                       for i in range(env.n_new))

    env.np_random.bit_generator.state = state
    g = env._gradient(a, 0, weights=False)["embeddings"]
    for i, j in ((0, 0), (1, 5)):
        eps = 1e-2
        up, down = rows.copy(), rows.copy()
        up[i, j] += eps
        down[i, j] -= eps
        fd = (loss(up) - loss(down)) / (2 * eps)
        assert g[i, j] == pytest.approx(fd, rel=0.05, abs=1e-3)


def test_oracle_counts_backward_passes_and_gives_weights_only_when_asked(env):
    env.reset(seed=0)
    _, _, _, _, info = env.step(zero_action(env, gradient=1))
    assert set(info["gradient"]) == {"embeddings", "prefix", "loss"} and info["cost"]["backward_passes"] == 1
    _, _, _, _, info = env.step(zero_action(env, gradient=2))
    assert info["gradient"]["weights"].shape == (env.model.n_params,) and info["cost"]["backward_passes"] == 2
    assert info["cost"]["gradient_prompts"] == 2 * env.n_new * SMALL["batch_size"]


def test_demonstrations_cost_context_tokens(env):
    env.reset(seed=0)
    _, _, _, _, info = env.step(zero_action(env, demos=2))
    assert info["cost"]["context_tokens"] == env.n_new * SMALL["eval_size"] * 2 * sk.DEMO_LEN


@pytest.mark.parametrize(
    "change, message",
    [
        ({"embeddings": np.zeros((3, 64), np.float32)}, r"action\['embeddings'\] has shape \(3, 64\), expected \(2, 64\)"),
        ({"embeddings": np.full((2, 64), np.nan, np.float32)}, r"action\['embeddings'\] has 128 non-finite"),
        ({"prefix": np.full((2, 64), 100.0, np.float32)}, r"action\['prefix'\] has values outside the action space"),
        ({"weights": np.zeros(7, np.float32)}, r"action\['weights'\] has shape \(7,\)"),
        ({"demos": 5}, r"action\['demos'\] = 5 is not in the action space Discrete\(3\)"),
        ({"gradient": 1.5}, r"action\['gradient'\] = 1.5 is not in the action space"),
    ],
)
def test_bad_submissions_are_refused_with_the_key_named(env, change, message):
    env.reset(seed=0)
    with pytest.raises(ValueError, match=message):
        env.step(zero_action(env, **change))


def test_missing_keys_and_bad_arguments_are_named(env):
    env.reset(seed=0)
    a = zero_action(env)
    del a["demos"]
    with pytest.raises(ValueError, match=r"missing \['demos'\]"):
        env.step(a)
    with pytest.raises(ValueError, match="unknown new skill 'reverse' \\(it has a token already"):
        icmlgym.make(ENV, new_skills=("reverse",))
    with pytest.raises(ValueError, match="unknown new skill 'dedupe'"):
        icmlgym.make(ENV, new_skills="dedupe")
    with pytest.raises(ValueError, match="one map and one permutation"):
        icmlgym.make(ENV, new_skills=("shift4", "shift6"))
    with pytest.raises(ValueError, match="max_demos must be in 0..2"):
        icmlgym.make(ENV, max_demos=4)


def test_one_new_skill_has_no_pair_metrics():
    e = icmlgym.make(ENV, new_skills="rot5", **SMALL).unwrapped
    e.reset(seed=0)
    for _ in range(SMALL["n_steps"]):
        _, _, _, _, info = e.step(zero_action(e))
    assert "pair_accuracy" not in info["metrics"] and "composition_accuracy" in info["metrics"]


def test_stable_baselines3_check_env_passes(env):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's advice on Dict actions; errors still raise
        check_env(icmlgym.make(ENV, **SMALL).unwrapped)


@pytest.mark.parametrize(
    "agent", ["skills-neologism", "skills-no-token", "skills-nearest-token", "skills-in-context", "skills-prefix", "skills-lora", "skills-full-ft"]
)
def test_every_agent_runs_an_episode_through_the_runner(agent):
    (rec,) = icmlgym.run(ENV, agent, seeds=1, env_kwargs={**SMALL, "n_steps": 9})
    assert rec.status == "ok", rec.error
    m = rec.episodes[0].metrics
    assert 0.0 <= m["new_skill_accuracy"] <= 1.0
    if agent in ("skills-neologism", "skills-no-token", "skills-nearest-token", "skills-in-context", "skills-prefix"):
        assert m["forgetting"] == 0.0 and m["weights_changed"] == 0.0
    if agent == "skills-in-context":
        assert m["context_tokens_per_prompt"] == 2 * sk.DEMO_LEN
    if agent in ("skills-lora", "skills-full-ft"):
        assert m["weights_changed"] > 0.0
