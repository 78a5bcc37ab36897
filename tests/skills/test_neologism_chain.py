"""SkillNeologism-v1: the chain library, its model (shipped weights, bounded retraining check), the env."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("skills"), reason="needs the [skills] extra (torch)")

import icmlgym  # noqa: E402
from icmlgym.corpora import skill_chains as sc  # noqa: E402
from icmlgym.corpora import skills as sk  # noqa: E402

ENV = "icmlgym/SkillNeologism-v1"
SMALL = {"n_steps": 3, "batch_size": 4, "eval_size": 4, "final_size": 64}


@pytest.fixture(scope="module")
def env():
    return icmlgym.make(ENV, **SMALL).unwrapped


def zero_action(env, **kw):
    a = {k: np.zeros(env.action_space[k].shape, np.float32) for k in ("embeddings", "prefix", "weights")}
    a.update(demos=0, gradient=0)
    a.update(kw)
    return a


def test_held_out_skills_occur_only_as_chains():
    x = np.random.default_rng(0).integers(0, 10, (5, 6))
    for new, chains in sc.CHAINS.items():
        assert new not in sc.SKILL_TOKENS
        for a, b in chains:
            task = (a, b, None, None) if sc.kind(new) == "map" else (None, None, a, b)
            assert np.array_equal(sc.target(task, x), sk.apply(new, x)), (new, a, b)
    drawn = sc.sample_tasks(np.random.default_rng(1), 3000)
    assert {s for t in drawn for s in t} == set(sc.MAPS + sc.PERMS) | {None}
    assert all(sc.kind(s) == k for t in drawn for s, k in zip(t, sc.SLOT_KINDS) if s is not None)
    assert len(sc.all_tasks()) == 5**4
    b = sc.batch(np.random.default_rng(2), [("shift1", "shift3", "rot1", None)])
    assert b.tokens.shape == (1, sc.SEQ_LEN) and b.mask[0, sc.PROMPT_LEN:].all() and not b.mask[0, : sc.PROMPT_LEN].any()
    with pytest.raises(ValueError, match="unknown skill 'sort'"):
        sc.kind("sort")


# The same digest on other numerics platforms than the one the shipped card's was recorded on
# (torch's kernels round differently on another CPU model: icmlgym.nn.runtime.numerics_platform).
OTHER_PLATFORM_DIGESTS = {"f3e0e8676bfba842": "Intel(R) Xeon(R) Processor, torch 2.13.0+cpu AVX512 (session 6)",
                          "a61e903198084a86": "AMD EPYC, torch 2.13.0+cpu AVX512 (session 8)"}


def test_the_chain_model_ships_for_the_current_code_and_reproduces_its_first_steps():
    """The shipped key matches the code; retraining from the recorded seed gives the digest of the
    weights after the first CHECK_STEPS steps recorded for this platform, bit for bit (the card's
    is the training machine's; the full run is ~15 min)."""
    import torch

    from icmlgym import zoo
    from icmlgym.nn.counters import CostMeter
    from icmlgym.nn.runtime import numerics_platform, seed_everything
    from icmlgym.zoo import skill_chains
    from icmlgym.zoo.registry import shipped_paths

    z = skill_chains.load("smoke", build=False)
    card = json.loads(shipped_paths(skill_chains.NAME, "smoke")[0].read_text())
    assert z.card["key"] == card["key"] == zoo.get(skill_chains.NAME).key(z.config, card["seed"])
    threads = torch.get_num_threads()
    torch.set_num_threads(card["torch_threads"])
    try:
        seed_everything(card["seed"], "cpu")
        model = skill_chains._make(z.config)
        facts = skill_chains._train(model, z.config, card["seed"], CostMeter(), stop_after=skill_chains.CHECK_STEPS)
    finally:
        torch.set_num_threads(threads)
    key = f"digest_after_{skill_chains.CHECK_STEPS}_steps"
    recorded = {card["training"][key]: "the shipped card (the training machine)", **OTHER_PLATFORM_DIGESTS}
    assert facts[key] in recorded, (
        f"{facts[key]} on {numerics_platform()}, recorded {recorded}: the training path changed, or this is a new "
        "platform (then add its digest, with the code unchanged)")


def test_the_chain_model_runs_the_shift_chains_not_the_rotation_chains():
    """What the shipped card measured (docs/skills.md): single skills and the shift chains are
    learned, the rotation chains are not (so a neologism can name shift4, not rot3)."""
    from icmlgym.zoo import skill_chains

    q = skill_chains.load("smoke", build=False).card["quality"]
    assert q["accuracy_single"] > 0.8 and min(q["accuracy_chain_shift4"], q["accuracy_chain_shift6"]) > 0.9, q
    assert max(q["accuracy_chain_rot3"], q["accuracy_chain_rot4"]) < 0.1, q


def test_neologism_rows_leave_every_old_task_untouched(env):
    env.reset(seed=1)
    rows = np.random.default_rng(0).uniform(-2, 2, env.action_space["embeddings"].shape).astype(np.float32)
    for _ in range(SMALL["n_steps"]):
        _, _, _, _, info = env.step(zero_action(env, embeddings=rows, gradient=1))
    m = info["metrics"]
    assert m["forgetting"] == 0.0 and m["old_skill_accuracy"] == m["base_old_accuracy"] > 0.2  # the card: 0.28 over all 625 tasks
    assert info["cost"]["backward_passes"] == SMALL["n_steps"]
    assert {"pair_accuracy", "pair_gain", "composition_accuracy"} <= set(m)


def test_the_chain_library_is_what_the_agents_see(env):
    _, info = env.reset(seed=0)
    v = info["vocabulary"]
    assert v["nop"] == sc.NOP and len(v["names"]) == sc.VOCAB_SIZE == len(v["kinds"])
    assert [v["names"][i] for i, k in enumerate(v["kinds"]) if k == "map"] == list(sc.MAPS)
    assert [s["token"] for s in info["new_skills"]] == [sc.VOCAB_SIZE, sc.VOCAB_SIZE + 1]
    with pytest.raises(ValueError, match="unknown new skill 'rot5'"):
        icmlgym.make(ENV, new_skills="rot5")
    with pytest.raises(ValueError, match=r"unknown new skill 'rot1' \(it has a token already"):
        icmlgym.make(ENV, new_skills="rot1")
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"action\['embeddings'\] has 128 non-finite"):
        env.step(zero_action(env, embeddings=np.full((2, 64), np.nan, np.float32)))


def test_stable_baselines3_check_env_passes(env):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SB3's advice on Dict actions; errors still raise
        check_env(env)
