"""Revealed preference: infer a chooser's visual utility from its query log.

The chooser is treated as a random-utility decision maker. From the recorded
choices we fit

- a **conditional logit** (McFadden 1974) ``P(i | shown) = softmax_i(beta . x_i + gamma_slot(i))``
  over image features (or edit magnitudes) with per-slot position effects, by
  maximum likelihood (scipy), with Wald 95% intervals from the observed information
  and a likelihood-ratio test of "no position effect";
- a **Bradley–Terry** model over individual images with ``choix`` (pairwise
  queries), with bootstrap intervals;

and report position bias (slot effects, the first-slot rate under
counterbalancing with a Wilson interval, the order-flip rate), rank the edit
themes that move choices, and name the visual themes that drive selection.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from icmlgym.envs.arena.choosers import Chooser, ChooserError, QueryRecord
from icmlgym.envs.arena.features import FEATURES, THEMES, extract_features, reference_stats
from icmlgym.envs.arena.images import ProductCatalog, image_id

Z95 = 1.959963984540054


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval for a binomial proportion (95% by default).

    Raises:
        ValueError: ``n`` not positive or ``successes`` outside [0, n].
    """
    if n <= 0:
        raise ValueError(f"a Wilson interval needs n > 0 trials, got {n}")
    if not 0 <= successes <= n:
        raise ValueError(f"successes must lie in [0, n={n}], got {successes}")
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return float(max(0.0, centre - half)), float(min(1.0, centre + half))


@dataclass
class LogitFit:
    """A fitted conditional logit.

    Attributes:
        names: covariate names, then ``slot_k`` for each slot effect (relative to the last slot).
        coef, se, lo, hi: estimates, standard errors and Wald 95% bounds, aligned with ``names``.
        loglik: maximised log-likelihood; ``n_queries``: choices used.
        n_features: how many of ``names`` are covariates (the rest are slot effects).
    """

    names: list[str]
    coef: np.ndarray
    se: np.ndarray
    lo: np.ndarray
    hi: np.ndarray
    loglik: float
    n_queries: int
    n_features: int

    @property
    def beta(self) -> np.ndarray:
        return self.coef[: self.n_features]

    @property
    def slot_effects(self) -> np.ndarray:
        """Utility of each slot relative to the last one (the last is 0)."""
        return np.append(self.coef[self.n_features :], 0.0)

    def table(self) -> pd.DataFrame:
        return pd.DataFrame({"name": self.names, "coef": self.coef, "se": self.se, "lo": self.lo, "hi": self.hi})


def _design(
    records: Sequence[QueryRecord], covariates: Callable[[QueryRecord], np.ndarray]
) -> dict[int, tuple[np.ndarray, np.ndarray]]:
    """Group usable records by choice-set size: {n: (X (Q, n, d), y (Q,))}."""
    groups: dict[int, tuple[list, list]] = {}
    for r in records:
        if r.choice is None or r.error is not None:
            continue
        X = np.asarray(covariates(r), dtype=np.float64)
        g = groups.setdefault(len(r.image_ids), ([], []))
        g[0].append(X)
        g[1].append(int(r.choice))
    return {n: (np.array(xs), np.array(ys)) for n, (xs, ys) in groups.items()}


def _fit(groups: dict[int, tuple[np.ndarray, np.ndarray]], d: int, n_slots: int, position: bool, ridge: float):
    from scipy import optimize  # imported here: the envs import this module and rarely fit

    n_par = d + (n_slots - 1 if position else 0)

    def expand(X: np.ndarray) -> np.ndarray:
        if not position:
            return X
        Q, n, _ = X.shape
        slots = np.zeros((Q, n, n_slots - 1))
        for s in range(min(n, n_slots - 1)):
            slots[:, s, s] = 1.0
        # a set smaller than n_slots uses the first n slots; its last slot is its own reference
        return np.concatenate([X, slots], axis=2)

    data = [(expand(X), y) for X, y in groups.values()]

    def nll(theta: np.ndarray) -> tuple[float, np.ndarray]:
        f, g = ridge * theta @ theta, 2 * ridge * theta
        for Z, y in data:
            u = Z @ theta
            m = u.max(axis=1, keepdims=True)
            lse = m[:, 0] + np.log(np.exp(u - m).sum(axis=1))
            p = np.exp(u - lse[:, None])
            idx = np.arange(len(y))
            f -= (u[idx, y] - lse).sum()
            g -= (Z[idx, y] - np.einsum("qn,qnd->qd", p, Z)).sum(axis=0)
        return float(f), g

    res = optimize.minimize(nll, np.zeros(n_par), jac=True, method="L-BFGS-B", options={"maxiter": 500})
    theta = res.x
    H = 2 * ridge * np.eye(n_par)
    for Z, y in data:
        u = Z @ theta
        p = np.exp(u - u.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        mean = np.einsum("qn,qnd->qd", p, Z)
        H += np.einsum("qn,qnd,qne->de", p, Z, Z) - mean.T @ mean
    cov = np.linalg.pinv(H)
    se = np.sqrt(np.clip(np.diag(cov), 0, None))
    return theta, se, -res.fun


def fit_conditional_logit(
    records: Sequence[QueryRecord],
    covariates: Callable[[QueryRecord], np.ndarray],
    names: Sequence[str],
    position: bool = True,
    ridge: float = 1e-6,
) -> LogitFit:
    """Maximum-likelihood conditional logit over the recorded choices.

    Args:
        records: query records; failed queries (``choice is None``) are skipped.
        covariates: maps a record to an ``(n_shown, d)`` array, one row per shown image.
        names: the ``d`` covariate names.
        position: also fit one effect per slot (relative to the last slot).
        ridge: a tiny L2 penalty that keeps a separable design finite.

    Raises:
        ValueError: no usable record.
    """
    groups = _design(records, covariates)
    if not groups:
        raise ValueError("no successful choices in the query log to fit")
    d = len(names)
    n_slots = max(groups)
    theta, se, ll = _fit(groups, d, n_slots, position, ridge)
    all_names = list(names) + ([f"slot_{s}" for s in range(n_slots - 1)] if position else [])
    nq = sum(len(y) for _, y in groups.values())
    return LogitFit(all_names, theta, se, theta - Z95 * se, theta + Z95 * se, ll, nq, d)


class FeatureBank:
    """Image id -> feature vector, z-scored against :func:`reference_stats` (the analyst's scale)."""

    def __init__(self, analysis_size: int = 64) -> None:
        self.analysis_size = analysis_size
        self._mu, self._sd = reference_stats(analysis_size=analysis_size)
        self.table: dict[str, np.ndarray] = {}

    def add(self, image: np.ndarray) -> str:
        key = image_id(image)
        if key not in self.table:
            self.table[key] = (extract_features(image, self.analysis_size) - self._mu) / self._sd
        return key

    def covariates(self, record: QueryRecord) -> np.ndarray:
        try:
            return np.stack([self.table[k] for k in record.image_ids])
        except KeyError as err:
            raise KeyError(f"query {record.query_id} shows image {err.args[0]} whose features were never added") from None


def fit_feature_utility(records: Sequence[QueryRecord], bank: FeatureBank, position: bool = True) -> LogitFit:
    """Conditional logit of the choices on the :data:`FEATURES` of the shown images."""
    return fit_conditional_logit(records, bank.covariates, FEATURES, position=position)


def interpret(fit: LogitFit) -> pd.DataFrame:
    """Name the visual themes that drive selection, strongest first.

    One row per feature: the theme's words, the signed effect with its interval,
    and ``drives`` = "toward" / "away" when the interval excludes 0, else "unclear".
    """
    rows = []
    for k, f in enumerate(fit.names[: fit.n_features]):
        lo, hi = fit.lo[k], fit.hi[k]
        drives = "toward" if lo > 0 else "away" if hi < 0 else "unclear"
        rows.append({"feature": f, "theme": THEMES.get(f, f), "effect": fit.coef[k], "lo": lo, "hi": hi, "drives": drives})
    df = pd.DataFrame(rows)
    return df.reindex(df["effect"].abs().sort_values(ascending=False).index).reset_index(drop=True)


def edit_theme_covariates(record: QueryRecord) -> np.ndarray:
    """Edit magnitudes of each shown image split into positive and negative parts (from ``meta['theta']``)."""
    if "theta" not in record.meta:
        raise KeyError(f"query {record.query_id} has no meta['theta'] (the edit vector of each shown image)")
    th = np.asarray(record.meta["theta"], dtype=np.float64)
    return np.concatenate([np.clip(th, 0, None), np.clip(-th, 0, None)], axis=1)


def rank_edit_themes(records: Sequence[QueryRecord], edits: Sequence[str]) -> pd.DataFrame:
    """Rank edit directions ("lighting+", "background-", ...) by how much they raise the chance of being chosen.

    Fits a conditional logit on the edit magnitudes recorded in each query's
    ``meta['theta']`` (one row per shown image) with slot effects; the effect of
    "e+" is the utility gained by a full-strength positive edit e.
    """
    names = [f"{e}+" for e in edits] + [f"{e}-" for e in edits]
    used = [r for r in records if r.choice is not None and "theta" in r.meta]
    fit = fit_conditional_logit(used, edit_theme_covariates, names, position=True)
    df = fit.table().iloc[: fit.n_features].copy()
    df["significant"] = (df["lo"] > 0) | (df["hi"] < 0)
    return df.sort_values("coef", ascending=False).reset_index(drop=True)


def order_flip_rate(records: Sequence[QueryRecord]) -> tuple[float, int]:
    """Among counterbalanced pairs (the same two images shown in both orders), the fraction whose
    chosen image changes with the order. Returns (rate, number of matched pairs); (nan, 0) if none."""
    pending: dict[tuple[str, str], list[str]] = {}
    flips = n = 0
    for r in records:
        if r.choice is None or len(r.image_ids) != 2:
            continue
        a, b = r.image_ids
        if a == b:
            continue
        chosen = r.image_ids[r.choice]
        other = pending.get((b, a))
        if other:
            n += 1
            flips += int(other.pop(0) != chosen)
        else:
            pending.setdefault((a, b), []).append(chosen)
    return (flips / n if n else float("nan")), n


@dataclass
class PositionBiasReport:
    """Position bias in a query log.

    ``flagged`` is the verdict: the likelihood-ratio test of "no slot effect" in the
    conditional logit (which controls for the images' features) rejects at ``alpha``.
    """

    slot_effects: np.ndarray
    slot_lo: np.ndarray
    slot_hi: np.ndarray
    lr_stat: float
    p_value: float
    first_slot_rate: float
    first_slot_ci: tuple[float, float]
    order_flip_rate: float
    n_flip_pairs: int
    n_queries: int
    alpha: float
    flagged: bool


def position_bias(
    records: Sequence[QueryRecord],
    covariates: Callable[[QueryRecord], np.ndarray],
    names: Sequence[str],
    alpha: float = 0.01,
) -> PositionBiasReport:
    """Test for position bias: slot effects with intervals, a likelihood-ratio test, the
    first-slot choice rate (Wilson interval) and the order-flip rate."""
    from scipy import stats

    full = fit_conditional_logit(records, covariates, names, position=True)
    restricted = fit_conditional_logit(records, covariates, names, position=False)
    df = len(full.coef) - full.n_features
    lr = max(0.0, 2 * (full.loglik - restricted.loglik))
    p = float(stats.chi2.sf(lr, df)) if df > 0 else 1.0
    chosen = [r for r in records if r.choice is not None]
    first = sum(r.choice == 0 for r in chosen)
    flip, npairs = order_flip_rate(records)
    sl = full.n_features
    return PositionBiasReport(
        slot_effects=full.slot_effects,
        slot_lo=np.append(full.lo[sl:], 0.0),
        slot_hi=np.append(full.hi[sl:], 0.0),
        lr_stat=float(lr),
        p_value=p,
        first_slot_rate=first / len(chosen),
        first_slot_ci=wilson_interval(first, len(chosen)),
        order_flip_rate=flip,
        n_flip_pairs=npairs,
        n_queries=len(chosen),
        alpha=alpha,
        flagged=bool(p < alpha),
    )


def fit_bradley_terry(records: Sequence[QueryRecord], n_boot: int = 50, seed: int = 0, alpha: float = 0.01) -> pd.DataFrame:
    """Bradley–Terry strengths of the images in pairwise queries (``choix.ilsr_pairwise``).

    Returns one row per image id: ``strength`` (log-scale, mean 0), bootstrap 95%
    percentile interval ``lo``/``hi`` over resampled queries, ``wins`` and ``n`` shown,
    sorted strongest first. ``alpha`` is choix's regulariser (keeps strengths finite for
    images that always win or always lose).
    """
    import choix

    pairs = [r for r in records if r.choice is not None and len(r.image_ids) == 2]
    if not pairs:
        raise ValueError("no successful pairwise queries in the log for a Bradley–Terry fit")
    ids = sorted({k for r in pairs for k in r.image_ids})
    index = {k: i for i, k in enumerate(ids)}
    data = np.array([(index[r.image_ids[r.choice]], index[r.image_ids[1 - r.choice]]) for r in pairs])
    est = choix.ilsr_pairwise(len(ids), data, alpha=alpha)
    rng = np.random.default_rng(seed)
    boots = np.array([choix.ilsr_pairwise(len(ids), data[rng.integers(len(data), size=len(data))], alpha=alpha) for _ in range(n_boot)])
    wins = np.bincount(data[:, 0], minlength=len(ids))
    shown = wins + np.bincount(data[:, 1], minlength=len(ids))
    df = pd.DataFrame(
        {
            "image_id": ids,
            "strength": est - est.mean(),
            "lo": np.percentile(boots, 2.5, axis=0) - est.mean(),
            "hi": np.percentile(boots, 97.5, axis=0) - est.mean(),
            "wins": wins,
            "n": shown,
        }
    )
    return df.sort_values("strength", ascending=False).reset_index(drop=True)


def run_preference_experiment(
    chooser: Chooser,
    n_pairs: int = 1000,
    size: int = 64,
    seed: int = 0,
    catalog: ProductCatalog | None = None,
    edit_prob: float = 0.5,
    counterbalance: bool = True,
) -> tuple[list[QueryRecord], FeatureBank]:
    """A controlled revealed-preference experiment: random edited product photos in head-to-head choices.

    Each of ``n_pairs`` pairs takes two products of the same category, applies random edits
    (each edit type on with probability ``edit_prob``, magnitude uniform in [-1, 1]) and
    queries the chooser; with ``counterbalance`` each pair is also shown in the swapped
    order. Failed queries are recorded by the chooser and skipped. Returns the records of
    this experiment and a :class:`FeatureBank` holding every shown image.
    """
    from icmlgym.envs.arena.editors import EDITS, apply_edits
    from icmlgym.envs.arena.images import CATEGORIES

    cat = catalog or ProductCatalog(400, seed=0)
    rng = np.random.default_rng(seed)
    bank = FeatureBank()
    start = len(chooser.log)
    for _ in range(int(n_pairs)):
        category = CATEGORIES[int(rng.integers(len(CATEGORIES)))]
        a, b = rng.choice(cat.ids_in(category), size=2, replace=False)
        shown, thetas = [], []
        for pid in (a, b):
            theta = (rng.uniform(-1, 1, len(EDITS)) * (rng.random(len(EDITS)) < edit_prob)).astype(np.float32)
            im = apply_edits(cat.render(int(pid), size), theta)
            bank.add(im)
            shown.append(im)
            thetas.append(theta.tolist())
        orders = [(0, 1), (1, 0)] if counterbalance else [(0, 1)]
        for o in orders:
            try:
                chooser.choose([shown[i] for i in o], meta={"theta": [thetas[i] for i in o], "products": [int((a, b)[i]) for i in o]})
            except ChooserError:
                pass
    return chooser.log[start:], bank


def summary(records: Sequence[QueryRecord], bank: FeatureBank, alpha: float = 0.01) -> dict[str, Any]:
    """The revealed-preference report of a log: utility fit, themes, position bias (a dict of tables and numbers)."""
    fit = fit_feature_utility(records, bank)
    pb = position_bias(records, bank.covariates, FEATURES, alpha=alpha)
    errors = sum(r.error is not None for r in records)
    return {"fit": fit.table(), "themes": interpret(fit), "position_bias": pb, "errors": errors, "n_queries": len(records)}


def flatten_features(bank: Mapping[str, np.ndarray]) -> pd.DataFrame:
    """A feature table (one row per image id) for export."""
    return pd.DataFrame.from_dict({k: dict(zip(FEATURES, v)) for k, v in bank.items()}, orient="index")
