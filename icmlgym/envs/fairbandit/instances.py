"""Linear bandit instances: a synthetic generator, scikit-learn's bundled datasets, and LTR files.

An instance is a :class:`LinearInstance`: a fixed arm set ``arms`` (K x d), the
parameter ``theta`` (d,), and the mean rewards ``arms @ theta``, all strictly
positive (Nash and p-means regret with p <= 0 need positive means).

Real-data instances follow the paper's construction (FairLinBandit, arXiv
2601.22969, section on experiments): every row of a dataset is an arm; its
features are standardised and reduced to ``d`` dimensions by truncated SVD;
``theta`` is fitted by Lasso of the relevance labels (the regression target or
class label) on the reduced features; then the features are normalised so that
every mean reward is positive. The paper does not spell out the normalisation;
ours is the affine map of the mean rewards onto ``[min_reward, 1]`` realised in
feature space (``x' = a*x + b*theta/||theta||^2``, so ``<x', theta> = a<x, theta> + b``),
which keeps the model exactly linear in ``d`` dimensions and keeps the ranking of arms.

The synthetic generator draws ``K`` arms and ``theta`` uniformly on the unit
sphere of R^d and applies the same normalisation (our reading of "the
paper's" synthetic instances, whose exact distribution the issue leaves open).

No data is downloaded: diabetes, wine and breast cancer ship inside
scikit-learn (extra ``[fair]``); LTR files (MSLR-WEB10K/30K, Yahoo LTR) are read
from a path the user gives.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

SKLEARN_DATASETS: tuple[str, ...] = ("diabetes", "wine", "breast_cancer")


@dataclass(frozen=True)
class LinearInstance:
    """A finite-armed linear bandit instance with strictly positive mean rewards."""

    arms: np.ndarray  # (K, d)
    theta: np.ndarray  # (d,)
    name: str = "custom"
    meta: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        arms = np.asarray(self.arms, dtype=np.float64)
        theta = np.asarray(self.theta, dtype=np.float64)
        if arms.ndim != 2 or arms.shape[0] < 2 or arms.shape[1] < 1:
            raise ValueError(f"arms must be a (K, d) array with K >= 2 and d >= 1, got shape {arms.shape}")
        if theta.shape != (arms.shape[1],):
            raise ValueError(f"theta must have shape ({arms.shape[1]},) to match arms {arms.shape}, got {theta.shape}")
        if not (np.all(np.isfinite(arms)) and np.all(np.isfinite(theta))):
            raise ValueError("arms and theta must be finite")
        object.__setattr__(self, "arms", arms)
        object.__setattr__(self, "theta", theta)

    @property
    def means(self) -> np.ndarray:
        return self.arms @ self.theta

    @property
    def n_arms(self) -> int:
        return self.arms.shape[0]

    @property
    def dim(self) -> int:
        return self.arms.shape[1]


def positive_normalise(arms: np.ndarray, theta: np.ndarray, min_reward: float = 0.05) -> np.ndarray:
    """Shift and scale arms along ``theta`` so their mean rewards span ``[min_reward, 1]``.

    ``x' = a*x + b*theta/||theta||^2`` with ``a, b`` chosen so the smallest mean
    reward becomes ``min_reward`` and the largest 1.
    """
    if not 0.0 < min_reward < 1.0:
        raise ValueError(f"min_reward must lie in (0, 1), got {min_reward}")
    norm2 = float(theta @ theta)
    if norm2 <= 0:
        raise ValueError("theta is zero: every arm has the same reward, the instance is degenerate")
    m = arms @ theta
    spread = float(m.max() - m.min())
    if spread <= 1e-12:
        raise ValueError("all arms have the same mean reward; the instance is degenerate")
    a = (1.0 - min_reward) / spread
    b = min_reward - a * float(m.min())
    return a * arms + np.outer(np.full(len(arms), b), theta / norm2)


def synthetic_instance(n_arms: int = 100, dim: int = 10, seed: int = 0, min_reward: float = 0.05) -> LinearInstance:
    """K arms and theta uniform on the unit sphere of R^d, normalised to means in [min_reward, 1]."""
    if int(n_arms) < 2:
        raise ValueError(f"n_arms must be at least 2, got {n_arms}")
    if int(dim) < 1:
        raise ValueError(f"dim must be at least 1, got {dim}")
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(int(n_arms), int(dim)))
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    theta = rng.normal(size=int(dim))
    theta /= np.linalg.norm(theta)
    return LinearInstance(positive_normalise(X, theta, min_reward), theta, f"synthetic(K={n_arms},d={dim})",
                          {"seed": seed, "min_reward": min_reward})


def fit_linear_instance(
    features: np.ndarray,
    labels: np.ndarray,
    dim: int,
    seed: int = 0,
    lasso_alpha: float = 0.01,
    min_reward: float = 0.05,
    name: str = "data",
) -> LinearInstance:
    """The paper's construction: standardise, truncated SVD to ``dim``, Lasso theta, positive normalisation.

    Args:
        features: (K, D) arm features (one row per arm).
        labels: (K,) relevance labels (any real values; standardised before the fit).
        dim: reduced dimension d (1 <= d <= min(K, D) - 1 for the SVD, or D when d == D).
        seed: random state of the randomised SVD.
        lasso_alpha: Lasso penalty on the standardised labels.
        min_reward: the smallest mean reward after normalisation.
    """
    from icmlgym.catalog import require_extra

    require_extra("fair", what=f"the real-data FairLinearBandit instance {name!r}")
    from sklearn.decomposition import TruncatedSVD
    from sklearn.linear_model import Lasso

    F = np.asarray(features, dtype=np.float64)
    y = np.asarray(labels, dtype=np.float64)
    if F.ndim != 2 or y.shape != (F.shape[0],):
        raise ValueError(f"features must be (K, D) and labels (K,); got {F.shape} and {y.shape}")
    if F.shape[0] < 2:
        raise ValueError(f"an instance needs at least 2 arms, got {F.shape[0]} rows")
    if not 1 <= int(dim) <= F.shape[1]:
        raise ValueError(f"dim must lie in [1, {F.shape[1]}] (the number of features), got {dim}")
    sd = F.std(axis=0)
    F = (F - F.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    if int(dim) < min(F.shape):
        Z = TruncatedSVD(n_components=int(dim), algorithm="randomized", random_state=seed).fit_transform(F)
    else:
        Z = F[:, : int(dim)]
    y_sd = y.std()
    ys = (y - y.mean()) / (y_sd if y_sd > 0 else 1.0)
    lasso = Lasso(alpha=lasso_alpha, fit_intercept=True, max_iter=20_000, random_state=seed).fit(Z, ys)
    theta = np.asarray(lasso.coef_, dtype=np.float64)
    if not np.any(theta != 0):
        raise ValueError(
            f"Lasso (alpha={lasso_alpha}) set every coefficient to zero for {name!r}: lower lasso_alpha"
        )
    arms = positive_normalise(Z, theta, min_reward)
    r2 = float(lasso.score(Z, ys))
    return LinearInstance(arms, theta, name, {"lasso_alpha": lasso_alpha, "lasso_r2": r2, "seed": seed})


def sklearn_instance(
    dataset: str, dim: int = 5, n_arms: int | None = None, seed: int = 0, lasso_alpha: float = 0.01,
    min_reward: float = 0.05,
) -> LinearInstance:
    """An instance from a dataset that scikit-learn ships (diabetes, wine, breast_cancer).

    ``n_arms`` (optional) subsamples that many rows with ``seed``.
    """
    if dataset not in SKLEARN_DATASETS:
        raise ValueError(f"unknown dataset {dataset!r}; bundled datasets: {SKLEARN_DATASETS}")
    from icmlgym.catalog import require_extra

    require_extra("fair", what=f"the FairLinearBandit instance {dataset!r}")
    from sklearn import datasets

    loader = {"diabetes": datasets.load_diabetes, "wine": datasets.load_wine,
              "breast_cancer": datasets.load_breast_cancer}[dataset]
    bunch = loader()
    F, y = np.asarray(bunch.data, dtype=np.float64), np.asarray(bunch.target, dtype=np.float64)
    if n_arms is not None:
        if not 2 <= int(n_arms) <= len(F):
            raise ValueError(f"n_arms must lie in [2, {len(F)}] for {dataset!r}, got {n_arms}")
        idx = np.sort(np.random.default_rng(seed).choice(len(F), int(n_arms), replace=False))
        F, y = F[idx], y[idx]
    return fit_linear_instance(F, y, dim, seed, lasso_alpha, min_reward, name=dataset)


def read_ltr_file(path: str | os.PathLike[str], max_rows: int | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Read a learning-to-rank file in the SVMlight format of MSLR-WEB and Yahoo LTR.

    Each line is ``<relevance> qid:<query> <index>:<value> ... [# comment]``;
    feature indices are 1-based and may be sparse (missing features are 0).

    Returns:
        ``(relevance (n,), qid (n,), features (n, D))`` with ``D`` the largest index seen.

    Raises:
        FileNotFoundError: the path does not exist.
        ValueError: a malformed line (the message gives the line number and the reason).
    """
    p = os.fspath(path)
    if not os.path.isfile(p):
        raise FileNotFoundError(f"LTR file {p!r} does not exist (give the path to e.g. MSLR-WEB10K Fold1/train.txt)")
    rels: list[float] = []
    qids: list[str] = []
    rows: list[dict[int, float]] = []
    max_index = 0
    with open(p, encoding="utf-8") as fh:
        for lineno, line in enumerate(fh, start=1):
            body = line.split("#", 1)[0].strip()
            if not body:
                continue
            parts = body.split()
            try:
                rel = float(parts[0])
            except ValueError:
                raise ValueError(f"{p}:{lineno}: the relevance label {parts[0]!r} is not a number") from None
            if len(parts) < 2 or not parts[1].startswith("qid:") or len(parts[1]) == 4:
                raise ValueError(f"{p}:{lineno}: expected 'qid:<query>' after the relevance label, got {parts[1:2]!r}")
            feats: dict[int, float] = {}
            for tok in parts[2:]:
                idx_s, sep, val_s = tok.partition(":")
                try:
                    idx, val = int(idx_s), float(val_s)
                except ValueError:
                    idx, val = -1, float("nan")
                if not sep or idx < 1 or not np.isfinite(val):
                    raise ValueError(f"{p}:{lineno}: bad feature {tok!r} (expected <index>=1,2,...:<finite value>)")
                feats[idx] = val
                max_index = max(max_index, idx)
            rels.append(rel)
            qids.append(parts[1][4:])
            rows.append(feats)
            if max_rows is not None and len(rows) >= max_rows:
                break
    if not rows:
        raise ValueError(f"LTR file {p!r} holds no data lines")
    if max_index == 0:
        raise ValueError(f"LTR file {p!r} has no features")
    F = np.zeros((len(rows), max_index))
    for i, feats in enumerate(rows):
        for j, v in feats.items():
            F[i, j - 1] = v
    return np.asarray(rels), np.asarray(qids), F


def ltr_instance(
    path: str | os.PathLike[str],
    dim: int = 10,
    n_arms: int | None = None,
    qid: str | None = None,
    seed: int = 0,
    lasso_alpha: float = 0.01,
    min_reward: float = 0.05,
    max_rows: int | None = None,
) -> LinearInstance:
    """An instance from an MSLR / Yahoo LTR file: documents are arms, relevance labels fit theta.

    Args:
        path: the SVMlight-format file.
        dim: reduced dimension d.
        n_arms: subsample this many documents (with ``seed``); default all.
        qid: keep only the documents of this query (default: documents of every query).
        max_rows: read at most this many lines (the MSLR files have millions).
    """
    rel, qids, F = read_ltr_file(path, max_rows=max_rows)
    if qid is not None:
        keep = qids == str(qid)
        if not np.any(keep):
            raise ValueError(f"query {qid!r} is not in {os.fspath(path)!r}; first queries: {list(dict.fromkeys(qids))[:5]}")
        rel, F = rel[keep], F[keep]
    if n_arms is not None:
        if not 2 <= int(n_arms) <= len(F):
            raise ValueError(f"n_arms must lie in [2, {len(F)}] for {os.fspath(path)!r}, got {n_arms}")
        idx = np.sort(np.random.default_rng(seed).choice(len(F), int(n_arms), replace=False))
        rel, F = rel[idx], F[idx]
    if np.ptp(rel) == 0:
        raise ValueError("every selected document has the same relevance label: theta cannot be fitted")
    name = f"ltr:{os.path.basename(os.fspath(path))}" + (f"[qid={qid}]" if qid is not None else "")
    return fit_linear_instance(F, rel, dim, seed, lasso_alpha, min_reward, name=name)
