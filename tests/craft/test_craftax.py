"""Craftax-Classic vector backend through gym.make_vec (JAX on CPU; compiling takes ~40-70 s here)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

pytest.importorskip("crafter", reason="the Craft family needs the [craft] extra (crafter)")
pytest.importorskip("craftax", reason="the Craftax backend needs the [craftax] extra (craftax, jax)")

import icmlgym  # noqa: E402,F401

ID = "icmlgym/Craft-v0"
PLACE_TABLE, LEFT, RIGHT, UP, DOWN = 8, 1, 2, 3, 4


@pytest.fixture(scope="module")
def venv():
    return gym.make_vec(ID, num_envs=4, vectorization_mode="vector_entry_point", task="place_table/simple", max_steps=12)


@pytest.mark.slow
def test_make_vec_spaces_initial_inventory_success_and_autoreset(venv):
    from icmlgym.envs.craft.craftax_backend import CraftaxVectorEnv

    assert isinstance(venv.unwrapped, CraftaxVectorEnv)
    obs, _ = venv.reset(seed=0)
    assert obs.shape == (4, 1345) and venv.observation_space.contains(obs)
    plan = [PLACE_TABLE, LEFT, PLACE_TABLE, UP, PLACE_TABLE, RIGHT, PLACE_TABLE, DOWN, PLACE_TABLE]
    succeeded = np.zeros(4, bool)
    first_obs = []
    for a in plan:
        obs, rew, term, trunc, info = venv.step(np.full(4, a))
        first_obs.append(obs)
        succeeded |= info["success"]
        assert np.array_equal(rew > 0, info["success"])
        assert np.all(info["episode_steps"][term | trunc] >= 1)
    # the task starts with the table's wood: every world places one within a few tries
    assert succeeded.all()
    # same seed, same actions: same observations
    venv.reset(seed=0)
    again = [venv.step(np.full(4, a))[0] for a in plan]
    assert all(np.array_equal(x, y) for x, y in zip(first_obs, again))


@pytest.mark.slow
def test_rollout_scan_agrees_with_step(venv):
    rng = np.random.default_rng(1)
    acts = rng.integers(0, 17, (6, 4))
    venv.reset(seed=3)
    stepped = [venv.step(a)[1] for a in acts]
    venv.reset(seed=3)
    out = venv.unwrapped.rollout(acts)
    assert out["reward"].shape == (6, 4)
    np.testing.assert_array_equal(np.stack(stepped), out["reward"])


def test_craftax_backend_rejects_what_it_cannot_run():
    from icmlgym.envs.craft.craftax_backend import CraftaxVectorEnv

    with pytest.raises(ValueError, match="unlocks, not counts"):
        CraftaxVectorEnv(num_envs=2, task="collect_wood_x3/hard")
    with pytest.raises(ValueError, match="semantic"):
        CraftaxVectorEnv(num_envs=2, semantic=False)
    with pytest.raises(ValueError, match="num_envs"):
        CraftaxVectorEnv(num_envs=0)


@pytest.mark.slow
def test_bad_actions_raise(venv):
    venv.reset(seed=0)
    with pytest.raises(ValueError, match="action space"):
        venv.step(np.full(4, 17))
    with pytest.raises(ValueError, match="action space"):
        venv.step(np.zeros(3, int))
