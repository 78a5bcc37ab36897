"""Surrogate models: cheap predictors of the oracle's objective from fingerprints.

A surrogate sees packed Morgan fingerprints (uint8 rows) and objectives, is
refit on everything evaluated so far as data arrives, and predicts batches.
``RidgeSurrogate`` keeps its sufficient statistics incrementally and solves
the smaller of the primal (d x d) and dual (n x n) systems, so a refit after
each round is cheap. ``ForestSurrogate`` wraps scikit-learn's random forest and
refits every ``refit_every`` new points. Anything with ``reset(seed)``,
``add(fps, y)`` and ``predict(fps)`` can be passed instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from scipy.linalg import cho_solve, cholesky, solve_triangular


def unpack(fps: np.ndarray) -> np.ndarray:
    """Packed fingerprints -> float32 0/1 features."""
    return np.unpackbits(fps, axis=1).astype(np.float32)


class Surrogate:
    """Base class of surrogates (the interface the env calls)."""

    name = "surrogate"

    def reset(self, seed: int | None = None) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def add(self, fps: np.ndarray, y: np.ndarray) -> None:  # pragma: no cover - abstract
        raise NotImplementedError

    def predict(self, fps: np.ndarray) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    @property
    def n_train(self) -> int:  # pragma: no cover - abstract
        raise NotImplementedError


class RidgeSurrogate(Surrogate):
    """Ridge regression on fingerprint bits (intercept = mean objective), refit after each addition.

    While there are fewer points than bits it solves the dual system
    ``(X X^T + alpha I) beta = y - mean(y)``, ``w = X^T beta``, keeping the
    Cholesky factor of ``X X^T + alpha I`` and extending it by the new rows only
    (a block update, O(n^2 m) for m new points instead of O(n^3)); past that it
    solves the primal ``d x d`` system.
    """

    name = "ridge"

    def __init__(self, alpha: float = 1.0) -> None:
        if alpha <= 0:
            raise ValueError(f"ridge alpha must be positive, got {alpha}")
        self.alpha = float(alpha)
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._x = np.zeros((0, 0))
        self._chol = np.zeros((0, 0))  # lower Cholesky factor of X X^T + alpha I (dual regime)
        self._y = np.zeros(0)
        self._n = 0
        self._w: np.ndarray | None = None
        self._mean = 0.0

    @property
    def n_train(self) -> int:
        return self._n

    def add(self, fps: np.ndarray, y: np.ndarray) -> None:
        y = np.asarray(y, dtype=np.float64).reshape(-1)
        m = len(y)
        if m == 0:
            return
        x = unpack(fps).astype(np.float64)
        n, d = self._n, x.shape[1]
        if n + m > len(self._x):  # grow the buffers geometrically
            cap = max(64, 2 * (n + m))
            xb, lb, yb = np.zeros((cap, d)), np.zeros((cap, cap)), np.zeros(cap)
            if n:
                xb[:n], yb[:n] = self._x[:n], self._y[:n]
                lb[:n, :n] = self._chol[:n, :n]
            self._x, self._chol, self._y = xb, lb, yb
        if n + m <= d:  # extend the Cholesky factor: [[L, 0], [S^T, chol(D - S^T S)]]
            b = self._x[:n] @ x.T  # (n, m)
            dblock = x @ x.T + self.alpha * np.eye(m)
            if n:
                s = solve_triangular(self._chol[:n, :n], b, lower=True, check_finite=False)
                self._chol[n : n + m, :n] = s.T
                dblock = dblock - s.T @ s
            self._chol[n : n + m, n : n + m] = cholesky(dblock, lower=True, check_finite=False)
        self._x[n : n + m] = x
        self._y[n : n + m] = y
        self._n = n + m
        self._w = None

    def _fit(self) -> None:
        n = self._n
        x = self._x[:n]
        y = self._y[:n]
        self._mean = float(y.mean())
        yc = y - self._mean
        d = x.shape[1]
        if n <= d:
            self._w = x.T @ cho_solve((self._chol[:n, :n], True), yc, check_finite=False)
        else:
            a = x.T @ x
            a[np.diag_indices(d)] += self.alpha
            self._w = np.linalg.solve(a, x.T @ yc)

    def predict(self, fps: np.ndarray) -> np.ndarray:
        if self._n == 0:
            return np.zeros(len(fps))
        if self._w is None:
            self._fit()
        return unpack(fps) @ self._w.astype(np.float32) + self._mean


class ForestSurrogate(Surrogate):
    """scikit-learn random forest on fingerprint bits, refit every ``refit_every`` new points."""

    name = "rf"

    def __init__(self, n_estimators: int = 50, refit_every: int = 20, max_features: float = 0.3) -> None:
        self.n_estimators = int(n_estimators)
        self.refit_every = int(refit_every)
        self.max_features = max_features
        self.reset()

    def reset(self, seed: int | None = None) -> None:
        self._seed = 0 if seed is None else int(seed)
        self._x: list[np.ndarray] = []
        self._y: list[float] = []
        self._model: Any = None
        self._fitted_on = 0

    @property
    def n_train(self) -> int:
        return len(self._y)

    def add(self, fps: np.ndarray, y: np.ndarray) -> None:
        if len(y):
            self._x.append(np.asarray(fps))
            self._y.extend(np.asarray(y, dtype=np.float64).tolist())

    def predict(self, fps: np.ndarray) -> np.ndarray:
        if not self._y:
            return np.zeros(len(fps))
        if self._model is None or self.n_train - self._fitted_on >= self.refit_every:
            from sklearn.ensemble import RandomForestRegressor

            self._model = RandomForestRegressor(
                n_estimators=self.n_estimators, max_features=self.max_features, random_state=self._seed, n_jobs=1
            )
            self._model.fit(unpack(np.concatenate(self._x)), np.asarray(self._y))
            self._fitted_on = self.n_train
        return self._model.predict(unpack(fps))


def make_surrogate(spec: Any) -> Surrogate:
    """``"ridge"``, ``"rf"``, a dict ``{"kind": ..., **kwargs}``, or an object with reset/add/predict."""
    if isinstance(spec, str):
        spec = {"kind": spec}
    if isinstance(spec, dict):
        kinds = {"ridge": RidgeSurrogate, "rf": ForestSurrogate}
        if spec.get("kind") not in kinds:
            raise ValueError(f"unknown surrogate {spec.get('kind')!r}; surrogates: {sorted(kinds)}")
        return kinds[spec["kind"]](**{k: v for k, v in spec.items() if k != "kind"})
    for m in ("reset", "add", "predict"):
        if not callable(getattr(spec, m, None)):
            raise TypeError(f"a surrogate needs reset(seed), add(fps, y) and predict(fps); {spec!r} lacks {m}")
    return spec
