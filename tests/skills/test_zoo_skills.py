"""The skill model's shipped weights (scripts/zoo_weights.py skill-lm): current, loadable without
training, their quality re-measured, and (slow) retrained bit for bit from the recorded seed."""

from __future__ import annotations

import json

import pytest

from icmlgym.catalog import extra_installed

pytestmark = pytest.mark.skipif(not extra_installed("skills"), reason="needs the [skills] extra (torch)")

from icmlgym import zoo  # noqa: E402
from icmlgym.zoo.registry import shipped_paths  # noqa: E402


def test_the_skill_model_ships_for_the_current_code():
    z = zoo.load("skill-lm", "smoke", build=False)
    card = json.loads(shipped_paths("skill-lm", "smoke")[0].read_text())
    # a key that no longer matches means the code changed: re-run scripts/zoo_weights.py skill-lm
    assert z.card["key"] == card["key"] == zoo.get("skill-lm").key(z.config, card["seed"])
    assert "skill-lm" in [m.name for m in zoo.members()]


@pytest.mark.slow
def test_shipped_quality_is_reproduced_from_the_weights():
    from icmlgym.zoo import skills

    z = zoo.load("skill-lm", "smoke", build=False)
    assert skills.evaluate(z.model, z.config) == z.card["quality"]


@pytest.mark.slow
def test_the_skill_model_retrains_to_the_shipped_weights():
    """Pre-training from the recorded seed gives the shipped weights bit for bit (one torch thread, as recorded)."""
    import torch

    shipped = zoo.load("skill-lm", "smoke", build=False)
    threads = torch.get_num_threads()
    torch.set_num_threads(shipped.card["torch_threads"])
    try:
        fresh = zoo.load("skill-lm", "smoke", force=True)
    finally:
        torch.set_num_threads(threads)
    assert fresh.source == "trained"
    for (n, a), (_, b) in zip(shipped.model.state_dict().items(), fresh.model.state_dict().items()):
        assert torch.equal(a, b), n
    assert fresh.card["quality"] == shipped.card["quality"]
