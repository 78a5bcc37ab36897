"""One check for the tests that retrain a shipped zoo member from its recorded seed.

On the numerics platform the weights were trained on, retraining gives them bit for bit. On
another CPU model torch's kernels round differently (:func:`icmlgym.nn.runtime.numerics_platform`),
and the same code, seed and thread count train other weights of similar quality; there the test
pins the weights that platform trains, by a digest recorded for it.
"""

from __future__ import annotations

from typing import Any

import torch

from icmlgym.nn.runtime import numerics_platform
from icmlgym.zoo.skill_chains import weights_digest


def assert_retrained(shipped: Any, fresh: Any, other_platforms: dict[str, str]) -> None:
    """``fresh`` (retrained now) equals ``shipped`` tensor by tensor, quality included, or its weights'
    digest is one recorded for another platform (``other_platforms``: digest -> where)."""
    assert fresh.source == "trained"
    pairs = zip(shipped.model.state_dict().items(), fresh.model.state_dict().items())
    if all(torch.equal(a, b) for (_, a), (_, b) in pairs):
        assert fresh.card["quality"] == shipped.card["quality"]
        return
    digest = weights_digest(fresh.model)
    assert digest in other_platforms, (
        f"retrained {shipped.name} differs from the shipped weights and its digest {digest} on {numerics_platform()} is "
        f"not one recorded for another platform ({other_platforms}): the training path changed, or this is a new "
        "platform (then record its digest, with the code unchanged)")
