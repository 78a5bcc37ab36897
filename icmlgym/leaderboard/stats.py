"""Statistics for scoring runs: bootstrap intervals, IQM, rank intervals, probability of improvement.

These follow Agarwal et al. 2021 ("Deep RL at the edge of the statistical
precipice", the rliable library) but are written with numpy / scipy here
because rliable 1.2.0 does not import beside pandas 3.

The unit of resampling is always a *run* (one seed of one entry on one task):
per-task intervals resample runs; suite-level intervals resample runs within
each task independently (the stratified bootstrap). Every bootstrap is
vectorised: resample indices are drawn as arrays, never in a Python loop over
resamples.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

__all__ = [
    "aggregate_bootstrap",
    "bootstrap_mean_ci",
    "grouped_bootstrap_means",
    "iqm",
    "pareto_front",
    "percentile_interval",
    "probability_of_improvement",
    "rank_intervals",
    "standard_error",
]

# resample draws of float64 held at once by the grouped bootstrap (about 64 MB)
_CHUNK_ELEMENTS = 8_000_000


def _rng(seed: int | np.random.Generator | None) -> np.random.Generator:
    return seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)


def _check_level(ci: float) -> None:
    if not 0.0 < ci < 1.0:
        raise ValueError(f"ci must be a confidence level in (0, 1), got {ci!r}")


def _check_boot(n_boot: int) -> None:
    if int(n_boot) < 1:
        raise ValueError(f"n_boot must be a positive number of resamples, got {n_boot!r}")


def standard_error(x: np.ndarray) -> float:
    """Standard error of the mean (sample std with ddof=1 over sqrt(n)); NaN below two values."""
    x = np.asarray(x, dtype=float)
    if x.size < 2:
        return float("nan")
    return float(np.std(x, ddof=1) / np.sqrt(x.size))


def percentile_interval(boot: np.ndarray, ci: float = 0.95, axis: int = -1) -> tuple[np.ndarray, np.ndarray]:
    """The percentile interval of bootstrap statistics along ``axis``."""
    _check_level(ci)
    alpha = (1.0 - ci) / 2.0
    lo, hi = np.quantile(boot, [alpha, 1.0 - alpha], axis=axis)
    return lo, hi


def iqm(x: np.ndarray, axis: int | None = None) -> np.ndarray | float:
    """Interquartile mean: the mean of the middle 50% (scipy's ``trim_mean(x, 0.25)``).

    ``floor(0.25 * n)`` values are cut from each end, as scipy and rliable do.
    With ``axis=None`` the array is flattened.
    """
    a = np.asarray(x, dtype=float)
    if axis is None:
        a = a.reshape(-1)
        axis = 0
    n = a.shape[axis]
    if n == 0:
        raise ValueError("iqm of an empty array")
    k = int(0.25 * n)
    s = np.sort(a, axis=axis)
    return np.take(s, np.arange(k, n - k), axis=axis).mean(axis=axis)


def bootstrap_mean_ci(
    x: Sequence[float], n_boot: int = 2000, ci: float = 0.95, seed: int | np.random.Generator | None = 0
) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean of one sample (resampling its values)."""
    x = np.asarray(x, dtype=float)
    if x.size == 0:
        return float("nan"), float("nan")
    boot = grouped_bootstrap_means(x, np.zeros(x.size, dtype=np.int64), 1, n_boot, seed)[0]
    lo, hi = percentile_interval(boot, ci)
    return float(lo), float(hi)


def grouped_bootstrap_means(
    values: np.ndarray,
    group: np.ndarray,
    n_groups: int,
    n_boot: int = 2000,
    seed: int | np.random.Generator | None = 0,
) -> np.ndarray:
    """Bootstrap distribution of the mean of every group, each resampled independently.

    Args:
        values: one value per unit (a run's score).
        group: the group code (0..n_groups-1) of each value.
        n_groups: the number of groups.
        n_boot: resamples per group.
        seed: seed or generator of the resampling.

    Returns:
        An array ``(n_groups, n_boot)``; a group without values gets NaN.

    Groups of equal size are resampled together as one ``(groups, n_boot, n)``
    draw (chunked to bound memory), so the cost is a few numpy calls per
    distinct group size, not a loop over groups or resamples.
    """
    _check_boot(n_boot)
    values = np.asarray(values, dtype=float)
    group = np.asarray(group, dtype=np.int64)
    if values.shape != group.shape:
        raise ValueError(f"values and group must have the same shape, got {values.shape} and {group.shape}")
    if group.size and (group.min() < 0 or group.max() >= n_groups):
        raise ValueError("group codes must lie in 0..n_groups-1")
    rng = _rng(seed)
    out = np.full((n_groups, n_boot), np.nan)
    order = np.argsort(group, kind="stable")
    sorted_vals = values[order]
    sizes = np.bincount(group, minlength=n_groups)
    starts = np.concatenate(([0], np.cumsum(sizes)[:-1]))
    for n in np.unique(sizes[sizes > 0]):
        gids = np.flatnonzero(sizes == n)
        # (groups, n) matrix of this size's values
        mat = sorted_vals[starts[gids][:, None] + np.arange(n)[None, :]]
        per_chunk = max(1, _CHUNK_ELEMENTS // (n_boot * n))
        for c0 in range(0, gids.size, per_chunk):
            block = mat[c0 : c0 + per_chunk]
            idx = rng.integers(0, n, size=(block.shape[0], n_boot, n), dtype=np.int32 if n < 2**31 else np.int64)
            draws = np.take_along_axis(block[:, None, :], idx, axis=2)
            out[gids[c0 : c0 + per_chunk]] = draws.mean(axis=2)
    return out


def aggregate_bootstrap(
    scores_by_task: Sequence[np.ndarray],
    n_boot: int = 2000,
    seed: int | np.random.Generator | None = 0,
) -> dict[str, tuple[float, np.ndarray]]:
    """Point estimates and stratified bootstrap distributions of suite aggregates.

    Args:
        scores_by_task: for each task, the normalised scores of one entry's runs
            (task sizes may differ).
        n_boot: resamples.
        seed: seed or generator.

    Returns:
        ``{"mean": (point, boot), "median": (point, boot), "iqm": (point, boot)}``
        where ``boot`` has shape ``(n_boot,)``. As in rliable: ``mean`` is the mean
        of the per-task means, ``median`` the median of the per-task means, and
        ``iqm`` the interquartile mean of all run scores pooled over tasks. Each
        resample draws runs with replacement *within each task* (stratified).
    """
    _check_boot(n_boot)
    tasks = [np.asarray(s, dtype=float).reshape(-1) for s in scores_by_task]
    if not tasks or any(t.size == 0 for t in tasks):
        raise ValueError("aggregate_bootstrap needs at least one task and at least one run per task")
    rng = _rng(seed)
    task_means = np.empty((n_boot, len(tasks)))
    pooled = np.empty((n_boot, sum(t.size for t in tasks)))
    col = 0
    for j, t in enumerate(tasks):
        draws = t[rng.integers(0, t.size, size=(n_boot, t.size))]
        task_means[:, j] = draws.mean(axis=1)
        pooled[:, col : col + t.size] = draws
        col += t.size
    point_means = np.array([t.mean() for t in tasks])
    all_scores = np.concatenate(tasks)
    return {
        "mean": (float(point_means.mean()), task_means.mean(axis=1)),
        "median": (float(np.median(point_means)), np.median(task_means, axis=1)),
        "iqm": (float(iqm(all_scores)), np.asarray(iqm(pooled, axis=1))),
    }


def rank_intervals(low: np.ndarray, high: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rank intervals from confidence intervals, in the style of Chatbot Arena (higher is better).

    An entry's best rank is 1 + the number of entries whose lower bound is above
    its upper bound (they beat it for sure); its worst rank is the number of
    entries minus the number whose upper bound is below its lower bound. Entries
    whose interval is NaN get NaN ranks and are not counted against others.
    """
    low = np.asarray(low, dtype=float)
    high = np.asarray(high, dtype=float)
    if low.shape != high.shape or low.ndim != 1:
        raise ValueError("low and high must be 1-d arrays of the same length")
    ok = ~(np.isnan(low) | np.isnan(high))
    lo, hi = low[ok], high[ok]
    best = np.full(low.shape, np.nan)
    worst = np.full(low.shape, np.nan)
    # pairwise: beats[i, j] = entry j surely beats entry i
    beats = lo[None, :] > hi[:, None]
    loses = hi[None, :] < lo[:, None]
    best[ok] = 1 + beats.sum(axis=1)
    worst[ok] = ok.sum() - loses.sum(axis=1)
    return best, worst


def _mann_whitney_prob(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """P(X > Y) + 0.5 P(X = Y) along the last axis of x (..., n) and y (..., m)."""
    gt = (x[..., :, None] > y[..., None, :]).mean(axis=(-2, -1))
    eq = (x[..., :, None] == y[..., None, :]).mean(axis=(-2, -1))
    return gt + 0.5 * eq


def probability_of_improvement(
    x_by_task: Sequence[np.ndarray],
    y_by_task: Sequence[np.ndarray],
    n_boot: int = 2000,
    seed: int | np.random.Generator | None = 0,
) -> tuple[float, np.ndarray, np.ndarray]:
    """Probability that entry X improves on entry Y (Agarwal et al. 2021).

    For each task, ``P(X > Y)`` is the Mann-Whitney U statistic of X's runs
    against Y's divided by ``n * m`` (ties count one half); the result is the
    average over tasks. Scores must be oriented so that higher is better.

    Returns:
        ``(point, per_task, boot)``: the average probability, the per-task
        probabilities, and its stratified bootstrap distribution ``(n_boot,)``
        (runs of X and of Y resampled within each task).
    """
    _check_boot(n_boot)
    if len(x_by_task) != len(y_by_task) or not x_by_task:
        raise ValueError("x_by_task and y_by_task must list the same, non-zero number of tasks")
    rng = _rng(seed)
    per_task = np.empty(len(x_by_task))
    boot = np.zeros(n_boot)
    for j, (x, y) in enumerate(zip(x_by_task, y_by_task)):
        x = np.asarray(x, dtype=float).reshape(-1)
        y = np.asarray(y, dtype=float).reshape(-1)
        if x.size == 0 or y.size == 0:
            raise ValueError(f"task {j} has no runs for one of the two entries")
        per_task[j] = _mann_whitney_prob(x, y)
        # bound memory: chunks of resamples with (chunk, n, m) comparisons
        chunk = max(1, _CHUNK_ELEMENTS // (x.size * y.size))
        for b0 in range(0, n_boot, chunk):
            b = min(chunk, n_boot - b0)
            xb = x[rng.integers(0, x.size, size=(b, x.size))]
            yb = y[rng.integers(0, y.size, size=(b, y.size))]
            boot[b0 : b0 + b] += _mann_whitney_prob(xb, yb)
    boot /= len(x_by_task)
    return float(per_task.mean()), per_task, boot


def pareto_front(score: np.ndarray, cost: np.ndarray, direction: str = "max") -> np.ndarray:
    """Boolean mask of the entries on the score-versus-cost Pareto front.

    An entry is on the front when no other entry is at least as good on both
    score and cost and strictly better on one. Lower cost is better; higher
    score is better for ``direction="max"`` and lower for ``"min"``. NaN
    entries are never on the front.
    """
    if direction not in ("max", "min"):
        raise ValueError(f"direction must be 'max' or 'min', got {direction!r}")
    s = np.asarray(score, dtype=float)
    c = np.asarray(cost, dtype=float)
    if s.shape != c.shape or s.ndim != 1:
        raise ValueError("score and cost must be 1-d arrays of the same length")
    if direction == "min":
        s = -s
    ok = ~(np.isnan(s) | np.isnan(c))
    ge_s = s[None, :] >= s[:, None]  # [i, j]: j scores at least as well as i
    le_c = c[None, :] <= c[:, None]
    strict = (s[None, :] > s[:, None]) | (c[None, :] < c[:, None])
    dominated = (ge_s & le_c & strict & ok[None, :]).any(axis=1)
    return ok & ~dominated


def apply_groups(values: np.ndarray, group: np.ndarray, n_groups: int, fn: Callable[[np.ndarray], float]) -> np.ndarray:
    """``fn`` of each group's values (NaN for empty groups); a small helper for non-vectorisable stats."""
    out = np.full(n_groups, np.nan)
    order = np.argsort(group, kind="stable")
    sizes = np.bincount(group, minlength=n_groups)
    for g, chunk in enumerate(np.split(np.asarray(values, dtype=float)[order], np.cumsum(sizes)[:-1])):
        if chunk.size:
            out[g] = fn(chunk)
    return out
