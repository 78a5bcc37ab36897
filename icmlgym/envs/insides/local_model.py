"""LayerOOD-v0 over a user's own model: ``source="hf:<folder>"``, a local ``transformers`` model.

The folder is ``save_pretrained`` output (weights, config.json, tokenizer), loaded with
``AutoModel``/``AutoTokenizer`` and ``local_files_only=True`` (nothing is downloaded). Each
docstring's observation is that model's hidden state at every layer (embedding output and each
block, as ``output_hidden_states`` gives them), mean-pooled over the text's tokens under the
attention mask: the same pooling as the shipped encoder, so the near-OOD corpus and its splits
are v0's and only the model changes. It runs on the ``device`` asked for. Nothing is cached on
disk (a folder's weights can change under the same path); states are memoised per process.
"""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np

from icmlgym.corpora.embeddings import SentenceEncoder
from icmlgym.zoo.lm import check_model_folder

PREFIX = "hf:"


class LocalEncoder(SentenceEncoder):
    """A local ``transformers`` model as a :class:`SentenceEncoder` (per-layer mean-pooled states).

    Raises:
        FileNotFoundError: the folder is missing, holds no weights, no config or no loadable tokenizer.
        ValueError: the model gives no per-layer hidden states.
    """

    def __init__(self, path: str | Path, device: str = "cpu", max_length: int = 128, batch_size: int = 1) -> None:
        self.path = check_model_folder(path)
        super().__init__(device=device, max_length=max_length, batch_size=batch_size, cache=None)
        from transformers import AutoConfig, AutoModel, AutoTokenizer
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()
        try:
            self._tok = AutoTokenizer.from_pretrained(self.path, local_files_only=True)
        except Exception as err:  # noqa: BLE001
            raise FileNotFoundError(f"{self.path} has no loadable tokenizer ({type(err).__name__}: {err})") from None
        if self._tok.pad_token is None:
            self.batch_size = 1  # no pad token: one text per pass, nothing to pad
            self._tok.pad_token = self._tok.eos_token or self._tok.unk_token
        cfg = AutoConfig.from_pretrained(self.path, local_files_only=True)
        self._model = AutoModel.from_pretrained(self.path, local_files_only=True).to(self.device).eval()
        import torch

        with torch.no_grad():
            probe = self._tok(["probe"], return_tensors="pt").to(self.device)
            hs = getattr(self._model(**probe, output_hidden_states=True), "hidden_states", None)
        if not hs:
            raise ValueError(f"the model at {self.path} ({type(self._model).__name__}) gives no hidden_states with output_hidden_states=True")
        self._n_layers, self._dim = len(hs) - 1, int(hs[-1].shape[-1])
        self.config_name = getattr(cfg, "model_type", "?")

    def _load(self) -> None:  # loaded in __init__
        return

    @property
    def n_layers(self) -> int:
        return self._n_layers

    @property
    def dim(self) -> int:
        return self._dim


def model_path(source: str) -> Path | None:
    """The folder of a ``source="hf:<folder>"``, or None for the built-in sources."""
    if not source.startswith(PREFIX):
        return None
    folder = source[len(PREFIX):]
    if not folder:
        raise ValueError("source='hf:<folder>' needs a folder, e.g. source='hf:/path/to/model'")
    return Path(folder).expanduser()


@functools.lru_cache(maxsize=4)
def local_states(folder: str, device: str, in_topics: tuple[str, ...], out_topics: tuple[str, ...]
                 ) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Per split: pooled states ``(n, n_layers + 1, hidden)``, OOD flags and in-domain topic ids (-1
    for OOD), over v0's docstring corpus and splits."""
    from icmlgym.envs.insides.states import digit_of, sorted_texts, split_of

    if not in_topics or not out_topics or set(in_topics) & set(out_topics):
        raise ValueError(f"in_topics and out_topics must be non-empty and disjoint, got {in_topics} and {out_topics}")
    enc = LocalEncoder(folder, device=device)
    texts = sorted_texts(in_topics, out_topics)  # v0's texts, order and splits (states.corpus_states)
    states = enc.encode([t for t, _ in texts], layers=True)
    rows: dict[str, tuple[list, list, list]] = {s: ([], [], []) for s in ("train", "val", "test")}
    for (text, doc_topic), st in zip(texts, states):
        ood = doc_topic in out_topics
        xs, ys, ts = rows[split_of(digit_of(text), ood)]
        xs.append(st)
        ys.append(int(ood))
        ts.append(-1 if ood else in_topics.index(doc_topic))
    return {s: (np.asarray(x, np.float32).reshape(-1, *states.shape[1:]), np.asarray(y, np.int64), np.asarray(t, np.int64))
            for s, (x, y, t) in rows.items()}

__all__ = ["LocalEncoder", "PREFIX", "local_states", "model_path"]
