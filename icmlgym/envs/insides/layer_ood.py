"""LayerOOD-v0: flag out-of-domain text from a language model's per-layer hidden states.

Description:
    A domain-specific deployment of a pretrained encoder (the shipped all-MiniLM-L6-v2)
    meets text from outside its domain. In-domain text is the docstrings of some Python
    standard-library topics (network, files, concurrency, data by default), out-of-domain
    text those of other topics (language, text, numbers, time): near-OOD, the same
    register on another subject. The observation is the model's insides for each input,
    its mean-pooled hidden state at every layer; the agent scores each input's chance of
    being out of domain. An agent that trains gets the in-domain train split only
    (one-class) through ``env.unwrapped.training_data()``, labelled with the in-domain
    topic of each text (so that classifier-based detectors, max softmax probability and
    energy, have a classifier to read). With ``n_labelled_ood > 0`` the training data also
    holds that many labelled OOD texts (label -1), drawn from the val split (never evaluated
    in ``test``): the few-label setting, where a detector may fit a light learner. Built on
    :class:`~icmlgym.envs.prediction.base.PredictionTaskEnv`; states come from
    :mod:`icmlgym.envs.insides.states` (cached per text).

Action Space:
    ``Box(0, 1, (batch_size,))``: one OOD score per input (higher = more likely OOD).
    With ``action_mode="flag"`` (the operating-point variant): ``MultiBinary(batch_size)``,
    one flag per input (1 = out of domain); a flag other than 0 or 1 (0.5, 2, NaN) is refused
    with a ValueError, as a score outside [0, 1] is in score mode.

Observation Space:
    ``Dict(inputs=Box(-inf, inf, (batch_size, 7, 384)), step=Discrete(n_batches))``: per
    input, the embedding output and the 6 transformer layers, mean-pooled over tokens.
    Token-level access for agents that need it: ``env.unwrapped.token_states(i)`` gives input
    ``i`` of the current batch's tokens and per-token states ``(7, n_tokens, 384)``.

Rewards:
    0 until the last step, then the episode's AUROC (OOD = positive class).

Starting State:
    ``reset(seed)`` draws the episode's ``batch_size x n_batches`` inputs without
    replacement from the evaluated split (seeded).

Episode End:
    After ``n_batches`` steps (terminated).

Arguments:
    ``batch_size`` (16), ``n_batches`` (4), ``ood_fraction`` (0.5, the share of OOD inputs
    in the evaluated split), ``in_topics``, ``out_topics`` (standard-library topics of
    :data:`icmlgym.corpora.text.STDLIB_TOPICS`), ``split`` ("test"; "val" for tuning:
    disjoint texts), ``n_labelled_ood`` (0: one-class; else that many OOD texts of the val
    split in the training data, labelled -1), ``action_mode`` ("score", v0's; "flag": the
    operating-point variant, the agent commits to a decision per input), ``source``
    ("docstrings", v0's near-OOD; "reasoner": the far-OOD split, the zoo's shipped reasoner over
    its own task families, :mod:`icmlgym.envs.insides.far`; observations ``(batch, 3, 64)``),
    ``in_domains``, ``out_domains`` (task families for ``source="reasoner"``; arithmetic and
    lists against strings and code by default); ``source="hf:<folder>"``: a local ``transformers``
    model (``save_pretrained`` folder, loaded offline) whose per-layer mean-pooled hidden states
    replace the shipped encoder's over v0's texts and splits, :mod:`icmlgym.envs.insides.local_model`;
    observations ``(batch, n_layers + 1, hidden)``; ``device`` ("cpu"; "cuda", "auto") runs it.

Metrics:
    ``auroc`` (primary), ``fpr95`` (false-positive rate at 95% TPR), ``aupr`` (OOD positive).
    In flag mode: ``tpr`` (share of OOD inputs flagged), ``fpr`` (share of in-domain inputs
    flagged), ``flagged`` (share of all inputs flagged) and ``auroc`` of the flags, which is
    their balanced accuracy ``(tpr + 1 - fpr) / 2`` (the reward); ``fpr95`` and ``aupr`` need
    a ranking and are not reported.

Version History:
    v0: first version; ``n_labelled_ood`` added (default 0 keeps v0's behaviour); ``action_mode``
    and ``source`` added (defaults "score" and "docstrings" keep v0's behaviour); ``source="hf:<folder>"``
    and ``device`` added (the shipped encoder's states are precomputed and cached: ``device`` is used
    only by a local model).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("text", what="icmlgym/LayerOOD-v0")

from icmlgym.envs.insides.far import IN_DOMAINS, OUT_DOMAINS, reasoner_states  # noqa: E402
from icmlgym.envs.insides.local_model import PREFIX, local_states, model_path  # noqa: E402
from icmlgym.envs.insides.states import IN_TOPICS, OUT_TOPICS, corpus_states, corpus_texts  # noqa: E402
from icmlgym.envs.prediction.base import PredictionTaskEnv  # noqa: E402
from icmlgym.envs.prediction.metrics import aupr, auroc, fpr_at_tpr  # noqa: E402
from icmlgym.zoo.lm import check_model_folder  # noqa: E402


class LayerOODEnv(PredictionTaskEnv):
    """Out-of-domain detection from per-layer hidden states of docstring text (see the module docstring)."""

    primary = "auroc"

    def __init__(self, batch_size: int = 16, n_batches: int = 4, ood_fraction: float = 0.5,
                 in_topics: Sequence[str] = IN_TOPICS, out_topics: Sequence[str] = OUT_TOPICS, split: str = "test",
                 n_labelled_ood: int = 0, action_mode: str = "score", source: str = "docstrings",
                 in_domains: Sequence[str] = IN_DOMAINS, out_domains: Sequence[str] = OUT_DOMAINS, device: str = "cpu") -> None:
        if not isinstance(source, str) or (source not in ("docstrings", "reasoner") and not source.startswith(PREFIX)):
            raise ValueError(f"source must be 'docstrings', 'reasoner' or 'hf:<folder of a local transformers model>', got {source!r}")
        self.source = source
        self.model_path = model_path(source)
        if self.model_path is not None:
            check_model_folder(self.model_path)  # a missing folder or one without weights fails here, before any work
        from icmlgym.nn.runtime import resolve_device

        self.device = resolve_device(device)
        self.in_domains, self.out_domains = tuple(in_domains), tuple(out_domains)
        if action_mode not in ("score", "flag"):
            raise ValueError(f"action_mode must be 'score' or 'flag', got {action_mode!r}")
        self.action_mode = action_mode
        if not 0.0 < ood_fraction < 1.0:
            raise ValueError(f"ood_fraction must be in (0, 1), got {ood_fraction}")
        if n_labelled_ood < 0:
            raise ValueError(f"n_labelled_ood must be >= 0, got {n_labelled_ood}")
        if n_labelled_ood and split == "val":
            raise ValueError("labelled OOD texts come from the val split: evaluate on split='test' when n_labelled_ood > 0")
        from icmlgym.corpora.text import STDLIB_TOPICS

        unknown = [t for t in (*in_topics, *out_topics) if t not in STDLIB_TOPICS] if source != "reasoner" else []
        if unknown:
            raise ValueError(f"unknown topics {unknown}; topics: {sorted(STDLIB_TOPICS)}")
        self.ood_fraction = float(ood_fraction)
        self.n_labelled_ood = int(n_labelled_ood)
        self.in_topics, self.out_topics = tuple(in_topics), tuple(out_topics)
        self._texts: list[str] | None = None  # the evaluated split's texts, read on the first token_states call
        self._encoder = None
        super().__init__(batch_size, n_batches, split)
        if self.n_labelled_ood:
            self.pool("train")  # refuses more labelled OOD texts than the val split holds, before any run

    def _states(self) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
        if self.source == "reasoner":
            return reasoner_states(self.in_domains, self.out_domains)
        if self.model_path is not None:
            return local_states(str(self.model_path), self.device, self.in_topics, self.out_topics)
        return corpus_states(self.in_topics, self.out_topics)

    def pool(self, split: str) -> tuple[np.ndarray, np.ndarray]:
        x, ood, topic = self._states()[split]
        if split == "train":  # in-domain texts, labelled with their topic; labelled OOD texts (-1) when asked
            if not self.n_labelled_ood:
                return x, topic
            vx, vood, _ = self._states()["val"]
            outs = np.flatnonzero(vood == 1)
            if self.n_labelled_ood > len(outs):
                raise ValueError(f"n_labelled_ood = {self.n_labelled_ood} exceeds the {len(outs)} OOD texts of the val split")
            pick = np.sort(np.random.default_rng(11).choice(outs, self.n_labelled_ood, replace=False))
            return np.concatenate([x, vx[pick]]), np.concatenate([topic, np.full(len(pick), -1, topic.dtype)])
        keep = self._kept(ood)
        return x[keep], ood[keep]

    def _kept(self, ood: np.ndarray) -> np.ndarray:
        """The evaluated split's rows kept: the larger side subsampled so that OOD inputs make up
        ood_fraction (fixed, not seeded by the episode)."""
        rng = np.random.default_rng(7)
        ins, outs = np.flatnonzero(ood == 0), np.flatnonzero(ood == 1)
        n_out = min(len(outs), int(round(len(ins) * self.ood_fraction / (1 - self.ood_fraction))))
        n_in = min(len(ins), int(round(n_out * (1 - self.ood_fraction) / self.ood_fraction)))
        return np.sort(np.concatenate([rng.choice(ins, n_in, replace=False), rng.choice(outs, n_out, replace=False)]))

    def token_states(self, i: int) -> dict[str, Any]:
        """Token-level access for agents that need it: input ``i`` of the current observation's batch.

        Returns ``{"tokens": list[str], "states": (7, n_tokens, 384) float32}``, the encoder's
        hidden state at every token and layer (special tokens included; their mean over tokens is
        ``obs["inputs"][i]``). It runs the encoder (about 10 ms a text on one core; not cached);
        the text itself is not given, only what the model computes from it.

        Raises:
            RuntimeError: before ``reset()`` or after the episode's last step.
            IndexError: ``i`` outside ``[0, batch_size)``.
        """
        if self.source != "docstrings":
            raise ValueError(f"token-level access is built for source='docstrings' only, not {self.source!r}")
        if self._order is None or self._t >= self.n_batches:
            raise RuntimeError("token_states(i) reads the current batch: call reset() first, and not after the last step")
        if not 0 <= int(i) < self.batch_size:
            raise IndexError(f"input index {i} is outside the batch [0, {self.batch_size})")
        if self._texts is None:
            _, ood, _ = corpus_states(self.in_topics, self.out_topics)[self.split]
            self._texts = [corpus_texts(self.in_topics, self.out_topics)[self.split][k] for k in self._kept(ood)]
        if self._encoder is None:
            from icmlgym.corpora.embeddings import SentenceEncoder

            self._encoder = SentenceEncoder(batch_size=1, cache=None)
        tokens, states = self._encoder.token_states(self._texts[self._order[self._t * self.batch_size + int(i)]])
        return {"tokens": tokens, "states": states}

    def action_space_for(self, batch_size: int) -> spaces.Space:
        if self.action_mode == "flag":
            return spaces.MultiBinary(batch_size)
        return super().action_space_for(batch_size)

    def step(self, action):
        if self.action_mode == "flag":
            a = np.asarray(action)
            # MultiBinary.contains would accept 0.5 once cast to int8: refuse anything but 0 and 1 here
            if a.shape == self.action_space.shape and not np.isin(a, (0, 1)).all():
                bad = a.ravel()[~np.isin(a.ravel(), (0, 1))][:4]
                raise ValueError(f"flags must be 0 or 1 (action_mode='flag'), got {bad.tolist()} in the action")
        return super().step(action)

    def task_metrics(self, labels: np.ndarray, predictions: np.ndarray) -> dict[str, float]:
        if self.action_mode == "flag":
            y, f = np.asarray(labels).astype(bool), np.asarray(predictions) > 0.5
            return {"auroc": auroc(y, f.astype(np.float64)), "tpr": float(f[y].mean()) if y.any() else float("nan"),
                    "fpr": float(f[~y].mean()) if (~y).any() else float("nan"), "flagged": float(f.mean())}
        return {"auroc": auroc(labels, predictions), "fpr95": fpr_at_tpr(labels, predictions), "aupr": aupr(labels, predictions)}


__all__ = ["LayerOODEnv"]
