"""A mixture-of-experts model whose layers differ sharply in quantisation sensitivity, by design.

GEMQ's premise is that some layers and experts of an MoE tolerate low bit-widths and others do
not, so a *global* allocation beats a layer-wise one. The zoo's ``reasoner-moe`` barely has that
property: sending one layer's experts to 2 bits raises its held-out loss by 0.003 (layer 0) and
0.005 (layer 1), a factor of 2 (docs/hardware.md). ``reasoner-moe-outlier`` has it on purpose.

**Mechanism: outlier weight columns in one layer's experts.** Large language models carry a few
hidden channels with outlier magnitudes (Dettmers et al. 2022, LLM.int8(): up to about 20 times
the other dimensions). SmoothQuant (Xiao et al. 2023) migrates such activation outliers into the
following weights, ``x W^T = (x / s)(W diag(s))^T``, which leaves the weights with outlier
*columns*. A group-wise min/max quantiser then spends its whole range on the outlier: the other
weights of every group holding one are rounded to a handful of levels. This member applies that
migration, with ``s = gain`` on ``outlier channels``, to layer ``layer``'s MoE input
(LayerNorm ``ln2`` -> router and experts' up-projections ``fc``):

- ``ln2.weight`` and ``ln2.bias`` are divided by ``s`` on those channels;
- the router's and every expert's ``fc.weight`` columns are multiplied by ``s``.

The map is exact in real arithmetic, so the model computes the same function as the shipped
``reasoner-moe`` (float32 rounding aside: the card records the largest logit difference), and
only its quantisability changes: a controlled comparison, where any change in the GEMQ findings
between the two models comes from the sensitivity structure and not from a different model.
The outlier channels are chosen from the weights, not by search: in each block of ``group_size``
consecutive input columns (the quantiser's groups), the channel with the largest LayerNorm gain
``|ln2.weight|``; ``gain = 20`` is LLM.int8()'s reported outlier size, fixed before any
measurement. Building it takes the base's weights and a second: no gradient steps.

Quality (held-out, :func:`_evaluate`): the language-model loss and next-token accuracy on
test-split problems, and the largest absolute logit difference to the base model.
"""

from __future__ import annotations

import copy
from typing import Any

from icmlgym.zoo.registry import Member, get, register

_CODE = ("icmlgym.zoo.outlier_moe", "icmlgym.zoo.transformer", "icmlgym.zoo.builtin", "icmlgym.corpora.reasoning", "icmlgym.nn.train")
_DOMAINS = ["arithmetic", "lists", "strings", "code"]


def _tokenizer(cfg: dict[str, Any] | None = None):
    from icmlgym.corpora.reasoning import CharTokenizer

    return CharTokenizer()


def _make(cfg: dict[str, Any]):
    base = get(cfg["base"])
    return base.make(base.config(cfg["base_size"]))


def outlier_channels(model, layer: int, group_size: int) -> list[int]:
    """In each block of ``group_size`` input columns of ``layer``'s MoE, the channel with the largest ``|ln2.weight|``."""
    gamma = model.blocks[layer].ln2.weight.detach().abs()
    return [start + int(gamma[start:start + group_size].argmax()) for start in range(0, len(gamma), group_size)]


def migrate_outliers(model, layer: int, channels: list[int], gain: float):
    """A copy of ``model`` with ``layer``'s MoE input channels ``channels`` migrated into its weights by ``gain``
    (SmoothQuant's ``x W^T = (x / s)(W diag(s))^T``): the same function, outlier columns in the router and every
    expert's up-projection."""
    import torch

    if not gain > 0:
        raise ValueError(f"gain must be > 0, got {gain!r}")
    blocks = model.blocks
    if not 0 <= layer < len(blocks) or not hasattr(blocks[layer].mlp, "experts"):
        raise ValueError(f"layer must name a mixture-of-experts block in 0..{len(blocks) - 1}, got {layer!r}")
    out = copy.deepcopy(model)
    blk = out.blocks[layer]
    s = torch.ones_like(blk.ln2.weight)
    s[channels] = float(gain)
    with torch.no_grad():
        blk.ln2.weight.div_(s)
        blk.ln2.bias.div_(s)
        blk.mlp.router.weight.mul_(s)
        for ex in blk.mlp.experts:
            ex.fc.weight.mul_(s)
    return out


def _build(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    from icmlgym.zoo.registry import load

    base = load(cfg["base"], cfg["base_size"], seed=seed)
    channels = outlier_channels(base.model, cfg["layer"], cfg["group_size"])
    model.load_state_dict(migrate_outliers(base.model, cfg["layer"], channels, cfg["gain"]).state_dict())
    return {"gradient_steps": 0, "base": f"{cfg['base']}-{cfg['base_size']} ({base.source}, key {base.card['key']})",
            "layer": cfg["layer"], "outlier_channels": channels, "gain": cfg["gain"]}


def _evaluate(model, cfg: dict[str, Any]) -> dict[str, float]:
    import torch
    import torch.nn.functional as F

    from icmlgym.corpora.reasoning import PAD, generate
    from icmlgym.zoo.builtin import encode_problems
    from icmlgym.zoo.registry import load

    data = encode_problems(generate(cfg["n_eval"], 10_000, "test", _DOMAINS, cfg["levels"]), model.config.block_size)
    width = int((data != PAD).sum(1).max())
    x, y = data[:, : width - 1], data[:, 1:width]
    base = load(cfg["base"], cfg["base_size"]).model
    with torch.no_grad():
        logits, ref = model(x), base(x)
    mask = y != PAD
    loss = F.cross_entropy(logits[mask], y[mask])
    acc = (logits[mask].argmax(-1) == y[mask]).float().mean()
    return {"heldout_loss": round(float(loss), 5), "next_token_accuracy": round(float(acc), 5),
            "max_logit_diff_to_base": float(f"{float((logits - ref).abs().max()):.3g}")}


MEMBER = Member(
    name="reasoner-moe-outlier", kind="moe-language-model",
    description="reasoner-moe with outlier weight columns migrated into layer 0's experts: same function, one layer very sensitive to low bits",
    data="the shipped reasoner-moe's weights (no training); quality on reasoning-corpus test problems",
    configs={
        "smoke": {"base": "reasoner-moe", "base_size": "smoke", "layer": 0, "gain": 20.0, "group_size": 32,
                  "levels": [1, 2], "n_eval": 128},
        "standard": {"base": "reasoner-moe", "base_size": "standard", "layer": 0, "gain": 20.0, "group_size": 32,
                     "levels": [1, 2, 3], "n_eval": 256},
    },
    make=_make, train=_build, evaluate=_evaluate, code=_CODE, quality="heldout_loss", depends=("reasoner-moe",),
    extras={"tokenizer": _tokenizer},
)


def ensure_registered() -> None:
    """Register the member once (importing this module registers it; this is idempotent)."""
    from icmlgym.zoo.registry import ZooError

    try:
        get(MEMBER.name)
    except ZooError:
        register(MEMBER)


ensure_registered()

__all__ = ["MEMBER", "ensure_registered", "migrate_outliers", "outlier_channels"]
