"""Oracles: the expensive evaluation of a compound (pluggable).

- :class:`SimilarityOracle`: Morgan-fingerprint Tanimoto similarity to a query
  ligand (the 2D objective of Klarich et al., JCIM 2024), vectorised over
  packed fingerprints. Higher is better.
- :class:`LookupOracle`: a table of precomputed scores (e.g. the AutoDock Vina
  scores of MolPAL's Enamine 10k/50k sets). Lower is better by default.
- :class:`DockingOracle`: real docking with dockstring (AutoDock Vina, shipped
  in the package; extra ``[dock]``), scores cached on disk per target. Lower is better.
- :class:`CallableOracle`: a user function from SMILES to scores.

Every oracle returns raw scores (NaN where a compound has no product or its
evaluation failed) and says whether larger is better (``maximize``); the env
turns raw scores into an *objective* that is always maximised.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from icmlgym.envs.screening.cache import atomic_write_bytes, cache_dir
from icmlgym.envs.screening.library import VirtualLibrary, quiet_rdkit

# A drug-like amide query for the embedded library (a 4-methoxybenzyl amide of
# 4-fluorophenylacetic acid); it is not itself required to be in the library.
DEFAULT_QUERY = "COc1ccc(CNC(=O)Cc2ccc(F)cc2)cc1"


class Oracle:
    """Base class. Subclasses implement :meth:`score_smiles` (and may override :meth:`score`).

    Attributes:
        name: a label.
        maximize: whether larger raw scores are better.
        key: identifies the oracle's function for the ground-truth cache (None: not cacheable).
    """

    name: str = "oracle"
    maximize: bool = True
    key: str | None = None

    def score_smiles(self, smiles: Sequence[str]) -> np.ndarray:  # pragma: no cover - abstract
        raise NotImplementedError

    def score(self, library: VirtualLibrary, indices: np.ndarray) -> np.ndarray:
        """Raw scores of compounds of ``library`` (NaN where the reaction gave no product)."""
        smiles = library.smiles(indices)
        out = np.full(len(smiles), np.nan)
        have = [k for k, s in enumerate(smiles) if s is not None]
        if have:
            out[have] = np.asarray(self.score_smiles([smiles[k] for k in have]), dtype=np.float64)
        return out

    def objective(self, raw: np.ndarray) -> np.ndarray:
        """Raw scores -> objective to maximise (NaN stays NaN)."""
        raw = np.asarray(raw, dtype=np.float64)
        return raw if self.maximize else -raw


def tanimoto_packed(query: np.ndarray, fps: np.ndarray) -> np.ndarray:
    """Tanimoto similarity of one packed fingerprint (uint8 row) to each row of ``fps``."""
    inter = np.bitwise_count(fps & query).sum(axis=1, dtype=np.int64)
    union = np.bitwise_count(fps | query).sum(axis=1, dtype=np.int64)
    return np.where(union > 0, inter / np.maximum(union, 1), 0.0)


class SimilarityOracle(Oracle):
    """Tanimoto similarity (Morgan fingerprint of the library's radius and length) to ``query``."""

    maximize = True

    def __init__(self, query: str = DEFAULT_QUERY) -> None:
        from rdkit import Chem

        with quiet_rdkit():
            mol = Chem.MolFromSmiles(query)
        if mol is None:
            raise ValueError(f"similarity query is not a valid SMILES: {query!r}")
        self.query = query
        self._mol = mol
        self._qfp: dict[tuple[int, int], np.ndarray] = {}
        self.name = "similarity"

    def _query_fp(self, bits: int, radius: int) -> np.ndarray:
        if (bits, radius) not in self._qfp:
            from rdkit.Chem import rdFingerprintGenerator

            gen = rdFingerprintGenerator.GetMorganGenerator(radius=radius, fpSize=bits)
            self._qfp[(bits, radius)] = np.packbits(gen.GetFingerprintAsNumPy(self._mol).astype(bool))
        return self._qfp[(bits, radius)]

    @property
    def key(self) -> str:  # type: ignore[override]
        # the library's key already covers the fingerprint radius and length
        return f"sim:{self.query}"

    def score(self, library: VirtualLibrary, indices: np.ndarray) -> np.ndarray:
        fps, ok = library.fingerprints(indices)
        sim = tanimoto_packed(self._query_fp(library.fp_bits, library.fp_radius), fps)
        return np.where(ok, sim, np.nan)

    def score_smiles(self, smiles: Sequence[str]) -> np.ndarray:
        from rdkit import Chem
        from rdkit.Chem import rdFingerprintGenerator

        gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=1024)
        q = self._query_fp(1024, 2)
        rows, ok = [], []
        with quiet_rdkit():
            for s in smiles:
                m = Chem.MolFromSmiles(s)
                ok.append(m is not None)
                rows.append(np.packbits(gen.GetFingerprintAsNumPy(m).astype(bool)) if m is not None else np.zeros_like(q))
        return np.where(ok, tanimoto_packed(q, np.array(rows)), np.nan)


class LookupOracle(Oracle):
    """Scores looked up in a table of ``smiles,score`` (CSV, optionally gzipped) or a mapping.

    Args:
        table: a path to the CSV, a pandas DataFrame with ``smiles`` and ``score`` columns, or a dict.
        maximize: whether larger scores are better (False for docking scores).
        missing: ``"raise"`` (a compound not in the table raises ``KeyError`` naming it) or
            ``"nan"`` (it scores NaN and the env counts it as a failed evaluation).
    """

    def __init__(self, table: Any, maximize: bool = False, missing: str = "raise", name: str = "lookup") -> None:
        import pandas as pd

        if missing not in ("raise", "nan"):
            raise ValueError(f"missing must be 'raise' or 'nan', got {missing!r}")
        if isinstance(table, dict):
            df = pd.DataFrame({"smiles": list(table), "score": list(table.values())})
            src = "dict"
        elif isinstance(table, pd.DataFrame):
            df, src = table, "dataframe"
        else:
            path = Path(table)
            if not path.is_file():
                raise FileNotFoundError(f"score table not found: {path}")
            df, src = pd.read_csv(path), str(path)
        for col in ("smiles", "score"):
            if col not in df.columns:
                raise ValueError(f"score table {src} has no {col!r} column (columns: {list(df.columns)})")
        df = df.dropna(subset=["smiles", "score"])
        self.table: dict[str, float] = dict(zip(df["smiles"].astype(str), df["score"].astype(float)))
        if not self.table:
            raise ValueError(f"score table {src} is empty")
        self.smiles_list: list[str] = list(self.table)
        self._canonical: dict[str, float] | None = None
        self.maximize = bool(maximize)
        self.missing = missing
        self.name = name
        digest = hashlib.sha256(json.dumps(sorted(self.table.items())).encode()).hexdigest()[:16]
        self.key = f"lookup:{digest}:{int(self.maximize)}"

    def _canon_table(self) -> dict[str, float]:
        if self._canonical is None:
            from rdkit import Chem

            out = {}
            with quiet_rdkit():
                for s, v in self.table.items():
                    m = Chem.MolFromSmiles(s)
                    if m is not None:
                        out[Chem.MolToSmiles(m)] = v
            self._canonical = out
        return self._canonical

    def score_smiles(self, smiles: Sequence[str]) -> np.ndarray:
        out = np.empty(len(smiles))
        for k, s in enumerate(smiles):
            v = self.table.get(s)
            if v is None:
                v = self._canon_table().get(s)
            if v is None:
                from rdkit import Chem

                with quiet_rdkit():
                    m = Chem.MolFromSmiles(s)
                v = self._canon_table().get(Chem.MolToSmiles(m)) if m is not None else None
            if v is None:
                if self.missing == "raise":
                    raise KeyError(f"compound {s!r} is not in the score table of {self.name!r}")
                v = np.nan
            out[k] = v
        return out


def ensure_obabel() -> str:
    """Find openbabel-wheel's ``obabel`` and put its folder on PATH (dockstring calls it by name).

    Returns the executable's path; raises ``RuntimeError`` saying what to install when absent.
    """
    found = shutil.which("obabel")
    if found:
        return found
    candidates = [Path(sys.executable).parent / "obabel", Path(sys.prefix) / "bin" / "obabel"]
    try:
        import openbabel

        candidates.append(Path(openbabel.__file__).parent / "bin" / "obabel")
    except ImportError:
        pass
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            os.environ["PATH"] = f"{c.parent}{os.pathsep}{os.environ.get('PATH', '')}"
            return str(c)
    raise RuntimeError(
        "the docking oracle needs Open Babel's `obabel` executable, which was not found on PATH nor next "
        'to this Python; install it with: pip install "icmlgym[dock]" (openbabel-wheel)'
    )


class DockingOracle(Oracle):
    """AutoDock Vina docking through dockstring against one of its targets; lower is better.

    Args:
        target: a dockstring target name (e.g. ``"DRD2"``; see ``dockstring.list_all_target_names()``).
        num_cpus: CPUs Vina may use (None: all).
        seed: Vina's seed (docking is deterministic given it).
        cache: directory of the score cache (default: the screening cache's ``docking/<target>``).

    A ligand dockstring cannot prepare or dock scores NaN and is counted in ``failures``.
    """

    maximize = False

    def __init__(self, target: str = "DRD2", num_cpus: int | None = None, seed: int = 0, cache: str | os.PathLike | None = None) -> None:
        from icmlgym.catalog import require_extra

        require_extra("dock", what="DockingOracle")
        import dockstring

        names = dockstring.list_all_target_names()
        if target not in names:
            raise ValueError(f"unknown dockstring target {target!r}; targets: {', '.join(sorted(names))}")
        ensure_obabel()
        self.target_name = target
        self.num_cpus = num_cpus
        self.seed = int(seed)
        self._target = None
        self._cache = Path(cache) if cache is not None else cache_dir() / "docking" / target
        self._cache.mkdir(parents=True, exist_ok=True)
        self.name = f"docking:{target}"
        self.key = f"dock:{target}:seed{self.seed}"
        self.failures = 0
        self.docked = 0  # ligands actually docked (cache misses)

    def _path(self, smiles: str) -> Path:
        return self._cache / (hashlib.sha256(f"{smiles}|{self.seed}".encode()).hexdigest()[:32] + ".json")

    def score_smiles(self, smiles: Sequence[str]) -> np.ndarray:
        out = np.full(len(smiles), np.nan)
        for k, s in enumerate(smiles):
            p = self._path(s)
            if p.is_file():
                try:
                    out[k] = json.loads(p.read_text())["score"]
                    continue
                except (ValueError, KeyError, OSError):
                    pass  # a corrupt entry is docked again
            out[k] = self._dock(s)
            atomic_write_bytes(p, json.dumps({"smiles": s, "target": self.target_name, "score": out[k]}).encode())
        return out

    def _dock(self, smiles: str) -> float:
        import dockstring

        if self._target is None:
            self._target = dockstring.load_target(self.target_name)
        kwargs: dict[str, Any] = {"seed": self.seed}
        if self.num_cpus is not None:
            kwargs["num_cpus"] = self.num_cpus
        try:
            score, _aux = self._target.dock(smiles, **kwargs)
        except dockstring.DockstringError:
            self.failures += 1
            return float("nan")
        self.docked += 1
        return float(score) if score is not None else float("nan")


class CallableOracle(Oracle):
    """A user-supplied function ``fn(list_of_smiles) -> sequence of floats``.

    Args:
        fn: the scoring function (NaN for a compound it cannot score).
        maximize: whether larger is better.
        key: a string identifying the function, to cache exact ground truth (None: no caching).
    """

    def __init__(self, fn: Callable[[list[str]], Sequence[float]], maximize: bool = True, key: str | None = None, name: str = "callable") -> None:
        if not callable(fn):
            raise TypeError(f"CallableOracle needs a callable, got {type(fn).__name__}")
        self.fn = fn
        self.maximize = bool(maximize)
        self.key = key
        self.name = name

    def score_smiles(self, smiles: Sequence[str]) -> np.ndarray:
        out = np.asarray(self.fn(list(smiles)), dtype=np.float64)
        if out.shape != (len(smiles),):
            raise ValueError(f"oracle {self.name!r} returned shape {out.shape} for {len(smiles)} compounds")
        return out


def make_oracle(spec: Any) -> Oracle:
    """An oracle from a spec: an :class:`Oracle`, ``"similarity"``, ``"docking"``, a callable, or a dict
    ``{"kind": "similarity"|"lookup"|"docking", ...constructor kwargs}``."""
    if isinstance(spec, Oracle):
        return spec
    if isinstance(spec, str):
        spec = {"kind": spec}
    elif callable(spec):
        return CallableOracle(spec)
    if not isinstance(spec, dict) or "kind" not in spec:
        raise ValueError(f"oracle must be an Oracle, a callable, a kind name or a dict with 'kind'; got {spec!r}")
    kinds = {"similarity": SimilarityOracle, "lookup": LookupOracle, "docking": DockingOracle}
    kw = {k: v for k, v in spec.items() if k != "kind"}
    if spec["kind"] not in kinds:
        raise ValueError(f"unknown oracle kind {spec['kind']!r}; kinds: {sorted(kinds)}")
    return kinds[spec["kind"]](**kw)
