"""The submitted network of ``icmlgym/CognitiveRNN-v0``, run in numpy, and the paper's analyses of it.

:func:`simulate` runs the rate RNN defined in :mod:`icmlgym.nn.recurrent` (the same
equations, without torch). The analyses:

- :func:`effective_rank`: exp of the entropy of the normalised singular values
  (Roy & Vetterli 2007): between 1 (rank one) and n (flat spectrum).
- :func:`participation_ratio`: (sum of covariance eigenvalues)^2 / sum of their squares,
  the dimension of the activity.
- :func:`readout_error`: how far task variables are from a linear function of the
  activity at the end of the pre-response period: 1 - R^2 of ridge regression,
  two-fold cross-validated, averaged over variables (0 = perfectly linear).
- :func:`hill_tail_index`: the Hill estimator of the tail index of |w| over the top 10%
  of magnitudes (smaller = heavier tail; a Gaussian's estimate is large, a power law
  with density ~ w^-(1+a) gives about a).
"""

from __future__ import annotations

import numpy as np

WEIGHT_KEYS: tuple[str, ...] = ("w_in", "w_rec", "b_rec", "w_out", "b_out")


def shapes(n_input: int, n_hidden: int, n_output: int) -> dict[str, tuple[int, ...]]:
    """The shape of each weight array of a network with these sizes."""
    return {
        "w_in": (n_hidden, n_input),
        "w_rec": (n_hidden, n_hidden),
        "b_rec": (n_hidden,),
        "w_out": (n_output, n_hidden),
        "b_out": (n_output,),
    }


def simulate(net: dict[str, np.ndarray], inputs: np.ndarray, alpha: float, rate_max: float) -> tuple[np.ndarray, np.ndarray]:
    """Logits ``(n, T, n_output)`` and rates ``(n, T, n_hidden)`` of ``net`` on ``inputs`` ``(n, T, n_input)``."""
    w_in, w_rec, b_rec, w_out, b_out = (np.asarray(net[k], dtype=np.float32) for k in WEIGHT_KEYS)
    n, t_max, _ = inputs.shape
    drive = inputs @ w_in.T + b_rec
    h = np.zeros((n, w_rec.shape[0]), dtype=np.float32)
    r = h
    rates = np.empty((n, t_max, w_rec.shape[0]), dtype=np.float32)
    a = np.float32(alpha)
    for t in range(t_max):
        h = (1 - a) * h + a * (r @ w_rec.T + drive[:, t])
        r = np.minimum(np.maximum(h, 0), np.float32(rate_max))
        rates[:, t] = r
    return rates @ w_out.T + b_out, rates


def effective_rank(w: np.ndarray) -> float:
    s = np.linalg.svd(np.asarray(w, dtype=np.float64), compute_uv=False)
    if s.sum() <= 0:
        return 0.0
    p = s / s.sum()
    p = p[p > 0]
    return float(np.exp(-(p * np.log(p)).sum()))


def participation_ratio(x: np.ndarray) -> float:
    """``x``: ``(samples, features)``."""
    x = np.asarray(x, dtype=np.float64)
    if len(x) < 2:
        return 0.0
    ev = np.clip(np.linalg.eigvalsh(np.cov(x, rowvar=False)), 0, None)
    return float(ev.sum() ** 2 / (ev**2).sum()) if (ev**2).sum() > 0 else 0.0


def readout_error(states: np.ndarray, variables: dict[str, np.ndarray], ridge: float = 1e-3) -> float:
    """Mean over variables of 1 - R^2 of a ridge readout, two-fold cross-validated (clipped to [0, 1])."""
    x = np.asarray(states, dtype=np.float64)
    n = len(x)
    half = n // 2
    folds = [(np.arange(half), np.arange(half, n)), (np.arange(half, n), np.arange(half))]
    errs = []
    for y in variables.values():
        y = np.asarray(y, dtype=np.float64)
        if y.var() == 0:
            continue
        sse = 0.0
        for tr, te in folds:
            mu_x, mu_y = x[tr].mean(0), y[tr].mean()
            xc = x[tr] - mu_x
            scale = max(np.trace(xc.T @ xc) / max(1, x.shape[1]), 1e-12)
            beta = np.linalg.solve(xc.T @ xc + ridge * scale * np.eye(x.shape[1]), xc.T @ (y[tr] - mu_y))
            sse += float((((x[te] - mu_x) @ beta + mu_y - y[te]) ** 2).sum())
        errs.append(min(1.0, sse / float(((y - y.mean()) ** 2).sum())))
    return float(np.mean(errs)) if errs else 0.0


def hill_tail_index(w: np.ndarray, top: float = 0.1) -> float:
    """Hill's estimator over the ``top`` fraction of the nonzero |w| (at least 10 of them)."""
    m = np.sort(np.abs(np.asarray(w, dtype=np.float64)).ravel())[::-1]
    m = m[m > 0]
    k = max(10, int(top * len(m)))
    if len(m) <= k:
        return 0.0
    logs = np.log(m[:k]) - np.log(m[k])
    return float(1.0 / logs.mean()) if logs.mean() > 0 else 0.0


__all__ = ["WEIGHT_KEYS", "effective_rank", "hill_tail_index", "participation_ratio", "readout_error", "shapes", "simulate"]
