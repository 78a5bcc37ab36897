"""LanguageToVisualKD-v0: signatures (language, oracle, shuffled, a user's file), the losses, the episode, bad input."""

from __future__ import annotations

import json

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("vision"), reason="needs the [vision] extra (torch): pip install 'icmlgym[vision]'")

SMALL = {"n_objects": 2, "n_colours": 2, "n_materials": 2, "per_class": 3, "val_per_class": 2, "test_per_class": 2, "epochs": 2,
         "teacher_epochs": 2}


def _env(**kw):
    from icmlgym.envs.vision.lavid import LanguageToVisualKDEnv

    return LanguageToVisualKDEnv(**{**SMALL, **kw})


def test_shipped_language_signatures_are_distributions_for_every_class():
    from icmlgym.corpora.product_images import product_classes
    from icmlgym.envs.vision import signatures as sg

    names = list(product_classes(8, 8, 5).names)
    sig = sg.language(names)
    assert sig.probs.shape == (320, sum(len(o) for _, o in sg.QUESTIONS))
    start = 0
    for k in sig.sizes:
        assert np.allclose(sig.probs[:, start:start + k].sum(1), 1.0, atol=1e-4)
        start += k
    # the colour question is answered by the colour word in the class name
    names4 = list(product_classes(4, 4, 3).names)
    sig4 = sg.language(names4)
    colours = np.array([n.split()[0] for n in names4])
    pick = np.array(sg.QUESTIONS[0][1])[sig4.probs[:, :8].argmax(1)]
    assert (pick == colours).mean() > 0.9


def test_oracle_and_shuffled_signatures():
    from icmlgym.envs.vision import signatures as sg

    attrs = np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1]])
    sig = sg.oracle(attrs, (("mug", "lamp"), ("red", "blue"), ("matte", "metal")))
    assert sig.probs.tolist() == [[1, 0, 1, 0, 1, 0], [1, 0, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1]]
    sh = sg.shuffled(sig, np.random.default_rng(0))
    assert sorted(map(tuple, sh.probs.tolist())) == sorted(map(tuple, sig.probs.tolist()))
    assert not any((sh.probs[i] == sig.probs[i]).all() for i in range(3))
    info = sg.informativeness(sig, attrs)
    assert set(info) == {"object", "colour", "material", "object_chance", "colour_chance", "material_chance"}


def _write(tmp_path, names, rows=None, questions=None):
    questions = questions or [{"question": "Is it red?", "options": ["yes", "no"]}]
    rows = rows or {n: [[0.5, 0.5]] for n in names}
    p = tmp_path / "sig.json"
    p.write_text(json.dumps({"questions": questions, "signatures": rows}))
    return str(p)


def test_a_users_signature_file_loads_and_bad_files_are_refused(tmp_path):
    from icmlgym.envs.vision import signatures as sg

    names = ["red matte mug", "blue matte mug"]
    sig = sg.load_signature_file(_write(tmp_path, names), names)
    assert sig.probs.shape == (2, 2) and sig.sizes == (2,)
    with pytest.raises(ValueError, match=r"lacks 1 of the 2 classes, e.g. \['blue matte mug'\]"):
        sg.load_signature_file(_write(tmp_path, names, {"red matte mug": [[0.5, 0.5]]}), names)
    with pytest.raises(ValueError, match="the row sums to 0.9000, not 1"):
        sg.load_signature_file(_write(tmp_path, names, {n: [[0.5, 0.4]] for n in names}), names)
    with pytest.raises(ValueError, match="needs 2 non-negative probabilities"):
        sg.load_signature_file(_write(tmp_path, names, {n: [[1.2, -0.2]] for n in names}), names)
    with pytest.raises(ValueError, match="one row per question"):
        sg.load_signature_file(_write(tmp_path, names, {n: [[0.5, 0.5], [0.5, 0.5]] for n in names}), names)
    with pytest.raises(ValueError, match="does not exist"):
        sg.load_signature_file(tmp_path / "nope.json", names)
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ValueError, match="not valid JSON"):
        sg.load_signature_file(bad, names)


def test_the_env_refuses_a_signature_file_missing_classes(tmp_path):
    path = _write(tmp_path, ["red matte mug"])
    with pytest.raises(ValueError, match="lacks 7 of the 8 classes"):
        _env(signature_file=path)


@pytest.mark.parametrize("kwargs, message", [
    ({"per_class": 0}, "per_class must be an integer >= 1"),
    ({"epochs": 0}, "epochs must be an integer >= 1"),
    ({"lr": 2.0}, "lr must be in"),
    ({"n_objects": 9}, "n_objects must be an integer in 1..8"),
    ({"spurious": 1.5}, "spurious must be None or a probability"),
])
def test_bad_arguments_are_refused(kwargs, message):
    with pytest.raises(ValueError, match=message):
        _env(**kwargs)


def test_losses_are_zero_when_student_matches_and_positive_otherwise():
    import torch

    from icmlgym.envs.vision import kd_student as ks

    z = torch.randn(6, 5)
    y = torch.arange(6) % 5
    assert float(ks.kd(z, z, 4.0)) == pytest.approx(0.0, abs=1e-6)
    assert float(ks.kd(z, -z, 4.0)) > 0
    assert float(ks.dkd(z, z, y, 4.0)) == pytest.approx(0.0, abs=1e-5)
    assert float(ks.mlkd(z, z, 4.0)) == pytest.approx(0.0, abs=1e-6)
    target = torch.softmax(z, 1)
    assert float(ks.signature_loss(z, target, (5,), 1.0)) == pytest.approx(0.0, abs=1e-5)
    assert float(ks.smoothing_loss(z, y, 1.0)) > 0


def test_episode_trains_the_student_and_reports_group_metrics():
    env = _env()
    obs, info = env.reset(seed=0)
    assert obs.shape == (6,) and info["teachers"][1] == "language" and len(info["classes"]) == 8
    for teacher in (1, 6):  # language, then DKD (trains the visual teacher)
        obs, r, term, trunc, step_info = env.step(np.array([teacher, 3, 2, 1]))
    assert term and not trunc
    m = step_info["metrics"]
    assert 0 <= m["worst_group_accuracy"] <= m["average_group_accuracy"] <= 1 and r == m["test_accuracy"]
    assert step_info["cost"] == {"student_epochs": 2.0, "teacher_epochs": 2.0} and m["aux_share"] == 1.0
    with pytest.raises(RuntimeError, match="ended"):
        env.step(np.array([0, 0, 0, 0]))


def test_invalid_action_names_the_space():
    env = _env()
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not in the action space MultiDiscrete"):
        env.step(np.array([8, 0, 0, 0]))


def test_same_seed_same_run():
    def run():
        env = _env()
        env.reset(seed=3)
        return [env.step(np.array([1, 3, 2, 0]))[0].tolist() for _ in range(2)]

    assert run() == run()


def test_agents_run_through_the_runner():
    import icmlgym

    for agent in ("lavid", "kd-ce-only", "kd-mlkd"):
        rec = icmlgym.run("icmlgym/LanguageToVisualKD-v0", agent, seeds=1, env_kwargs=SMALL)[0]
        assert rec.status == "ok", rec.error
        assert 0 <= rec.metric("test_accuracy")[0] <= 1


def test_passes_stable_baselines3_check_env():
    sb3 = pytest.importorskip("stable_baselines3.common.env_checker", reason="needs stable-baselines3 (the [rl] extra)")
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3.check_env(_env(), warn=True)


def test_the_visual_teacher_is_trained_once_per_data_set_and_read_back_from_disk(tmp_path, monkeypatch):
    """A fresh process (the main job's workers) reads the teacher's logits from the cache: the same episode, bit for bit."""
    from icmlgym.envs.vision import lavid

    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path))

    def run():
        lavid._TEACHER_CACHE.clear()
        env = _env()
        env.reset(seed=5)
        return [env.step(np.array([6, 3, 2, 0]))[0].tolist() for _ in range(2)]

    first = run()
    entries = list((tmp_path / "cache" / "vision-teacher").glob("*.npz"))
    assert len(entries) == 1
    stamp = entries[0].stat().st_mtime_ns
    assert run() == first
    assert entries[0].stat().st_mtime_ns == stamp  # read, not rebuilt
