"""The shipped ``product-clip`` teacher (LanguageToVisualKD-v1's MaKD baseline) is what our code trains from its recorded seed.

Beside the draft's retraining test (test_zoo_shipped.py): training needs the shipped sentence encoder
(extra [text]) for the captions, about 10 s of CPU on one thread plus loading the encoder.
"""

import json

import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not (extra_installed("vision") and extra_installed("text")),
                                reason="needs the [vision] and [text] extras (torch, the sentence encoder)")


@pytest.mark.slow
def test_product_clip_retrains_to_the_shipped_weights(tmp_path, monkeypatch):
    import torch

    from icmlgym import zoo
    from icmlgym.zoo.registry import shipped_paths

    monkeypatch.setenv("ICMLGYM_HOME", str(tmp_path))
    shipped = zoo.load("product-clip", "smoke", build=False)
    assert shipped.source == "shipped"
    threads = torch.get_num_threads()
    torch.set_num_threads(shipped.card["torch_threads"])
    try:
        fresh = zoo.load("product-clip", "smoke", force=True)
    finally:
        torch.set_num_threads(threads)
    assert fresh.source == "trained"
    for (n, a), (_, b) in zip(shipped.model.state_dict().items(), fresh.model.state_dict().items()):
        assert torch.equal(a, b), n
    card = json.loads(shipped_paths("product-clip", "smoke")[0].read_text())
    assert fresh.card["quality"] == card["quality"]
