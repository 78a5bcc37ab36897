"""Schedule the data mixture of a training run: midtraining as distributional bridging.

Description:
    After the ICML 2026 paper on midtraining: mixing specialised data into general data in an
    intermediate phase helps most for domains far from general pre-training, beats continued
    pre-training on the specialised data alone (in-domain and against forgetting), and the
    introduction time and weight interact through a plasticity window. One episode is one
    training run of a small transformer (the zoo's :class:`~icmlgym.zoo.transformer.GPT`) from
    scratch, in ``n_chunks`` chunks under a fixed learning-rate schedule (linear warm-up, cosine
    decay to 10%: the plasticity window is real). Each step the agent sets the mixture weights
    over the data sources of :mod:`icmlgym.corpora.domains` for the next chunk; after the last
    chunk the env runs a fixed post-training phase on the target source and evaluates.

Action Space:
    ``Box(0, 1, (n_sources,), float32)``: non-negative mixture weights over ``sources`` (in the
    order of ``info["sources"]``). They are **normalised** to sum to one (any sampled action is
    accepted); all zeros, a negative, NaN or a wrong shape raises ``ValueError``.

Observation Space:
    ``Box(0, inf, (2 + n_sources,), float32)``: the fraction of chunks done, the current learning
    rate relative to its peak, then the share of training tokens each source has had so far.
    ``info`` each step: ``losses`` (held-out loss on every source), ``lr``; at reset
    ``sources``, ``target``, ``distance`` (each source's bigram Jensen-Shannon divergence from
    ``general``, bits), ``schedule`` (the learning rate of every chunk).

Rewards:
    0 until the end; then ``-(target_loss + forgetting_weight * general_loss)``.

Starting State:
    A freshly initialised model (from the reset seed); the held-out sets are drawn from it too.

Episode End:
    Terminated after ``n_chunks`` steps (post-training and evaluation happen in the last one).

Arguments:
    ``target`` (``code``; one of ``near``, ``code``, ``arith``), ``sources`` (all four),
    ``n_chunks`` (4), ``steps_per_chunk`` (40), ``post_steps`` (40), ``batch_size`` (16),
    ``seq_len`` (24), ``lr`` (peak, 3e-3), ``post_lr`` (1e-3), ``n_layer`` (1), ``n_embd`` (32),
    ``eval_size`` (128), ``forgetting_weight`` (1.0).

Metrics:
    ``target_loss`` and ``general_loss`` after post-training (held-out cross-entropy, nats),
    ``target_loss_before_post``, ``general_loss_before_post``, ``objective`` (the final reward),
    ``tokens_<source>`` per source, ``target_distance`` (bits). Cost: ``train_tokens``,
    ``gradient_steps``.

Version History:
    v0: first version.
"""

from __future__ import annotations

import math
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.catalog import require_extra

require_extra("skills", what="icmlgym/MidtrainingSchedule-v0")

import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

from icmlgym.corpora import domains  # noqa: E402
from icmlgym.nn.runtime import fixed_threads  # noqa: E402
from icmlgym.zoo.transformer import GPT, GPTConfig  # noqa: E402

_DISTANCES: dict[str, float] = {}


def source_distance(source: str) -> float:
    """:func:`icmlgym.corpora.domains.distance` of ``source``, computed once per process and kept on
    disk across processes (``$ICMLGYM_HOME/cache/skills``, keyed by the code of
    :mod:`icmlgym.corpora.domains`, the only thing it depends on): every run is a fresh worker, and
    the four distances cost about 0.2 CPU-s each time (the value read back is the same float)."""
    if source not in _DISTANCES:
        from icmlgym.cache import Cache, content_key, file_hash

        cache = Cache("skills")
        key = content_key("bigram-js-distance", source, file_hash(domains.__file__))
        hit = cache.read_json(key)
        if isinstance(hit, float):
            _DISTANCES[source] = hit
        else:
            _DISTANCES[source] = domains.distance(source)
            try:
                cache.write_json(key, _DISTANCES[source])
            except OSError:  # a read-only cache only costs the recomputation
                pass
    return _DISTANCES[source]


class MidtrainingScheduleEnv(gym.Env):
    """One training run in chunks; the agent mixes the data sources of each chunk."""

    metadata = {"render_modes": []}

    def __init__(
        self,
        target: str = "code",
        sources: tuple[str, ...] | list[str] = domains.SOURCES,
        n_chunks: int = 4,
        steps_per_chunk: int = 40,
        post_steps: int = 40,
        batch_size: int = 16,
        seq_len: int = 24,
        lr: float = 3e-3,
        post_lr: float = 1e-3,
        n_layer: int = 1,
        n_embd: int = 32,
        eval_size: int = 128,
        forgetting_weight: float = 1.0,
    ) -> None:
        sources = tuple(sources)
        for s in sources:
            if s not in domains.SOURCES:
                raise ValueError(f"unknown source {s!r}; sources: {domains.SOURCES}")
        if len(set(sources)) != len(sources):
            raise ValueError(f"sources must be distinct, got {sources}")
        if "general" not in sources:
            raise ValueError(f"sources must include 'general' (forgetting is measured on it), got {sources}")
        if target not in sources or target == "general":
            raise ValueError(f"unknown target {target!r}: it must be one of the specialised sources {tuple(s for s in sources if s != 'general')}")
        for name, v, lo in (("n_chunks", n_chunks, 1), ("steps_per_chunk", steps_per_chunk, 1), ("post_steps", post_steps, 0),
                            ("batch_size", batch_size, 1), ("seq_len", seq_len, 4), ("n_layer", n_layer, 1), ("eval_size", eval_size, 1)):
            if int(v) < lo:
                raise ValueError(f"{name} must be >= {lo}, got {v}")
        if not (lr > 0 and post_lr >= 0 and forgetting_weight >= 0):
            raise ValueError(f"lr must be > 0, post_lr and forgetting_weight >= 0; got {lr}, {post_lr}, {forgetting_weight}")
        self.sources, self.target = sources, target
        self.n_chunks, self.steps_per_chunk, self.post_steps = int(n_chunks), int(steps_per_chunk), int(post_steps)
        self.batch_size, self.seq_len, self.eval_size = int(batch_size), int(seq_len), int(eval_size)
        self.lr, self.post_lr, self.forgetting_weight = float(lr), float(post_lr), float(forgetting_weight)
        self.cfg = GPTConfig(vocab_size=domains.VOCAB, block_size=self.seq_len, n_layer=int(n_layer), n_head=2, n_embd=int(n_embd))
        self.action_space = spaces.Box(0.0, 1.0, shape=(len(sources),), dtype=np.float32)
        self.observation_space = spaces.Box(0.0, np.inf, shape=(2 + len(sources),), dtype=np.float32)
        total = self.n_chunks * self.steps_per_chunk
        warm = max(1, total // 20)
        self._lrs = np.array([
            self.lr * (s + 1) / warm if s < warm else self.lr * (0.1 + 0.9 * 0.5 * (1 + math.cos(math.pi * (s - warm) / max(1, total - 1 - warm))))
            for s in range(total)
        ])
        self._chunk: int | None = None

    def validate(self, action: Any) -> np.ndarray:
        """The normalised mixture, or ``ValueError`` naming what is wrong."""
        a = np.asarray(action, dtype=np.float64)
        if a.shape != self.action_space.shape:
            raise ValueError(f"mixture weights have shape {a.shape}, expected {self.action_space.shape} (one per source of {self.sources})")
        if not np.all(np.isfinite(a)):
            raise ValueError(f"mixture weights must be finite numbers, got {a.tolist()}")
        if np.any(a < 0) or np.any(a > 1):
            raise ValueError(f"mixture weights must lie in the action space {self.action_space} ([0, 1] each), got {a.tolist()}")
        if a.sum() <= 0:
            raise ValueError(f"mixture weights are all zero: nothing to normalise (sources {self.sources})")
        return a / a.sum()

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        self._chunk = 0
        with fixed_threads():
            torch.manual_seed(int(self.np_random.integers(2**31)))
            self.model = GPT(self.cfg)
            self.opt = torch.optim.AdamW(self.model.parameters(), self.lr, weight_decay=0.01, betas=(0.9, 0.98))
        self._held = {s: torch.from_numpy(domains.sample(s, self.np_random, self.eval_size, self.seq_len)) for s in self.sources}
        self._tokens = {s: 0 for s in self.sources}
        self._cost = {"train_tokens": 0, "gradient_steps": 0}
        info = {
            "sources": list(self.sources),
            "target": self.target,
            "distance": {s: source_distance(s) for s in self.sources},
            "schedule": [float(self._lrs[c * self.steps_per_chunk]) for c in range(self.n_chunks)],
            "n_chunks": self.n_chunks,
            "cost": dict(self._cost),
        }
        return self._obs(), info

    def _obs(self) -> np.ndarray:
        done = self._chunk / self.n_chunks
        step = min(self._chunk * self.steps_per_chunk, len(self._lrs) - 1)
        total = max(1, sum(self._tokens.values()))
        return np.array([done, self._lrs[step] / self.lr] + [self._tokens[s] / total for s in self.sources], dtype=np.float32)

    def _losses(self) -> dict[str, float]:
        self.model.eval()
        with torch.no_grad():
            out = {s: float(_lm_loss(self.model, x)) for s, x in self._held.items()}
        self.model.train()
        return out

    def _train_step(self, x: torch.Tensor, lr: float) -> None:
        for g in self.opt.param_groups:
            g["lr"] = lr
        self.opt.zero_grad(set_to_none=True)
        loss = _lm_loss(self.model, x)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        self._cost["train_tokens"] += int(x.numel())
        self._cost["gradient_steps"] += 1

    def _batch(self, mix: np.ndarray) -> torch.Tensor:
        counts = self.np_random.multinomial(self.batch_size, mix)
        parts = []
        for s, k in zip(self.sources, counts):
            if k:
                parts.append(domains.sample(s, self.np_random, int(k), self.seq_len))
                self._tokens[s] += int(k) * self.seq_len
        return torch.from_numpy(np.concatenate(parts))

    def step(self, action: Any):
        if self._chunk is None:
            raise RuntimeError("call reset() before step()")
        if self._chunk >= self.n_chunks:
            raise RuntimeError("the episode has ended (every chunk is trained); call reset()")
        mix = self.validate(action)
        info: dict[str, Any] = {}
        reward, terminated = 0.0, False
        with fixed_threads():
            self.model.train()
            for i in range(self.steps_per_chunk):
                self._train_step(self._batch(mix), float(self._lrs[self._chunk * self.steps_per_chunk + i]))
            self._chunk += 1
            losses = self._losses()
            info["losses"] = losses
            info["lr"] = float(self._lrs[min(self._chunk * self.steps_per_chunk, len(self._lrs) - 1)])
            if self._chunk == self.n_chunks:
                terminated = True
                for g in self.opt.param_groups:
                    g["lr"] = self.post_lr
                one = np.array([1.0 if s == self.target else 0.0 for s in self.sources])
                for _ in range(self.post_steps):
                    self._train_step(self._batch(one), self.post_lr)
                final = self._losses()
                reward = -(final[self.target] + self.forgetting_weight * final["general"])
                m = {
                    "target_loss": final[self.target],
                    "general_loss": final["general"],
                    "target_loss_before_post": losses[self.target],
                    "general_loss_before_post": losses["general"],
                    "objective": reward,
                    "target_distance": source_distance(self.target),
                }
                m.update({f"tokens_{s}": float(self._tokens[s]) for s in self.sources})
                info["metrics"] = m
        info["cost"] = dict(self._cost)
        return self._obs(), float(reward), terminated, False, info


def _lm_loss(model: GPT, x: torch.Tensor) -> torch.Tensor:
    logits = model(x)
    return F.cross_entropy(logits[:, :-1].reshape(-1, logits.shape[-1]), x[:, 1:].reshape(-1))


__all__ = ["MidtrainingScheduleEnv", "source_distance"]
