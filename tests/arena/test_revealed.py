"""Revealed-preference fits: Wilson intervals, conditional logit, Bradley–Terry, flips, themes."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats

from icmlgym.envs.arena import revealed as R
from icmlgym.envs.arena.choosers import QueryRecord, SyntheticChooser
from icmlgym.envs.arena.editors import EDITS
from icmlgym.envs.arena.features import FEATURES


def test_wilson_interval_matches_the_formula_and_validates():
    lo, hi = R.wilson_interval(0, 10)
    assert lo == 0.0 and 0.25 < hi < 0.35  # 0.2775
    lo, hi = R.wilson_interval(50, 100)
    assert np.isclose(lo + hi, 1.0) and np.isclose(lo, 0.4038, atol=1e-4)
    # against scipy's implementation
    for k, n in [(81, 263), (3, 40), (199, 200)]:
        ref = stats.binomtest(k, n).proportion_ci(method="wilson")
        assert np.allclose(R.wilson_interval(k, n), (ref.low, ref.high), atol=1e-9)
    with pytest.raises(ValueError, match="n > 0"):
        R.wilson_interval(0, 0)
    with pytest.raises(ValueError, match="successes"):
        R.wilson_interval(5, 3)


def _simulate(beta, gamma, n_queries, n_alt, rng):
    """Records of a known conditional logit over random covariates."""
    recs, table = [], {}
    for q in range(n_queries):
        X = rng.standard_normal((n_alt, len(beta)))
        ids = [f"q{q}i{i}" for i in range(n_alt)]
        for k, x in zip(ids, X):
            table[k] = x
        u = X @ beta + np.append(gamma, 0.0)
        choice = int(np.argmax(u + rng.gumbel(size=n_alt)))
        recs.append(QueryRecord(q, "sim", ids, "", (1, n_alt), choice=choice))
    return recs, (lambda r: np.stack([table[k] for k in r.image_ids]))


def test_conditional_logit_recovers_known_parameters_with_calibrated_intervals():
    rng = np.random.default_rng(0)
    beta = np.array([1.0, -0.5, 0.25])
    gamma = np.array([0.4, 0.0])
    recs, cov = _simulate(beta, gamma, 3000, 3, rng)
    fit = R.fit_conditional_logit(recs, cov, ["a", "b", "c"])
    assert fit.names == ["a", "b", "c", "slot_0", "slot_1"]
    truth = np.concatenate([beta, gamma])
    assert np.all(np.abs(fit.coef - truth) < 4 * fit.se)
    assert np.all(fit.se < 0.1)
    covered = np.mean((fit.lo <= truth) & (truth <= fit.hi))
    assert covered >= 0.6  # 5 intervals at 95%: all or nearly all cover
    assert fit.n_queries == 3000
    # failed queries are skipped
    recs.append(QueryRecord(3000, "sim", recs[0].image_ids, "", (1, 3), error="boom"))
    assert R.fit_conditional_logit(recs, cov, ["a", "b", "c"]).n_queries == 3000
    with pytest.raises(ValueError, match="no successful"):
        R.fit_conditional_logit(recs[-1:], cov, ["a", "b", "c"])


def test_order_flip_rate():
    def rec(i, ids, choice):
        return QueryRecord(i, "t", ids, "", (1, 2), choice=choice)

    records = [
        rec(0, ["a", "b"], 0), rec(1, ["b", "a"], 1),  # a both times: consistent
        rec(2, ["c", "d"], 0), rec(3, ["d", "c"], 0),  # first slot both times: flip
        rec(4, ["e", "f"], 1),  # unmatched
    ]
    rate, n = R.order_flip_rate(records)
    assert n == 2 and rate == 0.5
    assert np.isnan(R.order_flip_rate(records[4:])[0])


def test_bradley_terry_with_choix_orders_images_by_true_strength():
    rng = np.random.default_rng(1)
    strength = np.array([1.5, 0.5, 0.0, -1.0])
    recs = []
    for q in range(800):
        i, j = rng.choice(4, 2, replace=False)
        p = 1 / (1 + np.exp(-(strength[i] - strength[j])))
        recs.append(QueryRecord(q, "t", [f"img{i}", f"img{j}"], "", (1, 2), choice=0 if rng.random() < p else 1))
    df = R.fit_bradley_terry(recs, n_boot=30)
    assert list(df["image_id"]) == ["img0", "img1", "img2", "img3"]
    assert np.isclose(df["strength"].sum(), 0.0)
    assert (df["lo"] <= df["strength"]).all() and (df["strength"] <= df["hi"]).all()
    assert df["n"].sum() == 2 * 800
    centred = strength - strength.mean()
    assert np.all(np.abs(df["strength"].to_numpy() - centred) < 0.35)


def test_experiment_fit_themes_and_edit_ranking_with_the_synthetic_chooser():
    ch = SyntheticChooser(seed=0)
    recs, bank = R.run_preference_experiment(ch, n_pairs=300, seed=0)
    assert len(recs) == 600
    assert 550 < len(bank.table) <= 600  # an unedited product drawn twice is one image
    rep = R.summary(recs, bank)
    themes = rep["themes"]
    assert set(themes["feature"]) == set(FEATURES)
    top = themes.iloc[0]
    assert top["drives"] in ("toward", "away")
    ranking = R.rank_edit_themes(recs, EDITS)
    assert len(ranking) == 2 * len(EDITS)
    # brighter photos win and darker ones lose for the default chooser (weight +0.9 on brightness)
    coef = dict(zip(ranking["name"], ranking["coef"]))
    assert coef["lighting+"] > 0 > coef["lighting-"]
    sig = dict(zip(ranking["name"], ranking["significant"]))
    assert sig["lighting+"] and sig["lighting-"]
    with pytest.raises(KeyError, match="theta"):
        R.edit_theme_covariates(QueryRecord(0, "t", ["a", "b"], "", (1, 2), choice=0))
    with pytest.raises(KeyError, match="never added"):
        bank.covariates(QueryRecord(0, "t", ["zz", "yy"], "", (1, 2), choice=0))


def test_spearman_helper_sanity():
    # the recovery finding uses scipy's Spearman correlation on the weight vectors
    assert stats.spearmanr([1, 2, 3], [2, 4, 9]).statistic == 1.0
