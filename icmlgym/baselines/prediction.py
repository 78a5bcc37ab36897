"""Detectors for prediction-task envs (out-of-domain scoring): kNN distance and Mahalanobis.

Both learn from the training env's in-domain inputs only (``env.unwrapped.training_data()``,
one-class) in ``train(env, budget)`` and score each input of a batch; a distance ``d`` is
mapped to ``d / (d + m)`` with ``m`` the median training distance, a monotone map into
[0, 1) (AUROC depends only on the order of the scores).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from icmlgym.agents.protocol import BaseAgent


class _Detector(BaseAgent):
    def __init__(self) -> None:
        super().__init__()
        self.fitted = False
        self.scale = 1.0

    def train(self, env, budget) -> None:
        x, _ = env.unwrapped.training_data()
        self.fit(x.reshape(len(x), -1).astype(np.float64))
        own = self.distance(x.reshape(len(x), -1).astype(np.float64))
        self.scale = float(np.median(own)) or 1.0
        self.fitted = True

    def act(self, obs: dict[str, Any], info: dict[str, Any]) -> np.ndarray:
        if not self.fitted:
            raise RuntimeError(f"{type(self).__name__} scores inputs after train(env, budget); it was not trained")
        x = np.asarray(obs["inputs"], dtype=np.float64)
        d = self.distance(x.reshape(len(x), -1))
        return (d / (d + self.scale)).astype(np.float32)

    def fit(self, x: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def distance(self, x: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError


class KNNDistanceAgent(_Detector):
    """Score = mean Euclidean distance to the ``k`` nearest in-domain training inputs (Sun et al. 2022 style)."""

    name = "ood-knn"

    def __init__(self, k: int = 5) -> None:
        super().__init__()
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.k = int(k)

    def fit(self, x: np.ndarray) -> None:
        self.train_x = x
        self.train_sq = (x**2).sum(1)

    def distance(self, x: np.ndarray) -> np.ndarray:
        d2 = (x**2).sum(1)[:, None] + self.train_sq[None, :] - 2 * x @ self.train_x.T
        d = np.sqrt(np.maximum(d2, 0.0))
        k = min(self.k + (1 if not self.fitted else 0), d.shape[1])  # on the training set itself, skip the zero self-distance
        part = np.sort(d, axis=1)[:, :k]
        return part[:, 1:].mean(1) if not self.fitted and k > 1 else part.mean(1)


class MahalanobisAgent(_Detector):
    """Score = Mahalanobis distance to the in-domain training mean (shrunk covariance)."""

    name = "ood-mahalanobis"

    def __init__(self, shrinkage: float = 0.1) -> None:
        super().__init__()
        if not 0.0 <= shrinkage <= 1.0:
            raise ValueError(f"shrinkage must be in [0, 1], got {shrinkage}")
        self.shrinkage = float(shrinkage)

    def fit(self, x: np.ndarray) -> None:
        self.mean = x.mean(0)
        cov = np.cov(x, rowvar=False)
        cov = (1 - self.shrinkage) * cov + self.shrinkage * np.eye(len(cov)) * np.trace(cov) / len(cov)
        self.precision = np.linalg.pinv(cov)

    def distance(self, x: np.ndarray) -> np.ndarray:
        z = x - self.mean
        return np.sqrt(np.maximum(np.einsum("ij,jk,ik->i", z, self.precision, z), 0.0))


__all__ = ["KNNDistanceAgent", "MahalanobisAgent"]
