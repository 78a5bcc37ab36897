"""SplitInference-v0: the episode's rules, bad input, the attack and the statistics it reports."""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("split"), reason="needs the [split] extra (torch, scikit-learn)")

import icmlgym

ENV = "icmlgym/SplitInference-v0"
SMOKE = icmlgym.card(ENV).tiers["smoke"].env_kwargs


@pytest.fixture(scope="module")
def env():
    e = icmlgym.make(ENV, **SMOKE, model_seed=0).unwrapped
    e.reset(seed=0)
    return e


def test_rc2_statistics_of_a_known_configuration():
    from icmlgym.envs.split.model import ncm_accuracy, rc2_stats

    # two classes at +-1 on one axis with no spread inside a class: R_c^2 = 0, total variance = 1
    z = np.array([[1.0, 0.0], [1.0, 0.0], [-1.0, 0.0], [-1.0, 0.0]])
    y = np.array([0, 0, 1, 1])
    assert rc2_stats(z, y) == pytest.approx((0.0, 1.0))
    # one class: R_c^2 equals the total variance
    rc2, total = rc2_stats(z, np.zeros(4, int))
    assert rc2 == pytest.approx(total) == pytest.approx(1.0)
    assert ncm_accuracy(z, y, z, y) == 1.0


def test_gpz_block_finds_the_largest_drop_between_blocks():
    from icmlgym.envs.split.criteria import gpz_block

    ratios = [0.9, 0.5, 0.45, 0.1, 0.08]  # input, then four blocks
    assert gpz_block(ratios) == 2  # the drop 0.45 -> 0.1 is into block 2
    assert gpz_block(ratios, include_input=True) == 0  # 0.9 -> 0.5 is larger
    with pytest.raises(ValueError, match="at least two blocks"):
        gpz_block([0.5, 0.4])


def test_the_observation_table_describes_a_constant_width_model(env):
    obs = env._obs()
    table = obs["blocks"]
    assert table.shape == (env.n_blocks + 1, 6)
    assert np.all(table[1:-1, 0] == env.width)  # hidden blocks share one dimension
    assert table[-1, 0] == 10  # the logits
    assert table[0, 1] == 0.0 and table[-1, 1] == pytest.approx(1.0)
    assert np.all(np.diff(table[:, 1]) > 0)  # the edge's FLOP share grows with depth
    assert np.allclose(table[:, 4], table[:, 2] / table[:, 3], rtol=1e-4)
    assert np.all(obs["probes"] == -1)
    acc = obs["defended_accuracy"]
    assert np.all(acc[:, 0] == env.model.accuracy) and env.model.accuracy > 0.85
    assert acc[0, -1] < acc[0, 0]  # the largest noise costs accuracy at the first block


def test_a_probe_trains_a_real_attack_and_a_commit_ends_the_episode(env):
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step(np.array([0, 0, 0]))
    assert not term and not trunc and r == pytest.approx(-env.weights["probe_penalty"])
    err = obs["probes"][0, 0]
    assert 0.0 < err < 0.8  # the inverse network beats guessing the mean image at the first block
    assert info["cost"] == {"attack_trainings": 1.0}
    obs, r, *_ , info = env.step(np.array([0, 0, 0]))  # repeated probe: stored, free
    assert r == 0.0 and info["cost"]["attack_trainings"] == 1.0
    obs, r, term, trunc, info = env.step(np.array([1, 0, 0]))
    m = info["metrics"]
    assert term and m["recon_error"] == pytest.approx(err) and m["attacks"] == 1.0 and m["committed"] == 1.0
    assert r == pytest.approx(err - env.weights["w_flops"] * m["edge_flop_share"])
    assert m["utility"] == pytest.approx(r - env.weights["probe_penalty"])
    with pytest.raises(RuntimeError, match="episode has ended"):
        env.step(np.array([0, 1, 0]))  # probing after the commit


def test_noise_raises_the_attackers_error(env):
    clean = env.run_attack(0, 0.0, seed=3).normalised_error
    noisy = env.run_attack(0, 2.0, seed=3).normalised_error
    assert noisy > clean


def test_running_out_of_probe_steps_deploys_the_default_split():
    e = icmlgym.make(ENV, **SMOKE, model_seed=0, max_probe_steps=2).unwrapped
    e.reset(seed=0)
    e.step(np.array([0, 1, 0]))
    _, _, term, trunc, info = e.step(np.array([0, 1, 0]))
    assert trunc and not term
    assert info["metrics"]["committed"] == 0.0 and info["metrics"]["is_logits"] == 1.0


def test_bad_input_is_refused_with_a_clear_error(env):
    with pytest.raises(ValueError, match=r"block must be an integer in 0..4"):
        env.run_attack(5)
    with pytest.raises(ValueError, match=r"block must be an integer"):
        env.accuracy_with_noise(-1, 0.5)
    with pytest.raises(ValueError, match="noise_scale must be a finite number >= 0"):
        env.run_attack(0, -0.5)
    with pytest.raises(ValueError, match="noise_levels must be finite and non-negative"):
        icmlgym.make(ENV, noise_levels=(0.0, -1.0))
    with pytest.raises(ValueError, match="must start with 0"):
        icmlgym.make(ENV, noise_levels=(0.5, 1.0))
    with pytest.raises(ValueError, match="data must be one of"):
        icmlgym.make(ENV, data="cifar")
    with pytest.raises(ValueError, match="attacker must be one of"):
        icmlgym.make(ENV, attacker="gan")
    env.reset(seed=0)
    with pytest.raises(ValueError, match="not in the action space"):
        env.step(np.array([1, 9, 0]))


def test_the_agents_follow_their_rules():
    recs = {a: icmlgym.run(ENV, a, seeds=1, tier="smoke")[0] for a in
            ("split-rc2", "split-shallowest", "split-deepest", "split-oracle", "split-shallow-noise")}
    for a, rec in recs.items():
        assert rec.status == "ok", (a, rec.error)
    m = {a: rec.episodes[0].metrics for a, rec in recs.items()}
    assert m["split-shallowest"]["split_depth"] == 1 and m["split-deepest"]["is_logits"] == 1
    assert m["split-rc2"]["attacks"] == 0 and m["split-rc2"]["split_depth"] == m["split-rc2"]["gpz_depth"]
    assert m["split-oracle"]["attacks"] == 5
    assert m["split-shallow-noise"]["split_depth"] == 1 and m["split-shallow-noise"]["attacks"] >= 2
    o = m["split-oracle"]  # every block attacked without noise: where the error jumps, and who said so
    assert 1 <= o["jump_block"] <= 4 and o["jump_at_chance"] == 0.25
    assert o["jump_at_rc2"] == float(o["jump_block"] == o["gpz_depth"] - 1)
    assert o["jump_at_dimension"] == float(o["jump_block"] == 4)  # constant width: only the logits block is narrower
    assert "jump_block" not in m["split-rc2"]  # no probes, no error profile


def test_the_jump_predictors_on_a_known_profile():
    from icmlgym.envs.split.criteria import (
        error_jump_block,
        jump_hits,
        predicted_blocks,
    )

    # input, then four blocks: dims 64 64 64 10; R_c^2 ratio drops most into block 2; total variance changes most into block 1
    table = np.zeros((5, 6))
    table[:, 0] = [64, 64, 64, 64, 10]
    table[:, 3] = [1.0, 1.0, 9.0, 8.0, 7.0]
    table[:, 4] = [0.9, 0.8, 0.7, 0.2, 0.1]
    assert predicted_blocks(table) == {"rc2": [2], "dimension": [3], "variance": [1]}
    assert error_jump_block([0.1, 0.2, 0.6, 0.65]) == 2
    hits = jump_hits([0.1, 0.2, 0.6, 0.65], table)
    assert hits == {"jump_block": 2.0, "jump_at_chance": pytest.approx(1 / 3), "jump_at_rc2": 1.0,
                    "jump_at_dimension": 0.0, "jump_at_variance": 0.0}
    table[:, 0] = 64  # no block narrower than the previous one: the dimension predictor ties all three candidates
    assert predicted_blocks(table)["dimension"] == [1, 2, 3]
    assert jump_hits([0.1, 0.2, 0.6, 0.65], table)["jump_at_dimension"] == pytest.approx(1 / 3)
    with pytest.raises(ValueError, match="finite error for each of at least two blocks"):
        error_jump_block([0.1, float("nan")])
    with pytest.raises(ValueError, match="errors has 3 entries, the table 4 blocks"):
        jump_hits([0.1, 0.2, 0.3], table)


@pytest.mark.parametrize("attacker", ["decoder-large", "rmle"])
def test_the_other_attackers_reconstruct_from_the_first_block(attacker):
    """The stronger decoder and the white-box rMLE attack beat guessing the mean at block 0 (few steps)."""
    e = icmlgym.make(ENV, **{**SMOKE, "attack_steps": 40}, model_seed=0, attacker=attacker).unwrapped
    res = e.run_attack(0, 0.0, seed=0)
    assert 0.0 < res.normalised_error < 1.0 and res.gradient_steps == (120 if attacker == "decoder-large" else 40)


def test_product_images_through_the_constant_width_cnn():
    """The third data type and the CNN: every hidden block sends width x 16 x 16 values, probes attack it."""
    e = icmlgym.make(ENV, data="products", arch="cnn", depth=2, width=4, classifier_steps=80, attack_steps=150,
                     model_seed=0).unwrapped
    obs, _ = e.reset(seed=0)
    table = obs["blocks"]
    assert table[:, 0].tolist() == [3 * 16 * 16, 4 * 16 * 16, 4 * 16 * 16, 48]
    assert e.model.accuracy > 3 / 48  # above chance on 48 fine-grained classes after 80 steps
    obs, *_ = e.step(np.array([0, 0, 0]))
    assert 0.0 < obs["probes"][0, 0] < 1.0
    with pytest.raises(ValueError, match="arch must be one of"):
        icmlgym.make(ENV, arch="resnet")


def test_the_constant_width_cnn_keeps_the_dimension():
    import torch

    from icmlgym.zoo.constant_width import constant_width_cnn

    for shape in ((3, 12, 12), (1, 40)):
        net = constant_width_cnn(shape, 7, width=5, depth=3)
        acts = net.activations(torch.zeros(2, *shape))
        assert [tuple(a.shape[1:]) for a in acts[:-1]] == [(5, *shape[1:])] * 3 and acts[-1].shape == (2, 7)
    with pytest.raises(ValueError, match="in_shape must be"):
        constant_width_cnn((8,), 3)


def test_glass_latent_search_matches_the_features_through_a_trained_gan():
    """GLASS's search lowers the feature mismatch from its random start (a 200-step GAN, 40 search steps:
    measured 39.0 -> 21.3; with the 1,500-step GAN of the smoke tier and 150 steps, 56.8 -> 1.8); through
    the env it is a probe like any other."""
    import torch

    from icmlgym.envs.split.attack import glass, train_gan

    e = icmlgym.make(ENV, **{**SMOKE, "attack_steps": 20}, model_seed=0, attacker="glass").unwrapped
    m = e.model
    gen = train_gan(m.x["val"], 200)
    z = m.net(m.x["test"][:64], upto=2)
    start = gen(torch.randn(64, gen.net[0].in_features, generator=torch.Generator().manual_seed(0)))
    with torch.enable_grad():
        xh = glass(m.net, 1, z, gen, 40, seed=0)
    before = float(((m.net(start, upto=2) - z) ** 2).sum(-1).mean())
    after = float(((m.net(xh, upto=2) - z) ** 2).sum(-1).mean())
    assert xh.shape == m.x["test"][:64].shape and after < 0.75 * before
    res = e.run_attack(0, 0.0, seed=0)
    assert np.isfinite(res.normalised_error) and res.normalised_error > 0 and res.gradient_steps == 20 * 20 + 20
