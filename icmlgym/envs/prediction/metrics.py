"""Metrics of prediction tasks (numpy only): AUROC, AUPR, FPR at 95% TPR, F1, accuracy."""

from __future__ import annotations

import numpy as np
from scipy.stats import rankdata


def _check(y: np.ndarray, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    y = np.asarray(y).astype(bool).ravel()
    s = np.asarray(s, dtype=np.float64).ravel()
    if y.shape != s.shape:
        raise ValueError(f"labels and scores differ in length: {y.shape[0]} vs {s.shape[0]}")
    if not np.all(np.isfinite(s)):
        raise ValueError("scores must be finite")
    return y, s


def auroc(y: np.ndarray, s: np.ndarray) -> float:
    """Area under the ROC curve (ties count one half); NaN when one class is absent."""
    y, s = _check(y, s)
    pos, neg = int(y.sum()), int((~y).sum())
    if pos == 0 or neg == 0:
        return float("nan")
    ranks = rankdata(s)
    return float((ranks[y].sum() - pos * (pos + 1) / 2) / (pos * neg))


def aupr(y: np.ndarray, s: np.ndarray) -> float:
    """Average precision of the positive class (step-wise area under precision-recall)."""
    y, s = _check(y, s)
    if y.sum() == 0:
        return float("nan")
    order = np.argsort(-s, kind="mergesort")
    ys = y[order]
    tp = np.cumsum(ys)
    precision = tp / np.arange(1, len(ys) + 1)
    return float((precision * ys).sum() / ys.sum())


def fpr_at_tpr(y: np.ndarray, s: np.ndarray, tpr: float = 0.95) -> float:
    """False-positive rate at the smallest threshold reaching ``tpr`` true-positive rate."""
    y, s = _check(y, s)
    if y.sum() == 0 or (~y).sum() == 0:
        return float("nan")
    thr = np.quantile(s[y], 1 - tpr, method="lower")
    return float((s[~y] >= thr).mean())


def f1(y: np.ndarray, pred: np.ndarray) -> float:
    y = np.asarray(y).astype(bool).ravel()
    p = np.asarray(pred).astype(bool).ravel()
    tp = float((y & p).sum())
    denom = 2 * tp + float((y & ~p).sum()) + float((~y & p).sum())
    return 2 * tp / denom if denom else 0.0


__all__ = ["aupr", "auroc", "f1", "fpr_at_tpr"]
