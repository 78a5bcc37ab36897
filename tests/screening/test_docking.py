"""Real docking: AutoDock Vina through dockstring on products of the embedded library (extra [dock])."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dockstring", reason="the docking oracle needs the [dock] extra (dockstring, openbabel-wheel)")

from icmlgym.envs.screening.embedded import embedded_library  # noqa: E402
from icmlgym.envs.screening.oracles import DockingOracle, ensure_obabel  # noqa: E402


def test_obabel_is_found_without_the_venv_on_path(monkeypatch):
    monkeypatch.setenv("PATH", "/usr/bin:/bin")
    path = ensure_obabel()
    assert path.endswith("obabel")
    import shutil

    assert shutil.which("obabel") is not None  # its folder was put on PATH


def test_unknown_target_is_refused():
    with pytest.raises(ValueError, match="unknown dockstring target 'NOPE'"):
        DockingOracle("NOPE")


@pytest.mark.slow
def test_docking_oracle_docks_library_products(tmp_path):
    """Dock the smallest amide of a small embedded library against DRD2 (~10 s on an idle
    2-core machine); its score is cached on disk."""
    from rdkit import Chem

    lib = embedded_library(n_amines=20, n_acids=20, reactions=("amide",))
    heavy = [Chem.MolFromSmiles(s).GetNumHeavyAtoms() for s in lib.smiles(np.arange(lib.size))]
    idx = np.argsort(heavy, kind="stable")[:1]
    smiles = lib.smiles(idx)
    oracle = DockingOracle("DRD2", num_cpus=2, cache=tmp_path)
    scores = oracle.score(lib, idx)
    assert oracle.docked == 1 and oracle.failures == 0
    assert np.all(np.isfinite(scores)) and np.all(scores < 0) and np.all(scores > -20)  # kcal/mol
    assert len(list(tmp_path.glob("*.json"))) == 1
    again = DockingOracle("DRD2", num_cpus=2, cache=tmp_path)
    assert np.array_equal(again.score_smiles(smiles), scores) and again.docked == 0  # from the cache
    assert not oracle.maximize and np.all(oracle.objective(scores) > 0)
