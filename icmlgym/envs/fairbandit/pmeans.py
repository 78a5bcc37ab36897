"""p-means regret: the fairness/utility family of regrets of a bandit run.

For expected rewards ``r_1, ..., r_T >= 0`` collected by a bandit algorithm and
the optimal mean reward ``mu*``, the p-mean of the rewards is

    M_p(r) = ((1/T) * sum_t r_t ** p) ** (1/p)        (p != 0)
    M_0(r) = (prod_t r_t) ** (1/T)                     (geometric mean, Nash)
    M_-inf(r) = min_t r_t                              (egalitarian)
    M_+inf(r) = max_t r_t

and the p-means regret is ``mu* - M_p(r)``. p = 1 is the usual average regret,
p = 0 the Nash regret (Sawarni, Pal & Barman 2023), p -> -inf the egalitarian
(worst-round) regret. ``M_p`` is non-decreasing in p, so for a fixed run the
regret is non-increasing in p.

Edge cases (the limits of the definition):

- a zero reward with p <= 0 makes ``M_p = 0`` (``r ** p`` is infinite for
  p < 0, and the product is 0 for p = 0), so the regret is ``mu*``;
- negative rewards are rejected for every p but p = 1 (the p-mean of a
  negative number is not defined; the theory assumes non-negative rewards);
- the means are computed in log space, so ``p = -5`` over 10,000 rewards of
  0.01 neither overflows nor underflows.

The functions take any sequence of expected rewards, so they apply to any
bandit run: :class:`PMeansRegretWrapper` adds them to ``info["metrics"]`` of
any Discrete-action bandit env whose arm means are known (for example
``icmlgym/Bandit-v0``).
"""

from __future__ import annotations

import math
from typing import Any, Iterable, Sequence

import gymnasium as gym
import numpy as np

# the grid of p in the paper's experiments
PAPER_P_GRID: tuple[float, ...] = (1.0, 0.5, 0.0, -0.5, -1.0, -1.5, -2.0, -5.0)


def _as_rewards(rewards: Iterable[float] | np.ndarray) -> np.ndarray:
    r = np.asarray(rewards, dtype=np.float64)
    if r.ndim != 1:
        raise ValueError(f"rewards must be a 1-d sequence, got an array of shape {r.shape}")
    if r.size == 0:
        raise ValueError("rewards must hold at least one value, got an empty sequence")
    if not np.all(np.isfinite(r)):
        raise ValueError("rewards must be finite, got NaN or infinite values")
    return r


def p_mean(rewards: Iterable[float] | np.ndarray, p: float) -> float:
    """The power (Hölder) mean ``M_p`` of non-negative rewards.

    Args:
        rewards: 1-d sequence of rewards; non-negative unless ``p == 1``.
        p: the exponent; ``0`` gives the geometric mean, ``-inf`` the minimum,
            ``+inf`` the maximum.

    Returns:
        ``M_p(rewards)`` as a float.

    Raises:
        ValueError: empty or non-finite rewards, a NaN ``p``, or a negative reward with ``p != 1``.
    """
    r = _as_rewards(rewards)
    p = float(p)
    if math.isnan(p):
        raise ValueError("p must be a number or +-inf, got NaN")
    if p == 1.0:
        return float(r.mean())
    if np.any(r < 0):
        raise ValueError(
            f"the p-mean with p={p:g} needs non-negative rewards; got a minimum of {r.min():g} "
            "(only p = 1, the arithmetic mean, accepts negative values)"
        )
    if p == -math.inf:
        return float(r.min())
    if p == math.inf:
        return float(r.max())
    if p <= 0 and np.any(r == 0):
        return 0.0
    if p == 0:
        return float(np.exp(np.log(r).mean()))
    if p > 0:
        positive = r > 0
        if not np.any(positive):
            return 0.0
        # zeros contribute nothing to the sum of r**p; log-sum-exp over the positive entries
        logs = p * np.log(r[positive])
    else:
        logs = p * np.log(r)
    m = logs.max()
    log_mean = m + np.log(np.exp(logs - m).sum()) - np.log(r.size)
    return float(np.exp(log_mean / p))


def pmeans_regret(rewards: Iterable[float] | np.ndarray, optimum: float, p: float) -> float:
    """p-means regret ``optimum - M_p(rewards)`` of one run.

    Args:
        rewards: the expected (or realised) rewards of the arms played, one per round.
        optimum: the optimal mean reward ``mu*``.
        p: the exponent (1: average regret, 0: Nash regret, -inf: egalitarian regret).
    """
    if not np.isfinite(optimum):
        raise ValueError(f"optimum must be a finite number, got {optimum!r}")
    return float(optimum) - p_mean(rewards, p)


def nash_regret(rewards: Iterable[float] | np.ndarray, optimum: float) -> float:
    """Nash regret: ``optimum`` minus the geometric mean of the rewards (p = 0)."""
    return pmeans_regret(rewards, optimum, 0.0)


def pmeans_regrets(
    rewards: Iterable[float] | np.ndarray, optimum: float, ps: Sequence[float] = PAPER_P_GRID
) -> dict[float, float]:
    """p-means regret for each p in ``ps`` (default: the paper's grid)."""
    r = _as_rewards(rewards)
    return {float(p): pmeans_regret(r, optimum, p) for p in ps}


def pmeans_regret_prefixes(
    rewards: Iterable[float] | np.ndarray, optimum: float, p: float, checkpoints: Sequence[int]
) -> np.ndarray:
    """p-means regret of the first ``t`` rewards for each ``t`` in ``checkpoints`` (vectorised).

    Uses cumulative sums in a shifted log space, so a whole regret curve costs
    one pass over the rewards.
    """
    r = _as_rewards(rewards)
    t = np.asarray(checkpoints, dtype=np.int64)
    if t.ndim != 1 or t.size == 0 or t.min() < 1 or t.max() > r.size:
        raise ValueError(f"checkpoints must be integers in [1, {r.size}], got {list(checkpoints)!r}")
    p = float(p)
    if p == 1.0:
        return optimum - np.cumsum(r)[t - 1] / t
    if np.any(r < 0):
        raise ValueError(f"the p-mean with p={p:g} needs non-negative rewards; got a minimum of {r.min():g}")
    if p == -math.inf:
        return optimum - np.minimum.accumulate(r)[t - 1]
    if p == math.inf:
        return optimum - np.maximum.accumulate(r)[t - 1]
    if p <= 0:
        zeros_seen = np.cumsum(r == 0)[t - 1] > 0
        with np.errstate(divide="ignore"):
            logr = np.where(r > 0, np.log(np.where(r > 0, r, 1.0)), 0.0)
        if p == 0:
            means = np.exp(np.cumsum(logr)[t - 1] / t)
        else:
            logs = p * logr
            m = logs.max()
            means = np.exp((m + np.log(np.cumsum(np.exp(logs - m))[t - 1] / t)) / p)
        return optimum - np.where(zeros_seen, 0.0, means)
    powered = np.power(r, p)
    # r <= some bound in practice; scale by the max to keep the cumulative sum in range
    scale = powered.max() if powered.max() > 0 else 1.0
    means = np.power(np.cumsum(powered / scale)[t - 1] / t * scale, 1.0 / p)
    return optimum - means


def log_checkpoints(horizon: int, per_decade: int = 4) -> np.ndarray:
    """Logarithmically spaced rounds 1 <= t <= horizon (always including ``horizon``)."""
    if horizon < 1:
        raise ValueError(f"horizon must be positive, got {horizon}")
    n = max(2, int(math.ceil(per_decade * math.log10(max(horizon, 10)))) + 1)
    pts = np.unique(np.round(np.logspace(0, math.log10(horizon), n)).astype(np.int64))
    return np.unique(np.append(pts[(pts >= 1) & (pts <= horizon)], horizon))


BLOCK_PREFIX = "expected_reward[rounds="
N_BLOCKS = 48


def round_blocks(horizon: int, n_blocks: int = N_BLOCKS) -> list[tuple[int, int]]:
    """Logarithmic blocks of rounds ``(first, last)`` (1-based, inclusive) covering ``1..horizon``.

    Early rounds, where a learner's play changes fastest, get blocks of one round; a horizon
    of at most ``n_blocks`` rounds is covered round by round.
    """
    if horizon < 1:
        raise ValueError(f"horizon must be positive, got {horizon}")
    if horizon <= n_blocks:
        edges = np.arange(1, horizon + 2)
    else:
        edges = np.unique(np.round(np.geomspace(1, horizon + 1, n_blocks + 1)).astype(np.int64))
    return [(int(a), int(b) - 1) for a, b in zip(edges[:-1], edges[1:])]


def block_metric_name(first: int, last: int) -> str:
    """The ``info["metrics"]`` key of the mean expected reward over rounds ``first..last``."""
    return f"{BLOCK_PREFIX}{first}-{last}]"


def parse_block_metric(name: str) -> tuple[int, int] | None:
    """``(first, last)`` of a block metric name, None for any other metric."""
    if not name.startswith(BLOCK_PREFIX) or not name.endswith("]"):
        return None
    a, b = name[len(BLOCK_PREFIX) : -1].split("-")
    return int(a), int(b)


def block_metrics(expected_rewards: np.ndarray, n_blocks: int = N_BLOCKS) -> dict[str, float]:
    """The mean expected reward of the arms played in each block of :func:`round_blocks`.

    Averaged across runs, these are the block means of the per-round expectation
    ``E[mu_{a_t}]``, from which the ex-ante p-means regret is computed (docs/fairbandit.md)."""
    r = np.asarray(expected_rewards, dtype=np.float64)
    c = np.concatenate([[0.0], np.cumsum(r)])
    return {block_metric_name(a, b): float((c[b] - c[a - 1]) / (b - a + 1)) for a, b in round_blocks(len(r), n_blocks)}


def metric_name(p: float) -> str:
    """The ``info["metrics"]`` key of the p-means regret at ``p`` (``pmeans_regret[p=-0.5]``)."""
    if p == -math.inf:
        return "pmeans_regret[p=-inf]"
    return f"pmeans_regret[p={float(p):g}]"


def pmeans_metrics(
    expected_rewards: Iterable[float] | np.ndarray, optimum: float, ps: Sequence[float] = PAPER_P_GRID
) -> dict[str, float]:
    """The scalar metrics a fair-bandit run reports: one per p, plus named aliases.

    ``nash_regret`` (p = 0), ``average_regret`` (p = 1) and ``egalitarian_regret``
    (p = -inf, the worst round) are always included.
    """
    r = _as_rewards(expected_rewards)
    out = {metric_name(p): pmeans_regret(r, optimum, p) for p in ps}
    out["nash_regret"] = pmeans_regret(r, optimum, 0.0)
    out["average_regret"] = pmeans_regret(r, optimum, 1.0)
    out["egalitarian_regret"] = pmeans_regret(r, optimum, -math.inf)
    return out



class _RowMeans:
    """:func:`p_mean` of every row of ``R`` (N, T), the same doubles as row by row.

    The rows whose rewards are all finite and positive (every row of a FairLinearBandit-v0
    batch: its arm means are positive) share each pass -- the logs (once for every p), the
    maxima, the exponentials, the row sums -- as one numpy call: elementwise operations give
    the same doubles whatever the array's shape, and a row sum of a C-ordered matrix is
    that row's pairwise sum. Any other row is :func:`p_mean` itself.
    """

    def __init__(self, R: np.ndarray) -> None:
        R = np.ascontiguousarray(R, dtype=np.float64)
        if R.ndim != 2 or R.shape[1] == 0:
            raise ValueError(f"rewards must be an (N, T) array with T >= 1, got shape {R.shape}")
        self.R = R
        self.plain = np.isfinite(R).all(axis=1) & (R > 0).all(axis=1)
        self.P = R if self.plain.all() else np.ascontiguousarray(R[self.plain])
        self._logs: np.ndarray | None = None

    def mean(self, p: float) -> np.ndarray:
        p = float(p)
        if math.isnan(p):
            raise ValueError("p must be a number or +-inf, got NaN")
        out = np.empty(self.R.shape[0])
        for i in np.flatnonzero(~self.plain).tolist():
            out[i] = p_mean(self.R[i], p)
        P = self.P
        if p == 1.0:
            vals = P.mean(axis=1)
        elif p == -math.inf:
            vals = P.min(axis=1)
        elif p == math.inf:
            vals = P.max(axis=1)
        else:
            if self._logs is None:
                self._logs = np.log(P)
            if p == 0:
                vals = np.exp(self._logs.mean(axis=1))
            else:
                logs = p * self._logs
                m = logs.max(axis=1)
                logs -= m[:, None]
                np.exp(logs, out=logs)
                vals = np.exp((m + np.log(logs.sum(axis=1)) - np.log(P.shape[1])) / p)
        out[self.plain] = vals
        return out


def pmeans_metrics_rows(expected_rewards: np.ndarray, optimum: float, ps: Sequence[float] = PAPER_P_GRID) -> dict[str, np.ndarray]:
    """:func:`pmeans_metrics` of each row of ``expected_rewards`` (N, T): one array of N per metric, the same doubles."""
    if not np.isfinite(optimum):
        raise ValueError(f"optimum must be a finite number, got {optimum!r}")
    rows = _RowMeans(expected_rewards)
    regrets: dict[float, np.ndarray] = {}

    def regret(p: float) -> np.ndarray:
        p = float(p)
        if p not in regrets:
            regrets[p] = float(optimum) - rows.mean(p)
        return regrets[p]

    out = {metric_name(p): regret(p) for p in ps}
    out["nash_regret"] = regret(0.0)
    out["average_regret"] = regret(1.0)
    out["egalitarian_regret"] = regret(-math.inf)
    return out


def block_metrics_rows(expected_rewards: np.ndarray, n_blocks: int = N_BLOCKS) -> dict[str, np.ndarray]:
    """:func:`block_metrics` of each row of ``expected_rewards`` (N, T) (a row's cumulative sum is the row's own)."""
    R = np.ascontiguousarray(expected_rewards, dtype=np.float64)
    c = np.concatenate([np.zeros((R.shape[0], 1)), np.cumsum(R, axis=1)], axis=1)
    return {block_metric_name(a, b): (c[:, b] - c[:, a - 1]) / (b - a + 1) for a, b in round_blocks(R.shape[1], n_blocks)}

class PMeansRegretWrapper(gym.Wrapper):
    """Adds p-means regrets to ``info["metrics"]`` of any Discrete-action bandit env.

    The wrapper records the expected reward of every arm pulled and, when the
    episode ends, merges :func:`pmeans_metrics` into ``info["metrics"]`` and puts
    the regret curve at logarithmic checkpoints in ``info["pmeans_curve"]``.

    Args:
        env: an env with a ``Discrete`` action space.
        means: the expected reward of each action; default ``env.unwrapped.means``
            (as ``icmlgym/Bandit-v0`` exposes). Must be non-negative unless only p = 1 is used.
        ps: the exponents to report (default: the paper's grid).
    """

    def __init__(self, env: gym.Env, means: Sequence[float] | None = None, ps: Sequence[float] = PAPER_P_GRID):
        super().__init__(env)
        if not isinstance(env.action_space, gym.spaces.Discrete):
            raise TypeError(f"PMeansRegretWrapper needs a Discrete action space, got {env.action_space}")
        if means is None:
            means = getattr(env.unwrapped, "means", None)
            if means is None:
                raise ValueError(
                    "PMeansRegretWrapper needs the arm means: pass means=... (the env has no `means` attribute)"
                )
        m = np.asarray(means, dtype=np.float64)
        if m.shape != (int(env.action_space.n),):
            raise ValueError(f"means must hold one value per action ({env.action_space.n}), got shape {m.shape}")
        self.means = m
        self.optimum = float(m.max())
        self.ps = tuple(ps)
        self._start = int(env.action_space.start)
        self._pulled: list[float] = []

    def reset(self, **kwargs: Any):
        self._pulled = []
        return self.env.reset(**kwargs)

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._pulled.append(self.means[int(action) - self._start])
        if terminated or truncated:
            r = np.asarray(self._pulled)
            info = dict(info)
            info["metrics"] = {**info.get("metrics", {}), **pmeans_metrics(r, self.optimum, self.ps)}
            cps = log_checkpoints(len(r))
            info["pmeans_curve"] = {
                "t": cps,
                **{metric_name(p): pmeans_regret_prefixes(r, self.optimum, p, cps) for p in self.ps},
            }
        return obs, reward, terminated, truncated, info


def ex_ante_pmeans_regret(expected_rewards_runs: np.ndarray, optimum: float, p: float) -> float:
    """p-means regret with the expectation inside the mean, estimated over independent runs.

    Sawarni, Pal & Barman define the Nash regret as ``mu* - (prod_t E[mu_{a_t}])^(1/T)``:
    the expectation over the algorithm's randomness is taken per round, before the
    geometric mean. Given the expected rewards of ``n`` independent runs (shape
    ``(n, T)``), this returns ``optimum - M_p(mean over runs of round t)``. By the
    concavity of ``M_p`` for p <= 1 it is at most the mean of the per-run regrets that
    ``info["metrics"]`` reports.
    """
    R = np.asarray(expected_rewards_runs, dtype=np.float64)
    if R.ndim != 2 or R.shape[0] < 1 or R.shape[1] < 1:
        raise ValueError(f"expected_rewards_runs must be an (n_runs, T) array, got shape {R.shape}")
    return pmeans_regret(R.mean(axis=0), optimum, p)
