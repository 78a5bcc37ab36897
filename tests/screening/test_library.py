"""Virtual libraries: embedded building blocks, index layout, lazy enumeration, loaders and bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rdkit import Chem
from rdkit.Chem import Descriptors

from icmlgym.envs.screening.embedded import embedded_building_blocks, embedded_library
from icmlgym.envs.screening.library import (
    AMIDE_SMARTS,
    BuildingBlockSet,
    Reaction,
    VirtualLibrary,
    amide_reaction,
    load_building_blocks,
    plain_rdkit_products,
)

AMINE = Chem.MolFromSmarts("[NX3;H2][#6]")
ACID = Chem.MolFromSmarts("[CX3](=O)[OX2H1]")


@pytest.fixture(scope="module")
def tiny() -> VirtualLibrary:
    return embedded_library(n_amines=12, n_acids=15, n_aminobenzoic_acids=4)


def test_embedded_blocks_are_valid_druglike_and_deterministic():
    for kind, pattern in (("amines", AMINE), ("acids", ACID)):
        blocks = embedded_building_blocks(kind, 300)
        assert len(set(blocks)) == 300
        for s in blocks:
            m = Chem.MolFromSmiles(s)
            assert m is not None, s
            assert m.HasSubstructMatch(pattern), f"{kind} block without its reactive group: {s}"
            assert Descriptors.MolWt(m) <= 300
        embedded_building_blocks.cache_clear()
        again = embedded_building_blocks(kind, 300)
        assert again == blocks  # deterministic across calls
        assert embedded_building_blocks(kind, 50) == blocks[:50]  # smaller sets are prefixes
    aba = embedded_building_blocks("aminobenzoic_acids", 100)
    anthranilic = Chem.MolFromSmarts("[NH2]c:c[CX3](=O)[OH]")
    assert all(Chem.MolFromSmiles(s).HasSubstructMatch(anthranilic) for s in aba)


def test_embedded_default_sizes_and_bad_kind():
    with pytest.raises(ValueError, match="unknown building-block kind"):
        embedded_building_blocks("alcohols", 3)
    with pytest.raises(ValueError, match="embedded reactions"):
        embedded_library(reactions=("suzuki",))


def test_layout_and_products_of_both_reactions(tiny):
    assert tiny.size == 12 * 15 + 4 * 12 * 15
    rxn, bbs = tiny.decode(np.arange(tiny.size))
    assert np.array_equal(np.bincount(rxn), [180, 720])
    # every compound decodes to a tuple that encodes back to it
    for r in (0, 1):
        sel = rxn == r
        k = len(tiny.shapes[r])
        assert np.array_equal(tiny.encode(r, bbs[sel, :k]), np.flatnonzero(sel))
    smiles = tiny.smiles(np.arange(tiny.size))
    assert tiny.n_failed == 0 and all(s is not None for s in smiles)
    amide = Chem.MolFromSmarts("C(=O)N")
    quinaz = Chem.MolFromSmarts("c1nc2ccccc2c(=O)n1")
    quinaz_het = Chem.MolFromSmarts("[#6]1=,:[#7][#6]=,:[#6][#6](=O)[#7]1")
    for s in smiles[:180]:
        assert Chem.MolFromSmiles(s).HasSubstructMatch(amide)
    for s in smiles[180:]:
        m = Chem.MolFromSmiles(s)
        assert m.HasSubstructMatch(quinaz) or m.HasSubstructMatch(quinaz_het), s


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=12 * 15 + 4 * 12 * 15 - 1))
def test_decode_encode_roundtrip(i):
    lib = embedded_library(n_amines=12, n_acids=15, n_aminobenzoic_acids=4)
    r, bbs = lib.decode([i])
    k = len(lib.shapes[int(r[0])])
    assert int(lib.encode(int(r[0]), bbs[0, :k])[0]) == i
    assert np.all(bbs[0, k:] == -1)


def test_out_of_range_index_is_refused(tiny):
    with pytest.raises(IndexError, match="outside the library"):
        tiny.smiles([tiny.size])
    with pytest.raises(IndexError):
        tiny.decode([-1])


def test_library_fingerprints_match_plain_rdkit_loop(tiny):
    """The lazy pipeline and the plain per-compound RDKit loop give the same fingerprints."""
    idx = np.arange(0, 180, 7)
    fps, ok = tiny.fingerprints(idx)
    assert ok.all()
    _, bbs = tiny.decode(idx)
    amines, acids = tiny.building_blocks["amines"].smiles, tiny.building_blocks["acids"].smiles
    plain = plain_rdkit_products([(amines[a], acids[b]) for a, b, _ in bbs], AMIDE_SMARTS)
    assert np.array_equal(np.unpackbits(fps, axis=1), np.array(plain, dtype=np.uint8))


def test_enumerate_all_is_cached_on_disk(tmp_path):
    lib = embedded_library(n_amines=5, n_acids=6, reactions=("amide",))
    fps, ok = lib.enumerate_all(cache_dir=tmp_path)
    assert fps.shape == (30, 128) and ok.all()
    assert list(tmp_path.glob("fps-*.npz"))
    fresh = embedded_library(n_amines=5, n_acids=6, reactions=("amide",))
    before = fresh.n_enumerated
    fps2, _ = fresh.enumerate_all(cache_dir=tmp_path)
    assert fresh.n_enumerated == before  # read back, not rebuilt
    assert np.array_equal(fps, fps2)
    assert not list(tmp_path.glob("*.tmp"))  # the temporary file was renamed into place
    with pytest.raises(ValueError, match="cannot be enumerated"):
        embedded_library(n_amines=50, n_acids=50, reactions=("amide",)).enumerate_all(max_size=100)


def test_malformed_smiles_skipped_with_line_number(tmp_path):
    p = tmp_path / "amines.smi"
    p.write_text("NCc1ccccc1 a1\n# a comment\n\nC1CC(N a2\nNCCO a3\nnot_a_smiles a4\n")
    with pytest.warns(UserWarning, match=r"skipped 2 malformed SMILES \(line 4 'C1CC\(N', line 6 'not_a_smiles'\)"):
        bbs = load_building_blocks(p, name="amines")
    assert bbs.smiles == ["NCc1ccccc1", "NCCO"] and bbs.ids == ["a1", "a3"]
    assert [(n, s) for n, s, _ in bbs.rejected] == [(4, "C1CC(N"), (6, "not_a_smiles")]
    with pytest.raises(ValueError, match=r"amines.smi:4: malformed SMILES 'C1CC\(N'"):
        load_building_blocks(p, strict=True)
    empty = tmp_path / "empty.smi"
    empty.write_text("# nothing\nxx\n")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(ValueError, match="no valid building blocks"):
            load_building_blocks(empty)
    with pytest.raises(FileNotFoundError, match="building-block file not found"):
        load_building_blocks(tmp_path / "missing.smi")


def test_reaction_without_product_is_handled_and_counted():
    # "CCO" has no NH2: the amide coupling yields nothing for tuples that use it
    amines = BuildingBlockSet.from_smiles("amines", ["NCc1ccccc1", "CCO"])
    acids = BuildingBlockSet.from_smiles("acids", ["OC(=O)C", "OC(=O)c1ccccc1"])
    lib = VirtualLibrary({"amines": amines, "acids": acids}, [amide_reaction()])
    smiles = lib.smiles(np.arange(4))
    assert smiles[0] is not None and smiles[1] is not None
    assert smiles[2] is None and smiles[3] is None
    assert lib.n_failed == 2
    fps, ok = lib.fingerprints(np.arange(4))
    assert ok.tolist() == [True, True, False, False] and not fps[2:].any()


def test_bad_reactions_are_refused():
    amines = BuildingBlockSet.from_smiles("amines", ["NC"])
    with pytest.raises(ValueError, match="invalid reaction SMARTS"):
        VirtualLibrary({"amines": amines}, [Reaction("bad", "[C:1]>>[C:1](", ("amines",))])
    with pytest.raises(ValueError, match="2 reactant templates but 1 components"):
        VirtualLibrary({"amines": amines}, [Reaction("amide", AMIDE_SMARTS, ("amines",))])
    with pytest.raises(ValueError, match="not loaded"):
        VirtualLibrary({"amines": amines}, [amide_reaction()])
    with pytest.raises(ValueError, match="not a valid SMILES"):
        BuildingBlockSet.from_smiles("x", ["C1CC"])


def test_flat_library_keeps_given_smiles():
    lib = VirtualLibrary.from_smiles_list(["OCC", "c1ccccc1O"])
    assert lib.smiles([0, 1]) == ["OCC", "c1ccccc1O"]
    assert lib.fingerprints([0, 1])[1].all()


def test_memory_grows_with_touched_compounds_not_library_size():
    big = embedded_library(n_amines=2000, n_acids=2000, n_aminobenzoic_acids=200)
    assert big.size == 2000 * 2000 + 200 * 2000 * 2000  # 8.0e8 compounds
    assert big.memory_bytes() == 0
    big.smiles(np.array([0, 10**6, big.size - 1]))
    assert 0 < big.memory_bytes() < 100_000  # 3 products and the (at most 7) blocks they use
