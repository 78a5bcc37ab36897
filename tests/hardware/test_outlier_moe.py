"""reasoner-moe-outlier (icmlgym/zoo/outlier_moe.py) and MoEQuantAlloc-v1 on it: the same function as
reasoner-moe, outlier weight columns in layer 0, a layer 0 far more sensitive to low bit-widths."""

from __future__ import annotations

import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("hardware"), reason="needs the [hardware] extra (torch, scipy)")


@pytest.fixture(scope="module")
def models():
    from icmlgym.zoo.registry import load

    return load("reasoner-moe", "smoke"), load("reasoner-moe-outlier", "smoke")


@pytest.fixture(scope="module")
def heldout():
    from icmlgym.envs.hardware.moe_env import _data

    return _data("test/outlier", 0, 1, 48, 64)["heldout"]


def test_the_member_is_the_migration_of_the_base_bit_for_bit(models):
    """What the zoo builds (or loads from its cache) is migrate_outliers of the shipped base, reproduced here."""
    import torch

    from icmlgym.zoo.outlier_moe import migrate_outliers, outlier_channels

    base, sharp = models
    cfg = sharp.config
    channels = outlier_channels(base.model, cfg["layer"], cfg["group_size"])
    assert channels == sharp.card["training"]["outlier_channels"]
    again = migrate_outliers(base.model, cfg["layer"], channels, cfg["gain"]).state_dict()
    for name, w in sharp.model.state_dict().items():
        assert torch.equal(w, again[name]), name


def test_one_outlier_channel_per_quantisation_group_with_the_largest_layernorm_gain(models):
    base, sharp = models
    gamma = base.model.blocks[0].ln2.weight.detach().abs()
    channels = sharp.card["training"]["outlier_channels"]
    assert len(channels) == 2 and 0 <= channels[0] < 32 <= channels[1] < 48  # 48 columns, groups of 32
    assert float(gamma[channels[0]]) == float(gamma[:32].max()) and float(gamma[channels[1]]) == float(gamma[32:].max())


def test_same_function_outlier_columns_in_layer_0_only(models, heldout):
    import torch

    from icmlgym.envs.hardware.moe_model import split_tokens

    base, sharp = models
    x, _ = split_tokens(heldout)
    with torch.no_grad():
        assert float((base.model(x) - sharp.model(x)).abs().max()) < 1e-4
    ch = sharp.card["training"]["outlier_channels"]
    for e, (eb, es) in enumerate(zip(base.model.blocks[0].mlp.experts, sharp.model.blocks[0].mlp.experts)):
        ratio = es.fc.weight[:, ch].detach() / eb.fc.weight[:, ch].detach()
        assert torch.allclose(ratio, torch.full_like(ratio, 20.0)), e
        others = [c for c in range(48) if c not in ch]
        assert torch.equal(es.fc.weight[:, others], eb.fc.weight[:, others]), e
    for a, b in zip(base.model.blocks[1].state_dict().values(), sharp.model.blocks[1].state_dict().values()):
        assert torch.equal(a, b)


def test_layer_0_is_far_more_sensitive_on_the_sharp_model_only(models, heldout):
    """The design's point (benchmarks/hardware_sensitivity.py measures it on 10 draws: 1.8x on v0's model,
    about 220x on the sharp one): the loss increase with one layer's experts at 2 bits, the rest at full precision."""
    from icmlgym.envs.hardware.moe_model import QuantMoE

    ratios = []
    for z in models:
        qm = QuantMoE(z.model, (2, 3, 4, 8))
        qm.apply([-1] * qm.n_experts)
        fp = qm.lm_metrics(heldout)[0]
        rise = []
        for layer in (0, 1):
            qm.apply([2 if qm.layer[e] == layer else -1 for e in range(qm.n_experts)])
            rise.append(qm.lm_metrics(heldout)[0] - fp)
        ratios.append(rise[0] / rise[1])
    assert ratios[0] < 5 and ratios[1] > 50, ratios


def test_migration_bad_input():
    from icmlgym.zoo.outlier_moe import migrate_outliers
    from icmlgym.zoo.registry import load

    model = load("reasoner-moe", "smoke").model
    with pytest.raises(ValueError, match="gain must be > 0, got -1"):
        migrate_outliers(model, 0, [0], -1.0)
    with pytest.raises(ValueError, match="layer must name a mixture-of-experts block in 0..1, got 5"):
        migrate_outliers(model, 5, [0], 20.0)


def test_v1_runs_on_the_sharp_model_and_a_bad_model_is_named():
    import icmlgym
    from icmlgym.envs.hardware.moe_env import MoEQuantAllocEnv

    env = icmlgym.make("icmlgym/MoEQuantAlloc-v1")
    assert env.unwrapped.model_name == "reasoner-moe-outlier"
    assert icmlgym.make("icmlgym/MoEQuantAlloc-v0").unwrapped.model_name == "reasoner-moe"
    with pytest.raises(ValueError, match="model must be one of .* got 'reasoner'"):
        MoEQuantAllocEnv(model="reasoner")
