"""Comparators for LayerOOD-v0: classifier-based scores (max softmax probability, energy),
Mahalanobis and kNN on the last layer, and the SAE-transition detector over random-feature SAEs.

All are one-class: they learn from the in-domain train split only (labelled with the
in-domain topic, which the classifier-based scores need). Mahalanobis and kNN reuse the
prediction family's detectors (:mod:`icmlgym.baselines.prediction`) on the last layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.insides import SAETransitionAgent, squash
from icmlgym.agents.protocol import BaseAgent
from icmlgym.baselines.prediction import KNNDistanceAgent, MahalanobisAgent


def _last_layer(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, np.float64)
    if x.ndim != 3:
        raise ValueError(f"expected (n, layers, d) hidden states, got shape {x.shape}")
    return x[:, -1]


class _LastLayerEnv:
    """A view of a prediction env whose training data is the last layer's states only."""

    def __init__(self, env, normalise: bool) -> None:
        self.unwrapped = self
        self._env, self._normalise = env, normalise

    def training_data(self) -> tuple[np.ndarray, np.ndarray]:
        x, y = self._env.unwrapped.training_data()
        last = _last_layer(x)
        return (_unit(last) if self._normalise else last), y


def _unit(x: np.ndarray) -> np.ndarray:
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


class LastLayerMahalanobisAgent(MahalanobisAgent):
    """Mahalanobis distance to the in-domain mean of the last layer's pooled states (Lee et al. 2018, one class)."""

    name = "ood-mahalanobis-last"

    def train(self, env, budget) -> None:
        super().train(_LastLayerEnv(env, normalise=False), budget)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        return super().act({"inputs": _last_layer(obs["inputs"])}, info)


class LastLayerKNNAgent(KNNDistanceAgent):
    """Mean distance to the k nearest in-domain sentence embeddings (L2-normalised last layer; Sun et al. 2022)."""

    name = "ood-knn-last"

    def train(self, env, budget) -> None:
        super().train(_LastLayerEnv(env, normalise=True), budget)

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        return super().act({"inputs": _unit(_last_layer(obs["inputs"]))}, info)


class _TopicClassifier(BaseAgent):
    """A softmax regression over the in-domain topics on the standardised last layer (full-batch gradient descent)."""

    def __init__(self, l2: float = 1e-2, iters: int = 300, lr: float = 0.5) -> None:
        super().__init__()
        if l2 < 0 or iters < 1 or lr <= 0:
            raise ValueError(f"need l2 >= 0, iters >= 1, lr > 0; got {l2}, {iters}, {lr}")
        self.l2, self.iters, self.lr = float(l2), int(iters), float(lr)
        self.w: np.ndarray | None = None

    def train(self, env, budget) -> None:
        x, y = env.unwrapped.training_data()
        x = _last_layer(x)
        y = np.asarray(y, np.int64)
        if y.min() < 0:
            raise ValueError("the topic classifier needs in-domain topic labels (>= 0) in the training data")
        self.mean, self.std = x.mean(0), x.std(0) + 1e-6
        z = np.c_[(x - self.mean) / self.std, np.ones(len(x))]
        onehot = np.eye(int(y.max()) + 1)[y]
        w = np.zeros((z.shape[1], onehot.shape[1]))
        for _ in range(self.iters):
            p = _softmax(z @ w)
            w -= self.lr * (z.T @ (p - onehot) / len(z) + self.l2 * w)
        self.w = w
        self.ref = self.score_logits(z[:, :-1] * self.std + self.mean)
        self.centre, self.spread = float(np.median(self.ref)), float(np.std(self.ref)) or 1.0

    def logits(self, x: np.ndarray) -> np.ndarray:
        return np.c_[(x - self.mean) / self.std, np.ones(len(x))] @ self.w

    def score_logits(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if self.w is None:
            raise RuntimeError(f"{type(self).__name__} scores inputs after train(env, budget); it was not trained")
        s = self.score_logits(_last_layer(obs["inputs"]))
        return squash(8.0 * (s - self.centre) / self.spread)


def _softmax(a: np.ndarray) -> np.ndarray:
    a = a - a.max(1, keepdims=True)
    e = np.exp(a)
    return e / e.sum(1, keepdims=True)


class MaxSoftmaxAgent(_TopicClassifier):
    """Score = 1 - max softmax probability of the topic classifier (Hendrycks & Gimpel 2017)."""

    name = "ood-msp"

    def score_logits(self, x: np.ndarray) -> np.ndarray:
        return 1.0 - _softmax(self.logits(x)).max(1)


class EnergyAgent(_TopicClassifier):
    """Score = energy, -logsumexp of the topic classifier's logits (Liu et al. 2020)."""

    name = "ood-energy"

    def score_logits(self, x: np.ndarray) -> np.ndarray:
        a = self.logits(x)
        m = a.max(1)
        return -(m + np.log(np.exp(a - m[:, None]).sum(1)))


class RandomSAETransitionAgent(SAETransitionAgent):
    """The SAE-transition detector over untrained, random-feature SAEs (the sanity check)."""

    name = "ood-sae-transitions-random"

    def __init__(self, d_latent: int = 128, k: int = 8, ridge: float = 1.0, first_layer: int = 1) -> None:
        super().__init__(d_latent=d_latent, k=k, ridge=ridge, trained=False, first_layer=first_layer)


__all__ = ["EnergyAgent", "LastLayerKNNAgent", "LastLayerMahalanobisAgent", "MaxSoftmaxAgent", "RandomSAETransitionAgent"]
