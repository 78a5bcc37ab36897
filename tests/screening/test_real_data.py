"""The real-data path: Enamine-style building blocks and MolPAL's docking scores from ../shared/data/screening."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import icmlgym
from icmlgym.envs.screening.library import VirtualLibrary, amide_reaction, quinazolinone_reaction
from icmlgym.envs.screening.screening_env import ScreeningEnv


def _amide_spec(data_dir) -> dict:
    return {
        "kind": "files",
        "building_blocks": {"amines": str(data_dir / "primary_amines.smi"), "acids": str(data_dir / "carboxylic_acids.smi")},
        "reactions": [{"name": "amide", "smarts": amide_reaction().smarts, "components": ["amines", "acids"]}],
    }


def test_amide_library_of_58_million(data_dir):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # the shared files have no malformed SMILES
        lib = VirtualLibrary.from_files(
            {"amines": data_dir / "primary_amines.smi", "acids": data_dir / "carboxylic_acids.smi"}, [amide_reaction()]
        )
    assert lib.size == 13_842 * 4_214 == 58_330_188
    idx = np.array([0, 12_345_678, lib.size - 1])
    smiles = lib.smiles(idx)
    from rdkit import Chem

    amide = Chem.MolFromSmarts("[#6]C(=O)[NH][#6]")
    assert all(s is not None and Chem.MolFromSmiles(s).HasSubstructMatch(amide) for s in smiles)
    assert lib.memory_bytes() < 100_000  # three products and their six blocks touched


def test_quinazolinone_library_of_22_billion_opens_lazily(data_dir):
    lib = VirtualLibrary.from_files(
        {
            "aminobenzoic_acids": data_dir / "aminobenzoic_acids.smi",
            "amines": data_dir / "primary_amines.smi",
            "acids": data_dir / "carboxylic_acids.smi",
        },
        [quinazolinone_reaction()],
    )
    assert lib.size == 376 * 13_842 * 4_214 == 21_932_150_688
    assert lib.memory_bytes() == 0
    rng = np.random.default_rng(0)
    idx = rng.integers(0, lib.size, 20)
    smiles = lib.smiles(idx)
    made = [s for s in smiles if s is not None]
    assert len(made) + lib.n_failed == 20 and len(made) >= 10
    assert lib.memory_bytes() < 1_000_000  # 20 products and at most 60 parsed blocks


def test_boba_on_the_amide_library_with_similarity_oracle(data_dir):
    """BOBA runs on the 58.3M library (no exact ground truth at this size: best-found and hits)."""
    spec = _amide_spec(data_dir)
    kwargs = {"library": spec, "eval_budget": 60, "eval_batch": 4, "inference_batch": 40, "hit_threshold": 0.3}
    for partition in ("reagent:amines", "reagent:acids"):
        rec = icmlgym.run("icmlgym/Screening-v0", "screening-boba", seeds=[0], env_kwargs={**kwargs, "partition": partition})[0]
        assert rec.status == "ok", rec.error
        m = rec.episodes[0].metrics
        assert m["ground_truth"] == 0.0 and np.isnan(m["top_k_recall"])
        assert rec.cost["evaluations"] == 60 and rec.cost["surrogate_inferences"] == 600
        assert 0.1 < m["best_score"] <= 1.0
        assert m["fraction_inferred"] == pytest.approx(rec.cost["enumerations"] / 58_330_188)


def test_lookup_oracle_on_50k_docking_scores(data_dir):
    path = data_dir / "enamine50k_docking_scores.csv.gz"
    table = pd.read_csv(path)
    env = ScreeningEnv(
        library={"kind": "table", "path": str(path)},
        oracle={"kind": "lookup", "table": str(path), "maximize": False},
        partition="random:100", inference_batch=100, eval_batch=10, eval_budget=300,
    )
    assert env.library.size == len(table) == 49_706
    assert env.truth.best == pytest.approx(-table["score"].min())  # objective = -Vina score
    top100 = np.sort(table["score"].to_numpy())[99]
    assert env.truth.topk_threshold == pytest.approx(-top100)
    obs, _ = env.reset(seed=0)
    done = False
    while not done:  # a greedy-ish policy over the observed partition statistics
        obs, r, term, trunc, info = env.step(int(np.argmax(obs["remaining"] + obs["mean_reward"])))
        done = term or trunc
    m = info["metrics"]
    idx, obj = env.evaluated()
    scores = table["score"].to_numpy()[idx]  # a listed compound's index is its row in the table
    assert np.allclose(obj, -scores)
    assert m["top_k_recall"] == pytest.approx(min(int((scores <= top100).sum()), 100) / 100)
    assert m["best_score"] == pytest.approx(scores.min())
