"""The zoo's shipped weights (package data from scripts/zoo_weights.py): loaded without training,
their recorded quality re-measured from the weights, and the draft retrained bit for bit."""

import json

import pytest
import torch

from icmlgym import zoo
from icmlgym.zoo.registry import WEIGHTS_DIR, shipped_paths

SHIPPED = sorted(p.stem.rsplit("-", 1) for p in WEIGHTS_DIR.glob("*.json"))


def test_members_ship_weights():
    assert ["reasoner", "smoke"] in SHIPPED and ["reasoner-draft", "smoke"] in SHIPPED


@pytest.mark.parametrize("name,size", SHIPPED)
def test_shipped_weights_load_without_training(name, size):
    z = zoo.load(name, size, build=False)
    assert z.source == "shipped" and z.load_seconds < 1.0
    card = json.loads(shipped_paths(name, size)[0].read_text())
    assert z.card["key"] == card["key"] == zoo.get(name).key(z.config, card["seed"])


@pytest.mark.slow
@pytest.mark.parametrize("name,size", SHIPPED)
def test_shipped_quality_is_reproduced_from_the_weights(name, size):
    z = zoo.load(name, size, build=False)
    m = zoo.get(name)
    assert m.evaluate(z.model, z.config) == z.card["quality"]  # greedy evaluation is deterministic


@pytest.mark.slow
def test_the_draft_retrains_to_the_shipped_weights():
    """The shipped draft is what our code trains from its recorded seed (one torch thread, as recorded)."""
    shipped = zoo.load("reasoner-draft", "smoke", build=False)
    torch.set_num_threads(shipped.card["torch_threads"])
    fresh = zoo.load("reasoner-draft", "smoke", force=True)
    assert fresh.source == "trained"
    for (n, a), (_, b) in zip(shipped.model.state_dict().items(), fresh.model.state_dict().items()):
        assert torch.equal(a, b), n
    assert fresh.card["quality"] == shipped.card["quality"]
