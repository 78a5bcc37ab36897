"""Detectors for prediction-task envs (out-of-domain scoring): kNN distance, Mahalanobis, an autoencoder.

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




class AutoencoderAgent(_Detector):
    """Score = reconstruction error of a small MLP autoencoder trained on the in-domain inputs.

    Training runs through :func:`icmlgym.nn.train_loop` for the tier's budget (gradient
    steps), seeded with :func:`icmlgym.nn.seed_everything`, on the run's device, so the
    run record carries its gradient steps, examples and FLOPs and its determinism mode.
    """

    name = "ood-autoencoder"

    def __init__(self, hidden: int = 16, lr: float = 3e-3, batch_size: int = 64) -> None:
        super().__init__()
        if hidden < 1 or lr <= 0 or batch_size < 1:
            raise ValueError(f"need hidden >= 1, lr > 0, batch_size >= 1; got {hidden}, {lr}, {batch_size}")
        self.hidden, self.lr, self.batch_size = int(hidden), float(lr), int(batch_size)
        self.model = None
        self._seed = 0

    def reset(self, seed, spec) -> None:
        super().reset(seed, spec)
        if self.model is None and seed is not None:
            self._seed = int(seed)

    def train(self, env, budget) -> None:
        import torch

        from icmlgym.nn import Budget, resolve_device, seed_everything, train_loop

        device = resolve_device(self.spec.device if self.spec is not None else "cpu")
        seed_everything(self._seed, device)
        x, _ = env.unwrapped.training_data()
        data = torch.as_tensor(x.reshape(len(x), -1), device=device)
        d = data.shape[1]
        self.model = torch.nn.Sequential(
            torch.nn.Linear(d, 4 * self.hidden), torch.nn.ReLU(), torch.nn.Linear(4 * self.hidden, self.hidden),
            torch.nn.ReLU(), torch.nn.Linear(self.hidden, 4 * self.hidden), torch.nn.ReLU(), torch.nn.Linear(4 * self.hidden, d),
        ).to(device)
        gen = torch.Generator(device=device).manual_seed(self._seed)
        opt = torch.optim.Adam(self.model.parameters(), self.lr)

        def loss_fn(model, batch):
            return ((model(batch) - batch) ** 2).mean(), len(batch), 0

        steps = Budget.of(budget) if int(budget) > 0 else Budget(300)
        train_loop(self.model, lambda step: data[torch.randint(0, len(data), (self.batch_size,), generator=gen, device=device)],
                   loss_fn, opt, steps)
        self.device = device
        self.fitted = True
        own = self.distance(x.reshape(len(x), -1).astype(np.float64))
        self.scale = float(np.median(own)) or 1.0

    def distance(self, x: np.ndarray) -> np.ndarray:
        import torch

        with torch.no_grad():
            t = torch.as_tensor(x, dtype=torch.float32, device=self.device)
            return ((self.model(t) - t) ** 2).mean(1).double().cpu().numpy()


__all__ = ["AutoencoderAgent", "KNNDistanceAgent", "MahalanobisAgent"]
