"""A ``transformers`` target/draft pair from local folders, driven by the same speculative decoder.

:func:`hf_pair` loads two causal language models saved with ``save_pretrained`` (through the
zoo's local plug, :class:`~icmlgym.zoo.lm.HFLocalLM`: ``local_files_only=True``, a folder without
weights or tokenizer is a clear error), checks that they share a tokenizer, and wraps each in
:class:`HFModel`, which gives the decoder what it uses of a zoo GPT: ``config`` (vocabulary,
block size, width), ``new_cache()`` (a KV cache with ``truncate``, over transformers'
``DynamicCache.crop``), and ``model(ids, cache=..., hidden=True) -> (logits, states)``.
Pass the result as ``model_pair=`` to either reasoning env; the device is the run's
(``cuda`` where there is a GPU).

The envs find line boundaries by the newline token and write answers after ``A:``: the
tokenizer must encode ``"\\n"`` as one token of its own (checked).
"""

from __future__ import annotations

import copy
import os
from types import SimpleNamespace
from typing import Any

import torch

from icmlgym.envs.reasoning.pair import ModelPair


class HFCache:
    """A KV cache over transformers' ``DynamicCache`` with the zoo cache's ``length``/``truncate``/``clone``."""

    def __init__(self) -> None:
        self.kv: Any = None
        self.length = 0

    def truncate(self, length: int) -> None:
        if length < 0 or length > self.length:
            raise ValueError(f"cannot truncate a cache of {self.length} positions to {length}")
        if self.kv is not None and length < self.length:
            self.kv.crop(length - self.length)  # transformers >= 5 crops by a negative count of positions
        self.length = length

    def clone(self) -> "HFCache":
        c = HFCache()
        c.kv, c.length = copy.deepcopy(self.kv), self.length
        return c


class HFModel(torch.nn.Module):
    """A transformers causal LM behind the zoo GPT's decoding interface."""

    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model
        cfg = model.config
        block = getattr(cfg, "n_positions", None) or getattr(cfg, "max_position_embeddings", None) or 2048
        self.config = SimpleNamespace(vocab_size=int(model.get_output_embeddings().weight.shape[0]), block_size=int(block),
                                      n_embd=int(cfg.hidden_size), n_layer=int(cfg.num_hidden_layers))
        self.wte = model.get_input_embeddings()

    def new_cache(self) -> HFCache:
        return HFCache()

    def forward(self, idx: torch.Tensor, cache: HFCache | None = None, hidden: bool = False):
        from transformers import DynamicCache

        if cache is not None and cache.kv is None:
            cache.kv = DynamicCache()
        start = cache.length if cache is not None else 0
        if start + idx.shape[1] > self.config.block_size:
            raise ValueError(f"sequence of {start + idx.shape[1]} tokens exceeds the block size {self.config.block_size}")
        kv = cache.kv if cache is not None else None
        try:  # transformers >= 5.24 names the cache argument `cache` (`past_key_values` is deprecated)
            out = self.model(input_ids=idx, cache=kv, use_cache=cache is not None, output_hidden_states=hidden)
        except TypeError:
            out = self.model(input_ids=idx, past_key_values=kv, use_cache=cache is not None, output_hidden_states=hidden)
        if cache is not None:
            cache.kv = getattr(out, "cache", None) or out.past_key_values
            cache.length = start + idx.shape[1]
        logits = out.logits.float()
        return (logits, [h.float() for h in out.hidden_states]) if hidden else logits


class HFTokenizer:
    """The corpus tokenizer's interface over a transformers tokenizer (``encode(text, bos)``, ``decode``, ``stoi``, ids)."""

    def __init__(self, tok: Any, name: str) -> None:
        self.tok, self.name = tok, name
        self.bos_id = tok.bos_token_id
        self.eos_id = tok.eos_token_id if tok.eos_token_id is not None else -1
        nl = tok("\n", add_special_tokens=False)["input_ids"]
        if len(nl) != 1:
            raise ValueError(f"the tokenizer encodes a newline as {len(nl)} tokens ({nl}); the reasoning envs need it as one token of its own")
        self.stoi = {"\n": nl[0]}

    def encode(self, text: str, bos: bool = False) -> list[int]:
        ids = list(self.tok(text, add_special_tokens=False)["input_ids"])
        return ([self.bos_id] if bos and self.bos_id is not None else []) + ids

    def decode(self, ids: Any) -> str:
        return self.tok.decode(list(ids), skip_special_tokens=True)


def hf_pair(target_path: str | os.PathLike, draft_path: str | os.PathLike, device: str = "cpu") -> ModelPair:
    """Load a target and a draft saved with ``save_pretrained`` (no download) as a :class:`ModelPair`.

    Raises:
        FileNotFoundError: a folder is missing, or holds no weights, config or tokenizer.
        ValueError: the two tokenizers differ, or a newline is not one token.
        MissingExtraError: ``transformers`` is not installed (extra ``[text]``).
    """
    from icmlgym.zoo.lm import HFLocalLM, check_same_tokenizer

    target, draft = HFLocalLM(target_path, device=device), HFLocalLM(draft_path, device=device)
    check_same_tokenizer(target, draft)
    tok = HFTokenizer(target.tok, target.tokenizer_name)
    return ModelPair(HFModel(target.model).eval(), HFModel(draft.model).eval(), tok,
                     f"hf:{target.name}+{draft.name}", f"hf:{os.fspath(target_path)}+{os.fspath(draft_path)}")


__all__ = ["HFCache", "HFModel", "HFTokenizer", "hf_pair"]
