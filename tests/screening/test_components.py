"""Oracles, partitions and surrogates."""

from __future__ import annotations

import numpy as np
import pytest
from rdkit import Chem, DataStructs
from rdkit.Chem import rdFingerprintGenerator

from icmlgym.envs.screening.embedded import embedded_library
from icmlgym.envs.screening.oracles import CallableOracle, LookupOracle, SimilarityOracle, make_oracle
from icmlgym.envs.screening.partitions import (
    RandomPartition,
    SeenSet,
    cluster_partition,
    make_partition,
    reaction_partition,
    reagent_partition,
)
from icmlgym.envs.screening.surrogates import ForestSurrogate, RidgeSurrogate, make_surrogate, unpack


@pytest.fixture(scope="module")
def tiny():
    return embedded_library(n_amines=12, n_acids=15, n_aminobenzoic_acids=4)


def _members(part):
    return [part.indices(a, np.arange(part.sizes[a])) for a in range(part.n_arms)]


@pytest.mark.parametrize(
    "make",
    [
        lambda lib: reagent_partition(lib, 0),
        lambda lib: reagent_partition(lib, 1),
        lambda lib: reagent_partition(lib, 2),
        lambda lib: reagent_partition(lib, "amines"),
        lambda lib: reagent_partition(lib, "acids"),
        lambda lib: reaction_partition(lib),
        lambda lib: cluster_partition(lib, 4, "amines"),
        lambda lib: cluster_partition(lib, 3, 0),
        lambda lib: RandomPartition(lib, 16, seed=3),
    ],
)
def test_partitions_cover_their_compounds_exactly_once(tiny, make):
    part = make(tiny)
    allm = np.concatenate(_members(part))
    assert len(np.unique(allm)) == len(allm)  # disjoint
    if part.kind != "reagent:2":
        assert np.array_equal(np.sort(allm), np.arange(tiny.size))  # and covering
    else:  # only the 3-component reaction has a third position
        assert np.array_equal(np.sort(allm), np.arange(180, tiny.size))


def test_reagent_partition_is_chemistry_aligned(tiny):
    part = reagent_partition(tiny, "amines")
    assert part.n_arms == 12
    for a, members in enumerate(_members(part)):
        rxn, bbs = tiny.decode(members)
        amine_pos = np.where(rxn == 0, bbs[:, 0], bbs[:, 1])  # amide: (amine, acid); quinazolinone: (aba, amine, acid)
        assert np.all(amine_pos == a)
    part1 = reagent_partition(tiny, 1)  # position 1: acids of the amide, amines of the quinazolinone
    assert part1.n_arms == 15 + 12
    assert "amide/acids" in part1.names[0] and "quinazolinone/amines" in part1.names[-1]


def test_random_partition_inverse_and_large_index_space():
    lib = embedded_library(n_amines=3000, n_acids=3000, n_aminobenzoic_acids=300)
    part = RandomPartition(lib, 5000, seed=1)
    assert part.sizes.sum() == lib.size and lib.size > 2**31
    idx = part.indices(17, np.array([0, 1, 2, int(part.sizes[17]) - 1]))
    assert np.all(part.arm_of(idx) == 17)
    small = RandomPartition(embedded_library(n_amines=12, n_acids=15, n_aminobenzoic_acids=4), 7, seed=0)
    for a, m in enumerate(_members(small)):
        assert np.all(small.arm_of(m) == a)


def test_sampling_draws_only_unseen_and_runs_out(tiny):
    part = reagent_partition(tiny, 0)
    seen = SeenSet(tiny.size)
    rng = np.random.default_rng(0)
    got = []
    for _ in range(3):
        idx = part.sample(0, 6, rng, seen)
        assert not seen.contains(idx).any()
        seen.add(idx)
        got.append(idx)
    assert [len(g) for g in got] == [6, 6, 3]  # arm 0 holds 15 compounds
    assert len(part.sample(0, 6, rng, seen)) == 0
    big = embedded_library(n_amines=3000, n_acids=3000, n_aminobenzoic_acids=300)
    bpart = reagent_partition(big, 0)  # arms of 3000 (amide) and 9 x 10^6 (quinazolinone) compounds
    seen = SeenSet(big.size)
    idx = bpart.sample(bpart.n_arms - 1, 50, rng, seen)
    assert len(np.unique(idx)) == 50
    rxn, bbs = big.decode(idx)
    assert np.all(rxn == 1) and np.all(bbs[:, 0] == 299)


def test_make_partition_specs(tiny):
    assert make_partition(tiny, "reagent").kind == "reagent:0"
    assert make_partition(tiny, "random").n_arms == 12 + 4  # as many arms as reagent:0
    assert make_partition(tiny, "random:5").n_arms == 5
    assert make_partition(tiny, "cluster:3:acids").n_arms <= 3
    with pytest.raises(ValueError, match="unknown partition"):
        make_partition(tiny, "by-colour")


def test_similarity_oracle_matches_rdkit(tiny):
    oracle = SimilarityOracle("COc1ccc(CNC(=O)Cc2ccc(F)cc2)cc1")
    idx = np.arange(0, tiny.size, 13)
    sims = oracle.score(tiny, idx)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
    q = gen.GetFingerprint(Chem.MolFromSmiles(oracle.query))
    ref = DataStructs.BulkTanimotoSimilarity(q, [gen.GetFingerprint(Chem.MolFromSmiles(s)) for s in tiny.smiles(idx)])
    assert np.allclose(sims, ref)
    assert np.allclose(oracle.score_smiles(tiny.smiles(idx[:5])), ref[:5])
    assert oracle.maximize and np.array_equal(oracle.objective(sims), sims)


def test_lookup_and_callable_oracles():
    table = {"CCO": -5.0, "c1ccccc1O": -7.5}
    lk = LookupOracle(table)
    assert not lk.maximize
    assert lk.score_smiles(["CCO", "Oc1ccccc1"]).tolist() == [-5.0, -7.5]  # the second by canonical form
    assert lk.objective(np.array([-7.5])).tolist() == [7.5]
    with pytest.raises(KeyError, match="not in the score table"):
        lk.score_smiles(["CCN"])
    assert np.isnan(LookupOracle(table, missing="nan").score_smiles(["CCN"])[0])
    with pytest.raises(ValueError, match="no 'score' column"):
        import pandas as pd

        LookupOracle(pd.DataFrame({"smiles": ["C"], "value": [1.0]}))
    with pytest.raises(FileNotFoundError, match="score table not found"):
        LookupOracle("/nonexistent/scores.csv")
    co = CallableOracle(lambda smiles: [len(s) for s in smiles], maximize=True, key="len")
    assert co.score_smiles(["CC", "CCC"]).tolist() == [2.0, 3.0]
    bad = CallableOracle(lambda smiles: [1.0])
    with pytest.raises(ValueError, match="returned shape"):
        bad.score_smiles(["C", "CC"])
    assert isinstance(make_oracle(lambda s: [0.0] * len(s)), CallableOracle)


def test_ridge_surrogate_matches_closed_form():
    """Dual (n < d) and primal (n >= d) regimes equal ridge without intercept on centred targets."""
    from sklearn.linear_model import Ridge

    rng = np.random.default_rng(0)
    for n in (150, 600):  # 512 bits: 150 rows solve the dual system, 600 cross into the primal one
        fps = rng.integers(0, 256, (n + 20, 64), dtype=np.uint8)
        y = rng.normal(size=n)
        model = RidgeSurrogate(alpha=2.0)
        for s in range(0, n, 37):  # incremental additions
            model.add(fps[s : min(s + 37, n)], y[s : min(s + 37, n)])
        pred = model.predict(fps[n:])
        ref = Ridge(alpha=2.0, fit_intercept=False).fit(unpack(fps[:n]), y - y.mean())
        assert np.allclose(pred, ref.predict(unpack(fps[n:])) + y.mean(), atol=1e-3)
    model.reset()
    assert model.n_train == 0 and np.all(model.predict(fps[:3]) == 0)


def test_forest_surrogate_learns_a_bit_signal():
    rng = np.random.default_rng(1)
    fps = rng.integers(0, 256, (300, 16), dtype=np.uint8)
    y = unpack(fps)[:, 5] * 2.0 + unpack(fps)[:, 9]
    rf = make_surrogate({"kind": "rf", "n_estimators": 30, "refit_every": 10})
    assert isinstance(rf, ForestSurrogate)
    rf.reset(0)
    rf.add(fps[:250], y[:250])
    assert np.corrcoef(rf.predict(fps[250:]), y[250:])[0, 1] > 0.9
    with pytest.raises(TypeError, match="needs reset"):
        make_surrogate(object())
