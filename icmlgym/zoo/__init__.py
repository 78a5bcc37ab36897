"""The zoo: small models our own code trains deterministically, caches, and loads in well under a second.

    from icmlgym import zoo
    zoo.load("reasoner", "smoke")        # trains once (about a minute), then loads from the cache
    [m.name for m in zoo.members()]
    zoo.info("digits-cnn")               # parameters, data, training time, held-out quality

Modules: :mod:`~icmlgym.zoo.registry` (members, cache, build), :mod:`~icmlgym.zoo.transformer`
(decoder-only and mixture-of-experts transformers with a KV cache),
:mod:`~icmlgym.zoo.vision` (MLP and CNN classifiers as blocks), :mod:`~icmlgym.zoo.sae`
(TopK sparse autoencoders), :mod:`~icmlgym.zoo.lm` (one interface for zoo, local
``transformers`` and HTTP language models), :mod:`~icmlgym.zoo.http` (the shared HTTP client).
The recurrent networks with weight constraints are :mod:`icmlgym.nn.recurrent`.
Importing this package does not import torch.
"""

from icmlgym.zoo.registry import SIZES, Member, ZooError, ZooModel, cached_card, get, info, load, members, register, unregister

__all__ = ["SIZES", "Member", "ZooError", "ZooModel", "cached_card", "get", "info", "load", "members", "register", "unregister"]
