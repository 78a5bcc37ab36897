"""The NoPeek defence (``nopeek`` option of SplitInference-v0, zoo member ``nopeek``): the distance
correlation, the penalty's effect on the protected block, and bad input."""

from __future__ import annotations

import numpy as np
import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("split"), reason="needs the [split] extra (torch, scikit-learn)")

import icmlgym

ENV = "icmlgym/SplitInference-v0"
SMOKE = icmlgym.card(ENV).tiers["smoke"].env_kwargs


def test_distance_correlation_of_known_pairs():
    import torch

    from icmlgym.zoo.nopeek import distance_correlation

    g = torch.Generator().manual_seed(0)
    x = torch.randn(300, 4, generator=g)
    assert float(distance_correlation(x, x)) == pytest.approx(1.0)
    assert float(distance_correlation(x, -3 * x + 2)) == pytest.approx(1.0)  # a similarity transform
    assert float(distance_correlation(x, torch.randn(300, 2, generator=g))) < 0.3  # independent draws
    assert float(distance_correlation(x, torch.ones(300, 2))) == 0.0  # no spread
    x.requires_grad_(True)
    (grad,) = torch.autograd.grad(distance_correlation(x, x[:, :2] ** 2), x)
    assert torch.isfinite(grad).all()
    with pytest.raises(ValueError, match="same number of rows"):
        distance_correlation(x, x[:10])


def test_nopeek_at_weight_zero_is_the_plain_classifier():
    """The member trains constant-width's recipe: with the penalty off, the weights are the env's classifier's."""
    import torch

    from icmlgym import zoo
    from icmlgym.envs.split.model import DATA_TYPES, load_classifier
    from icmlgym.zoo.nopeek import ensure_registered

    ensure_registered()
    plain = load_classifier("digits", 2, 16, 30, seed=3)
    off = zoo.load("nopeek", "smoke", seed=3, overrides={**DATA_TYPES["digits"], "depth": 2, "width": 16, "steps": 30,
                                                          "arch": "mlp", "classes": 10, "nopeek_weight": 0.0})
    assert all(torch.equal(a, b) for a, b in zip(plain.model.state_dict().values(), off.model.state_dict().values()))
    assert "final_batch_dcor" not in off.card["training"]


def test_the_penalty_lowers_the_distance_correlation_at_its_block():
    """Same classifier seed and steps: the NoPeek classifier's block 0 is less correlated with the input on the test
    split, its table and probes are its own, and the episode runs as without the defence."""
    import torch

    from icmlgym.zoo.nopeek import distance_correlation

    kw = {**SMOKE, "classifier_steps": 200, "model_seed": 0}
    plain = icmlgym.make(ENV, **kw).unwrapped
    defended = icmlgym.make(ENV, **kw, nopeek=2.0, nopeek_block=0).unwrapped
    dcor = []
    for e in (plain, defended):
        e.reset(seed=0)
        with torch.no_grad():
            dcor.append(float(distance_correlation(e.model.x["test"], e.model.net(e.model.x["test"], upto=1))))
    assert dcor[1] < dcor[0] - 0.1, dcor
    assert defended.model.zoo_key != plain.model.zoo_key and not np.array_equal(defended.model.table, plain.model.table)
    assert defended.model.accuracy > 0.2  # still a classifier (chance 0.1; measured 0.39 after 200 steps at weight 2)
    _, _, terminated, _, info = defended.step(np.array([1, 0, 0]))
    assert terminated and info["metrics"]["accuracy_clean"] == pytest.approx(defended.model.accuracy)
    assert 0 < info["metrics"]["recon_error"]


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"nopeek": -1.0}, "nopeek .* must be a finite number >= 0"),
    ({"nopeek": float("nan")}, "nopeek .* must be a finite number >= 0"),
    ({"nopeek": 1.0, "nopeek_block": 4}, r"nopeek_block must be a hidden block in 0\.\.3"),
    ({"nopeek_block": -1}, r"nopeek_block must be a hidden block in 0\.\.3"),
])
def test_bad_nopeek_arguments_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        icmlgym.make(ENV, **SMOKE, **kwargs)
