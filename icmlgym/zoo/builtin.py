"""The zoo's first members: reasoning transformers (target, draft, mixture of experts),
image and signal classifiers, and a sparse autoencoder over the reasoner's activations.

Every member trains deterministically from its seed on a corpus of :mod:`icmlgym.corpora`
and is measured on that corpus's held-out test split. Sizes: ``smoke`` (about a minute
on two cores, what CI and the smoke tiers use) and ``standard``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.zoo.registry import Member, register

# ----------------------------------------------------------------------------- reasoning transformers

_LM_CODE = ("icmlgym.zoo.transformer", "icmlgym.zoo.builtin", "icmlgym.corpora.reasoning", "icmlgym.nn.train")


def _tokenizer(cfg: dict[str, Any] | None = None):
    from icmlgym.corpora.reasoning import CharTokenizer

    return CharTokenizer()


def _make_gpt(cfg: dict[str, Any]):
    from icmlgym.zoo.transformer import GPT, GPTConfig

    return GPT(GPTConfig(
        vocab_size=_tokenizer().vocab_size, block_size=cfg["block_size"], n_layer=cfg["n_layer"], n_head=cfg["n_head"],
        n_embd=cfg["n_embd"], n_expert=cfg.get("n_expert", 0), top_k=cfg.get("top_k", 2),
    ))


def encode_problems(problems, block_size: int):
    """Token ids ``(n, block_size + 1)`` of problems' full texts, padded; problems too long are dropped."""
    import torch

    from icmlgym.corpora.reasoning import PAD

    tok = _tokenizer()
    rows = []
    for p in problems:
        ids = tok.encode(p.text, bos=True, eos=True)
        if len(ids) <= block_size + 1:
            rows.append(ids + [PAD] * (block_size + 1 - len(ids)))
    return torch.tensor(rows, dtype=torch.long)


def lm_loss(model, batch):
    """Next-token cross-entropy over non-pad targets (+ the MoE balance loss): (loss, examples, tokens)."""
    import torch.nn.functional as F

    from icmlgym.corpora.reasoning import PAD

    width = int((batch != PAD).sum(1).max())  # trim the all-padding tail of the batch
    x, y = batch[:, : width - 1], batch[:, 1:width]
    logits = model(x)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), ignore_index=PAD)
    if model.config.n_expert:
        loss = loss + 0.01 * model.aux_loss()
    return loss, int(batch.shape[0]), int((y != PAD).sum())


def _train_gpt(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import torch

    from icmlgym.corpora.reasoning import generate
    from icmlgym.nn.train import Budget, train_loop

    problems = generate(cfg["n_train"], seed, "train", cfg["domains"], cfg["levels"], cfg.get("overthink", 0.0))
    data = encode_problems(problems, cfg["block_size"])
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.AdamW(model.parameters(), cfg["lr"], weight_decay=0.01, betas=(0.9, 0.98))
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, cfg["lr"], total_steps=cfg["steps"], pct_start=0.1)
    res = train_loop(
        model, lambda step: data[torch.randint(0, len(data), (cfg["batch_size"],), generator=gen)], lm_loss, opt,
        Budget(cfg["steps"]), meter=meter, scheduler=sched,
    )
    return {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4), "train_problems": len(data)}


def solve_rate(lm, problems, max_new_tokens: int = 60) -> float:
    """Fraction of problems whose greedy continuation's answer is right (any :class:`~icmlgym.zoo.lm.LanguageModel`)."""
    from icmlgym.corpora.reasoning import extract_answer

    if not problems:
        raise ValueError("solve_rate needs at least one problem")
    ok = sum(extract_answer(lm.generate(p.prompt, max_new_tokens)) == p.answer for p in problems)
    return ok / len(problems)


def _eval_gpt(model, cfg: dict[str, Any]) -> dict[str, float]:
    from icmlgym.corpora.reasoning import generate
    from icmlgym.zoo.lm import ZooLM

    lm = ZooLM(model, _tokenizer(), "eval")
    out = {}
    for lv in cfg["levels"]:
        problems = generate(cfg["n_eval"], 10_000 + lv, "test", cfg["domains"], (lv,))
        out[f"accuracy_level{lv}"] = round(solve_rate(lm, problems), 4)
    out["accuracy"] = round(float(np.mean([out[f"accuracy_level{lv}"] for lv in cfg["levels"]])), 4)
    return out


_REASON_DATA = "generated reasoning corpus (icmlgym.corpora.reasoning), train split; quality on its test split"
_DOMAINS = ["arithmetic", "lists", "strings", "code"]

register(Member(
    name="reasoner",
    kind="language-model",
    description="decoder-only transformer (character tokens) trained on step-by-step reasoning; KV cache, every layer's states",
    data=_REASON_DATA,
    configs={
        "smoke": {"n_layer": 2, "n_head": 4, "n_embd": 64, "block_size": 64, "domains": _DOMAINS, "levels": [1, 2],
                  "n_train": 20000, "steps": 2500, "batch_size": 32, "lr": 3e-3, "n_eval": 100},
        "standard": {"n_layer": 4, "n_head": 4, "n_embd": 128, "block_size": 96, "domains": _DOMAINS, "levels": [1, 2, 3],
                     "n_train": 60000, "steps": 6000, "batch_size": 64, "lr": 2e-3, "n_eval": 100},
    },
    make=_make_gpt, train=_train_gpt, evaluate=_eval_gpt, code=_LM_CODE, quality="accuracy_level1",
    extras={"tokenizer": _tokenizer},
))

register(Member(
    name="reasoner-draft",
    kind="language-model",
    description="the reasoner's draft: one narrow layer, the same tokenizer and corpus (speculative decoding, early exit)",
    data=_REASON_DATA,
    configs={
        "smoke": {"n_layer": 1, "n_head": 2, "n_embd": 32, "block_size": 64, "domains": _DOMAINS, "levels": [1, 2],
                  "n_train": 20000, "steps": 2500, "batch_size": 32, "lr": 3e-3, "n_eval": 100},
        "standard": {"n_layer": 2, "n_head": 4, "n_embd": 64, "block_size": 96, "domains": _DOMAINS, "levels": [1, 2, 3],
                     "n_train": 60000, "steps": 6000, "batch_size": 64, "lr": 2e-3, "n_eval": 100},
    },
    make=_make_gpt, train=_train_gpt, evaluate=_eval_gpt, code=_LM_CODE, quality="accuracy_level1",
    extras={"tokenizer": _tokenizer},
))

register(Member(
    name="reasoner-moe",
    kind="moe-language-model",
    description="mixture-of-experts transformer (4 experts per layer, top-2 routing) on the reasoning corpus",
    data=_REASON_DATA,
    configs={
        "smoke": {"n_layer": 2, "n_head": 4, "n_embd": 48, "block_size": 64, "n_expert": 4, "top_k": 2, "domains": _DOMAINS,
                  "levels": [1, 2], "n_train": 20000, "steps": 2500, "batch_size": 32, "lr": 3e-3, "n_eval": 100},
        "standard": {"n_layer": 4, "n_head": 4, "n_embd": 96, "block_size": 96, "n_expert": 8, "top_k": 2, "domains": _DOMAINS,
                     "levels": [1, 2, 3], "n_train": 60000, "steps": 6000, "batch_size": 64, "lr": 2e-3, "n_eval": 100},
    },
    make=_make_gpt, train=_train_gpt, evaluate=_eval_gpt, code=_LM_CODE, quality="accuracy_level1",
    extras={"tokenizer": _tokenizer},
))

# ----------------------------------------------------------------------------- classifiers

_VISION_CODE = ("icmlgym.zoo.vision", "icmlgym.zoo.builtin", "icmlgym.corpora.vision", "icmlgym.nn.train")


def _dataset(cfg: dict[str, Any], split: str):
    from icmlgym.corpora import vision

    if cfg["data"] == "digits":
        return vision.digits(split)
    if cfg["data"] == "signals":
        return vision.signals(split)
    raise ValueError(f"unknown data set {cfg['data']!r}")


def _make_classifier(cfg: dict[str, Any]):
    from icmlgym.zoo import vision

    if cfg["arch"] == "mlp":
        return vision.mlp(tuple(cfg["in_shape"]), cfg["classes"], cfg["width"], cfg["depth"])
    if cfg["arch"] == "cnn2d":
        return vision.cnn2d(cfg["in_shape"][0], cfg["classes"], cfg["width"], cfg["depth"])
    if cfg["arch"] == "cnn1d":
        return vision.cnn1d(cfg["in_shape"][0], cfg["classes"], cfg["width"], cfg["depth"])
    raise ValueError(f"unknown architecture {cfg['arch']!r}")


def _train_classifier(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    import torch
    import torch.nn.functional as F

    from icmlgym.nn.train import Budget, train_loop

    d = _dataset(cfg, "train")
    x, y = torch.as_tensor(d.x), torch.as_tensor(d.y)
    gen = torch.Generator().manual_seed(seed)
    opt = torch.optim.Adam(model.parameters(), cfg["lr"])

    def loss_fn(m, batch):
        bx, by = batch
        return F.cross_entropy(m(bx), by), len(by), 0

    def batches(step):
        idx = torch.randint(0, len(y), (cfg["batch_size"],), generator=gen)
        return x[idx], y[idx]

    res = train_loop(model, batches, loss_fn, opt, Budget(cfg["steps"]), meter=meter)
    return {"steps": res.steps, "final_loss": round(float(np.mean(res.losses[-20:])), 4), "train_examples": len(y)}


def _eval_classifier(model, cfg: dict[str, Any]) -> dict[str, float]:
    import torch

    d = _dataset(cfg, "test")
    with torch.no_grad():
        pred = model(torch.as_tensor(d.x)).argmax(-1).numpy()
    return {"accuracy": round(float((pred == d.y).mean()), 4)}


register(Member(
    name="digits-mlp", kind="image-classifier", description="MLP (2 x 128, ReLU) on scikit-learn's 8x8 digits",
    data="scikit-learn digits (icmlgym.corpora.vision.digits), train split; accuracy on its test split",
    configs={"smoke": {"data": "digits", "arch": "mlp", "in_shape": [1, 8, 8], "classes": 10, "width": 128, "depth": 2,
                       "steps": 600, "batch_size": 64, "lr": 2e-3},
             "standard": {"data": "digits", "arch": "mlp", "in_shape": [1, 8, 8], "classes": 10, "width": 256, "depth": 3,
                          "steps": 3000, "batch_size": 64, "lr": 1e-3}},
    make=_make_classifier, train=_train_classifier, evaluate=_eval_classifier, code=_VISION_CODE,
))

register(Member(
    name="digits-cnn", kind="image-classifier", description="small CNN (2 conv blocks of 16, max-pool, global pooling) on 8x8 digits",
    data="scikit-learn digits (icmlgym.corpora.vision.digits), train split; accuracy on its test split",
    configs={"smoke": {"data": "digits", "arch": "cnn2d", "in_shape": [1, 8, 8], "classes": 10, "width": 16, "depth": 2,
                       "steps": 600, "batch_size": 64, "lr": 3e-3},
             "standard": {"data": "digits", "arch": "cnn2d", "in_shape": [1, 8, 8], "classes": 10, "width": 32, "depth": 3,
                          "steps": 3000, "batch_size": 64, "lr": 2e-3}},
    make=_make_classifier, train=_train_classifier, evaluate=_eval_classifier, code=_VISION_CODE,
))

register(Member(
    name="signals-cnn", kind="signal-classifier", description="1-D CNN (3 conv blocks of 32) on the generated 1-D signals",
    data="generated 1-D signals (icmlgym.corpora.vision.signals), train split; accuracy on its test split",
    configs={"smoke": {"data": "signals", "arch": "cnn1d", "in_shape": [1, 40], "classes": 10, "width": 32, "depth": 3,
                       "steps": 800, "batch_size": 64, "lr": 3e-3},
             "standard": {"data": "signals", "arch": "cnn1d", "in_shape": [1, 40], "classes": 10, "width": 64, "depth": 4,
                          "steps": 4000, "batch_size": 64, "lr": 2e-3}},
    make=_make_classifier, train=_train_classifier, evaluate=_eval_classifier, code=_VISION_CODE,
))

# ----------------------------------------------------------------------------- sparse autoencoder


def reasoner_activations(model, layer: int, n: int, seed: int, split: str, cfg_domains, levels, block_size: int) -> np.ndarray:
    """Hidden states (one row per non-pad token) of ``layer`` of a reasoner over ``n`` corpus problems."""
    import torch

    from icmlgym.corpora.reasoning import PAD, generate

    data = encode_problems(generate(n, seed, split, cfg_domains, levels), block_size)[:, :-1]
    with torch.no_grad():
        _, states = model(data, hidden=True)
    h = states[layer]
    return h[data != PAD].numpy()


def _make_sae(cfg: dict[str, Any]):
    from icmlgym.zoo.sae import TopKSAE

    return TopKSAE(cfg["d_in"], cfg["d_latent"], cfg["k"])


def _base(cfg: dict[str, Any]):
    from icmlgym.zoo.registry import load

    return load(cfg["base"], cfg["base_size"]).model


def _train_sae(model, cfg: dict[str, Any], seed: int, meter) -> dict[str, Any]:
    from icmlgym.zoo.sae import train_sae

    base = _base(cfg)
    acts = reasoner_activations(base, cfg["layer"], cfg["n_problems"], seed, "train", _DOMAINS, [1, 2], base.config.block_size)
    trained = train_sae(acts, cfg["d_latent"], cfg["k"], cfg["steps"], cfg["batch_size"], cfg["lr"], seed, meter)
    model.load_state_dict(trained.state_dict())
    return {"steps": cfg["steps"], "activation_rows": int(len(acts))}


def _eval_sae(model, cfg: dict[str, Any]) -> dict[str, float]:
    from icmlgym.zoo.sae import sae_quality

    base = _base(cfg)
    acts = reasoner_activations(base, cfg["layer"], 200, 99, "test", _DOMAINS, [1, 2], base.config.block_size)
    return {k: round(v, 4) for k, v in sae_quality(model, acts).items()}


register(Member(
    name="reasoner-sae", kind="sparse-autoencoder",
    description="TopK SAE (256 latents, k=16) over the smoke reasoner's layer-1 residual stream",
    data="the reasoner's layer-1 hidden states over reasoning-corpus train problems; quality on test problems",
    configs={"smoke": {"base": "reasoner", "base_size": "smoke", "layer": 1, "d_in": 64, "d_latent": 256, "k": 16,
                       "n_problems": 1500, "steps": 600, "batch_size": 256, "lr": 2e-3},
             "standard": {"base": "reasoner", "base_size": "standard", "layer": 2, "d_in": 128, "d_latent": 1024, "k": 32,
                          "n_problems": 4000, "steps": 3000, "batch_size": 512, "lr": 1e-3}},
    make=_make_sae, train=_train_sae, evaluate=_eval_sae,
    code=("icmlgym.zoo.sae", "icmlgym.zoo.builtin", "icmlgym.zoo.transformer", "icmlgym.corpora.reasoning"),
    quality="variance_explained", depends=("reasoner",),
))

__all__ = ["encode_problems", "lm_loss", "reasoner_activations", "solve_rate"]
