"""The far-OOD split of LayerOOD-v0: the zoo's reasoner over its own task families.

The deployed model is the zoo's shipped ``reasoner`` (smoke size: a 2-layer GPT, 64-d, trained
on the generated reasoning corpus's four task families, levels 1-2). Its deployment domain is
some of those families (arithmetic and lists by default); out-of-domain inputs are problems of
the others (strings, code): far-OOD, another task with other tokens, not another topic in the
same register. Each problem's observation is the reasoner's hidden state at every layer
(embedding output and each block), mean-pooled over the problem's tokens. Problems come from
:func:`icmlgym.corpora.reasoning.generate`, whose split is a hash of the question; OOD problems
are never in the train split (one-class training). Memoised per process; no cache needed
(about a second to build).
"""

from __future__ import annotations

import functools

import numpy as np

IN_DOMAINS: tuple[str, ...] = ("arithmetic", "lists")
OUT_DOMAINS: tuple[str, ...] = ("strings", "code")
_SIZES = {"train": 200, "val": 60, "test": 100}  # problems per family and split


@functools.lru_cache(maxsize=4)
def reasoner_states(in_domains: tuple[str, ...], out_domains: tuple[str, ...]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per split: pooled states ``(n, n_layer + 1, n_embd)``, OOD flags and in-domain family ids (-1 for OOD).

    Raises:
        ValueError: overlapping, empty or unknown families.
    """
    from icmlgym.corpora.reasoning import DOMAINS

    if not in_domains or not out_domains or set(in_domains) & set(out_domains):
        raise ValueError(f"in_domains and out_domains must be non-empty and disjoint, got {in_domains} and {out_domains}")
    unknown = [d for d in (*in_domains, *out_domains) if d not in DOMAINS]
    if unknown:
        raise ValueError(f"unknown task families {unknown}; families: {list(DOMAINS)}")
    import torch

    from icmlgym.corpora.reasoning import PAD, generate
    from icmlgym.zoo import load
    from icmlgym.zoo.builtin import encode_problems

    model = load("reasoner", "smoke", build=False)
    cfg = model.config
    net = model.model.eval()
    out = {}
    for s_i, (split, n) in enumerate(_SIZES.items()):
        xs, oods, topics = [], [], []
        for d_i, domain in enumerate((*in_domains, *out_domains)):
            ood = domain in out_domains
            if ood and split == "train":
                continue
            data = encode_problems(generate(n, 100 * s_i + d_i, split, (domain,), tuple(cfg["levels"])), cfg["block_size"])[:, :-1]
            with torch.no_grad():
                _, states = net(data, hidden=True)
            mask = (data != PAD).unsqueeze(-1).float()
            pooled = torch.stack([(h * mask).sum(1) / mask.sum(1).clamp(min=1.0) for h in states], dim=1)
            xs.append(pooled.numpy().astype(np.float32))
            oods.append(np.full(n, int(ood)))
            topics.append(np.full(n, -1 if ood else in_domains.index(domain)))
        out[split] = (np.concatenate(xs), np.concatenate(oods).astype(np.int64), np.concatenate(topics).astype(np.int64))
    return out


__all__ = ["IN_DOMAINS", "OUT_DOMAINS", "reasoner_states"]
