"""Speculative decoding over a target and a draft transformer with KV caches (Leviathan et al., 2023).

One round: the draft proposes ``k`` tokens one at a time (its own KV cache), the target
scores all of them in ONE forward pass over its KV cache, each draft token ``x`` is kept
with probability ``min(1, p(x) / q(x))`` (``p`` the target's, ``q`` the draft's
distribution), the first rejected one is replaced by a sample of ``norm(max(0, p - q))``,
and when all ``k`` are kept the target's distribution after them gives one more token.
At temperature 0 this is greedy verification (keep while the draft's token is the
target's argmax). Either way the output is distributed exactly as the target's own
sampling: speculative decoding is lossless, only faster.

Caches: each model keeps ``pending`` tokens it has not processed yet (the target's
correction or bonus token, the draft's last proposals); the next forward of that model
processes them first, so no round costs an extra pass. Rejected positions are cut with
:meth:`~icmlgym.zoo.transformer.KVCache.truncate`.

The decoder stops a call of :meth:`SpeculativeDecoder.decode_line` at the end of a line
(newline), at the end-of-text token or at the block size: the lines are the reasoning
steps at whose boundaries the early-exit agent decides. Tokens accepted past a newline in
the same round are dropped (and re-drawn in the next call); cutting an accepted prefix
keeps the output distribution exact.

Counters: ``target_forwards`` and ``draft_forwards`` (passes, whatever their length: at
this scale a pass costs about the same for 1 or k+1 positions), ``proposed``,
``accepted``, ``target_tokens`` (positions the target processed).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch


def next_token_probs(logits: torch.Tensor, temperature: float) -> np.ndarray:
    """Next-token distribution (float64, sums to 1); temperature 0: one-hot argmax."""
    logits = logits.detach().double().cpu()
    if temperature == 0:
        out = np.zeros(logits.shape[-1])
        out[int(logits.argmax())] = 1.0
        return out
    p = torch.softmax(logits / temperature, -1).numpy()
    return p / p.sum()


def entropy(logits: torch.Tensor) -> float:
    """Entropy (nats) of the softmax of ``logits`` at temperature 1."""
    logp = torch.log_softmax(logits.detach().double(), -1)
    return float(-(logp.exp() * logp).sum())


def _sample(p: np.ndarray, rng: np.random.Generator) -> int:
    return int(rng.choice(len(p), p=p))


@dataclass
class ModelState:
    """One model's decoding state: its KV cache, tokens it has not processed, its last logits and hidden state."""

    model: Any
    cache: Any
    pending: list[int] = field(default_factory=list)
    logits: torch.Tensor | None = None  # next-token logits after everything processed
    hidden: torch.Tensor | None = None  # last layer's state of the last processed position

    def clone(self) -> "ModelState":
        return ModelState(self.model, self.cache.clone(), list(self.pending), self.logits, self.hidden)

    @property
    def device(self) -> torch.device:
        return self.model.wte.weight.device

    def feed(self, tokens: list[int]) -> tuple[torch.Tensor, torch.Tensor]:
        """Process ``pending + tokens`` in one pass; returns (logits, last-layer states) of those positions."""
        ids = self.pending + list(tokens)
        x = torch.tensor([ids], dtype=torch.long, device=self.device)
        with torch.no_grad():
            logits, states = self.model(x, cache=self.cache, hidden=True)
        self.pending = []
        self.logits, self.hidden = logits[0, -1], states[-1][0, -1]
        return logits[0], states[-1][0]

    def flush(self) -> bool:
        """Process the pending tokens (True when that cost a pass)."""
        if not self.pending:
            return False
        self.feed([])
        return True


@dataclass
class Counters:
    """What decoding cost so far (cumulative)."""

    target_forwards: int = 0
    draft_forwards: int = 0
    proposed: int = 0
    accepted: int = 0
    target_tokens: int = 0

    def as_dict(self) -> dict[str, int]:
        return dict(self.__dict__)


@dataclass
class Scored:
    """The target's one pass over ``pending + proposals``: what it saw before and what it computed."""

    base: int  # the target's cache length before the pass
    n_pending: int  # pending tokens the pass processed before the proposals
    first: torch.Tensor  # next-token logits before the pass
    first_hidden: torch.Tensor | None
    logits: torch.Tensor  # per processed position
    states: torch.Tensor

    def before(self, i: int) -> torch.Tensor:
        """The target's next-token logits before proposal ``i`` (``i = len(proposals)``: after all of them)."""
        return self.first if self.n_pending == 0 and i == 0 else self.logits[self.n_pending - 1 + i]


class SpeculativeDecoder:
    """Speculative decoding of one sequence with a target and a draft GPT sharing a tokenizer.

    Args:
        target, draft: :class:`~icmlgym.zoo.transformer.GPT` models (same vocabulary).
        prompt: token ids (begin-of-text included) both models start from.
        k: draft tokens per round (>= 1); ``k = 0`` decodes with the target alone (one pass a token).
        temperature: sampling temperature (0: greedy).
        rng: the generator every sample is drawn from (seeded by the env).
        newline, eos: token ids that end a line / the text.

    Raises:
        ValueError: mismatched vocabularies or block sizes, a bad ``k`` or temperature,
            a prompt longer than the block size.
    """

    def __init__(self, target: Any, draft: Any, prompt: list[int], k: int, temperature: float,
                 rng: np.random.Generator, newline: int, eos: int) -> None:
        if target.config.vocab_size != draft.config.vocab_size:
            raise ValueError(f"target and draft vocabularies differ ({target.config.vocab_size} vs {draft.config.vocab_size} tokens): a draft must share its target's tokenizer")
        if k < 0:
            raise ValueError(f"k (draft tokens per round) must be >= 0, got {k}")
        if temperature < 0:
            raise ValueError(f"temperature must be >= 0, got {temperature}")
        self.block = min(target.config.block_size, draft.config.block_size)
        if len(prompt) >= self.block:
            raise ValueError(f"a prompt of {len(prompt)} tokens leaves no room in the block size {self.block}")
        self.k, self.temperature, self.rng = int(k), float(temperature), rng
        self.newline, self.eos = newline, eos
        self.tokens: list[int] = list(prompt)
        self.n_prompt = len(prompt)
        self.counters = Counters()
        self.target = ModelState(target, target.new_cache())
        self.target.feed(list(prompt))
        self.counters.target_forwards += 1
        self.counters.target_tokens += len(prompt)
        self.draft = ModelState(draft, draft.new_cache())
        if self.k:
            self.draft.feed(list(prompt))
            self.counters.draft_forwards += 1
        self.line_entropies: list[float] = []  # draft entropy at each proposal of the current line
        self.last_accepted = 0  # proposals the last verification kept
        self.stop_at_newline = True

    # ------------------------------------------------------------------ state

    @property
    def length(self) -> int:
        return len(self.tokens)

    @property
    def generated(self) -> int:
        return len(self.tokens) - self.n_prompt

    @property
    def room(self) -> int:
        return self.block - len(self.tokens)

    @property
    def ended(self) -> bool:
        return self.tokens[-1] == self.eos or self.room <= 0

    def snapshot(self) -> dict[str, Any]:
        """Everything needed to continue decoding from here on a copy (the caches share tensors: copies are cheap)."""
        return {"tokens": list(self.tokens), "target": self.target.clone(), "draft": self.draft.clone(), "counters": Counters(**self.counters.as_dict())}

    def restore(self, snap: dict[str, Any]) -> None:
        self.tokens = list(snap["tokens"])
        self.target, self.draft = snap["target"].clone(), snap["draft"].clone()
        self.counters = Counters(**snap["counters"].as_dict())

    # ------------------------------------------------------------------ decoding

    def _target_round(self) -> list[int]:
        """Plain decoding: one target pass, one token."""
        st = self.target
        if st.pending:
            st.feed([])
            self.counters.target_forwards += 1
            self.counters.target_tokens += 1
        t = _sample(next_token_probs(st.logits, self.temperature), self.rng)
        st.pending = [t]
        return [t]

    def _speculative_round(self, k: int) -> list[int]:
        d = self.draft
        proposals: list[int] = []
        qs: list[np.ndarray] = []
        for _ in range(k):
            if d.pending:
                d.feed([])
                self.counters.draft_forwards += 1
            q = next_token_probs(d.logits, self.temperature)
            self.line_entropies.append(entropy(d.logits))
            x = _sample(q, self.rng)
            proposals.append(x)
            qs.append(q)
            d.pending = [x]
        return self.verify(proposals, qs)

    def verify(self, proposals: list[int], qs: list[np.ndarray]) -> list[int]:
        """The target scores ``proposals`` in one pass and keeps a prefix by rejection sampling (lossless).

        The draft must have sampled ``proposals`` from the distributions ``qs`` (at this decoder's
        temperature), processing all of them but the last (its pending token), as
        :meth:`decode_line`'s rounds and SpeculativeReasoning-v0's drafted steps do. Returns the
        kept tokens (see :meth:`resolve`); the caller appends them to ``tokens``.
        """
        return self.resolve(self.score(proposals), proposals, qs)

    def score(self, proposals: list[int]) -> "Scored":
        """The target's one pass over its pending tokens and ``proposals`` (counted), before any decision."""
        t = self.target
        base, n_pending, first, first_hidden = t.cache.length, len(t.pending), t.logits, t.hidden
        logits, states = t.feed(proposals)
        self.counters.target_forwards += 1
        self.counters.target_tokens += n_pending + len(proposals)
        return Scored(base, n_pending, first, first_hidden, logits, states)

    def resolve(self, scored: "Scored", proposals: list[int], qs: list[np.ndarray]) -> list[int]:
        """Rejection sampling of scored proposals: the accepted prefix, then the correction (a sample of
        ``norm(max(0, p - q))``) at the first rejection, or a bonus token from the target when all are
        kept and the last is not a stop token. Both caches are cut back to the kept tokens."""
        t = self.target
        k = len(proposals)
        self.counters.proposed += k
        out: list[int] = []
        n_acc = 0
        for i, x in enumerate(proposals):
            p = next_token_probs(scored.before(i), self.temperature)
            if self.temperature == 0:
                keep = bool(p[x] == 1.0)
            else:
                keep = self.rng.random() < min(1.0, p[x] / max(qs[i][x], 1e-300))
            if keep:
                out.append(x)
                n_acc += 1
                if x in self._stops:
                    break
                continue
            resid = np.maximum(p - qs[i], 0.0) if self.temperature > 0 else p
            out.append(_sample(resid / resid.sum() if resid.sum() > 0 else p, self.rng))
            break
        else:
            out.append(_sample(next_token_probs(scored.before(k), self.temperature), self.rng))
        self.counters.accepted += n_acc
        self.last_accepted = n_acc
        self._settle(scored.base, scored.n_pending, proposals, out, n_acc, scored.logits, scored.states)
        if scored.n_pending + n_acc == 0:  # nothing the target processed is kept: its state is the one before the pass
            t.logits, t.hidden = scored.first, scored.first_hidden
        return out

    def _settle(self, base: int, n_pending: int, proposals: list[int], out: list[int], n_acc: int,
                logits: torch.Tensor, states: torch.Tensor) -> None:
        """Cut both caches back to the kept tokens; what a model has not processed becomes its pending tokens."""
        t, d = self.target, self.draft
        full = self.tokens + out
        t.cache.truncate(base + n_pending + n_acc)  # pending + the accepted proposals
        if n_pending + n_acc > 0:
            t.logits, t.hidden = logits[n_pending + n_acc - 1], states[n_pending + n_acc - 1]
        t.pending = out[n_acc:]  # the correction or bonus token, if any
        # the draft processed proposals[:-1] in this round (its earlier pending tokens before them)
        processed = len(proposals) - 1
        kept = min(n_acc, processed)
        cut = processed - kept
        if cut:
            d.cache.truncate(d.cache.length - cut)
        d.pending = out[kept:]
        if cut and not d.pending:  # its logits are those of a dropped position: re-process the last kept token
            d.cache.truncate(d.cache.length - 1)
            d.pending = [full[d.cache.length]]

    @property
    def _stops(self) -> tuple[int, ...]:
        return (self.newline, self.eos) if self.stop_at_newline else (self.eos,)

    def decode_line(self, max_tokens: int | None = None, stop_at_newline: bool = True) -> list[int]:
        """Decode until a newline (included), end of text, the block size or ``max_tokens``; returns the new tokens."""
        self.stop_at_newline = stop_at_newline
        new: list[int] = []
        self.line_entropies = []
        while not self.ended and (max_tokens is None or len(new) < max_tokens):
            room = self.room if max_tokens is None else min(self.room, max_tokens - len(new))
            k = min(self.k, room - 1)
            toks = self._speculative_round(k) if k >= 1 else self._target_round()
            self.tokens.extend(toks)
            new.extend(toks)
            if toks[-1] in self._stops:
                break
        return new

    def force(self, tokens: list[int]) -> None:
        """Append tokens the decoder did not choose (e.g. ``A:`` on exit): both models will process them."""
        self.tokens.extend(tokens)
        self.target.pending += list(tokens)
        if self.k:
            self.draft.pending += list(tokens)

    def boundary_state(self, read_target: bool = False) -> dict[str, Any]:
        """At a line boundary: process the draft's pending tokens (a draft pass) for its state and entropy.

        ``read_target`` does the same for the target (a target pass when it has pending tokens).
        """
        out: dict[str, Any] = {}
        if self.k and self.draft.pending:
            self.draft.feed([])
            self.counters.draft_forwards += 1
        if self.k:
            out["draft_hidden"] = self.draft.hidden.double().cpu().numpy()
            out["draft_entropy"] = entropy(self.draft.logits)
        if read_target:
            if self.target.pending:
                n = len(self.target.pending)
                self.target.feed([])
                self.counters.target_forwards += 1
                self.counters.target_tokens += n
            out["target_hidden"] = self.target.hidden.double().cpu().numpy()
        return out

    def greedy_target(self, prefix: list[int], max_tokens: int, stop: tuple[int, ...]) -> tuple[list[int], list[float], int]:
        """The target's greedy continuation of ``tokens + prefix`` on a copy (state unchanged).

        Returns the tokens, each one's probability under the target, and the target passes it took
        (the caller charges them: a trial answer is a probe).
        """
        st = self.target.clone()
        st.pending = st.pending + list(prefix)
        toks: list[int] = []
        probs: list[float] = []
        passes = 0
        room = self.room - len(prefix)
        while len(toks) < min(max_tokens, room):
            if st.pending:
                st.feed([])
                passes += 1
            p = torch.softmax(st.logits.double(), -1)
            x = int(p.argmax())
            toks.append(x)
            probs.append(float(p[x]))
            st.pending = [x]
            if x in stop:
                break
        return toks, probs, passes


__all__ = ["Counters", "ModelState", "Scored", "SpeculativeDecoder", "entropy", "next_token_probs"]
