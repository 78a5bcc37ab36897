"""LanguageToVisualKD-v1: v0 plus MaKD's vision-language teacher (the zoo's ``product-clip``)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("vision"), reason="needs the [vision] extra (torch): pip install 'icmlgym[vision]'")

SMALL = {"n_objects": 2, "n_colours": 2, "n_materials": 2, "per_class": 3, "val_per_class": 2, "test_per_class": 2, "epochs": 2,
         "teacher_epochs": 2}


def _play(env, actions, seed=4):
    obs, _ = env.reset(seed=seed)
    out = [obs.tolist()]
    for a in actions:
        obs, _, _, _, info = env.step(np.array(a))
        out.append(obs.tolist())
    return out, info["metrics"]


def test_v0_actions_play_v0s_episode_and_vlm_is_the_ninth_source():
    from icmlgym.envs.vision.lavid import LanguageToVisualKDEnv
    from icmlgym.envs.vision.lavid_v1 import TEACHERS_V1, LanguageToVisualKDV1Env

    v0, v1 = LanguageToVisualKDEnv(**SMALL), LanguageToVisualKDV1Env(**SMALL)
    assert v0.action_space.nvec.tolist() == [8, 5, 4, 2] and v1.action_space.nvec.tolist() == [9, 5, 4, 2]
    assert TEACHERS_V1[:8] == v0.teachers and TEACHERS_V1[8] == "vlm"
    actions = [[1, 3, 2, 0], [4, 2, 1, 1]]  # language, then label smoothing
    assert _play(v0, actions) == _play(v1, actions)
    v0.reset(seed=0)
    with pytest.raises(ValueError, match="not in the action space MultiDiscrete"):
        v0.step(np.array([8, 3, 2, 0]))


def test_the_vlm_source_distils_the_teachers_caption_similarities():
    import torch

    from icmlgym.envs.vision.lavid_v1 import LanguageToVisualKDV1Env, _clip_teacher
    from icmlgym.zoo.product_clip import all_class_names

    env = LanguageToVisualKDV1Env(**SMALL)
    obs, info = env.reset(seed=1)
    assert info["teachers"][8] == "vlm" and info["vlm_unseen_share"] == 1.0  # every class of the 2x2x2 block is held out
    assert [all_class_names()[i] for i in env.clip_classes] == env.class_names
    obs, _, _, _, _ = env.step(np.array([8, 3, 2, 0]))
    model, _ = _clip_teacher()
    with torch.no_grad():
        expected = model.class_logits(env.x["train"], torch.as_tensor(env.clip_classes))
    assert torch.equal(env._vlm_logits, expected) and expected.shape == (len(env.x["train"]), 8)
    assert obs[2] > 0  # the distillation loss was applied
    # the teacher names most unseen classes' colour and object: its soft targets carry class information
    assert (expected.argmax(1).numpy() == env.y["train"]).mean() > 0.3


def test_makd_runs_through_the_runner_and_is_refused_by_v0():
    import icmlgym

    rec = icmlgym.run("icmlgym/LanguageToVisualKD-v1", "kd-makd", seeds=1, env_kwargs=SMALL)[0]
    assert rec.status == "ok", rec.error
    assert 0 <= rec.metric("test_accuracy")[0] <= 1
    rec = icmlgym.run("icmlgym/LanguageToVisualKD-v0", "kd-makd", seeds=1, env_kwargs=SMALL)[0]
    assert rec.status != "ok" and "not in the action space" in rec.error


def test_the_shipped_teacher_matches_the_current_code_and_never_saw_the_default_classes():
    """A change to icmlgym/zoo/product_clip.py or the image generator changes the key: re-ship with scripts/zoo_weights.py
    (tests/substrate/test_zoo_product_clip.py retrains it bit for bit)."""
    from icmlgym.corpora.product_images import product_classes
    from icmlgym.zoo.product_clip import MEMBER, all_class_names, held_out_mask
    from icmlgym.zoo.registry import shipped_paths

    card = json.loads(shipped_paths("product-clip", "smoke")[0].read_text())
    assert card["key"] == MEMBER.key(MEMBER.config("smoke"), 0)
    q = card["quality"]
    assert q["zero_shot_accuracy"] > 10 * q["zero_shot_chance"]
    held = {all_class_names()[i] for i in np.flatnonzero(held_out_mask())}
    assert held == set(product_classes(4, 4, 3).names) and card["training"]["classes"] == 320 - 48
