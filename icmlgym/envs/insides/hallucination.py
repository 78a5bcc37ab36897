"""HallucinationLabeling-v0: label sampled responses as genuine or hallucinated, from their embeddings, under an annotation budget.

Description:
    APORIA (ICML 2026): language models hallucinate even when the knowledge is present
    (retrieval instability rather than a knowledge gap). Repeated responses to one prompt,
    embedded as sentences, differ in geometry: genuine ones cluster more tightly than
    hallucinated ones. The env holds ``n_prompts`` prompts x ``n_responses`` sampled
    responses, each with a hidden label (1 = hallucinated) and an embedding. Each step the
    agent either asks for one response's label (an annotation, at most ``budget``) or ends
    the episode with a hallucination score for every response.

    Embedded default: a small transformer trained on a generated fact base
    (:mod:`icmlgym.envs.insides.facts`), asked only questions it answers right greedily and
    sampled at ``temperature`` (:mod:`icmlgym.envs.insides.responses`); responses embedded by
    the shipped sentence encoder (``embedding="sentence"``) or by the model's own last-layer
    states (``embedding="model"``: a hidden-state probe's input). ``jsonl_path`` reads a
    user's SOCRATES-style file instead (prompt, response, label per line).

Action Space:
    ``Box(0, 1, (R + 1,))`` with ``R = n_prompts x n_responses``. If the last entry is >= 0.5,
    or no annotation is left, the action is the final prediction: entries ``0..R-1`` are the
    responses' hallucination scores (>= 0.5 predicts "hallucinated"). Otherwise it is a query:
    the response with the largest of entries ``0..R-1`` (the first on ties) is annotated.
    :func:`query_action` and :func:`predict_action` build both, with clear errors for an index
    out of range or predictions of the wrong length. Asking again for an annotated response
    spends the annotation and reveals nothing (``info["warning"]`` says so), or raises
    ``ValueError`` with ``strict=True``.

Observation Space:
    ``Dict(embeddings=Box(-inf, inf, (R * dim,)), prompt=MultiDiscrete([n_prompts] * R),
    labels=Box(-1, 1, (R,)), budget_left=Discrete(budget + 1))``: the responses' embeddings
    (row-major ``(R, dim)``, flattened), the prompt of each response, the revealed labels
    (-1 = not annotated, 0 = genuine, 1 = hallucinated) and the annotations left.

Rewards:
    0 for each annotation; the final prediction's F1 of the hallucinated class.

Starting State:
    ``reset(seed)`` draws ``n_prompts`` prompts of the pool (seeded); nothing is annotated.

Episode End:
    Terminated at the final prediction (at the latest the step after the budget is spent).

Arguments:
    ``n_prompts`` (30), ``n_responses`` (8), ``budget`` (40), ``temperature`` (1.3),
    ``embedding`` ("sentence" | "model"), ``pool_prompts`` (96: the prompts an episode draws
    from), ``jsonl_path`` (None), ``strict`` (False: skip malformed JSONL lines and penalise
    repeated queries; True: refuse both with an error).

Metrics:
    Over the responses not annotated: ``f1`` (primary; hallucinated class), ``accuracy``,
    ``auroc`` (of the scores; 0.5 when the responses left hold one class only).
    ``annotations`` (used). Of the episode's data, whatever the agent: ``hallucination_rate``, ``spread_genuine`` / ``spread_hallucinated`` (mean pairwise
    cosine distance among a prompt's genuine / hallucinated responses, averaged over prompts
    with at least two of each) and ``spread_gap`` (hallucinated minus genuine, same prompts).

Version History:
    v0: first version.
"""

from __future__ import annotations

import math
import os
from typing import Any

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from icmlgym.envs.prediction.metrics import auroc, f1


def query_action(index: int, n_responses_total: int) -> np.ndarray:
    """The action that annotates response ``index`` of an episode holding ``n_responses_total`` responses."""
    if isinstance(index, bool) or not isinstance(index, (int, np.integer)):
        raise TypeError(f"an annotation index must be an int, got {type(index).__name__}")
    if not 0 <= int(index) < n_responses_total:
        raise ValueError(f"annotation index {index} is out of range: the episode holds responses 0..{n_responses_total - 1}")
    a = np.zeros(n_responses_total + 1, np.float32)
    a[int(index)] = 1.0
    return a


def predict_action(scores: Any, n_responses_total: int) -> np.ndarray:
    """The final action from one hallucination score in [0, 1] per response."""
    s = np.asarray(scores, np.float64).ravel()
    if s.shape[0] != n_responses_total:
        raise ValueError(f"predictions have length {s.shape[0]}; the episode holds {n_responses_total} responses")
    if not np.all(np.isfinite(s)) or s.min() < 0 or s.max() > 1:
        raise ValueError("prediction scores must be finite and in [0, 1]")
    return np.r_[s, 1.0].astype(np.float32)


def _pairwise_spread(e: np.ndarray) -> float:
    sim = e @ e.T
    n = len(e)
    return float(1.0 - (sim.sum() - np.trace(sim)) / (n * (n - 1)))


def spreads(emb: np.ndarray, labels: np.ndarray) -> tuple[list[float], list[float]]:
    """Per prompt with >= 2 genuine and >= 2 hallucinated responses: the two mean pairwise cosine distances.

    Args:
        emb: ``(prompts, responses, dim)`` embeddings; labels ``(prompts, responses)``.
    """
    unit = emb / np.maximum(np.linalg.norm(emb, axis=-1, keepdims=True), 1e-12)
    gen, hal = [], []
    for e, y in zip(unit, labels):
        if (y == 0).sum() >= 2 and (y == 1).sum() >= 2:
            gen.append(_pairwise_spread(e[y == 0]))
            hal.append(_pairwise_spread(e[y == 1]))
    return gen, hal


class HallucinationLabelingEnv(gym.Env):
    """Active labelling of sampled responses as genuine or hallucinated under a budget (see the module docstring)."""

    metadata = {"render_modes": []}

    def __init__(self, n_prompts: int = 30, n_responses: int = 8, budget: int = 40, temperature: float = 1.3,
                 embedding: str = "sentence", pool_prompts: int = 96, jsonl_path: str | os.PathLike | None = None,
                 strict: bool = False) -> None:
        from icmlgym.envs.insides import responses

        if n_prompts < 1 or n_responses < 2:
            raise ValueError(f"need n_prompts >= 1 and n_responses >= 2, got {n_prompts}, {n_responses}")
        if not math.isfinite(temperature) or temperature < 0:
            raise ValueError(f"temperature must be a finite number >= 0, got {temperature}")
        total = n_prompts * n_responses
        if not 0 <= budget < total:
            raise ValueError(f"budget must be in 0..{total - 1} (n_prompts x n_responses - 1), got {budget}")
        if jsonl_path is not None:
            self.pool = responses.load_jsonl(jsonl_path, n_responses, strict=strict)
        else:
            if pool_prompts < n_prompts:
                raise ValueError(f"pool_prompts ({pool_prompts}) must be >= n_prompts ({n_prompts})")
            self.pool = responses.fact_pool(int(pool_prompts), int(n_responses), float(temperature), embedding)
        if len(self.pool.prompts) < n_prompts:
            raise ValueError(f"the pool holds {len(self.pool.prompts)} prompts with {n_responses} responses; an episode needs n_prompts = {n_prompts}")
        self.n_prompts, self.n_responses, self.budget, self.strict = int(n_prompts), int(n_responses), int(budget), bool(strict)
        self.total = total
        self.dim = int(self.pool.embeddings.shape[-1])
        self.observation_space = spaces.Dict({
            "embeddings": spaces.Box(-np.inf, np.inf, (total * self.dim,), np.float32),
            "prompt": spaces.MultiDiscrete(np.full(total, self.n_prompts, np.int64)),
            "labels": spaces.Box(-1.0, 1.0, (total,), np.float32),
            "budget_left": spaces.Discrete(self.budget + 1),
        })
        self.action_space = spaces.Box(0.0, 1.0, (total + 1,), np.float32)
        self._prompt_ids = np.repeat(np.arange(self.n_prompts), self.n_responses)
        self._emb: np.ndarray | None = None
        self._done = True

    def _obs(self) -> dict[str, Any]:
        return {"embeddings": self._emb.reshape(-1).copy(), "prompt": self._prompt_ids.copy(),
                "labels": self._revealed.copy(), "budget_left": int(self.budget - self._used)}

    def _cost(self) -> dict[str, float]:
        return {"annotations": float(self._used)}

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        super().reset(seed=seed)
        chosen = np.sort(self.np_random.choice(len(self.pool.prompts), self.n_prompts, replace=False))
        self._chosen = chosen
        self._emb = self.pool.embeddings[chosen].reshape(self.total, self.dim).astype(np.float32)
        self._y = self.pool.labels[chosen].reshape(self.total)
        self._revealed = np.full(self.total, -1.0, np.float32)
        self._used = 0
        self._done = False
        return self._obs(), {"cost": self._cost()}

    def step(self, action):
        if self._emb is None:
            raise RuntimeError("call reset() before step()")
        if self._done:
            raise RuntimeError("the episode has ended; call reset()")
        a = np.asarray(action)
        if a.shape != self.action_space.shape or not np.all(np.isfinite(a.astype(np.float64))) or not self.action_space.contains(a.astype(np.float32)):
            raise ValueError(f"action of shape {a.shape} is not in the action space {self.action_space} "
                             f"(one score per response, {self.total}, then the predict flag)")
        a = a.astype(np.float64)
        info: dict[str, Any] = {}
        if a[-1] < 0.5 and self._used < self.budget:
            i = int(np.argmax(a[:-1]))
            if self._revealed[i] >= 0:
                if self.strict:
                    raise ValueError(f"annotation index {i} was already used (strict mode)")
                info["warning"] = f"annotation index {i} was already used: the annotation is spent, nothing new revealed"
            else:
                self._revealed[i] = float(self._y[i])
            self._used += 1
            info["cost"] = self._cost()
            return self._obs(), 0.0, False, False, info
        self._done = True
        info["cost"] = self._cost()
        info["metrics"] = self._metrics(a[:-1])
        return self._obs(), float(info["metrics"]["f1"]), True, False, info

    def _metrics(self, scores: np.ndarray) -> dict[str, float]:
        hidden = self._revealed < 0
        y, s = self._y[hidden], scores[hidden]
        gen, hal = spreads(self.pool.embeddings[self._chosen], self.pool.labels[self._chosen])
        au = auroc(y, s)
        return {
            "f1": f1(y, s >= 0.5), "accuracy": float(((s >= 0.5) == (y == 1)).mean()),
            "auroc": 0.5 if math.isnan(au) else au, "annotations": float(self._used),
            "hallucination_rate": float(self._y.mean()),
            "spread_genuine": float(np.mean(gen)) if gen else 0.0,
            "spread_hallucinated": float(np.mean(hal)) if hal else 0.0,
            "spread_gap": float(np.mean(np.subtract(hal, gen))) if gen else 0.0,
        }


__all__ = ["HallucinationLabelingEnv", "predict_action", "query_action", "spreads"]
