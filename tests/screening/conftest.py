"""Fixtures of the screening tests: a per-session cache folder and the shared data folder."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("rdkit", reason="the screening family needs the [chem] extra (rdkit)")

DATA = Path(__file__).resolve().parents[2].parent / "shared/data/screening"
SMOKE_LIBRARY = {"kind": "embedded", "n_amines": 120, "n_acids": 250, "reactions": ["amide"]}
TINY_LIBRARY = {"kind": "embedded", "n_amines": 12, "n_acids": 15, "n_aminobenzoic_acids": 4}


@pytest.fixture(scope="session", autouse=True)
def _screening_cache(tmp_path_factory):
    """Every screening test uses one fresh cache folder (ICMLGYM_HOME), never the user's."""
    import os

    home = tmp_path_factory.mktemp("icmlgym_home")
    old = os.environ.get("ICMLGYM_HOME")
    os.environ["ICMLGYM_HOME"] = str(home)
    yield home
    if old is None:
        os.environ.pop("ICMLGYM_HOME", None)
    else:
        os.environ["ICMLGYM_HOME"] = old


@pytest.fixture
def data_dir() -> Path:
    if not DATA.is_dir():
        pytest.skip(f"../shared/data/screening not found: {DATA} (the real-data tests need it)")
    return DATA
