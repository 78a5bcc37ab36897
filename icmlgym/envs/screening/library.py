"""Virtual combinatorial libraries: building blocks x reactions, never enumerated up front.

A compound is an integer index. Index ``i`` maps to a reaction ``r`` (reactions
are laid out one after another) and to a tuple of building-block indices, one
per reactant position of ``r`` (row-major, the last position varies fastest).
The product SMILES and fingerprint of a compound are made with RDKit only when
asked for, and memoised, so memory grows with the building blocks and with what
was touched, never with the library size: the 2.2 x 10^10-compound
quinazolinone library of the shared data opens in about half a second.

Building blocks load from ``.smi`` files (``SMILES [id]`` per line). A malformed
SMILES is **skipped** with a warning that names the file and line number and
is kept in :attr:`BuildingBlockSet.rejected`; ``strict=True`` refuses the file
instead (``ValueError`` naming ``file:line``). A reaction that yields no
sanitizable product for a tuple returns ``None`` and is counted in
:attr:`VirtualLibrary.n_failed`.
"""

from __future__ import annotations

import hashlib
import os
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable, Sequence

import numpy as np

from icmlgym.catalog import require_extra

require_extra("chem", what="icmlgym screening libraries")

from rdkit import Chem, RDLogger  # noqa: E402
from rdkit.Chem import AllChem, rdFingerprintGenerator  # noqa: E402

# Reactions of Klarich et al. (JCIM 2024), as in the shared data README.
AMIDE_SMARTS = "[NH2:2][#6:1].[#6:4][C:3]([OH])=O>>[NH:2]([#6:1])[C:3]([#6:4])=O"
QUINAZOLINONE_SMARTS = "N[c:4][c:3]C(O)=O.[#6:1][NH2].[#6:2]C(=O)[OH]>>[C:2]c1n[c:4][c:3]c(=O)n1[C:1]"


class quiet_rdkit:
    """Silence RDKit's C++ logger (parse errors are reported by us, with line numbers)."""

    def __enter__(self) -> None:
        RDLogger.DisableLog("rdApp.*")

    def __exit__(self, *exc) -> None:
        RDLogger.EnableLog("rdApp.*")


@dataclass
class BuildingBlockSet:
    """One set of building blocks (e.g. primary amines): parsed molecules with their SMILES and ids.

    Attributes:
        name: the set's name (what a reaction's reactant position refers to).
        smiles: the SMILES of the accepted building blocks as given, in file order.
        ids: the id column of the file (or ``name-<n>``).
        rejected: ``(line number, text, reason)`` for every skipped line.
        source: the file path, or ``"embedded"``.

    Every SMILES is parsed (and sanitised) once when the set is made, to validate it; the
    molecules are then dropped and re-parsed on first use by :meth:`mol`, so an opened
    library holds strings, and molecules only for the blocks that were touched.
    """

    name: str
    smiles: list[str]
    ids: list[str]
    rejected: list[tuple[int, str, str]] = field(default_factory=list)
    source: str = "embedded"
    _mols: dict[int, Chem.Mol] = field(default_factory=dict, repr=False)

    def __len__(self) -> int:
        return len(self.smiles)

    def mol(self, b: int) -> Chem.Mol:
        """The RDKit molecule of building block ``b`` (parsed on first use, then cached)."""
        m = self._mols.get(b)
        if m is None:
            m = Chem.MolFromSmiles(self.smiles[b])
            self._mols[b] = m
        return m

    @classmethod
    def from_smiles(cls, name: str, smiles: Sequence[str], ids: Sequence[str] | None = None, source: str = "embedded") -> "BuildingBlockSet":
        """Build a set from SMILES strings; any that RDKit cannot parse raises ``ValueError`` naming it."""
        with quiet_rdkit():
            for k, s in enumerate(smiles):
                if Chem.MolFromSmiles(s) is None:
                    raise ValueError(f"building block {k} of {name!r} is not a valid SMILES: {s!r}")
        ids = list(ids) if ids is not None else [f"{name}-{k}" for k in range(len(smiles))]
        return cls(name, list(smiles), ids, [], source)


def load_building_blocks(path: str | os.PathLike, name: str | None = None, strict: bool = False) -> BuildingBlockSet:
    """Load a ``.smi`` building-block file: one ``SMILES [id]`` per line; ``#`` starts a comment.

    Args:
        path: the file.
        name: the set's name (default: the file's stem).
        strict: refuse the file at the first malformed SMILES (``ValueError`` naming ``file:line``)
            instead of skipping it with a warning.

    Returns:
        The :class:`BuildingBlockSet`; skipped lines are in ``rejected``.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"building-block file not found: {p}")
    name = name or p.stem
    smiles: list[str] = []
    ids: list[str] = []
    rejected: list[tuple[int, str, str]] = []
    with quiet_rdkit(), open(p, encoding="utf-8") as fh:
        for line_no, line in enumerate(fh, start=1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            parts = text.split()
            mol = Chem.MolFromSmiles(parts[0])
            if mol is None:
                if strict:
                    raise ValueError(f"{p}:{line_no}: malformed SMILES {parts[0]!r} (RDKit could not parse it)")
                rejected.append((line_no, parts[0], "RDKit could not parse the SMILES"))
                continue
            # the file's SMILES is kept as given (canonicalising 10^4 blocks would double the open time)
            smiles.append(parts[0])
            ids.append(parts[1] if len(parts) > 1 else f"{name}-{len(ids)}")
    if rejected:
        shown = ", ".join(f"line {n} {s!r}" for n, s, _ in rejected[:5])
        more = f" and {len(rejected) - 5} more" if len(rejected) > 5 else ""
        warnings.warn(f"{p}: skipped {len(rejected)} malformed SMILES ({shown}{more})", stacklevel=2)
    if not smiles:
        raise ValueError(f"{p}: no valid building blocks (every line was empty, a comment or malformed)")
    return BuildingBlockSet(name, smiles, ids, rejected, str(p))


@dataclass(frozen=True)
class Reaction:
    """A reaction SMARTS with the building-block set used at each reactant position.

    ``smarts=None`` is the identity "reaction" of a flat compound list: one
    component, and the product is the building block itself.
    """

    name: str
    smarts: str | None
    components: tuple[str, ...]

    def compile(self):
        if self.smarts is None:
            if len(self.components) != 1:
                raise ValueError(f"reaction {self.name!r}: an identity reaction has exactly one component")
            return None
        try:
            rxn = AllChem.ReactionFromSmarts(self.smarts)
        except ValueError as err:
            raise ValueError(f"reaction {self.name!r}: invalid reaction SMARTS {self.smarts!r}: {err}") from None
        if rxn is None:
            raise ValueError(f"reaction {self.name!r}: invalid reaction SMARTS {self.smarts!r}")
        if rxn.GetNumReactantTemplates() != len(self.components):
            raise ValueError(
                f"reaction {self.name!r} has {rxn.GetNumReactantTemplates()} reactant templates "
                f"but {len(self.components)} components {self.components}"
            )
        rxn.Initialize()
        return rxn


def amide_reaction(amines: str = "amines", acids: str = "acids") -> Reaction:
    """Amide coupling (amines x acids)."""
    return Reaction("amide", AMIDE_SMARTS, (amines, acids))


def quinazolinone_reaction(aminobenzoic: str = "aminobenzoic_acids", amines: str = "amines", acids: str = "acids") -> Reaction:
    """The 3-component quinazolinone synthesis (aminobenzoic acids x amines x acids)."""
    return Reaction("quinazolinone", QUINAZOLINONE_SMARTS, (aminobenzoic, amines, acids))


class VirtualLibrary:
    """Building blocks x reactions as an index space of compounds, enumerated lazily.

    Args:
        building_blocks: the sets, by name.
        reactions: the reactions; each names a set per reactant position.
        fp_bits: Morgan fingerprint length (bits) of products.
        fp_radius: Morgan radius.
        name: a label for the library.

    Index layout: the compounds of ``reactions[0]`` come first, then those of
    ``reactions[1]`` and so on; inside a reaction, ``np.ravel_multi_index`` of
    the building-block tuple over the reaction's shape.
    """

    def __init__(
        self,
        building_blocks: dict[str, BuildingBlockSet],
        reactions: Sequence[Reaction],
        fp_bits: int = 1024,
        fp_radius: int = 2,
        name: str = "library",
    ) -> None:
        if not reactions:
            raise ValueError("a library needs at least one reaction")
        if fp_bits % 8 or fp_bits < 64:
            raise ValueError(f"fp_bits must be a multiple of 8 and at least 64, got {fp_bits}")
        self.building_blocks = dict(building_blocks)
        self.reactions = list(reactions)
        self.name = name
        self._rxns = []
        shapes = []
        for r in self.reactions:
            for comp in r.components:
                if comp not in self.building_blocks:
                    raise ValueError(
                        f"reaction {r.name!r} uses building-block set {comp!r}, which is not loaded; "
                        f"sets: {sorted(self.building_blocks)}"
                    )
            self._rxns.append(r.compile())
            shapes.append(tuple(len(self.building_blocks[c]) for c in r.components))
        self.shapes: list[tuple[int, ...]] = shapes
        sizes = [int(np.prod(s, dtype=np.float64)) for s in shapes]
        self.reaction_sizes = np.array(sizes, dtype=np.int64)
        self.offsets = np.concatenate([[0], np.cumsum(self.reaction_sizes)]).astype(np.int64)
        self.size = int(self.offsets[-1])
        self.max_components = max(len(s) for s in shapes)
        self.fp_bits = int(fp_bits)
        self.fp_radius = int(fp_radius)
        self._fpgen = rdFingerprintGenerator.GetMorganGenerator(radius=self.fp_radius, fpSize=self.fp_bits)
        self._smiles: dict[int, str | None] = {}
        self._fps: dict[int, np.ndarray] = {}
        self._dense_fps: np.ndarray | None = None  # packed fingerprints of every compound (small libraries)
        self._dense_ok: np.ndarray | None = None
        self.n_enumerated = 0  # products built by RDKit in this process (cache misses)
        self.n_failed = 0  # tuples for which the reaction gave no sanitizable product

    # ------------------------------------------------------------------ layout
    def __len__(self) -> int:
        return self.size

    @property
    def key(self) -> str:
        """A hash of the library's content (building blocks, reactions, fingerprint settings)."""
        h = hashlib.sha256()
        for r in self.reactions:
            h.update(f"{r.name}|{r.smarts}|{','.join(r.components)}\n".encode())
            for c in r.components:
                h.update(("\n".join(self.building_blocks[c].smiles) + "\n#\n").encode())
        h.update(f"fp{self.fp_bits}r{self.fp_radius}".encode())
        return h.hexdigest()[:20]

    def layout(self) -> list[dict]:
        """The public structure of the index space (what compound-level agents decode with)."""
        return [
            {"reaction": r.name, "components": list(r.components), "shape": list(s), "offset": int(o)}
            for r, s, o in zip(self.reactions, self.shapes, self.offsets[:-1])
        ]

    def _check(self, idx: np.ndarray) -> np.ndarray:
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        if idx.size and (idx.min() < 0 or idx.max() >= self.size):
            bad = idx[(idx < 0) | (idx >= self.size)][0]
            raise IndexError(f"compound index {int(bad)} is outside the library [0, {self.size})")
        return idx

    def decode(self, indices: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Compound indices -> (reaction index, building-block tuple padded with -1 to ``max_components``)."""
        idx = self._check(np.asarray(indices))
        rxn = np.searchsorted(self.offsets, idx, side="right") - 1
        bbs = np.full((idx.size, self.max_components), -1, dtype=np.int64)
        for r, shape in enumerate(self.shapes):
            sel = rxn == r
            if sel.any():
                local = idx[sel] - self.offsets[r]
                coords = np.unravel_index(local, shape)
                for k, c in enumerate(coords):
                    bbs[sel, k] = c
        return rxn, bbs

    def encode(self, reaction: int, bbs: Sequence[int] | np.ndarray) -> np.ndarray:
        """(reaction index, building-block tuples of shape (n, components)) -> compound indices."""
        if not 0 <= reaction < len(self.reactions):
            raise IndexError(f"reaction index {reaction} outside [0, {len(self.reactions)})")
        arr = np.atleast_2d(np.asarray(bbs, dtype=np.int64))
        shape = self.shapes[reaction]
        if arr.shape[1] != len(shape):
            raise ValueError(f"reaction {self.reactions[reaction].name!r} takes {len(shape)} building blocks, got {arr.shape[1]}")
        local = np.ravel_multi_index(tuple(arr.T), shape)
        return local.astype(np.int64) + self.offsets[reaction]

    # ------------------------------------------------------------- enumeration
    def _build(self, i: int, r: int, tup: Sequence[int]) -> Chem.Mol | None:
        reaction = self.reactions[r]
        reactants = [self.building_blocks[c].mol(int(b)) for c, b in zip(reaction.components, tup)]
        self.n_enumerated += 1
        if self._rxns[r] is None:
            return Chem.Mol(reactants[0])
        for prods in self._rxns[r].RunReactants(tuple(reactants), 4):
            mol = prods[0]
            try:
                Chem.SanitizeMol(mol)
            except (ValueError, RuntimeError):
                continue
            return mol
        self.n_failed += 1
        return None

    def _fp_row(self, mol: Chem.Mol) -> np.ndarray:
        return np.packbits(self._fpgen.GetFingerprintAsNumPy(mol).astype(bool))

    def _ensure(self, idx: np.ndarray, want_smiles: bool) -> None:
        """Build the products of ``idx`` that are missing from the caches (SMILES only when asked:
        writing a SMILES costs as much as the fingerprint)."""
        if want_smiles:
            todo = [int(i) for i in idx if int(i) not in self._smiles]
        else:
            todo = [int(i) for i in idx if int(i) not in self._fps and self._smiles.get(int(i), "") is not None]
        if not todo:
            return
        rxn, bbs = self.decode(np.array(todo, dtype=np.int64))
        with quiet_rdkit():
            for i, r, tup in zip(todo, rxn, bbs):
                mol = self._build(i, int(r), tup[: len(self.shapes[r])])
                if mol is None:
                    self._smiles[i] = None
                    continue
                if i not in self._fps:
                    self._fps[i] = self._fp_row(mol)
                if want_smiles:
                    if self._rxns[r] is None:  # a listed compound keeps its SMILES as given (table keys match)
                        self._smiles[i] = self.building_blocks[self.reactions[r].components[0]].smiles[int(tup[0])]
                    else:
                        self._smiles[i] = Chem.MolToSmiles(mol)

    def smiles(self, indices: Iterable[int] | np.ndarray) -> list[str | None]:
        """Product SMILES (RDKit canonical; a listed compound's as given) of compounds; ``None`` where the reaction gave no product."""
        idx = self._check(np.asarray(indices))
        if len(self._rxns) == 1 and self._rxns[0] is None:  # a flat list: the SMILES are the building blocks'
            comp = self.building_blocks[self.reactions[0].components[0]].smiles
            return [comp[int(i)] for i in idx]
        self._ensure(idx, want_smiles=True)
        return [self._smiles[int(i)] for i in idx]

    def fingerprints(self, indices: Iterable[int] | np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Packed Morgan fingerprints ``(n, fp_bits // 8)`` uint8 and a mask of compounds with a product."""
        idx = self._check(np.asarray(indices))
        if self._dense_fps is not None:
            return self._dense_fps[idx], self._dense_ok[idx]
        self._ensure(idx, want_smiles=False)
        out = np.zeros((idx.size, self.fp_bits // 8), dtype=np.uint8)
        ok = np.zeros(idx.size, dtype=bool)
        for k, i in enumerate(idx):
            row = self._fps.get(int(i))
            if row is not None:
                out[k] = row
                ok[k] = True
        return out, ok

    def enumerate_all(self, max_size: int = 2_000_000, cache_dir: str | os.PathLike | None = None) -> tuple[np.ndarray, np.ndarray]:
        """Fingerprints of every compound (only for small libraries), cached on disk by :attr:`key`.

        After this call :meth:`fingerprints` is an array lookup. Raises ``ValueError`` for a
        library larger than ``max_size`` (it is meant to be screened, not enumerated).
        """
        if self._dense_fps is not None:
            return self._dense_fps, self._dense_ok
        if self.size > max_size:
            raise ValueError(
                f"library {self.name!r} has {self.size:,} compounds, more than max_size={max_size:,}: "
                "it cannot be enumerated in full"
            )
        from icmlgym.envs.screening.cache import load_arrays, save_arrays

        path = Path(cache_dir) if cache_dir is not None else None
        name = f"fps-{self.key}.npz"
        cached = load_arrays(name, path)
        if cached is not None and cached["fps"].shape == (self.size, self.fp_bits // 8):
            self._dense_fps, self._dense_ok = cached["fps"], cached["ok"]
            return self._dense_fps, self._dense_ok
        fps = np.zeros((self.size, self.fp_bits // 8), dtype=np.uint8)
        ok = np.zeros(self.size, dtype=bool)
        chunk = 4096
        with quiet_rdkit():
            for start in range(0, self.size, chunk):
                idx = np.arange(start, min(start + chunk, self.size), dtype=np.int64)
                rxn, bbs = self.decode(idx)
                for k, (i, r, tup) in enumerate(zip(idx, rxn, bbs)):
                    mol = self._build(int(i), int(r), tup[: len(self.shapes[r])])
                    if mol is not None:
                        fps[start + k] = self._fp_row(mol)
                        ok[start + k] = True
        save_arrays(name, {"fps": fps, "ok": ok}, path)
        self._dense_fps, self._dense_ok = fps, ok
        return fps, ok

    @property
    def enumerated(self) -> bool:
        """Whether every compound's fingerprint is in memory (after :meth:`enumerate_all`)."""
        return self._dense_fps is not None

    def memory_bytes(self) -> int:
        """An estimate of the memory the library holds beyond its building blocks' molecules."""
        fp_b = self.fp_bits // 8
        dense = 0 if self._dense_fps is None else self._dense_fps.nbytes + self._dense_ok.nbytes
        mols = sum(len(b._mols) for b in self.building_blocks.values()) * 12_000  # a parsed block: ~12 KB resident
        return dense + len(self._fps) * (fp_b + 100) + sum(len(s or "") + 60 for s in self._smiles.values()) + mols

    def __repr__(self) -> str:
        rx = ", ".join(f"{r.name}{tuple(s)}" for r, s in zip(self.reactions, self.shapes))
        return f"VirtualLibrary({self.name!r}, {self.size:,} compounds: {rx})"

    # ------------------------------------------------------------ constructors
    @classmethod
    def from_files(
        cls,
        building_blocks: dict[str, str | os.PathLike],
        reactions: Sequence[Reaction | dict],
        strict: bool = False,
        **kwargs,
    ) -> "VirtualLibrary":
        """A library from ``.smi`` files at user paths and reactions (``Reaction`` or dicts with
        ``name``, ``smarts``, ``components``)."""
        sets = {name: load_building_blocks(path, name=name, strict=strict) for name, path in building_blocks.items()}
        rx = [r if isinstance(r, Reaction) else Reaction(r["name"], r.get("smarts"), tuple(r["components"])) for r in reactions]
        return cls(sets, rx, **kwargs)

    @classmethod
    def from_smiles_list(cls, smiles: Sequence[str], name: str = "compounds", **kwargs) -> "VirtualLibrary":
        """A flat library of given compounds (e.g. the compounds of a score table)."""
        bbs = BuildingBlockSet.from_smiles(name, smiles, source=name)
        return cls({name: bbs}, [Reaction("list", None, (name,))], name=name, **kwargs)


def plain_rdkit_products(bb_smiles: Sequence[Sequence[str]], smarts: str, fp_bits: int = 1024, radius: int = 2) -> list[np.ndarray | None]:
    """The plain per-compound RDKit loop (parse reagents, react, write and re-read the SMILES,
    fingerprint) that the benchmark compares :class:`VirtualLibrary` against."""
    rxn = AllChem.ReactionFromSmarts(smarts)
    gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=fp_bits)
    out: list[np.ndarray | None] = []
    with quiet_rdkit():
        for tup in bb_smiles:
            mols = tuple(Chem.MolFromSmiles(s) for s in tup)
            prods = rxn.RunReactants(mols)
            fp = None
            for p in prods:
                m = Chem.MolFromSmiles(Chem.MolToSmiles(p[0]))
                if m is not None:
                    fp = gen.GetFingerprintAsNumPy(m)
                    break
            out.append(fp)
    return out
